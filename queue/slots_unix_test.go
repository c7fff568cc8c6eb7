//go:build !windows

package queue_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/store"
	"github.com/shogun-dev/shogun/supervisor"
)

// peakSims samples liveSims until the returned stop is called, which
// returns the most agent programs seen alive at once (the test's end
// stops it too). It skips the test
// where there is no /proc to count processes with: call it first.
func peakSims(t *testing.T) (stop func() int) {
	t.Helper()
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc to count processes with")
	}
	var mu sync.Mutex
	peak := 0
	done := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			n := liveSims()
			mu.Lock()
			peak = max(peak, n)
			mu.Unlock()
			select {
			case <-done:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	end := sync.OnceFunc(func() { close(done); <-sampled })
	t.Cleanup(end) // a test that fails first does not leave it sampling
	return func() int {
		end()
		mu.Lock()
		defer mu.Unlock()
		return peak
	}
}

// sleepies are agent-sim roles ids, each recording into dir/ID.jsonl,
// that sleep as soon as they are idle (idle_after 0s) and resume with
// --resumed: the roles of the tests of agent.max_running.
func sleepies(dir string, ids []string, args ...string) []string {
	entries := make([]string, len(ids))
	for i, id := range ids {
		entries[i] = sleepy(id, filepath.Join(dir, id+".jsonl"), "0s", args...)
	}
	return entries
}

// workedOn counts, per task id, how many times the roles ids (recording
// into dir/ID.jsonl) were given the task to work on.
func workedOn(t *testing.T, dir string, ids []string) map[string]int {
	t.Helper()
	worked := map[string]int{}
	for _, id := range ids {
		for _, rc := range records(t, filepath.Join(dir, id+".jsonl")) {
			if rc.Kind == "task" {
				worked[rc.TaskID]++
			}
		}
	}
	return worked
}

// A role that handed its task on holds no slot while it waits for the
// reports: with agent.max_running 2, a shogun that hands a task to a karo,
// which splits it into three parts for three ashigaru, the shogun's and
// the karo's slots are both needed by the parts. Before the fix both kept
// theirs (their tasks were in flight) and no part ever got one: the team
// stopped with nothing done.
func TestADelegatingRoleGivesUpItsSlotWhileItWaitsForReports(t *testing.T) {
	stop := peakSims(t)
	dir := t.TempDir()
	ids := []string{"ashigaru1", "ashigaru2", "ashigaru3"}
	entries := []string{
		sleepy("shogun", filepath.Join(dir, "shogun.jsonl"), "0s", "--delegate", "karo", "--work-time", "100ms"),
		sleepy("karo", filepath.Join(dir, "karo.jsonl"), "0s", "--delegate", "ashigaru1,ashigaru2,ashigaru3", "--work-time", "100ms"),
	}
	ws := testWorkspace(t, append(entries, sleepies(dir, ids, "--work-time", "300ms")...)...)
	write(t, filepath.Join(ws, "config", "settings.yaml"), "agent:\n  max_running: 2\n")
	r := startTeam(t, ws)

	r.drop(t, "c.yaml", "id: cmd-split\nto: shogun\ntitle: split me\nbody: three parts\n")
	tasks := r.waitTasks(t, "the shogun's and the karo's tasks and the three parts done", 90*time.Second, func(ts []store.Task) bool {
		return len(ts) == 5 && countStatus(ts, store.StatusDone) == 5
	})
	if peak := stop(); peak > 2 {
		t.Errorf("%d agent programs alive at once, want at most 2 (max_running)", peak)
	}
	worked := workedOn(t, dir, ids)
	for _, tk := range tasks {
		if tk.Role != "karo" && tk.Role != "shogun" && worked[tk.ID] != 1 {
			t.Errorf("part %s (%s) worked on %d times, want once", tk.ID, tk.Role, worked[tk.ID])
		}
	}
}

