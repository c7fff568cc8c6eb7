//go:build !windows

package console_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/shogun-dev/shogun/console/consoletest"
	"github.com/shogun-dev/shogun/control"
	"github.com/shogun-dev/shogun/shoguntest"
)

// js quotes s for a JavaScript expression.
func js(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// A task handed to a role from the form is delivered, its row follows its
// status live, and its detail shows the task file, the timeline, the
// report and the role's log. What the task says, markup included, is shown
// as text.
func TestTaskFromTheFormIsDeliveredAndReported(t *testing.T) {
	ws := consoletest.Start(t, bin, consoletest.SimRole("ashigaru1", "--work-time", "1s"), consoletest.SimRole("karo"))
	ws.WaitState(t, "ashigaru1", "ready")
	ctx := ws.Browser(t)
	if err := chromedp.Run(ctx, ws.Navigate("#/tasks")); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the roles in the form", `!!document.querySelector('#send-to option[value="ashigaru1"]') && !!document.querySelector('#send-from option[value="karo"]')`)
	title := `Tidy the <img src=x onerror="window.pwned=1"> folder`
	if err := chromedp.Run(ctx,
		chromedp.SetValue(`#send-to`, "ashigaru1", chromedp.ByQuery),
		chromedp.SetValue(`#send-title`, title, chromedp.ByQuery),
		chromedp.SetValue(`#send-body`, "Sort the files by topic.\n<script>window.pwned=2</script>", chromedp.ByQuery),
		chromedp.SetValue(`#send-priority`, "high", chromedp.ByQuery),
		chromedp.SetValue(`#send-tags`, "docs, tidy", chromedp.ByQuery),
		chromedp.SetValue(`#send-from`, "karo", chromedp.ByQuery),
		chromedp.Click(`#send-submit`, chromedp.ByQuery),
	); err != nil {
		t.Fatal(err)
	}
	// The row comes by the event stream and goes to done without a reload.
	row := `[...document.querySelectorAll('#tasks tr[data-task]')].find(r => r.querySelector('td.title').textContent === ` + js(title) + `)`
	waitJS(t, ctx, "the task's row", `!!(`+row+`)`)
	waitJS(t, ctx, "the task done in its row", `(`+row+`).dataset.status === 'done'`)
	var id string
	if err := chromedp.Run(ctx, chromedp.Evaluate(`(`+row+`).dataset.task`, &id)); err != nil {
		t.Fatal(err)
	}
	// Clicked in the page, in one step: the event stream may render the
	// row again between chromedp finding its link and clicking it ("Could
	// not find node with given id").
	if err := chromedp.Run(ctx, chromedp.Evaluate(`document.querySelector('#tasks tr[data-task="`+id+`"] a').click()`, nil)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the report in the detail", `(document.querySelector('#report-summary') || {}).textContent === `+js("Done: "+title))
	waitJS(t, ctx, "the report in the timeline", `[...document.querySelectorAll('#task-events tr[data-kind]')].some(r => r.dataset.kind === 'report')`)
	waitJS(t, ctx, "the role's log of the task", `(document.querySelector('#task-log') || {}).textContent.includes('Reported `+id+`')`)
	var got struct {
		Title, File, Events, Attempts, Body string
		Imgs                                int
		Pwned                               any
	}
	if err := chromedp.Run(ctx, chromedp.Evaluate(`({
		Title: document.querySelector('#task-title').textContent,
		File: document.querySelector('#task-file').textContent,
		Events: document.querySelector('#task-events').textContent,
		Attempts: document.querySelector('#task-attempts').textContent,
		Body: document.querySelector('#task-body').textContent,
		Imgs: document.querySelectorAll('#page img, #page script').length,
		Pwned: window.pwned === undefined ? null : window.pwned,
	})`, &got)); err != nil {
		t.Fatal(err)
	}
	if got.Title != title || got.Imgs != 0 || got.Pwned != nil || !strings.Contains(got.Body, "<script>window.pwned=2</script>") {
		t.Errorf("the agent's text became markup: title %q, %d img/script elements, pwned %v, body %q", got.Title, got.Imgs, got.Pwned, got.Body)
	}
	if !strings.Contains(got.File, "task_id: "+id) || !strings.Contains(got.Events, "delivered") || !strings.Contains(got.Events, "report") || got.Attempts != "1" {
		t.Errorf("detail: file %q, events %q, attempts %q", got.File, got.Events, got.Attempts)
	}
	// The command was what `shogun send` writes: the history has it as sent.
	b, code := ws.Get(t, "/v1/tasks/"+id)
	var d control.TaskDetailReply
	if code != 200 || json.Unmarshal(b, &d) != nil || d.Task.From != "karo" || d.Task.Priority != "high" ||
		strings.Join(d.Task.Tags, ",") != "docs,tidy" {
		t.Errorf("the task as recorded: %d %s", code, b)
	}
}

// A skill mined from repeated work is approved and exported from the
// Skills page; the file is where `shogun skills export` writes it.
func TestSkillIsApprovedAndExported(t *testing.T) {
	ws := consoletest.Start(t, bin, consoletest.SimRole("ashigaru1", "--work-time", "100ms"))
	ws.WaitState(t, "ashigaru1", "ready")
	for i, body := range []string{"Write this week's status report for the team.", "Write the status report of the week for the team."} {
		if out, err := cli(ws, "send", "--to", "ashigaru1", "--title", "Write the weekly status report", "--body", body); err != nil {
			t.Fatalf("send %d: %v %s", i, err, out)
		}
	}
	// The supervisor scans for skills after the reports.
	var name string
	shoguntest.WaitFor(t, "a pending candidate", 90*time.Second, func() bool {
		b, code := ws.Get(t, "/v1/skills")
		var sk control.SkillsReply
		if code == 200 && json.Unmarshal(b, &sk) == nil && len(sk.Skills) > 0 {
			name = sk.Skills[0].Name
			return true
		}
		return false
	})
	card := fmt.Sprintf(`document.querySelector('.skill[data-skill=%q]')`, name)
	ctx := ws.Browser(t)
	if err := chromedp.Run(ctx, ws.Navigate("#/skills")); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the candidate with its sources", `!!`+card+` && `+card+`.querySelectorAll('ul.sources li').length === 2 && `+card+`.querySelector('pre.body').textContent.length > 0`)
	clickJS(t, ctx, "the skill's Approve", `.skill[data-skill="`+name+`"] button.approve`)
	waitJS(t, ctx, "no pending candidate left", `!`+card)
	if err := chromedp.Run(ctx, chromedp.Click(`#skill-tabs button[data-tab="approved"]`, chromedp.ByQuery)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the candidate approved", `!!`+card+` && `+card+`.dataset.status === 'approved'`)
	if err := chromedp.Run(ctx,
		chromedp.SetValue(`.skill[data-skill="`+name+`"] select.export-target`, "claude", chromedp.ByQuery),
		chromedp.SetValue(`.skill[data-skill="`+name+`"] select.export-layout`, "dir", chromedp.ByQuery),
		chromedp.Click(`.skill[data-skill="`+name+`"] button.export`, chromedp.ByQuery),
	); err != nil {
		t.Fatal(err)
	}
	rel := ".claude/skills/" + name + "/SKILL.md"
	waitJS(t, ctx, "the exported file listed", `!!`+card+` && `+card+`.querySelector('.export-files').textContent.includes(`+js(rel)+`) && `+card+`.dataset.status === 'exported'`)
	b, err := os.ReadFile(filepath.Join(ws.Dir, filepath.FromSlash(rel)))
	if err != nil || !strings.HasPrefix(string(b), "---\nname: "+name+"\n") {
		t.Errorf("%s (%v):\n%s", rel, err, b)
	}
	// The CLI sees the same store: the skill is exported.
	if out, err := cli(ws, "skills", "list", "--status", "exported"); err != nil || !strings.Contains(out, name) {
		t.Errorf("shogun skills list --status exported: %v\n%s", err, out)
	}
}

// The History page: the runs, a past task found by a word of its body, and
// a role's log as text and rendered as a terminal, following live.
func TestHistoryFindsTasksAndShowsLogs(t *testing.T) {
	ws := consoletest.Start(t, bin, consoletest.SimRole("ashigaru1", "--work-time", "200ms"))
	ws.WaitState(t, "ashigaru1", "ready")
	if out, err := cli(ws, "send", "--to", "ashigaru1", "--title", "Count the arrows", "--body", "Every quiver, zebrafinch."); err != nil {
		t.Fatalf("send: %v %s", err, out)
	}
	ctx := ws.Browser(t)
	if err := chromedp.Run(ctx, ws.Navigate("#/history")); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "this run", `[...document.querySelectorAll('#runs tr[data-run]')].some(r => r.textContent.includes('(this one)') && r.textContent.includes('running'))`)
	if err := chromedp.Run(ctx, chromedp.SendKeys(`#history-search`, "zebrafinch", chromedp.ByQuery)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the task found by its body", `document.querySelectorAll('#history-tasks tr[data-task]').length === 1 && document.querySelector('#history-tasks tr[data-task]').textContent.includes('Count the arrows')`)
	waitJS(t, ctx, "the role's log as text", `(document.querySelector('#log-text') || {textContent: ''}).textContent.includes('agent-sim')`)
	if err := chromedp.Run(ctx, chromedp.SetValue(`#log-mode`, "ansi", chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelector('#log-mode').dispatchEvent(new Event('change'))`, nil)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the role's log rendered", `(document.querySelector('#log-term .xterm-rows') || {textContent: ''}).textContent.includes('agent-sim')`)
	// Following: a new task's lines come as they are written.
	if err := chromedp.Run(ctx, chromedp.SetValue(`#log-mode`, "text", chromedp.ByQuery),
		chromedp.Click(`#log-follow`, chromedp.ByQuery)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "following", `document.querySelector('#log-note').textContent === 'following'`)
	if out, err := cli(ws, "send", "--to", "ashigaru1", "--title", "Sharpen the swords", "--body", "All of them."); err != nil {
		t.Fatalf("send: %v %s", err, out)
	}
	waitJS(t, ctx, "the new task in the followed log", `(document.querySelector('#log-text') || {textContent: ''}).textContent.includes('Sharpen the swords')`)
}
