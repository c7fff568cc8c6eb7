//go:build !windows

package console_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/shogun-dev/shogun/console/consoletest"
	"github.com/shogun-dev/shogun/control"
	"github.com/shogun-dev/shogun/shoguntest"
)

// claudeReply is an assistant line of a Claude Code transcript, as 2.1.197
// writes it (shortened), in folder cwd.
func claudeReply(id string, at time.Time, cwd string, in, out, cacheRead int64) string {
	return fmt.Sprintf(`{"parentUuid":"p","isSidechain":false,"message":{"content":[{"text":"ok","type":"text"}],"id":%q,`+
		`"model":"claude-opus-4-5","role":"assistant","stop_reason":"end_turn","stop_sequence":null,"type":"message",`+
		`"usage":{"input_tokens":%d,"cache_creation_input_tokens":0,"cache_read_input_tokens":%d,"output_tokens":%d,`+
		`"service_tier":"standard"}},"requestId":"req_%s","type":"assistant","uuid":"u-%s","timestamp":%q,`+
		`"userType":"external","cwd":%q,"sessionId":"s1","version":"2.1.197"}`+"\n",
		id, in, cacheRead, out, id, id, at.UTC().Format("2006-01-02T15:04:05.000Z"), cwd)
}

// The Usage page shows what GET /v1/usage counts: each role's tokens and
// estimated cost in its table, each role's tokens of the day in the chart;
// and a task's page shows the task's own tokens. The tokens come from a
// Claude role's transcript, written as Claude Code writes it: one reply
// before the task (the role's alone), one while it worked on it.
func TestUsagePageShowsTheTokensTheAPICounts(t *testing.T) {
	home := t.TempDir()
	coder := strings.Replace(consoletest.SimRole("coder", "--work-time", "3s"), "cli: generic", "cli: claude", 1)
	coder = strings.Replace(coder, `command: {exec: "${SHOGUN_EXE}",`, fmt.Sprintf(`command: {env: {CLAUDE_CONFIG_DIR: %q}, exec: "${SHOGUN_EXE}",`, home), 1)
	ws := consoletest.Start(t, bin, coder, consoletest.SimRole("idle"))
	ws.WaitState(t, "coder", "ready")
	cwd, err := filepath.EvalSymlinks(ws.Dir)
	if err != nil {
		t.Fatal(err)
	}
	project := filepath.Join(home, "projects", regexp.MustCompile(`[^a-zA-Z0-9]`).ReplaceAllString(cwd, "-"))
	if err := os.MkdirAll(project, 0o700); err != nil {
		t.Fatal(err)
	}
	transcript := filepath.Join(project, "s1.jsonl")
	appendReply := func(line string) {
		f, err := os.OpenFile(transcript, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(line); err != nil {
			t.Fatal(err)
		}
	}
	appendReply(claudeReply("msg_hello", time.Now(), cwd, 7, 3, 0))

	if out, err := cli(ws, "send", "--to", "coder", "--title", "Count the coins", "--body", "all of them"); err != nil {
		t.Fatalf("send: %v %s", err, out)
	}
	var taskID string
	shoguntest.WaitFor(t, "the task delivered", 30*time.Second, func() bool {
		for _, r := range ws.Status(t).Roles {
			if r.ID == "coder" && r.TaskID != "" && r.TaskStatus == "delivered" {
				taskID = r.TaskID
				return true
			}
		}
		return false
	})
	appendReply(claudeReply("msg_work", time.Now(), cwd, 1200, 340, 56000))
	// The report closes the task, and the records are read then.
	var byRole control.UsageReply
	shoguntest.WaitFor(t, "both replies counted", 30*time.Second, func() bool {
		b, code := ws.Get(t, "/v1/usage?by=role")
		return code == 200 && json.Unmarshal(b, &byRole) == nil && byRole.Total.Calls == 2
	})
	var byTask control.UsageReply
	if b, code := ws.Get(t, "/v1/usage?by=task"); code != 200 || json.Unmarshal(b, &byTask) != nil {
		t.Fatalf("GET /v1/usage?by=task: %d %s", code, b)
	}
	var taskTokens int64
	for _, r := range byTask.Rows {
		if r.Key == taskID {
			taskTokens = r.Tokens.Total()
		}
	}
	if taskTokens != 1200+340+56000 {
		t.Fatalf("the API counts %d tokens for task %s, want the reply during it (%+v)", taskTokens, taskID, byTask.Rows)
	}

	ctx := ws.Browser(t)
	if err := chromedp.Run(ctx, ws.Navigate("#/usage")); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the coder's row", `!!document.querySelector('#usage-roles tr[data-key="coder"]')`)
	var page struct {
		Tokens, Total string
		Cost, Nav     string
		Bars          map[string]int64
	}
	if err := chromedp.Run(ctx, chromedp.Evaluate(`({
		Tokens: document.querySelector('#usage-roles tbody tr[data-key="coder"]').dataset.tokens,
		Total: document.querySelector('#usage-roles tfoot tr').dataset.tokens,
		Cost: document.querySelector('#usage-roles tbody tr[data-key="coder"] td.cost').textContent,
		Nav: document.querySelector('#nav a.active').textContent,
		Bars: Object.fromEntries([...document.querySelectorAll('#usage-svg rect[data-role]')].map(r => [r.dataset.role + ' ' + r.dataset.day, Number(r.dataset.tokens)])),
	})`, &page)); err != nil {
		t.Fatal(err)
	}
	row := byRole.Rows[0]
	today := time.Now().UTC().Format(time.DateOnly)
	if len(byRole.Rows) != 1 || row.Key != "coder" || page.Tokens != fmt.Sprint(row.Tokens.Total()) || page.Total != fmt.Sprint(byRole.Total.Tokens.Total()) {
		t.Errorf("the table shows coder %s, total %s; the API has %+v", page.Tokens, page.Total, byRole)
	}
	if want := fmt.Sprintf("$%.4f", row.CostUSD); page.Cost != want || row.CostUSD == 0 || row.CostUSD >= 1 {
		t.Errorf("the table's cost = %q, the API's %v", page.Cost, row.CostUSD)
	}
	if want := map[string]int64{"coder " + today: row.Tokens.Total()}; fmt.Sprint(page.Bars) != fmt.Sprint(want) {
		t.Errorf("the chart's bars = %v, want %v", page.Bars, want)
	}
	if page.Nav != "Usage" {
		t.Errorf("the active tab = %q", page.Nav)
	}

	// A budget the coder has spent: the page and the Team page say so.
	settings := filepath.Join(ws.Dir, "config", "settings.yaml")
	b, err := os.ReadFile(settings)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(settings, append(b, "\nusage:\n  budgets:\n    roles:\n      coder: {tokens: 50k}\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	shoguntest.WaitFor(t, "the budget in the API", 30*time.Second, func() bool {
		b, code := ws.Get(t, "/v1/usage?by=role")
		return code == 200 && json.Unmarshal(b, &byRole) == nil && len(byRole.Budgets) == 1
	})
	if got := byRole.Budgets[0]; got.Role != "coder" || !got.Reached || got.Text != "57.5k of 50k tokens today" {
		t.Errorf("the API's budget = %+v", got)
	}
	if err := chromedp.Run(ctx, chromedp.Evaluate(`document.querySelector('#usage-refresh').click()`, nil)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the reached budget on the page", `(document.querySelector('#usage-budgets tr[data-role="coder"][data-reached="true"]') || {textContent: ''}).textContent.includes('57.5k of 50k tokens today')`)
	if err := chromedp.Run(ctx, ws.Navigate("#/team")); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the hold on the coder's card", `(document.querySelector('.role[data-role="coder"] .note') || {textContent: ''}).textContent === 'budget reached: 57.5k of 50k tokens today'`)

	// The task's page shows its own tokens, not the role's before it.
	if err := chromedp.Run(ctx, ws.Navigate("#/tasks/"+taskID)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the task's tokens", `!!document.querySelector('#task-tokens')`)
	var shown string
	if err := chromedp.Run(ctx, chromedp.Evaluate(`document.querySelector('#task-tokens').dataset.total + ' ' + document.querySelector('#task-tokens').textContent`, &shown)); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprint(taskTokens) + " 57.5k (input 1200 · output 340 · cache read 56000 · cache write 0 · reasoning 0) · usage"; shown != want {
		t.Errorf("the task's page shows %q, want %q", shown, want)
	}
}
