//go:build !windows

package queue_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/notify"
	"github.com/shogun-dev/shogun/queue"
	"github.com/shogun-dev/shogun/shoguntest"
	"github.com/shogun-dev/shogun/store"
)

// with adds role keys to a sim entry.
func with(entry string, keys ...string) string {
	for _, k := range keys {
		entry += "    " + k + "\n"
	}
	return entry
}

// waitSubmit waits until the agent recording to rec was submitted line.
func waitSubmit(t *testing.T, rec, line string) {
	t.Helper()
	waitFor(t, fmt.Sprintf("%q submitted", line), 15*time.Second, func() bool {
		for _, s := range shoguntest.Submits(t, rec) {
			if s.Line == line {
				return true
			}
		}
		return false
	})
}

// settings writes config/settings.yaml.
func settings(t *testing.T, ws, content string) {
	t.Helper()
	write(t, filepath.Join(ws, "config", "settings.yaml"), content)
}

// notifyHook is a settings.yaml that makes every notification append its
// JSON to a file, and the file.
func notifyHook(t *testing.T) (string, string) {
	path := filepath.Join(t.TempDir(), "notified.jsonl")
	return "notify:\n  command: [\"sh\", \"-c\", \"cat >> '" + path + "'; echo >> '" + path + "'\"]\n", path
}

// notified reads the events the notify command got.
func notified(t *testing.T, path string) []notify.Event {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []notify.Event
	for _, line := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var e notify.Event
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("notification %q: %v", line, err)
		}
		out = append(out, e)
	}
	return out
}

func hasNotification(events []notify.Event, kind, taskID string) bool {
	for _, e := range events {
		if e.Kind == kind && e.TaskID == taskID {
			return true
		}
	}
	return false
}

// events returns the history's events of a kind for a task.
func (r *running) events(t *testing.T, kind, taskID string) []store.Event {
	t.Helper()
	all, err := r.team.Store().Events(0)
	if err != nil {
		t.Fatal(err)
	}
	var out []store.Event
	for _, e := range all {
		if e.Kind == kind && (taskID == "" || e.TaskID == taskID) {
			out = append(out, e)
		}
	}
	return out
}

func submitsContaining(t *testing.T, rec, text string) int {
	n := 0
	for _, s := range shoguntest.Submits(t, rec) {
		if strings.Contains(s.Line, text) {
			n++
		}
	}
	return n
}

// An agent that takes the nudge and then does nothing and shows nothing
// (its turn was lost) gets the task again once ack_timeout passes without a
// sign of work; the second delivery is worked on and reported.
func TestLostDeliveryIsDeliveredAgain(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "a.jsonl")
	ws := testWorkspace(t, with(sim("ashigaru1", rec, "--drop-turns", "1", "--work-time", "200ms"), "ack_timeout: 1500ms"))
	r := startTeam(t, ws)
	r.drop(t, "a.yaml", "to: ashigaru1\ntitle: Lost once\nbody: do it\n")

	tasks := r.waitTasks(t, "the task done after a second delivery", 30*time.Second, func(ts []store.Task) bool {
		return len(ts) == 1 && ts[0].Status == store.StatusDone
	})
	if tasks[0].Attempts != 2 {
		t.Errorf("attempts = %d, want 2 (the lost delivery and the one worked on)", tasks[0].Attempts)
	}
	if n := len(r.events(t, "lost", tasks[0].ID)); n != 1 {
		t.Errorf("%d lost events, want 1", n)
	}
	if n := submitsContaining(t, rec, "runtime/queue/tasks/ashigaru1.yaml"); n != 2 {
		t.Errorf("agent got the nudge %d times, want 2", n)
	}
}

