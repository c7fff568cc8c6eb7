//go:build !windows

package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/shoguntest"
	"github.com/shogun-dev/shogun/store"
)

// The supervisor is killed with -9 at random moments while commands keep
// arriving, and started again each time. In the end every command has become
// exactly one task, closed by exactly one report, and the agents worked on
// every task.
func TestKill9DuringABurstLosesAndDoublesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("long")
	}
	ws := t.TempDir()
	shogun(t, "init", ws)
	recs := t.TempDir()
	var roles strings.Builder
	roles.WriteString("roles:\n")
	for i := 1; i <= 3; i++ {
		fmt.Fprintf(&roles, `  - id: w%d
    prompt_path: roles/ashigaru.md
    command: {exec: "${SHOGUN_EXE}", args: ["agent-sim", "--work-time", "150ms", "--record", %q]}
    cli: generic
    ready_pattern: "› "
    busy_pattern: "esc to interrupt"
    submit_delay: 60ms
    stop: {keys: "/exit\r", timeout: 5s}
`, i, filepath.Join(recs, fmt.Sprintf("w%d.jsonl", i)))
	}
	if err := os.WriteFile(filepath.Join(ws, "config", "roles.yaml"), []byte(roles.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	cmds := filepath.Join(ws, "runtime", "queue", "commands")
	drop := func(i int) {
		name := fmt.Sprintf("c%03d.yaml", i)
		tmp := filepath.Join(cmds, "."+name+".tmp")
		body := fmt.Sprintf("id: crash-%03d\nto: w%d\ntitle: job %d\nbody: job %d survives kill -9\n", i, i%3+1, i, i)
		if err := os.WriteFile(tmp, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(cmds, name)); err != nil {
			t.Fatal(err)
		}
	}

	rng := rand.New(rand.NewPCG(42, 7))
	const rounds, perRound = 5, 24
	next := 0
	for round := 0; round < rounds; round++ {
		cmd, _ := startBackground(t, ws)
		for k := 0; k < perRound; k++ {
			drop(next)
			next++
			time.Sleep(time.Duration(rng.IntN(40)) * time.Millisecond)
		}
		time.Sleep(time.Duration(200+rng.IntN(1200)) * time.Millisecond)
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_, _ = cmd.Process.Wait()
	}
	total := next

	// A last run finishes the work and stops cleanly.
	final, errOut := startBackground(t, ws)
	db := filepath.Join(ws, "data", "shogun.db")
	deadline := time.Now().Add(3 * time.Minute)
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
					open = append(open, fmt.Sprintf("%s(%s %s attempts=%d)", tk.ID, tk.Role, tk.Status, tk.Attempts))
				}
			}
			t.Fatalf("after %v: %d of %d tasks, not closed: %v\n%s", 3*time.Minute, len(tasks), total, open, lastLines(errOut.String(), 40))
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
	byCommand := map[string]string{}
	for _, tk := range tasks {
		if prev, dup := byCommand[tk.CommandID]; dup {
			t.Errorf("command %s became two tasks: %s and %s", tk.CommandID, prev, tk.ID)
		}
		byCommand[tk.CommandID] = tk.ID
		if tk.Status != store.StatusDone {
			t.Errorf("task %s ended %s", tk.ID, tk.Status)
		}
		reps, err := st.ReportsForTask(tk.ID)
		if err != nil || len(reps) != 1 {
			t.Errorf("task %s closed by %d reports (%v)", tk.ID, len(reps), err)
		}
	}
	for i := 0; i < total; i++ {
		if _, ok := byCommand[fmt.Sprintf("crash-%03d", i)]; !ok {
			t.Errorf("command crash-%03d was lost", i)
		}
	}
	// The agents' own record: every task was worked on (some twice, when a
	// kill came between the nudge and the report: that is redelivery).
	worked := map[string]bool{}
	for i := 1; i <= 3; i++ {
		for _, rec := range shoguntest.Records(t, filepath.Join(recs, fmt.Sprintf("w%d.jsonl", i))) {
			if rec.Kind == "task" {
				worked[rec.TaskID] = true
			}
		}
	}
	for _, tk := range tasks {
		if !worked[tk.ID] {
			t.Errorf("no agent ever worked on %s", tk.ID)
		}
	}
	if claimed, _ := os.ReadDir(filepath.Join(cmds, ".claimed")); len(claimed) != 0 {
		t.Errorf("%d command files still claimed", len(claimed))
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func readTasks(t *testing.T, db string) []store.Task {
	t.Helper()
	if _, err := os.Stat(db); err != nil {
		return nil
	}
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	tasks, err := st.Tasks(store.TaskFilter{})
	if err != nil {
		t.Fatal(err)
	}
	return tasks
}
