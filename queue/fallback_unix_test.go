//go:build !windows

package queue_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/store"
)

// limitedSim is a role whose agent works on its first task, ends its turn
// without a report as its quota runs out, and shows a usage-limit screen
// that lifts after reset.
func limitedSim(id, rec, reset, fallback string) string {
	return with(sim(id, rec, "--limit-screen", "--limit-reset", reset, "--work-time", "300ms", "--skip-reports", "1"),
		`limit_pattern: "usage limit · resets (?P<reset>[0-9:]+)"`, "stall_after: 1h", `startup_prompt: ""`, "fallback: "+fallback)
}

// reportsOf are the reports the agent recording to rec wrote, by task.
func reportsOf(t *testing.T, rec string) map[string]int {
	out := map[string]int{}
	for _, r := range records(t, rec) {
		if r.Kind == "report" {
			out[r.TaskID]++
		}
	}
	return out
}

// A role at its usage limit with a fallback hands over its open tasks: the
// one it had in flight, with a note saying where it was left, and the ones
// queued behind it. The fallback does each once; the history shows each
// hand-over, and the limited role's task file is archived, not left for
// its agent to carry on after the reset.
func TestLimitedRoleHandsItsTasksToItsFallback(t *testing.T) {
	dir := t.TempDir()
	codexRec, claudeRec := filepath.Join(dir, "codex.jsonl"), filepath.Join(dir, "claude.jsonl")
	ws := testWorkspace(t, limitedSim("codex", codexRec, "1h", "claude"), sim("claude", claudeRec, "--work-time", "100ms"))
	r := startTeam(t, ws)
	r.drop(t, "a.yaml", "to: codex\ntitle: Interrupted by the limit\nbody: do it\n")
	r.drop(t, "b.yaml", "to: codex\ntitle: Second in line\nbody: do it too\n")
	r.drop(t, "c.yaml", "to: codex\ntitle: Third in line\nbody: and this\n")
	tasks := r.waitTasks(t, "the three tasks done", 60*time.Second, func(ts []store.Task) bool {
		return len(ts) == 3 && countStatus(ts, store.StatusDone) == 3
	})

	byClaude, byCodex := reportsOf(t, claudeRec), reportsOf(t, codexRec)
	var first store.Task
	for _, tk := range tasks {
		if tk.Role != "claude" || byClaude[tk.ID] != 1 || byCodex[tk.ID] != 0 {
			t.Errorf("task %s (%s) on %s, reported %d time(s) by claude and %d by codex; want once by claude",
				tk.ID, tk.Title, tk.Role, byClaude[tk.ID], byCodex[tk.ID])
		}
		if evs := r.events(t, store.EventHandedOver, tk.ID); len(evs) != 1 || evs[0].Role != "codex" ||
			!strings.HasPrefix(evs[0].Message, "handed over to claude: codex is at its usage limit until ") {
			t.Errorf("hand-over events of %s = %+v, want one from codex to claude", tk.ID, evs)
		}
		if tk.Title == "Interrupted by the limit" {
			first = tk
		}
	}
	for _, want := range []string{"do it\n\nHanded over from codex, which had this task in flight when it reached its usage limit",
		"The last lines of codex's terminal:\n> ", "\n> ■ You've hit your usage limit · resets"} {
		if !strings.Contains(first.Body, want) {
			t.Errorf("the interrupted task's body does not say %q:\n%s", want, first.Body)
		}
	}
	for _, r := range first.Body {
		if r < 0x20 && r != '\n' || r == 0x7f {
			t.Errorf("the interrupted task's body holds control character %U:\n%q", r, first.Body)
			break
		}
	}
	if hs, err := r.team.Store().Handovers([]string{first.ID}); err != nil || len(hs[first.ID]) != 1 || hs[first.ID][0].To != "claude" {
		t.Errorf("hand-overs of %s = %+v (%v), want one to claude", first.ID, hs, err)
	}
	if p := archivedPath(ws, "tasks", "codex-"+first.ID+".yaml"); p == "" {
		t.Errorf("codex's task file was not archived; archived: %v", archivedNames(ws, "tasks"))
	}
	if _, err := os.Lstat(filepath.Join(ws, "runtime", "queue", "tasks", "codex.yaml")); !os.IsNotExist(err) {
		t.Errorf("codex's task file is still there: %v", err)
	}
}

// Two roles that fall back on each other, both at their limit, hand
// nothing back and forth: the task stays where it is until the first
// reset, and then goes to the role whose limit lifted, once. codex hands
// its task to claude, which reaches its own limit on it; codex's limit
// lifts first, and the task goes back to codex, which finishes it.
func TestRolesLimitedBothWaysDoNotPingPong(t *testing.T) {
	dir := t.TempDir()
	codexRec, claudeRec := filepath.Join(dir, "codex.jsonl"), filepath.Join(dir, "claude.jsonl")
	ws := testWorkspace(t, limitedSim("codex", codexRec, "8s", "claude"), limitedSim("claude", claudeRec, "1h", "codex"))
	r := startTeam(t, ws)
	r.drop(t, "a.yaml", "to: codex\ntitle: Between two limits\nbody: do it\n")
	tasks := r.waitTasks(t, "the task done", 60*time.Second, func(ts []store.Task) bool {
		return len(ts) == 1 && ts[0].Status == store.StatusDone
	})
	id := tasks[0].ID
	if tasks[0].Role != "codex" || reportsOf(t, codexRec)[id] != 1 || reportsOf(t, claudeRec)[id] != 0 {
		t.Errorf("task on %s, reports by codex %v, by claude %v; want it finished by codex", tasks[0].Role, reportsOf(t, codexRec), reportsOf(t, claudeRec))
	}
	var chain []string
	for _, e := range r.events(t, store.EventHandedOver, id) {
		chain = append(chain, e.Role+" → "+strings.SplitN(strings.TrimPrefix(e.Message, "handed over to "), ":", 2)[0])
	}
	// Events are newest first.
	if got := strings.Join(chain, ", "); got != "claude → codex, codex → claude" {
		if len(chain) > 6 {
			got = fmt.Sprintf("%d of them, the last %s", len(chain), strings.Join(chain[:6], ", "))
		}
		t.Errorf("hand-overs = %s, want codex → claude, then claude → codex once codex's limit lifted", got)
	}
	waits := r.events(t, "fallback-waits", "")
	if len(waits) != 1 || waits[0].Role != "claude" || !strings.Contains(waits[0].Message, "its fallback codex is at its usage limit too") {
		t.Errorf("fallback-waits events = %+v, want one from claude while codex was limited", waits)
	}
	if n := submitsContaining(t, claudeRec, "Read runtime/queue/tasks/claude.yaml"); n != 1 {
		t.Errorf("claude was given the task %d time(s), want 1", n)
	}
}