// A role that goes quiet with its task unreported is reminded, then
// interrupted and nudged again, and then its task is stalled: the sender is
// told, a person is notified, status asks for a person. A person's retry
// delivers it again, and this time the agent reports.
func TestQuietRoleIsRemindedInterruptedThenStalled(t *testing.T) {
	dir := t.TempDir()
	karoRec, ashiRec := filepath.Join(dir, "karo.jsonl"), filepath.Join(dir, "ashigaru1.jsonl")
	ws := testWorkspace(t, sim("karo", karoRec),
		with(sim("ashigaru1", ashiRec, "--skip-reports", "3", "--work-time", "1s"),
			"stall_after: 1500ms", `interrupt_keys: "\e"`, `remind: "Reminder: read {task_file} and write your report to {report_file}."`))
	hook, notes := notifyHook(t)
	settings(t, ws, hook)
	r := startTeam(t, ws)
	r.drop(t, "a.yaml", "to: ashigaru1\nfrom: karo\ntitle: Quiet work\nbody: do it\n")

	tasks := r.waitTasks(t, "the task stalled", 60*time.Second, func(ts []store.Task) bool {
		return len(ts) == 1 && ts[0].Status == store.StatusStalled
	})
	id := tasks[0].ID
	if n := submitsContaining(t, ashiRec, "Reminder: read runtime/queue/tasks/ashigaru1.yaml and write your report to runtime/queue/reports/ashigaru1.yaml."); n != 1 {
		t.Errorf("agent got the reminder %d times, want 1", n)
	}
	if n := submitsContaining(t, ashiRec, "Read runtime/queue/tasks/ashigaru1.yaml and carry out the task"); n != 2 {
		t.Errorf("agent got the nudge %d times, want 2 (the delivery, then after the interrupt)", n)
	}
	// The task is marked stalled in the history first, then the event
	// recorded.
	waitFor(t, "the stalled event", 10*time.Second, func() bool { return len(r.events(t, "stalled", id)) == 1 })
	for _, kind := range []string{"reminded", "interrupted", "stalled"} {
		if len(r.events(t, kind, id)) != 1 {
			t.Errorf("no %s event for %s", kind, id)
		}
	}
	waitFor(t, "karo told of the stall", 20*time.Second, func() bool {
		return submitsContaining(t, karoRec, "Task "+id+" for ashigaru1 (Quiet work) is stalled") == 1
	})
	waitFor(t, "a stalled notification", 20*time.Second, func() bool { return hasNotification(notified(t, notes), notify.KindStalled, id) })
	snap, err := r.team.Queue().Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(snap.Attention, "\n"), "role ashigaru1 needs a person: task "+id+" is stalled") {
		t.Errorf("attention = %q, want the stalled task", snap.Attention)
	}

	// A person retries: the fourth turn reports.
	if _, err := r.team.Queue().Retry(id); err != nil {
		t.Fatal(err)
	}
	tasks = r.waitTasks(t, "the retried task done", 30*time.Second, func(ts []store.Task) bool {
		return ts[0].Status == store.StatusDone
	})
	if tasks[0].Attempts != 2 {
		t.Errorf("attempts after the retry = %d, want 2", tasks[0].Attempts)
	}
	if _, err := r.team.Queue().Retry(id); err == nil {
		t.Error("a done task was retried")
	}
}

// A role that hits its usage limit with a task delivered is reminded of it
// when the limit lifts, and its queue goes on by itself.
func TestLimitedRoleIsRemindedWhenTheLimitLifts(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "a.jsonl")
	// The nudge is the first line: the agent works on it, ends its turn
	// without a report as its quota runs out, and shows the limit.
	ws := testWorkspace(t, with(sim("ashigaru1", rec, "--limit-screen", "--limit-reset", "3s", "--work-time", "1s", "--skip-reports", "1"),
		`limit_pattern: "usage limit · resets (?P<reset>[0-9:]+)"`, "stall_after: 1h", `startup_prompt: ""`))
	r := startTeam(t, ws)
	r.drop(t, "a.yaml", "to: ashigaru1\ntitle: After the limit\nbody: do it\n")
	r.drop(t, "b.yaml", "to: ashigaru1\ntitle: Next in line\nbody: do it too\n")
	r.waitTasks(t, "both tasks done after the limit", 60*time.Second, func(ts []store.Task) bool {
		return len(ts) == 2 && countStatus(ts, store.StatusDone) == 2
	})
	if n := submitsContaining(t, rec, "You have an open task: read runtime/queue/tasks/ashigaru1.yaml"); n != 1 {
		t.Errorf("agent got %d reminders, want 1 after the limit", n)
	}
	if len(r.events(t, "reminded", "")) != 1 {
		t.Error("no reminded event")
	}
}

// between_tasks is typed after a report and before the role's next task:
// as soon as the role is idle after its report, so that a task sent later
// does not wait for it.
func TestBetweenTasksBeforeTheNextTask(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "a.jsonl")
	ws := testWorkspace(t, with(sim("ashigaru1", rec, "--work-time", "100ms"), `between_tasks: "/fresh"`))
	r := startTeam(t, ws)
	r.drop(t, "a.yaml", "to: ashigaru1\ntitle: First\nbody: one\n")
	r.waitTasks(t, "the first task done", 30*time.Second, func(ts []store.Task) bool { return countStatus(ts, store.StatusDone) == 1 })
	waitSubmit(t, rec, "/fresh")
	r.drop(t, "b.yaml", "to: ashigaru1\ntitle: Second\nbody: two\n")
	r.waitTasks(t, "the second task done", 30*time.Second, func(ts []store.Task) bool { return countStatus(ts, store.StatusDone) == 2 })
	var seen []string
	for _, s := range shoguntest.Submits(t, rec) {
		switch {
		case s.Line == "/fresh":
			seen = append(seen, "fresh")
		case strings.HasPrefix(s.Line, "Read runtime/queue/tasks/"):
			seen = append(seen, "nudge")
		}
	}
	// The second task's own "/fresh" may come before this reads the record
	// or after: when it does not matter here.
	if got := strings.TrimSuffix(strings.Join(seen, ","), ",fresh"); got != "nudge,fresh,nudge" {
		t.Errorf("agent got %v, want nudge,fresh,nudge (and maybe fresh)", seen)
	}
}

