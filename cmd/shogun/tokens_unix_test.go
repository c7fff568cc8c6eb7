//go:build !windows

package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/config"
	"github.com/shogun-dev/shogun/control"
	"github.com/shogun-dev/shogun/shoguntest"
	"github.com/shogun-dev/shogun/store"
	"github.com/shogun-dev/shogun/usage"
)

// A history with the tokens the supervisor read from two roles' CLIs: a
// Claude reply during ashigaru1's first task, a reply of a model without a
// price to ashigaru2 outside any task, on the next day.
func usageWorkspace(t *testing.T) (ws string) {
	t.Helper()
	ws, db := skillsWorkspace(t)
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	during := time.Date(2026, 11, 22, 9, 1, 0, 500_000_000, time.UTC) // t-20261122-0001: 9:01:00 to 9:01:01
	err = errors.Join(
		st.AddUsage(store.UsageFile{Role: "ashigaru1", CLI: "claude", Path: "/h/.claude/projects/p/a.jsonl", Cursor: usage.Cursor{Offset: 10}},
			[]usage.Record{{Key: "msg_1/req_1", At: during, Model: "claude-opus-4-5-20251101",
				Tokens: usage.Tokens{Input: 1_000_000, Output: 100_000, CacheRead: 2_000_000}}}, during),
		st.AddUsage(store.UsageFile{Role: "ashigaru2", CLI: "codex", Path: "/h/.codex/sessions/r.jsonl", Cursor: usage.Cursor{Offset: 10}},
			[]usage.Record{{Key: "resp_1", At: during.AddDate(0, 0, 1), Model: "fake-model",
				Tokens: usage.Tokens{Input: 400, Output: 100, Reasoning: 20}}}, during),
		st.Close())
	if err != nil {
		t.Fatal(err)
	}
	return ws
}

func TestUsageCountsTokensAndEstimatesCost(t *testing.T) {
	ws := usageWorkspace(t)

	out := jsonOutput(t, "usage", "--workspace", ws, "--json")
	shoguntest.CheckOutput(t, shoguntest.ReadDocShape(t, "api.md", "## GET /v1/usage — `UsageReply`"), control.UsageReply{}, out)
	var rep control.UsageReply
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Rows) != 2 || rep.Rows[0].Key != "ashigaru1" || rep.Rows[1].Key != "ashigaru2" {
		t.Fatalf("rows by role = %+v", rep.Rows)
	}
	// Opus as of 2026-11: $5 input, $25 output, $0.50 cache read per million.
	if a1 := rep.Rows[0]; a1.CostUSD != 5+2.5+1 || a1.Tokens.Input != 1_000_000 || a1.Calls != 1 {
		t.Errorf("ashigaru1 = %+v, want $8.50 for its million input tokens", a1)
	}
	if a2 := rep.Rows[1]; a2.CostUSD != 0 || len(a2.Unpriced) != 1 || a2.Unpriced[0] != "fake-model" || a2.Tokens.Reasoning != 20 {
		t.Errorf("ashigaru2 = %+v, want its tokens counted and its model unpriced", a2)
	}
	if rep.Total.Tokens.Input != 1_000_400 || rep.PricesAsOf == "" {
		t.Errorf("total %+v, prices as of %q", rep.Total, rep.PricesAsOf)
	}

	// By task: the reply during the task is the task's, the other none's.
	var byTask control.UsageReply
	if err := json.Unmarshal(jsonOutput(t, "usage", "--workspace", ws, "--json", "--by", "task"), &byTask); err != nil {
		t.Fatal(err)
	}
	if len(byTask.Rows) != 2 || byTask.Rows[0].Key != "" || byTask.Rows[1].Key != "t-20261122-0001" ||
		byTask.Rows[1].Tokens.Input != 1_000_000 {
		t.Errorf("rows by task = %+v", byTask.Rows)
	}
	// --since leaves out the days before.
	var later control.UsageReply
	if err := json.Unmarshal(jsonOutput(t, "usage", "--workspace", ws, "--json", "--since", "2026-11-23"), &later); err != nil {
		t.Fatal(err)
	}
	if len(later.Rows) != 1 || later.Rows[0].Key != "ashigaru2" || later.Since != "2026-11-23" {
		t.Errorf("since the 23rd = %+v", later)
	}

	// The table, with the task-less row named and the unknown price said.
	text, errOut, code := shogun(t, "usage", "--workspace", ws, "--by", "task")
	if code != 0 {
		t.Fatalf("usage: exit %d: %s", code, errOut)
	}
	for _, want := range []string{"(no task)", "t-20261122-0001", "TOTAL", "$8.50+?", "No price for fake-model"} {
		if !strings.Contains(text, want) {
			t.Errorf("usage table lacks %q:\n%s", want, text)
		}
	}

	// A price in settings.yaml prices the unknown model.
	settings := filepath.Join(ws, "config", "settings.yaml")
	b, err := os.ReadFile(settings)
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, "\nusage:\n  prices:\n    fake-model: {input: 1000, output: 2000}\n"...)
	if err := os.WriteFile(settings, b, 0o644); err != nil {
		t.Fatal(err)
	}
	var priced control.UsageReply
	if err := json.Unmarshal(jsonOutput(t, "usage", "--workspace", ws, "--json"), &priced); err != nil {
		t.Fatal(err)
	}
	if a2 := priced.Rows[1]; a2.CostUSD != 0.4+0.2 || len(a2.Unpriced) != 0 {
		t.Errorf("ashigaru2 priced by settings = %+v, want $0.60", a2)
	}

	if _, errOut, code := shogun(t, "usage", "--workspace", ws, "--by", "week"); code != exitUsage || !strings.Contains(errOut, "--by") {
		t.Errorf("usage --by week: exit %d, %s", code, errOut)
	}
}

