//go:build !windows

package queue_test

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/approvals"
	"github.com/shogun-dev/shogun/notify"
	"github.com/shogun-dev/shogun/policy"
	"github.com/shogun-dev/shogun/store"
	"github.com/shogun-dev/shogun/supervisor"
)

// A role whose agent waits on a person (its CLI's hook asked, and the
// policy says ask) is waiting, not busy or ready: the status names the
// question and how to answer it, a question notification goes out, and
// the stall clock does not run against the agent while it waits — it is
// reminded only stall_after after the answer, not during the wait.
func TestAWaitingRoleIsSeenAndNotStalled(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "a.jsonl")
	const stallAfter = 1500 * time.Millisecond
	ws := testWorkspace(t, with(sim("ashigaru1", rec, "--skip-reports", "1", "--work-time", "300ms"),
		"stall_after: 1500ms", `remind: "Reminder: write your report."`))
	write(t, filepath.Join(ws, "config", "policy.yaml"), "default: ask\n")
	hook, notes := notifyHook(t)
	settings(t, ws, hook)
	r := startTeam(t, ws)
	r.drop(t, "a.yaml", "to: ashigaru1\ntitle: Held work\nbody: do it\n")
	tasks := r.waitTasks(t, "the task delivered", 30*time.Second, func(ts []store.Task) bool {
		return len(ts) == 1 && ts[0].Status == store.StatusDelivered
	})
	id := tasks[0].ID

	// The agent's hook asks, as a CLI does before a command.
	a, err := r.team.Approvals().Ask(approvals.Request{Role: "ashigaru1", CLI: "claude",
		Action: policy.Action{Kind: policy.Shell, Command: "python3 deploy.py"}})
	if err != nil || a.Decision != store.ApprovalPending {
		t.Fatalf("ask = %+v, %v", a, err)
	}
	role, _ := r.team.Supervisor().Role("ashigaru1")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if st, err := role.WaitState(ctx, supervisor.Waiting); err != nil {
		t.Fatalf("the role is %s with a question open, want waiting", st)
	}
	snap, err := r.team.Queue().Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	want := "role ashigaru1 waits for a person: question " + strconv.FormatInt(a.ID, 10) + ": shell python3 deploy.py"
	if len(snap.Roles) != 1 || snap.Roles[0].State != "waiting" || !strings.Contains(strings.Join(snap.Attention, "\n"), want) {
		t.Errorf("status: roles %+v, attention %q; want waiting and %q", snap.Roles, snap.Attention, want)
	}
	waitFor(t, "the waiting state in the history", 10*time.Second, func() bool {
		for _, e := range r.events(t, "state", "") {
			if e.Role == "ashigaru1" && strings.HasPrefix(e.Message, "waiting: ") {
				return true
			}
		}
		return false
	})
	waitFor(t, "the question notification", 20*time.Second, func() bool {
		for _, e := range notified(t, notes) {
			if e.Kind == notify.KindQuestion && e.Role == "ashigaru1" && strings.Contains(e.Message, "--id "+strconv.FormatInt(a.ID, 10)) {
				return true
			}
		}
		return false
	})

	// Three times stall_after pass while it waits: no reminder, still
	// waiting. (Without the waiting state the agent, idle on its screen,
	// is reminded within stall_after.)
	time.Sleep(3 * stallAfter)
	if n := len(r.events(t, "reminded", id)); n != 0 || role.State() != supervisor.Waiting {
		t.Fatalf("while the question waits: %d reminders, state %s", n, role.State())
	}

	answered := time.Now()
	if _, err := r.team.Approvals().Answer(a.ID, true, false, "cli", ""); err != nil {
		t.Fatal(err)
	}
	if st, err := role.WaitState(ctx, supervisor.Ready, supervisor.Busy); err != nil {
		t.Fatalf("after the answer the role is %s", st)
	}
	// Its silence counts from the answer on: reminded after stall_after.
	waitFor(t, "the reminder after the answer", 30*time.Second, func() bool { return len(r.events(t, "reminded", id)) == 1 })
	if at := r.events(t, "reminded", id)[0].At; at.Before(answered.Add(stallAfter)) {
		t.Errorf("reminded at %s, %s after the answer: the wait counted as silence", at.Format(time.RFC3339Nano), at.Sub(answered))
	}
}