// Two agents that hand every task straight back to its sender are stopped
// within their chain, at the hand-off that repeats (karo → ashigaru1 →
// karo → ashigaru1): the command lands in failed/ with an error naming the
// chain, nothing more is queued, and karo, whose command it was, is told.
func TestBouncingAgentsAreStoppedWithinTheirChain(t *testing.T) {
	dir := t.TempDir()
	karoRec := filepath.Join(dir, "k.jsonl")
	ws := testWorkspace(t, sim("karo", karoRec, "--bounce", "--work-time", "300ms"),
		sim("ashigaru1", filepath.Join(dir, "a.jsonl"), "--bounce", "--work-time", "300ms"))
	r := startTeam(t, ws)
	r.drop(t, "ping.yaml", "id: ping\nto: ashigaru1\nfrom: karo\ntitle: Ping\nbody: pass it on\n")

	failed := filepath.Join(ws, "runtime", "queue", "failed")
	var errText string
	waitFor(t, "a command refused by the loop guard", 60*time.Second, func() bool {
		ms, _ := filepath.Glob(filepath.Join(failed, "*.error.yaml"))
		for _, m := range ms {
			b, _ := os.ReadFile(m)
			if strings.Contains(string(b), "loop guard") {
				errText = string(b)
				return true
			}
		}
		return false
	})
	tasks := r.waitTasks(t, "the chain's tasks done", 30*time.Second, func(ts []store.Task) bool {
		return len(ts) == 2 && countStatus(ts, store.StatusDone) == 2
	})
	// Newest first: depths 1, 0, of one chain.
	root := tasks[1]
	if tasks[0].Depth != 1 || tasks[0].Root != root.ID {
		t.Errorf("task %s depth %d root %s, want depth 1 root %s", tasks[0].ID, tasks[0].Depth, tasks[0].Root, root.ID)
	}
	for _, want := range []string{"from karo to ashigaru1 again within one chain", root.ID + " (ashigaru1) → " + tasks[0].ID + " (karo)", "shogun send"} {
		if !strings.Contains(errText, want) {
			t.Errorf("error record %q does not say %q", errText, want)
		}
	}
	waitFor(t, "karo told its command was refused", 20*time.Second, func() bool {
		return submitsContaining(t, karoRec, "Your command to ashigaru1 'Ping' was refused, not queued: loop guard") == 1
	})
	time.Sleep(2 * time.Second)
	if ts, _ := r.team.Store().Tasks(store.TaskFilter{}); len(ts) != 2 {
		t.Errorf("%d tasks after the guard stopped the chain, want 2", len(ts))
	}
}

// More than queue.max_exchanges commands between the same two roles within
// ten minutes are refused, as a rate limit, not as a loop.
func TestMaxExchangesBetweenTwoRoles(t *testing.T) {
	dir := t.TempDir()
	ws := testWorkspace(t, sim("karo", filepath.Join(dir, "k.jsonl")), fastSim("ashigaru1", filepath.Join(dir, "a.jsonl")))
	settings(t, ws, "queue:\n  max_exchanges: 2\n")
	r := startTeam(t, ws)
	for i, name := range []string{"a.yaml", "b.yaml", "c.yaml"} {
		r.drop(t, name, "to: ashigaru1\nfrom: karo\ntitle: Exchange "+string(rune('1'+i))+"\nbody: x\n")
		r.waitTasks(t, "the command handled", 20*time.Second, func(ts []store.Task) bool { return len(ts) == min(i+1, 2) })
		if i == 2 {
			waitFor(t, "c.yaml refused", 20*time.Second, func() bool {
				b, err := os.ReadFile(filepath.Join(ws, "runtime", "queue", "failed", "c.yaml.error.yaml"))
				return err == nil && strings.Contains(string(b), "rate limit: 2 commands between karo and ashigaru1 within 10m0s already, queue.max_exchanges is 2")
			})
		}
	}
}

