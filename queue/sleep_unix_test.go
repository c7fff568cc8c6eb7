//go:build !windows

package queue_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/store"
	"github.com/shogun-dev/shogun/supervisor"
)

// sleepy is an agent-sim role that sleeps after idle_after and resumes
// with --resumed, which the agent records at its start.
func sleepy(id, rec, idleAfter string, extra ...string) string {
	return sim(id, rec, extra...) + "    idle_after: " + idleAfter + "\n    resume_args: [\"--resumed\"]\n"
}

// An idle role is put to sleep: its program ends. A task sent to it
// wakes it: the program starts again with the resume args, is not given
// its startup prompt again, and does the task once.
func TestAnIdleRoleSleepsAndATaskWakesItWithItsConversation(t *testing.T) {
	dir := t.TempDir()
	rec := filepath.Join(dir, "a.jsonl")
	ws := testWorkspace(t, sleepy("a", rec, "1s", "--work-time", "100ms"))
	r := startTeam(t, ws)
	role, _ := r.team.Supervisor().Role("a")
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	if _, err := role.WaitState(ctx, supervisor.Ready); err != nil {
		t.Fatalf("never ready: %v", err)
	}
	pid := role.Status().Pid
	if _, err := role.WaitState(ctx, supervisor.Sleeping); err != nil {
		t.Fatalf("never asleep after idle_after: %v (state %s)", err, role.State())
	}
	if st := role.Status(); st.Pid != 0 || !strings.Contains(st.Reason, "idle_after") {
		t.Errorf("sleeping role: pid %d, reason %q; want no program and the reason", st.Pid, st.Reason)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("the sleeping role's program %d is still there (kill 0: %v)", pid, err)
	}

	r.drop(t, "c.yaml", "id: cmd-wake\nto: a\ntitle: wake up\nbody: b\n")
	tasks := r.waitTasks(t, "the task done", 40*time.Second, func(ts []store.Task) bool {
		return len(ts) == 1 && ts[0].Status == store.StatusDone
	})
	var starts []string
	worked, prompts := 0, 0
	for _, rc := range records(t, rec) {
		switch {
		case rc.Kind == "start":
			starts = append(starts, rc.Line)
		case rc.Kind == "task" && rc.TaskID == tasks[0].ID:
			worked++
		case rc.Kind == "submit" && strings.HasPrefix(rc.Line, "Read roles/agent.md"):
			prompts++
		}
	}
	if strings.Join(starts, ",") != "resumed" {
		t.Errorf("resumed starts = %v, want the one of the wake (the first start is fresh)", starts)
	}
	if worked != 1 {
		t.Errorf("the agent worked on the task %d times, want once", worked)
	}
	if prompts != 1 {
		t.Errorf("the startup prompt was typed %d times, want once: the resumed conversation has it", prompts)
	}
	// And it goes back to sleep once idle again.
	if _, err := role.WaitState(ctx, supervisor.Sleeping); err != nil {
		t.Fatalf("not asleep again after the task: %v", err)
	}
}

// liveSims counts the agent-sim processes this test process runs (the
// supervisor's children), from /proc (peakSims checks there is one).
func liveSims() int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	me := strconv.Itoa(os.Getpid())
	n := 0
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid …: comm may hold spaces, so split after ")".
		i := bytes.LastIndexByte(stat, ')')
		f := strings.Fields(string(stat[i+1:]))
		if len(f) < 2 || f[1] != me || f[0] == "Z" {
			continue
		}
		cmd, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if bytes.Contains(cmd, []byte("agent-sim")) {
			n++
		}
	}
	return n
}

// With agent.max_running 2, four roles and eight tasks: never more than two
// agent programs alive at once, and every task done once.
func TestMaxRunningBoundsTheProgramsAlive(t *testing.T) {
	stop := peakSims(t)
	dir := t.TempDir()
	ids := []string{"w1", "w2", "w3", "w4"}
	ws := testWorkspace(t, sleepies(dir, ids, "--work-time", "200ms")...)
	write(t, filepath.Join(ws, "config", "settings.yaml"), "agent:\n  max_running: 2\n")
	r := startTeam(t, ws)
	for i := 0; i < 8; i++ {
		id := ids[i%4]
		r.drop(t, fmt.Sprintf("c%d.yaml", i), fmt.Sprintf("id: cmd-%d\nto: %s\ntitle: task %d\nbody: b\n", i, id, i))
	}
	tasks := r.waitTasks(t, "all eight tasks done", 90*time.Second, func(ts []store.Task) bool {
		return len(ts) == 8 && countStatus(ts, store.StatusDone) == 8
	})
	peak := stop()
	if peak > 2 {
		t.Errorf("%d agent programs alive at once, want at most 2 (max_running)", peak)
	}
	if peak == 0 {
		t.Error("no agent program ever seen alive: the count is broken")
	}
	worked := workedOn(t, dir, ids)
	for _, tk := range tasks {
		if worked[tk.ID] != 1 {
			t.Errorf("task %s (%s) worked on %d times, want once", tk.ID, tk.Role, worked[tk.ID])
		}
	}
}
