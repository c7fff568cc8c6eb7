//go:build !windows

package console_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/shogun-dev/shogun/console/consoletest"
	"github.com/shogun-dev/shogun/control"
	"github.com/shogun-dev/shogun/shoguntest"
)

// The Tasks page counts the rows it shows, those come live included, and a
// task's page links the subtasks it caused: a karo's order and the parts
// it handed down.
func TestTasksPageCountsLiveRowsAndLinksSubtasks(t *testing.T) {
	ws := consoletest.Start(t, bin, consoletest.SimRole("karo", "--delegate", "ashigaru1,ashigaru2"),
		consoletest.SimRole("ashigaru1", "--work-time", "200ms"), consoletest.SimRole("ashigaru2", "--work-time", "200ms"))
	ws.WaitState(t, "karo", "ready")
	ctx := ws.Browser(t)
	if err := chromedp.Run(ctx, ws.Navigate("#/tasks")); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the empty list counted", `(document.querySelector('#tasks-count') || {}).textContent === '0 task(s)'`)
	if out, err := cli(ws, "send", "--to", "karo", "--title", "Fortify the gate", "--body", "both sides"); err != nil {
		t.Fatalf("send: %v %s", err, out)
	}
	// The order and its two parts come by the event stream.
	waitJS(t, ctx, "three rows", `document.querySelectorAll('#tasks tr[data-task]').length === 3`)
	waitJS(t, ctx, "three counted", `(document.querySelector('#tasks-count') || {}).textContent === '3 task(s)'`)

	var order control.Task
	shoguntest.WaitFor(t, "the order done", 60*time.Second, func() bool {
		for _, tk := range tasks(t, ws) {
			if tk.Title == "Fortify the gate" && tk.Status == "done" {
				order = tk
				return true
			}
		}
		return false
	})
	if err := chromedp.Run(ctx, ws.Navigate("#/tasks/"+order.ID)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the subtasks linked", `document.querySelectorAll('#task-subtasks a[href^="#/tasks/"]').length === 2`)
	var text string
	if err := chromedp.Run(ctx, chromedp.Evaluate(`document.querySelector('#task-subtasks').textContent`, &text)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text, "ashigaru1") || !strings.Contains(text, "ashigaru2") {
		t.Errorf("the subtasks: %q", text)
	}
	// A link leads to the subtask, which names its cause.
	if err := chromedp.Run(ctx, chromedp.Click(`#task-subtasks a`, chromedp.ByQuery)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the subtask's page", `(document.querySelector('#task-facts') || {textContent: ''}).textContent.includes(`+js(order.ID)+`) && location.hash !== `+js("#/tasks/"+order.ID))
}

// tasks are the workspace's tasks, as `shogun tasks --json` prints them.
func tasks(t *testing.T, ws *consoletest.Workspace) []control.Task {
	t.Helper()
	b, code := ws.Get(t, "/v1/tasks")
	if code != 200 {
		t.Fatalf("GET /v1/tasks: %d %s", code, b)
	}
	var r control.TasksReply
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return r.Tasks
}

// The New-role form lists every problem of a role it cannot create, each
// with its line in roles.yaml as it would be, an id that is not one
// included.
func TestNewRoleFormListsEveryProblemWithItsLine(t *testing.T) {
	ws := consoletest.Start(t, bin, consoletest.SimRole("a"))
	ws.WaitState(t, "a", "ready")
	ctx := ws.Browser(t)
	if err := chromedp.Run(ctx,
		ws.Navigate("#/roles"),
		chromedp.Click(`#new-role`, chromedp.ByQuery),
		chromedp.WaitVisible(`#role-form[data-mode="create"]`, chromedp.ByQuery),
		chromedp.SetValue(`#role-form [name="id"]`, "Big Boss", chromedp.ByQuery),
		chromedp.SetValue(`#role-form [name="terminal.cols"]`, "wide", chromedp.ByQuery),
		chromedp.SetValue(`#role-form [name="ready_pattern"]`, "([", chromedp.ByQuery),
		chromedp.Click(`#role-save`, chromedp.ByQuery),
	); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the problems listed", `document.querySelectorAll('#form-errors li').length === 3`)
	var items []string
	if err := chromedp.Run(ctx, chromedp.Evaluate(`[...document.querySelectorAll('#form-errors li')].map(li => li.textContent)`, &items)); err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{`invalid role id "Big Boss"`, `"cols" must be an integer`, `"ready_pattern" is not a valid regular expression`} {
		if i >= len(items) || !strings.HasPrefix(items[i], "config/roles.yaml:") || !strings.Contains(items[i], want) {
			t.Errorf("problem %d: want config/roles.yaml:LINE:COL: …%s…; the form lists %q", i, want, items)
		}
	}
}

// "Type line" into a busy role waits until the role is idle, and the page
// says so while it waits rather than only greying the button.
func TestTypeLineIntoABusyRoleSaysItWaits(t *testing.T) {
	ws := consoletest.Start(t, bin, consoletest.SimRole("ashigaru1", "--work-time", "6s"))
	ws.WaitState(t, "ashigaru1", "ready")
	ctx := ws.Browser(t)
	if err := chromedp.Run(ctx, ws.Navigate("#/terminal/ashigaru1")); err != nil {
		t.Fatal(err)
	}
	if out, err := cli(ws, "send", "--to", "ashigaru1", "--title", "Polish the armour", "--body", "every plate"); err != nil {
		t.Fatalf("send: %v %s", err, out)
	}
	waitJS(t, ctx, "ashigaru1 busy", `(document.querySelector('#term-state') || {}).textContent === 'busy'`)
	if err := chromedp.Run(ctx,
		chromedp.SetValue(`#type-line`, "status please", chromedp.ByQuery),
		chromedp.Click(`#type-send`, chromedp.ByQuery),
	); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the button saying why it waits", `document.querySelector('#type-send').disabled && document.querySelector('#type-send').textContent.includes('waits until idle')`)
	waitJS(t, ctx, "the note saying why", `document.querySelector('#type-note').textContent.includes('ashigaru1 is busy')`)
	waitJS(t, ctx, "typed once idle", `!document.querySelector('#type-send').disabled && document.querySelector('#type-send').textContent === 'Type line' && document.querySelector('#type-note').textContent === ''`)
}
