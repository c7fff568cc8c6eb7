//go:build !windows

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/store"
)

// The supervisor is killed with -9 while a limited role hands its tasks to
// its fallback, and started again twice. In the end every task is done by
// the fallback, closed by one report, and moved once: none lost, none moved
// twice, none done twice.
func TestKill9DuringAHandOverLosesAndDoublesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("long")
	}
	ws := t.TempDir()
	shogun(t, "init", ws)
	sim := func(id string, args ...string) string {
		q := []string{`"agent-sim"`}
		for _, a := range args {
			q = append(q, fmt.Sprintf("%q", a))
		}
		return fmt.Sprintf(`  - id: %s
    prompt_path: roles/ashigaru.md
    command: {exec: "${SHOGUN_EXE}", args: [%s]}
    cli: generic
    ready_pattern: "› "
    busy_pattern: "esc to interrupt"
    submit_delay: 60ms
    stop: {keys: "/exit\r", timeout: 5s}
`, id, strings.Join(q, ", "))
	}
	// codex works on the first task each of its programs gets, runs out of
	// quota before its report and shows the limit: every task it is given
	// is handed over, the one in flight and the ones queued.
	roles := "roles:\n" + sim("codex", "--limit-screen", "--limit-reset", "1h", "--work-time", "150ms", "--skip-reports", "1") +
		`    limit_pattern: "usage limit · resets (?P<reset>[0-9:]+)"
    startup_prompt: ""
    stall_after: 1h
    fallback: claude
` + sim("claude", "--work-time", "50ms")
	if err := os.WriteFile(filepath.Join(ws, "config", "roles.yaml"), []byte(roles), 0o644); err != nil {
		t.Fatal(err)
	}
	const total = 24
	cmds := filepath.Join(ws, "runtime", "queue", "commands")
	for i := 0; i < total; i++ {
		name := fmt.Sprintf("c%03d.yaml", i)
		body := fmt.Sprintf("id: moved-%03d\nto: codex\ntitle: job %d\nbody: job %d is handed over once\n", i, i, i)
		if err := os.WriteFile(filepath.Join(cmds, "."+name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(filepath.Join(cmds, "."+name), filepath.Join(cmds, name)); err != nil {
			t.Fatal(err)
		}
	}
	db := filepath.Join(ws, "data", "shogun.db")
	// Killed as soon as the hand-over has begun, watched through one open
	// connection so that a hand-over part done is seen (each task moves in
	// a transaction of its own); then again in the next run.
	for round := 0; round < 2; round++ {
		cmd, errOut := startBackground(t, ws)
		deadline := time.Now().Add(time.Minute)
		for _, err := os.Stat(db); err != nil; _, err = os.Stat(db) {
			if time.Now().After(deadline) {
				t.Fatalf("no history after a minute\n%s", lastLines(errOut.String(), 40))
			}
			time.Sleep(10 * time.Millisecond)
		}
		st, err := store.Open(db)
		if err != nil {
			t.Fatal(err)
		}
		moved := func() int {
			ts, err := st.Tasks(store.TaskFilter{Role: "claude"})
			if err != nil {
				t.Fatal(err)
			}
			return len(ts)
		}
		before := moved()
		for moved() == before && before < total {
			if time.Now().After(deadline) {
				t.Fatalf("round %d: no task handed over within a minute (%d moved)\n%s", round, before, lastLines(errOut.String(), 40))
			}
		}
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_, _ = cmd.Process.Wait()
		t.Logf("round %d: killed with %d of %d tasks handed over", round, moved(), total)
		st.Close()
	}

	final, errOut := startBackground(t, ws)
	deadline := time.Now().Add(2 * time.Minute)
	var tasks []store.Task
	for {
		tasks = readTasks(t, db)
		if len(tasks) == total && allClosed(tasks) {
			break
		}
		if time.Now().After(deadline) {
			var open []string
			for _, tk := range tasks {
				if !store.Closed(tk.Status) {
					open = append(open, fmt.Sprintf("%s(%s %s)", tk.ID, tk.Role, tk.Status))
				}
			}
			t.Fatalf("%d of %d tasks, not closed: %v\n%s", len(tasks), total, open, lastLines(errOut.String(), 40))
		}
		time.Sleep(200 * time.Millisecond)
	}
	_ = final.Process.Signal(syscall.SIGTERM)
	_ = final.Wait()

	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ids := make([]string, len(tasks))
	for i, tk := range tasks {
		ids[i] = tk.ID
	}
	hs, err := st.Handovers(ids)
	if err != nil {
		t.Fatal(err)
	}
	for _, tk := range tasks {
		reps, err := st.ReportsForTask(tk.ID)
		if tk.Status != store.StatusDone || tk.Role != "claude" || err != nil || len(reps) != 1 {
			t.Errorf("task %s ended %s on %s with %d reports (%v), want done once by claude", tk.ID, tk.Status, tk.Role, len(reps), err)
		}
		if h := hs[tk.ID]; len(h) != 1 || h[0].From != "codex" || h[0].To != "claude" {
			t.Errorf("task %s handed over %d times (%+v), want once from codex to claude", tk.ID, len(h), h)
		}
	}
}