// `shogun tasks --json` carries a task's tokens; a task without any has no
// tokens key.
func TestTasksJSONCarriesTokens(t *testing.T) {
	ws := usageWorkspace(t)
	var tasks []control.Task
	if err := json.Unmarshal(jsonOutput(t, "tasks", "--workspace", ws, "--json"), &tasks); err != nil {
		t.Fatal(err)
	}
	for _, tk := range tasks {
		switch {
		case tk.ID == "t-20261122-0001" && (tk.Tokens == nil || tk.Tokens.CacheRead != 2_000_000):
			t.Errorf("%s tokens = %+v, want its reply's", tk.ID, tk.Tokens)
		case tk.ID != "t-20261122-0001" && tk.Tokens != nil:
			t.Errorf("%s tokens = %+v, want none", tk.ID, tk.Tokens)
		}
	}
	var one control.Task
	if err := json.Unmarshal(jsonOutput(t, "tasks", "--workspace", ws, "--json", "t-20261122-0001"), &one); err != nil {
		t.Fatal(err)
	}
	if one.Tokens == nil || one.Tokens.Output != 100_000 {
		t.Errorf("tasks TASK --json tokens = %+v", one.Tokens)
	}
}

// `shogun usage` holds the daily budgets of settings.yaml against today's
// tokens, as the running team does.
func TestUsageShowsTodaysBudgets(t *testing.T) {
	ws, db := skillsWorkspace(t)
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	err = errors.Join(
		st.AddUsage(store.UsageFile{Role: "ashigaru1", CLI: "claude", Path: "/h/a.jsonl"},
			[]usage.Record{{Key: "m1", At: now, Model: "claude-opus-4-5", Tokens: usage.Tokens{Input: 1_000_000, Output: 200_000}}}, now),
		st.Close())
	if err != nil {
		t.Fatal(err)
	}
	settings := filepath.Join(ws, "config", "settings.yaml")
	b, err := os.ReadFile(settings)
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, "\nusage:\n  budgets:\n    team: {cost_usd: 100}\n    roles:\n      ashigaru1: {tokens: 1M}\n"...)
	if err := os.WriteFile(settings, b, 0o644); err != nil {
		t.Fatal(err)
	}
	text, errOut, code := shogun(t, "usage", "--workspace", ws)
	if code != 0 {
		t.Fatalf("usage: exit %d: %s", code, errOut)
	}
	// Opus: $5 + 0.2 × $25 = $10 of the team's $100.
	for _, want := range []string{"Team daily budget: 10%, $10.00 of $100.00 today.",
		"ashigaru1's daily budget: 120%, 1.2M of 1M tokens today: reached, no new task is typed."} {
		if !strings.Contains(text, want) {
			t.Errorf("usage lacks %q:\n%s", want, text)
		}
	}
	var rep control.UsageReply
	if err := json.Unmarshal(jsonOutput(t, "usage", "--workspace", ws, "--json"), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Budgets) != 2 || rep.Budgets[0].Role != "" || rep.Budgets[1].SpentTokens != 1_200_000 || !rep.Budgets[1].Reached {
		t.Errorf("budgets = %+v", rep.Budgets)
	}
}

// `shogun send` to a role whose daily budget is reached queues the task
// (exit 0, its id on stdout) and says on stderr that the role gets no new
// task for now, and why. Before, it said "queued" and nothing else: the
// task sat in the queue with no word of the budget.
func TestSendToARoleOverItsBudgetSaysItWaits(t *testing.T) {
	ws := teamWorkspace(t, simEntry("ashigaru1")+"    startup_prompt: \"\"\n")
	cfg, err := config.Load(ws, os.LookupEnv)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(cfg.Settings.Data.SQLitePath)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	err = errors.Join(
		st.AddUsage(store.UsageFile{Role: "ashigaru1", CLI: "claude", Path: "/h/a.jsonl"},
			[]usage.Record{{Key: "m1", At: now, Model: "claude-opus-4-5", Tokens: usage.Tokens{Input: 1_000_000, Output: 200_000}}}, now),
		st.Close())
	if err != nil {
		t.Fatal(err)
	}
	settings := filepath.Join(ws, "config", "settings.yaml")
	b, err := os.ReadFile(settings)
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, "\nusage:\n  budgets:\n    roles:\n      ashigaru1: {tokens: 1M}\n"...)
	if err := os.WriteFile(settings, b, 0o644); err != nil {
		t.Fatal(err)
	}
	startBackground(t, ws)
	waitStatus(t, ws, "ashigaru1 held by its budget", func(s control.StatusReply) bool {
		return len(s.Roles) == 1 && s.Roles[0].Budget != ""
	})
	out, errOut, code := shogun(t, "send", "-w", ws, "--to", "ashigaru1", "--title", "More work", "--body", "b")
	if code != 0 || strings.TrimSpace(out) == "" {
		t.Fatalf("send: exit %d, stdout %q; want 0 and the command id\n%s", code, out, errOut)
	}
	for _, want := range []string{"queued as task", "but ashigaru1 gets no new task for now: budget reached: 1.2M of 1M tokens today (usage.budgets"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("send's stderr lacks %q:\n%s", want, errOut)
		}
	}
}