// agent.max_running_per_cli bounds the live roles of one CLI with no
// workspace-wide bound: three agent-sim roles (cli: generic) under
// {generic: 1} run one at a time, and do every task once.
func TestMaxRunningPerCLIBoundsTheRolesOfThatCLI(t *testing.T) {
	stop := peakSims(t)
	dir := t.TempDir()
	ids := []string{"w1", "w2", "w3"}
	ws := testWorkspace(t, sleepies(dir, ids, "--work-time", "200ms")...)
	write(t, filepath.Join(ws, "config", "settings.yaml"), "agent:\n  max_running_per_cli: {generic: 1}\n")
	r := startTeam(t, ws)
	for i := 0; i < 6; i++ {
		r.drop(t, fmt.Sprintf("c%d.yaml", i), fmt.Sprintf("id: cmd-%d\nto: %s\ntitle: task %d\nbody: b\n", i, ids[i%3], i))
	}
	tasks := r.waitTasks(t, "all six tasks done", 90*time.Second, func(ts []store.Task) bool {
		return len(ts) == 6 && countStatus(ts, store.StatusDone) == 6
	})
	if peak := stop(); peak != 1 {
		t.Errorf("at most %d agent programs alive at once, want 1 (max_running_per_cli generic: 1)", peak)
	}
	worked := workedOn(t, dir, ids)
	for _, tk := range tasks {
		if worked[tk.ID] != 1 {
			t.Errorf("task %s (%s) worked on %d times, want once", tk.ID, tk.Role, worked[tk.ID])
		}
	}
}

// A wake asked while the role still runs (the queue saw it asleep a moment
// before it woke) does not start it again, for nothing, as soon as it falls
// asleep next: a woken role with no work goes on sleeping.
func TestAStaleWakeDoesNotStartASleepingRole(t *testing.T) {
	dir := t.TempDir()
	rec := filepath.Join(dir, "a.jsonl")
	ws := testWorkspace(t, sleepy("a", rec, "500ms"))
	r := startTeam(t, ws)
	role, _ := r.team.Supervisor().Role("a")
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	if _, err := role.WaitState(ctx, supervisor.Ready); err != nil {
		t.Fatalf("never ready: %v", err)
	}
	role.Wake(supervisor.Work{Has: true, Rank: 1, Since: time.Now()}) // while it runs
	if _, err := role.WaitState(ctx, supervisor.Sleeping); err != nil {
		t.Fatalf("never asleep after idle_after: %v", err)
	}
	time.Sleep(2 * time.Second) // time for a wake, which must not come
	if st := role.Status(); st.State != supervisor.Sleeping || st.Pid != 0 {
		t.Errorf("2 s after falling asleep with nothing to do: state %s, pid %d; want sleeping, no program", st.State, st.Pid)
	}
	for _, rc := range records(t, rec) {
		if rc.Kind == "start" {
			t.Errorf("the role was started again with nothing to do (%s)", rc.Line)
		}
	}
}

