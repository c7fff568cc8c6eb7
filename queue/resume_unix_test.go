//go:build !windows

package queue_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/store"
	"github.com/shogun-dev/shogun/supervisor"
)

// A role whose resume_args name its session ({session}) wakes with the
// session its hook last told, and with none told starts afresh rather than
// resume "the folder's most recent conversation", which may be another
// role's. An id that is not a UUID is refused. The woken agent-sim records
// into a file named by the session it was given, so the test sees which.
func TestAWokenRoleResumesTheSessionItsHookTold(t *testing.T) {
	dir := t.TempDir()
	rec := filepath.Join(dir, "a.jsonl")
	entry := sim("a", rec, "--work-time", "100ms") + "    idle_after: 1s\n" +
		"    resume_args: [\"--resumed\", \"--record\", \"" + filepath.Join(dir, "woken-{session}.jsonl") + "\"]\n"
	ws := testWorkspace(t, entry)
	r := startTeam(t, ws)
	role, _ := r.team.Supervisor().Role("a")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	asleep := func(what string) {
		t.Helper()
		if _, err := role.WaitState(ctx, supervisor.Sleeping); err != nil {
			t.Fatalf("never asleep %s: %v (state %s)", what, err, role.State())
		}
	}
	done := func(n int) []store.Task {
		return r.waitTasks(t, "the tasks done", 40*time.Second, func(ts []store.Task) bool {
			return len(ts) == n && countStatus(ts, store.StatusDone) == n
		})
	}
	asleep("after idle_after")

	// No session told: the wake starts afresh, with the startup prompt.
	r.drop(t, "c1.yaml", "id: cmd-1\nto: a\ntitle: first\nbody: b\n")
	done(1)
	if woken, _ := filepath.Glob(filepath.Join(dir, "woken-*")); len(woken) != 0 {
		t.Fatalf("woken with resume_args though no session was known: %v", woken)
	}
	prompts := 0
	for _, rc := range records(t, rec) {
		if rc.Kind == "start" {
			t.Errorf("the wake without a known session resumed (start record %q)", rc.Line)
		}
		if rc.Kind == "submit" && strings.HasPrefix(rc.Line, "Read roles/agent.md") {
			prompts++
		}
	}
	if prompts != 2 {
		t.Errorf("startup prompt typed %d times, want twice: the fresh start after the wake gets it again", prompts)
	}

	// A session told (as the role's hook does): the next wake resumes it.
	if err := role.NoteSession("--resume=../../etc/passwd"); err == nil {
		t.Error("a session id that is not a UUID was taken")
	}
	const id = "0f8e3c1a-6b2d-4c11-9a7e-2d5b8f10c3aa"
	if err := role.NoteSession(id); err != nil {
		t.Fatal(err)
	}
	asleep("after the first task")
	r.drop(t, "c2.yaml", "id: cmd-2\nto: a\ntitle: second\nbody: b\n")
	done(2)
	woken := filepath.Join(dir, "woken-"+id+".jsonl")
	if _, err := os.Stat(woken); err != nil {
		t.Fatalf("the wake did not resume session %s: %v", id, err)
	}
	starts := 0
	for _, rc := range records(t, woken) {
		if rc.Kind == "start" && rc.Line == "resumed" {
			starts++
		}
	}
	if starts != 1 {
		t.Errorf("resumed starts of session %s: %d, want 1", id, starts)
	}
}

// between_tasks ends the conversation: a role woken after its /clear (or
// Codex's /new), whose CLI has not told its new conversation yet, starts
// afresh, as the between_tasks keys asked, and is not woken into the
// conversation of the task before (a new user's Codex role: its wakes
// resumed the rollout of every task since its first).
func TestAWakeAfterBetweenTasksDoesNotResumeTheConversationBefore(t *testing.T) {
	dir := t.TempDir()
	rec := filepath.Join(dir, "a.jsonl")
	entry := sim("a", rec, "--work-time", "100ms") + "    idle_after: 1s\n    between_tasks: /clear\n" +
		"    resume_args: [\"--resumed\", \"--record\", \"" + filepath.Join(dir, "woken-{session}.jsonl") + "\"]\n"
	ws := testWorkspace(t, entry)
	r := startTeam(t, ws)
	role, _ := r.team.Supervisor().Role("a")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	const id = "0f8e3c1a-6b2d-4c11-9a7e-2d5b8f10c3aa"
	for i := 1; i <= 3; i++ {
		if _, err := role.WaitState(ctx, supervisor.Sleeping); err != nil {
			t.Fatalf("never asleep before task %d: %v (state %s)", i, err, role.State())
		}
		if i == 2 {
			// The conversation of task 1, as the role's hook tells it.
			if err := role.NoteSession(id); err != nil {
				t.Fatal(err)
			}
		}
		r.drop(t, fmt.Sprintf("c%d.yaml", i), fmt.Sprintf("id: cmd-%d\nto: a\ntitle: task %d\nbody: b\n", i, i))
		r.waitTasks(t, fmt.Sprintf("task %d done", i), 40*time.Second, func(ts []store.Task) bool {
			return len(ts) == i && countStatus(ts, store.StatusDone) == i
		})
	}
	resumed := 0
	if _, err := os.Stat(filepath.Join(dir, "woken-"+id+".jsonl")); err == nil {
		for _, rc := range records(t, filepath.Join(dir, "woken-"+id+".jsonl")) {
			if rc.Kind == "start" && rc.Line == "resumed" {
				resumed++
			}
		}
	}
	if resumed != 1 {
		t.Errorf("session %s resumed %d times, want once (for task 2): task 2's between_tasks ended it", id, resumed)
	}
}
