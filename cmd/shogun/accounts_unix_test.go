//go:build !windows

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/control"
	"github.com/shogun-dev/shogun/shoguntest"
	"github.com/shogun-dev/shogun/store"
	"github.com/shogun-dev/shogun/usage"
)

// `shogun accounts` lists a pool's accounts once with the roles that share
// them, the limit the history keeps and the tokens of the day read from
// each account's own config folder; --json prints the documented keys.
func TestAccountsShowTheHistorysLimitsAndTokens(t *testing.T) {
	dirs := t.TempDir()
	entry := func(id string) string {
		return "  - id: " + id + "\n    prompt_path: roles/ashigaru.md\n    cli: claude\n    command: {exec: \"${SHOGUN_EXE}\", args: [agent-sim]}\n    accounts: team\n"
	}
	ws := teamWorkspace(t, entry("karo"), entry("ashigaru1"))
	settings := "accounts:\n  pools:\n    team:\n" +
		"      - {name: a, env: {CLAUDE_CONFIG_DIR: " + filepath.Join(dirs, "a") + "}}\n" +
		"      - {name: b, env: {CLAUDE_CONFIG_DIR: " + filepath.Join(dirs, "b") + "}}\n"
	if err := os.WriteFile(filepath.Join(ws, "config", "settings.yaml"), []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, _, _ := shogun(t, "accounts", "-w", ws); !strings.Contains(out, "team/a") || strings.Contains(out, "limited") {
		t.Fatalf("accounts before any limit:\n%s", out)
	}

	st, err := store.Open(filepath.Join(ws, "data", "shogun.db"))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	until := now.Add(2 * time.Hour).Truncate(time.Second)
	if err := st.RecordAccountLimit(store.AccountLimit{Account: "team/a", Role: "karo", LimitedAt: now, Until: until}); err != nil {
		t.Fatal(err)
	}
	f := store.UsageFile{Role: "karo", CLI: "claude", Path: filepath.Join(dirs, "a", "projects", "p", "s.jsonl")}
	if err := st.AddUsage(f, []usage.Record{{Key: "m1", At: now, Tokens: usage.Tokens{Input: 40, Output: 2}}}, now); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	out := jsonOutput(t, "accounts", "--json", "-w", ws)
	shoguntest.CheckOutput(t, shoguntest.ReadDocShape(t, "json.md", docAccounts), []control.AccountReply{}, out)
	var list []control.AccountReply
	if err := json.Unmarshal(out, &list); err != nil || len(list) != 2 {
		t.Fatalf("accounts --json: %v\n%s", err, out)
	}
	a, b := list[0], list[1]
	if a.Account != "team/a" || a.State != control.AccountLimited || !a.LimitedUntil.Equal(until) ||
		strings.Join(a.Roles, ",") != "karo,ashigaru1" || a.TokensToday == nil || a.TokensToday.Input != 40 {
		t.Errorf("team/a = %+v, want limited until %v, shared by karo and ashigaru1, 40 input tokens today", a, until)
	}
	if b.Account != "team/b" || b.State != control.AccountOK || b.TokensToday == nil || b.TokensToday.Input != 0 {
		t.Errorf("team/b = %+v, want ok with no tokens", b)
	}
	table, _, _ := shogun(t, "accounts", "-w", ws)
	if !strings.Contains(table, "limited") || !strings.Contains(table, until.Local().Format("15:04")) {
		t.Errorf("the table does not show team/a limited until %s:\n%s", until.Local().Format("15:04"), table)
	}
}
