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
)

// taskList is what `shogun tasks --json` prints; false while the
// supervisor started in the background has no history yet ("no history
// yet", exit 1).
func taskList(t *testing.T, ws string) ([]control.Task, bool) {
	t.Helper()
	out, errOut, code := shogun(t, "tasks", "--json", "-w", ws)
	if code != 0 {
		if strings.Contains(errOut, "no history yet") {
			return nil, false
		}
		t.Fatalf("tasks --json: %s", errOut)
	}
	var ts []control.Task
	if err := json.Unmarshal([]byte(out), &ts); err != nil {
		t.Fatalf("tasks --json: %v\n%s", err, out)
	}
	return ts, true
}

func waitTaskStatus(t *testing.T, ws, title, status string) control.Task {
	t.Helper()
	var found control.Task
	shoguntest.WaitFor(t, "task "+title+" "+status, 60*time.Second, func() bool {
		tasks, _ := taskList(t, ws)
		for _, tk := range tasks {
			if tk.Title == title && tk.Status == status {
				found = tk
				return true
			}
		}
		return false
	})
	return found
}

// A task the agent never reports on ends stalled; status, tasks and the
// dashboard show it, `shogun retry` delivers it again, and `shogun cancel`
// cancels a task with its reason.
func TestStalledTaskRetriedAndCancelledFromTheCLI(t *testing.T) {
	ws := teamWorkspace(t, simEntry("ashigaru1", "--skip-reports", "3", "--work-time", "1s")+
		"    stall_after: 700ms\n", simEntry("slow", "--work-time", "30s"))
	startBackground(t, ws)
	if _, errOut, code := shogun(t, "send", "-w", ws, "--to", "ashigaru1", "--title", "Never reported", "--body", "do it"); code != 0 {
		t.Fatalf("send: %s", errOut)
	}
	stalled := waitTaskStatus(t, ws, "Never reported", "stalled")

	out, _, _ := shogun(t, "status", "-w", ws)
	if !strings.Contains(out, "attention: role ashigaru1 needs a person: task "+stalled.ID+" is stalled") {
		t.Errorf("status does not ask for a person:\n%s", out)
	}
	out, _, _ = shogun(t, "tasks", "-w", ws, "--status", "stalled")
	if !strings.Contains(out, stalled.ID) {
		t.Errorf("tasks --status stalled does not list %s:\n%s", stalled.ID, out)
	}

	if _, errOut, code := shogun(t, "retry", stalled.ID, "-w", ws); code != 0 || !strings.Contains(errOut, "queued again for ashigaru1") {
		t.Fatalf("retry: exit %d, %s", code, errOut)
	}
	done := waitTaskStatus(t, ws, "Never reported", "done")
	if done.Attempts != 2 {
		t.Errorf("attempts after retry = %d, want 2", done.Attempts)
	}
	if _, errOut, code := shogun(t, "retry", stalled.ID, "-w", ws); code == 0 || !strings.Contains(errOut, "is done (only stalled, undelivered or failed tasks are retried)") {
		t.Errorf("retry of a done task: exit %d, %q", code, errOut)
	}

	if _, errOut, code := shogun(t, "send", "-w", ws, "--to", "slow", "--title", "Takes forever", "--body", "wait"); code != 0 {
		t.Fatalf("send: %s", errOut)
	}
	slow := waitTaskStatus(t, ws, "Takes forever", "delivered")
	if _, errOut, code := shogun(t, "cancel", slow.ID, "--reason", "done by hand", "-w", ws); code != 0 || !strings.Contains(errOut, "cancelled") {
		t.Fatalf("cancel: exit %d, %s", code, errOut)
	}
	got := waitTaskStatus(t, ws, "Takes forever", "cancelled")
	if got.Summary != "done by hand" {
		t.Errorf("cancelled task summary = %q", got.Summary)
	}
	if _, errOut, code := shogun(t, "cancel", "t-19990101-0001", "-w", ws); code == 0 || !strings.Contains(errOut, "unknown task") {
		t.Errorf("cancel of an unknown task: exit %d, %q", code, errOut)
	}
}

// A role out of quota shows until when, in status and its JSON.
func TestStatusShowsLimitedUntil(t *testing.T) {
	ws := teamWorkspace(t, simEntry("ashigaru1", "--limit-screen", "--limit-reset", "5m")+
		"    limit_pattern: \"usage limit · resets (?P<reset>[0-9:]+)\"\n")
	startBackground(t, ws)
	st := waitStatus(t, ws, "limited", func(s control.StatusReply) bool { return stateOf(s, "ashigaru1") == "limited" })
	until := st.Roles[0].LimitedUntil
	if d := time.Until(until); d < 4*time.Minute || d > 6*time.Minute {
		t.Errorf("limited_until = %v, want about 5 minutes from now", until)
	}
	out, _, _ := shogun(t, "status", "-w", ws)
	if want := "limited until " + until.Local().Format("15:04"); !strings.Contains(out, want) {
		t.Errorf("status does not say %q:\n%s", want, out)
	}
	shoguntest.WaitFor(t, "the dashboard saying until when", 15*time.Second, func() bool {
		b, _ := os.ReadFile(filepath.Join(ws, "runtime", "dashboard.md"))
		return strings.Contains(string(b), "| ashigaru1 | limited until "+until.Local().Format("15:04")+" |")
	})
}
