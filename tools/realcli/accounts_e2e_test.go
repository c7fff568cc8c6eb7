//go:build realcli && linux

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/control"
	"github.com/shogun-dev/shogun/store"
	"github.com/shogun-dev/shogun/tools/fakemodel"
)

// TestClaudeMovesToItsSecondAccountAtTheLimit: a Claude Code role with two
// accounts, each a config folder of its own and an API key of its own. The
// model answers the first key with its usage-limit error; the role moves to
// the second account, its conversation resumed there (the model's next
// requests, with the second key, hold the lines typed before the move), and
// the task is delivered again with a line saying it continues after an
// account change, and finished.
func TestClaudeMovesToItsSecondAccountAtTheLimit(t *testing.T) {
	keys := map[string]string{
		"a": "sk-ant-api03-shogun-offline-account-a-0123456789abcdefghiA",
		"b": "sk-ant-api03-shogun-offline-account-b-0123456789abcdefghiB",
	}
	dirs := t.TempDir()
	var accounts strings.Builder
	accounts.WriteString("    accounts:\n")
	for _, name := range []string{"a", "b"} {
		accounts.WriteString("      - name: " + name + "\n        env:\n")
		accounts.WriteString("          CLAUDE_CONFIG_DIR: " + filepath.Join(dirs, "claude-"+name) + "\n")
		accounts.WriteString("          ANTHROPIC_API_KEY: ${E2E_CLAUDE_KEY_" + strings.ToUpper(name) + "}\n")
	}
	// Each config folder set up as the one home of the other tests is:
	// onboarded, the project trusted, its key approved, the task's tools
	// allowed (Claude Code 2.1.197 reads $CLAUDE_CONFIG_DIR/.claude.json
	// and $CLAUDE_CONFIG_DIR/settings.json).
	setup := func(ws string) error {
		for name, key := range keys {
			dir := filepath.Join(dirs, "claude-"+name)
			if err := writeJSON(filepath.Join(dir, ".claude.json"), map[string]any{
				"hasCompletedOnboarding": true,
				"projects":               map[string]any{ws: map[string]any{"hasTrustDialogAccepted": true}},
				"customApiKeyResponses":  map[string]any{"approved": []string{key[len(key)-20:]}, "rejected": []string{}},
			}); err != nil {
				return err
			}
			if err := writeJSON(filepath.Join(dir, "settings.json"), map[string]any{
				"permissions": map[string]any{"defaultMode": "acceptEdits", "allow": claudeAllowed}}); err != nil {
				return err
			}
		}
		return nil
	}
	tm := startE2EEnv(t, []string{"claude"}, func(string) string { return accounts.String() }, e2ePolicy, false, setup,
		[]string{"E2E_CLAUDE_KEY_A=" + keys["a"], "E2E_CLAUDE_KEY_B=" + keys["b"]})

	body := "Finish this on whichever account has quota.\nfakemodel: limit 1h first-key\nfakemodel: report done via write done on the second account\n"
	sent := time.Now()
	id := tm.send("claude", "Past one account's limit", body)
	task, ok := tm.waitTask(id, 3*time.Minute)
	if !ok || task.Status != store.StatusDone || task.Summary != "done on the second account" {
		t.Fatalf("task = %+v (closed %v); screen:\n%s", task, ok, screen(t, tm.env, tm.ws, "claude"))
	}
	t.Logf("done %.1fs after it was sent", time.Since(sent).Seconds())

	// The first key met the limit; the second went on with the
	// conversation that the first had begun: its requests hold every line
	// typed on the first account (the startup prompt, the nudge) and the
	// nudge typed again after the move.
	limitedKey, typedBefore, typedAfter := "", 0, 0
	for _, r := range tm.model.Requests() {
		if r.Status == 429 {
			limitedKey = r.Key
		}
	}
	for _, r := range tm.model.Requests() {
		switch {
		case len(r.Tools) == 0 || r.Key == "":
		case r.Key == limitedKey:
			typedBefore = max(typedBefore, r.Typed)
		default:
			typedAfter = max(typedAfter, r.Typed)
		}
	}
	if limitedKey == "" || typedBefore == 0 || typedAfter <= typedBefore {
		b, _ := os.ReadFile(filepath.Join(filepath.Dir(tm.model.DumpDir), "model.log"))
		t.Fatalf("want a 429 for one key, then requests with the other holding more typed lines than the first had (%d), got %d; model log:\n%s",
			typedBefore, typedAfter, tail(b, 40))
	}
	// The conversation's file was moved into the second config folder.
	moved, _ := filepath.Glob(filepath.Join(dirs, "claude-b", "projects", "*", "*.jsonl"))
	if len(moved) == 0 {
		t.Errorf("no conversation under %s", filepath.Join(dirs, "claude-b", "projects"))
	}
	accountsOut := shogun(t, tm.env, "accounts", "-w", tm.ws)
	if !strings.Contains(accountsOut, "claude/a") || !strings.Contains(accountsOut, "limited") {
		t.Errorf("shogun accounts =\n%s\nwant claude/a limited", accountsOut)
	}
	// The report comes before the CLI's last answer: let that turn end
	// so the CLI records it, then stop (the last read of the records).
	if !tm.waitState("claude", "ready", time.Minute) {
		t.Fatalf("not ready again after its task; screen:\n%s", screen(t, tm.env, tm.ws, "claude"))
	}
	tm.stop()
	// Tokens are counted once, on whichever account: the conversation
	// copied to the second account is not counted again.
	var servedIn, servedOut int64
	for _, r := range tm.model.Requests() {
		if r.API == "anthropic" && r.InputTokens > 0 && r.Step != "json" {
			servedIn, servedOut = servedIn+int64(r.InputTokens), servedOut+int64(r.OutputTokens)
		}
	}
	var rep control.UsageReply
	if err := json.Unmarshal([]byte(shogun(t, tm.env, "usage", "-w", tm.ws, "--by", "role", "--json")), &rep); err != nil {
		t.Fatal(err)
	}
	if tok := rep.Total.Tokens; tok.Input != servedIn || tok.Output != servedOut {
		t.Errorf("shogun usage counted %d in, %d out; the model served %d in, %d out", tok.Input, tok.Output, servedIn, servedOut)
	}
	var redelivered bool
	for _, e := range tm.events() {
		if e.Kind == "redeliver" && strings.Contains(e.Message, "after an account change (claude/a → claude/b)") {
			redelivered = true
		}
	}
	if !redelivered {
		t.Error("no redeliver event naming the account change claude/a → claude/b")
	}
}