// With idle_after, a karo whose part is with its ashigaru sleeps while it
// waits (its CLI costs nothing meanwhile), and the part's report wakes it
// to close its own task.
func TestAKaroWaitingForReportsSleepsAfterIdleAfter(t *testing.T) {
	dir := t.TempDir()
	ws := testWorkspace(t,
		sleepy("karo", filepath.Join(dir, "karo.jsonl"), "500ms", "--delegate", "ashigaru1", "--work-time", "100ms"),
		sim("ashigaru1", filepath.Join(dir, "a1.jsonl"), "--work-time", "4s"))
	r := startTeam(t, ws)
	karo, _ := r.team.Supervisor().Role("karo")
	r.drop(t, "c.yaml", "id: cmd-hand-on\nto: karo\ntitle: hand it on\nbody: one part\n")
	r.waitTasks(t, "the part with ashigaru1", 30*time.Second, func(ts []store.Task) bool {
		return len(ts) == 2 && ts[0].Status == store.StatusDelivered && ts[1].Status == store.StatusDelivered
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := karo.WaitState(ctx, supervisor.Sleeping); err != nil {
		t.Fatalf("the karo never slept: %v (state %s)", err, karo.State())
	}
	tasks, err := r.team.Store().Tasks(store.TaskFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if n := countStatus(tasks, store.StatusDone); n != 0 {
		t.Errorf("the karo first slept with %d of its 2 tasks done; want it asleep while its part is worked on", n)
	}
	r.waitTasks(t, "both tasks done", 60*time.Second, func(ts []store.Task) bool {
		return len(ts) == 2 && countStatus(ts, store.StatusDone) == 2
	})
}

// A report for a karo that waits for a slot counts as old as the task the
// karo waits with: under agent.max_running 1, the karo hears its part's
// report before an ashigaru's tasks that came after the karo's own.
func TestAReportForAWaitingKaroGoesByItsTasksAge(t *testing.T) {
	dir := t.TempDir()
	ws := testWorkspace(t,
		sleepy("karo", filepath.Join(dir, "karo.jsonl"), "0s", "--delegate", "ashigaru1", "--work-time", "100ms"),
		sleepy("ashigaru1", filepath.Join(dir, "a1.jsonl"), "0s", "--work-time", "300ms"),
		sleepy("ashigaru2", filepath.Join(dir, "a2.jsonl"), "0s", "--work-time", "300ms"))
	write(t, filepath.Join(ws, "config", "settings.yaml"), "agent:\n  max_running: 1\n")
	r := startTeam(t, ws)
	r.drop(t, "c.yaml", "id: cmd-karo\nto: karo\ntitle: hand it on\nbody: one part\n")
	r.waitTasks(t, "the part handed on", 60*time.Second, func(ts []store.Task) bool { return len(ts) == 2 })
	for i := 0; i < 3; i++ {
		r.drop(t, fmt.Sprintf("a2-%d.yaml", i), fmt.Sprintf("id: cmd-a2-%d\nto: ashigaru2\ntitle: later %d\nbody: b\n", i, i))
	}
	tasks := r.waitTasks(t, "all five tasks done", 90*time.Second, func(ts []store.Task) bool {
		return len(ts) == 5 && countStatus(ts, store.StatusDone) == 5
	})
	var karoDone time.Time
	for _, tk := range tasks {
		if tk.Role == "karo" {
			karoDone = tk.FinishedAt
		}
	}
	for _, tk := range tasks {
		if tk.Role == "ashigaru2" && tk.FinishedAt.Before(karoDone) {
			t.Errorf("ashigaru2's %q (sent after the karo's task) was done at %s, before the karo's task at %s", tk.Title, tk.FinishedAt.Format("15:04:05.000"), karoDone.Format("15:04:05.000"))
		}
	}
}

// A role held until a person looks (its approvals hook gone) has no work
// in its queued tasks: it does not take a slot of agent.max_running for
// work it may not be given, and the role that can work gets it. Released,
// it wakes and does its task. (A new user: two held roles kept both
// slots for as long as nobody dismissed them, and a third waited.)
func TestAHeldRoleLeavesItsSlotToARoleThatCanWork(t *testing.T) {
	dir := t.TempDir()
	ids := []string{"a", "b"}
	ws := testWorkspace(t, sleepies(dir, ids, "--work-time", "100ms")...)
	write(t, filepath.Join(ws, "config", "settings.yaml"), "agent:\n  max_running: 1\n")
	r := startTeam(t, ws)
	a, _ := r.team.Supervisor().Role("a")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := a.WaitState(ctx, supervisor.Ready); err != nil { // a has the slot (file order)
		t.Fatalf("a never ready: %v (state %s)", err, a.State())
	}
	a.Hold("its approvals hook is off (test)")
	r.drop(t, "ca.yaml", "id: cmd-a\nto: a\ntitle: for a\nbody: b\n")
	r.drop(t, "cb.yaml", "id: cmd-b\nto: b\ntitle: for b\nbody: b\n")
	r.waitTasks(t, "b's task done while a is held", 30*time.Second, func(ts []store.Task) bool {
		for _, tk := range ts {
			if tk.Role == "b" && tk.Status == store.StatusDone {
				return true
			}
		}
		return false
	})
	if st := a.Status(); st.Pid != 0 {
		t.Errorf("the held role runs (state %s, pid %d) for a task it may not be given", st.State, st.Pid)
	}
	a.Release()
	r.waitTasks(t, "a's task done once released", 30*time.Second, func(ts []store.Task) bool {
		return len(ts) == 2 && countStatus(ts, store.StatusDone) == 2
	})
}

// A program that shows a dialog no one answers, with nothing queued, does
// not hold its slot for ever: with agent.max_running 1, the first role of
// the file takes the slot at start and shows a trust dialog; a task for
// the second role gets done once the dialog has waited a while. Before the
// fix only idle ready roles made room, and the task waited until a person
// answered the dialog (a new user waited 95 s and gave up).
func TestARoleAtAnUnansweredDialogMakesRoomForARoleWithWork(t *testing.T) {
	dir := t.TempDir()
	got := filepath.Join(dir, "answers")
	dialog := `
  - id: asks
    prompt_path: roles/agent.md
    command: {exec: /bin/sh, args: ["-c", "stty raw -echo; printf 'Quick safety check: Do you trust the files in this folder?\r\n'; exec cat > '` + got + `'"]}
    cli: generic
    ready_pattern: "(?m)^› $"
    attention_pattern: "Do you trust"
    stop: {keys: "/exit\r", timeout: 2s}
`
	ws := testWorkspace(t, dialog, sleepy("b", filepath.Join(dir, "b.jsonl"), "0s"))
	write(t, filepath.Join(ws, "config", "settings.yaml"), "agent:\n  max_running: 1\n")
	r := startTeam(t, ws)
	asks, _ := r.team.Supervisor().Role("asks")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := asks.WaitState(ctx, supervisor.Attention); err != nil {
		t.Fatalf("the dialog never showed: %v (state %s)", err, asks.State())
	}
	r.drop(t, "cb.yaml", "id: cmd-b\nto: b\ntitle: for b\nbody: b\n")
	r.waitTasks(t, "b's task done while asks shows its dialog", 45*time.Second, func(ts []store.Task) bool {
		return len(ts) == 1 && ts[0].Status == store.StatusDone
	})
	st := asks.Status()
	if st.State != supervisor.Sleeping || !strings.Contains(st.Reason, "dialog") {
		t.Errorf("the role at the dialog: state %s, reason %q; want sleeping, saying its dialog went unanswered", st.State, st.Reason)
	}
	if b, _ := os.ReadFile(got); len(b) != 0 {
		t.Errorf("keys were typed into the dialog to put it to sleep: %q", b)
	}
}

// A person's restart of a sleeping role starts it though it has no work:
// with the only slot taken by a role at work, it waits for the slot, then
// runs. Before the fix `shogun restart` said "restarting" and the role
// slept on.
func TestAPersonsRestartOfASleepingRoleWaitsForASlotAndStartsIt(t *testing.T) {
	_, _, b, ctx := oneSlotTaken(t, "3s")
	b.StartNow()
	if _, err := b.WaitState(ctx, supervisor.WaitingSlot); err != nil {
		t.Fatalf("b, restarted while a works, never waited for the slot: %v (state %s, %s)", err, b.State(), b.Status().Reason)
	}
	if _, err := b.WaitState(ctx, supervisor.Ready); err != nil {
		t.Fatalf("b never started once a's slot was free: %v (state %s, %s)", err, b.State(), b.Status().Reason)
	}
}

// A person's restart of a running role keeps its slot though another role
// waits for one: its program starts again at once, and the waiting role
// gets the slot when it frees. Before the fix the restart gave the slot to
// the role that waited, and the restarted one waited in its turn while
// `shogun restart` said "restarting".
func TestARestartedRunningRoleKeepsItsSlot(t *testing.T) {
	r, a, b, ctx := oneSlotTaken(t, "4s")
	r.drop(t, "cb.yaml", "id: cmd-b\nto: b\ntitle: for b\nbody: b\n")
	if _, err := b.WaitState(ctx, supervisor.WaitingSlot); err != nil {
		t.Fatalf("b, with a task while a works, never waited for the slot: %v (state %s)", err, b.State())
	}
	if got := a.SlotWait(); got != "" {
		t.Errorf("a holds the slot, yet SlotWait says %q", got)
	}
	if got := b.SlotWait(); got != "agent.max_running 1" {
		t.Errorf("b waits for the slot, yet SlotWait says %q", got)
	}
	a.StartNow()
	got, err := a.WaitState(ctx, supervisor.Starting, supervisor.Waking, supervisor.WaitingSlot)
	if err != nil {
		t.Fatalf("a never started again after its restart: %v (state %s)", err, a.State())
	}
	if got == supervisor.WaitingSlot || b.State() != supervisor.WaitingSlot {
		t.Errorf("after a's restart: a %s, b %s; want a started again in its slot while b waits", got, b.State())
	}
	if _, err := b.WaitState(ctx, supervisor.Busy); err != nil {
		t.Fatalf("b never got the slot once a's task was done: %v (state %s, %s)", err, b.State(), b.Status().Reason)
	}
}

// oneSlotTaken starts roles a and b (agent-sims working workTime per task)
// under agent.max_running 1, and returns once b sleeps and a is busy with a
// task; ctx bounds the test's waits.
func oneSlotTaken(t *testing.T, workTime string) (r *running, a, b *supervisor.Role, ctx context.Context) {
	t.Helper()
	ws := testWorkspace(t, sleepies(t.TempDir(), []string{"a", "b"}, "--work-time", workTime)...)
	write(t, filepath.Join(ws, "config", "settings.yaml"), "agent:\n  max_running: 1\n")
	r = startTeam(t, ws)
	a, _ = r.team.Supervisor().Role("a")
	b, _ = r.team.Supervisor().Role("b")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	if _, err := b.WaitState(ctx, supervisor.Sleeping); err != nil {
		t.Fatalf("b never asleep: %v (state %s)", err, b.State())
	}
	r.drop(t, "ca.yaml", "id: cmd-a\nto: a\ntitle: for a\nbody: b\n")
	if _, err := a.WaitState(ctx, supervisor.Busy); err != nil {
		t.Fatalf("a never busy with its task: %v (state %s)", err, a.State())
	}
	return r, a, b, ctx
}
