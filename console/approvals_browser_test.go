//go:build !windows

package console_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/shogun-dev/shogun/console/consoletest"
	"github.com/shogun-dev/shogun/control"
	"github.com/shogun-dev/shogun/shoguntest"
)

// The Approvals page lists every decision on a role's actions, the
// agent's text shown as text, by decision; the task the role was doing
// shows the same decisions on its own page.
func TestApprovalsPageAndTheTasksApprovals(t *testing.T) {
	ws := consoletest.Start(t, bin, consoletest.SimRole("worker", "--work-time", "60s"))
	ws.WaitState(t, "worker", "ready")
	if out, err := cli(ws, "send", "--to", "worker", "--title", "Ship the release", "--body", "tag it"); err != nil {
		t.Fatalf("send: %v %s", err, out)
	}
	var task control.Task
	shoguntest.WaitFor(t, "the task delivered", 30*time.Second, func() bool {
		for _, tk := range tasks(t, ws) {
			if tk.Title == "Ship the release" && tk.Status == "delivered" {
				task = tk
				return true
			}
		}
		return false
	})
	cl := control.NewClient(ws.Dir)
	// The default policy of shogun init: a force push is denied, an
	// unknown command asked.
	denied, err := cl.Ask(control.ApprovalRequest{Role: "worker", CLI: "claude", Kind: "shell", Command: "git push --force origin main"})
	if err != nil || denied.Decision != "deny" {
		t.Fatalf("a force push: %+v, %v", denied, err)
	}
	asked, err := cl.Ask(control.ApprovalRequest{Role: "worker", CLI: "claude", Kind: "shell", Command: "python3 <b>release</b>.py"})
	if err != nil || asked.Decision != "pending" {
		t.Fatalf("an unknown command: %+v, %v", asked, err)
	}
	if a, err := cl.Answer(asked.ID, control.AnswerRequest{Decision: "allow", Note: "tagged by hand"}); err != nil || a.Decision != "allow" {
		t.Fatalf("answer: %+v, %v", a, err)
	}

	ctx := ws.Browser(t)
	if err := chromedp.Run(ctx, ws.Navigate("#/approvals")); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "two decisions", `document.querySelectorAll('#approvals tr[data-approval]').length === 2`)
	var rows []string
	if err := chromedp.Run(ctx, chromedp.Evaluate(`[...document.querySelectorAll('#approvals tr[data-approval]')].map(r => r.dataset.decision + ' | ' + r.querySelector('.subject').textContent + ' | ' + r.textContent)`, &rows)); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || !strings.HasPrefix(rows[0], "deny | git push --force origin main | ") || !strings.HasPrefix(rows[1], "allow | python3 <b>release</b>.py | ") {
		t.Fatalf("the page lists %q", rows)
	}
	if !strings.Contains(rows[1], "a person (api)") || !strings.Contains(rows[1], "tagged by hand") || !strings.Contains(rows[1], task.ID) {
		t.Errorf("the answered row says %q, want who answered, the note and the task", rows[1])
	}
	if err := chromedp.Run(ctx, chromedp.Click(`#approval-tabs button[data-tab="deny"]`, chromedp.ByQuery)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "only the denied one", `document.querySelectorAll('#approvals tr[data-approval]').length === 1 && !!document.querySelector('#approvals tr[data-decision="deny"]')`)

	if err := chromedp.Run(ctx, ws.Navigate("#/tasks/"+task.ID)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the task's approvals", `document.querySelectorAll('#task-approvals tr[data-approval]').length === 2`)
}