// TestCodexSwitchesAccountAtTheThreshold: a Codex role with two accounts,
// each a CODEX_HOME and a key of its own, and accounts_switch_at 90. The
// model tells the first key its window is 95 % used (Codex's
// x-codex-primary-used-percent header, which Codex records in its
// rollout) as it answers the startup prompt; before the task is typed the
// role moves to the second account, its conversation copied into the
// second CODEX_HOME and resumed there (`codex resume --last`): the second
// key's requests hold the startup prompt typed on the first account. (At
// 90 % and over Codex 0.169 shows an "Approaching rate limits" dialog,
// which would hold the role: hence 80 % against a threshold of 75.)
func TestCodexSwitchesAccountAtTheThreshold(t *testing.T) {
	keys := map[string]string{"a": "sk-shogun-offline-codex-account-a", "b": "sk-shogun-offline-codex-account-b"}
	dirs := t.TempDir()
	var accounts strings.Builder
	accounts.WriteString("    accounts_switch_at: 75\n    accounts:\n")
	for _, name := range []string{"a", "b"} {
		accounts.WriteString("      - name: " + name + "\n        env:\n")
		accounts.WriteString("          CODEX_HOME: " + filepath.Join(dirs, "codex-"+name) + "\n")
		accounts.WriteString("          " + codexModelKey + ": ${E2E_CODEX_KEY_" + strings.ToUpper(name) + "}\n")
	}
	// Each CODEX_HOME set up as the one of the other tests is: its
	// config.toml (the scripted model, the project trusted) and its login.
	setup := func(ws string) error {
		prepared := filepath.Join(filepath.Dir(ws), "home-codex", ".codex")
		for name := range keys {
			dir := filepath.Join(dirs, "codex-"+name)
			if err := os.MkdirAll(dir, 0o700); err != nil {
				return err
			}
			for _, f := range []string{"config.toml", "auth.json"} {
				b, err := os.ReadFile(filepath.Join(prepared, f))
				if err != nil {
					return err
				}
				if err := os.WriteFile(filepath.Join(dir, f), b, 0o600); err != nil {
					return err
				}
			}
		}
		return nil
	}
	spent := fakemodel.CredentialKey(keys["a"])
	tm := startE2EModel(t, []string{"codex"}, func(string) string { return accounts.String() }, e2ePolicy, false, setup,
		[]string{"E2E_CODEX_KEY_A=" + keys["a"], "E2E_CODEX_KEY_B=" + keys["b"]},
		func(m *fakemodel.Server) {
			m.WindowUsed = func(key string) (float64, bool) {
				if key == spent {
					return 80, true
				}
				return 10, true
			}
		})

	// The startup prompt's answer, on account a, recorded the window:
	// the role moves before its first task is typed.
	id := tm.send("codex", "On the second account", "fakemodel: report done via write done on b\n")
	task, ok := tm.waitTask(id, 3*time.Minute)
	if !ok || task.Status != store.StatusDone || task.Summary != "done on b" {
		t.Fatalf("task = %+v (closed %v); screen:\n%s", task, ok, screen(t, tm.env, tm.ws, "codex"))
	}
	if !tm.waitState("codex", "ready", time.Minute) {
		t.Fatalf("not ready again after its task; screen:\n%s", screen(t, tm.env, tm.ws, "codex"))
	}
	tm.stop()
	var moved bool
	for _, e := range tm.events() {
		if e.Kind == "account" && e.TaskID == task.ID &&
			strings.Contains(e.Message, "account codex/a has used 80% of its usage window (accounts_switch_at 75%): moving to account codex/b") {
			moved = true
		}
		if e.Kind == "redeliver" {
			t.Errorf("a task was delivered again: %+v", e)
		}
	}
	if !moved {
		t.Error("no account event on the task saying why codex moved to codex/b")
	}
	typedA, typedB := 0, 0
	for _, r := range tm.model.Requests() {
		switch {
		case len(r.Tools) == 0 || r.Key == "":
		case r.Key == spent:
			typedA = max(typedA, r.Typed)
		default:
			typedB = max(typedB, r.Typed)
			if r.Step == "text: startup prompt" {
				t.Error("the startup prompt was typed again on account b: the conversation started afresh")
			}
		}
	}
	if typedB < 2 || typedB <= typedA {
		b, _ := os.ReadFile(filepath.Join(filepath.Dir(tm.model.DumpDir), "model.log"))
		t.Errorf("requests of the second key hold %d typed lines, want more than the first key's %d (the conversation resumed); model log:\n%s",
			typedB, typedA, tail(b, 40))
	}
	rollouts, _ := filepath.Glob(filepath.Join(dirs, "codex-a", "sessions", "*", "*", "*", "rollout-*.jsonl"))
	if len(rollouts) != 1 {
		t.Fatalf("rollouts of account a: %v", rollouts)
	}
	rel, _ := filepath.Rel(filepath.Join(dirs, "codex-a"), rollouts[0])
	if _, err := os.Stat(filepath.Join(dirs, "codex-b", rel)); err != nil {
		t.Errorf("the conversation was not moved to account b: %v", err)
	}
}