// A person cancels a task the agent is working on: the task is cancelled
// with the reason, its file archived, the sender told, the role free for the
// next task; the report that comes later is archived and recorded, not
// applied.
func TestCancelOpenTask(t *testing.T) {
	dir := t.TempDir()
	karoRec, ashiRec := filepath.Join(dir, "karo.jsonl"), filepath.Join(dir, "a.jsonl")
	ws := testWorkspace(t, sim("karo", karoRec), sim("ashigaru1", ashiRec, "--work-time", "3s"))
	r := startTeam(t, ws)
	r.drop(t, "a.yaml", "id: slow\nto: ashigaru1\nfrom: karo\ntitle: Slow work\nbody: take time\n")
	r.drop(t, "b.yaml", "id: next\nto: ashigaru1\ntitle: Next\nbody: then this\n")
	tasks := r.waitTasks(t, "the first task delivered", 30*time.Second, func(ts []store.Task) bool {
		return len(ts) == 2 && ts[1].Status == store.StatusDelivered
	})
	slow := tasks[1]
	if _, err := r.team.Queue().Cancel(slow.ID, "wrong\x1b[2Jreason"); err == nil {
		t.Fatal("a reason with an escape was taken")
	}
	got, err := r.team.Queue().Cancel(slow.ID, "not needed after all")
	if err != nil || got.Status != store.StatusCancelled || got.Summary != "not needed after all" {
		t.Fatalf("Cancel = %+v, %v", got, err)
	}
	if _, err := r.team.Queue().Cancel(slow.ID, ""); err == nil {
		t.Error("a cancelled task was cancelled again")
	}
	waitFor(t, "karo told of the cancel", 20*time.Second, func() bool {
		return submitsContaining(t, karoRec, "Task "+slow.ID+" for ashigaru1 (Slow work) was cancelled: not needed after all") == 1
	})
	tasks = r.waitTasks(t, "the next task done", 30*time.Second, func(ts []store.Task) bool { return ts[0].Status == store.StatusDone })
	if tasks[1].Status != store.StatusCancelled {
		t.Errorf("cancelled task is now %s", tasks[1].Status)
	}
	// The slow task's report came while the role went on; it is kept.
	waitFor(t, "the late report recorded", 20*time.Second, func() bool {
		reps, _ := r.team.Store().ReportsForTask(slow.ID)
		return len(reps) == 1
	})
	if archivedPath(ws, "tasks", "ashigaru1-"+slow.ID+".yaml") == "" {
		t.Errorf("cancelled task file not archived: %v", archivedNames(ws, "tasks"))
	}
	if ms, _ := filepath.Glob(filepath.Join(ws, "runtime", "queue", "failed", "*")); len(ms) != 0 {
		t.Errorf("failed/ holds %v; the late report should be archived", ms)
	}
	if st, _ := r.team.Store().Task(slow.ID); st.Status != store.StatusCancelled {
		t.Errorf("late report changed the cancelled task to %s", st.Status)
	}
}

var _ = queue.ErrBadReason

// An agent that drops what is typed for a moment after a command (Gemini
// CLI starting a new session after /clear) still gets its next task: the
// nudge that never showed is typed again, not just submitted again.
func TestNudgeTypedAgainWhenTheAgentDroppedIt(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "a.jsonl")
	ws := testWorkspace(t, with(sim("ashigaru1", rec, "--work-time", "100ms", "--deaf-after-command", "1s"), `between_tasks: "/fresh"`, `input_marker: "›"`))
	r := startTeam(t, ws)
	r.drop(t, "a.yaml", "to: ashigaru1\ntitle: First\nbody: one\n")
	r.waitTasks(t, "the first task done", 30*time.Second, func(ts []store.Task) bool { return countStatus(ts, store.StatusDone) == 1 })
	waitSubmit(t, rec, "/fresh")
	r.drop(t, "b.yaml", "to: ashigaru1\ntitle: Second\nbody: two\n")
	tasks := r.waitTasks(t, "the second task closed", 30*time.Second, func(ts []store.Task) bool {
		return len(ts) == 2 && store.Closed(ts[0].Status)
	})
	if tasks[0].Status != store.StatusDone {
		t.Fatalf("second task %s after %d submit(s), want done", tasks[0].Status, tasks[0].Submits)
	}
	nudges := 0
	for _, s := range shoguntest.Submits(t, rec) {
		if strings.HasPrefix(s.Line, "Read runtime/queue/tasks/") {
			nudges++
		}
	}
	if nudges != 2 {
		t.Errorf("the agent took %d nudges, want 2 (one per task)", nudges)
	}
}
