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
	kill9Burst(t, burstTeam{roles: 3, perRound: 24, gap: 40 * time.Millisecond})
}

// The same with sleeping roles in the team (issue 35): four roles that
// sleep after 300 ms idle, under agent.max_running 2, so the kills land
// while roles sleep, wait for a slot and wake. Nothing is lost or doubled,
// and roles did wake with their conversation resumed.
func TestKill9WithSleepingRolesLosesAndDoublesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("long")
	}
	kill9Burst(t, burstTeam{roles: 4, maxRunning: 2, sleepy: true, perRound: 6, gap: 600 * time.Millisecond, settle: 3 * time.Second})
}

// burstTeam is the team kill9Burst runs: agent-sim roles w1…wN.
type burstTeam struct {
	roles      int
	maxRunning int  // agent.max_running; 0: none
	sleepy     bool // idle_after 300ms, resume_args --resumed
	// perRound commands are dropped between two kills, gap bounding the
	// random pause after each: with fewer and further apart, the roles'
	// queues run dry, and they sleep and wake between the kills.
	perRound int
	gap      time.Duration
	// settle is added to the random pause before each kill.
	settle time.Duration
}

func kill9Burst(t *testing.T, team burstTeam) {
	ws := t.TempDir()
	shogun(t, "init", ws)
	recs := t.TempDir()
	var roles strings.Builder
	roles.WriteString("roles:\n")
	for i := 1; i <= team.roles; i++ {
		fmt.Fprintf(&roles, `  - id: w%d
    prompt_path: roles/ashigaru.md
    command: {exec: "${SHOGUN_EXE}", args: ["agent-sim", "--work-time", "150ms", "--record", %q]}
    cli: generic
    ready_pattern: "› "
    busy_pattern: "esc to interrupt"
    submit_delay: 60ms
    stop: {keys: "/exit\r", timeout: 5s}
`, i, filepath.Join(recs, fmt.Sprintf("w%d.jsonl", i)))
		if team.sleepy {
			roles.WriteString("    idle_after: 300ms\n    resume_args: [\"--resumed\"]\n")
		}
	}
	if err := os.WriteFile(filepath.Join(ws, "config", "roles.yaml"), []byte(roles.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if team.maxRunning > 0 {
		path := filepath.Join(ws, "config", "settings.yaml")
		settings, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		withCap := strings.Replace(string(settings), "\nagent:\n", fmt.Sprintf("\nagent:\n  max_running: %d\n", team.maxRunning), 1)
		if err := os.WriteFile(path, []byte(withCap), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmds := filepath.Join(ws, "runtime", "queue", "commands")
	drop := func(i int) {
		name := fmt.Sprintf("c%03d.yaml", i)
		tmp := filepath.Join(cmds, "."+name+".tmp")
		body := fmt.Sprintf("id: crash-%03d\nto: w%d\ntitle: job %d\nbody: job %d survives kill -9\n", i, i%team.roles+1, i, i)
		if err := os.WriteFile(tmp, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(cmds, name)); err != nil {
			t.Fatal(err)
		}
	}

	rng := rand.New(rand.NewPCG(42, 7))
	const rounds = 5
	perRound := team.perRound
	next := 0
	for round := 0; round < rounds; round++ {
		cmd, _ := startBackground(t, ws)
		for k := 0; k < perRound; k++ {
			drop(next)
			next++
			time.Sleep(time.Duration(rng.Int64N(int64(team.gap))))
		}
		time.Sleep(team.settle + time.Duration(200+rng.IntN(1200))*time.Millisecond)
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
	resumed := 0
	for i := 1; i <= team.roles; i++ {
		for _, rec := range shoguntest.Records(t, filepath.Join(recs, fmt.Sprintf("w%d.jsonl", i))) {
			switch {
			case rec.Kind == "task":
				worked[rec.TaskID] = true
			case rec.Kind == "start" && rec.Line == "resumed":
				resumed++
			}
		}
	}
	if team.sleepy && resumed == 0 {
		t.Error("no role ever woke from sleep: the test did not put sleeping roles in the team")
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
