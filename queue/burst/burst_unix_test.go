//go:build !windows

// Package burst_test holds the queue's burst test: a thousand commands
// through a team of four. It is a test binary of its own so that `go test
// ./...` runs it beside the queue package's other tests rather than after
// them: alone it takes longer than all of those together, and a test binary
// cannot run two teams at once (a supervisor takes every child of its
// process that it did not start for one adopted from an agent, and stops
// it).
package burst_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/shogun-dev/shogun/config"
	"github.com/shogun-dev/shogun/shoguntest"
	"github.com/shogun-dev/shogun/store"
	"github.com/shogun-dev/shogun/supervisor"
	"github.com/shogun-dev/shogun/team"
	"github.com/shogun-dev/shogun/workspace"
)

// shogunBin is the real shogun binary, whose agent-sim the roles run.
var shogunBin string

func TestMain(m *testing.M) { shoguntest.Main(m, &shogunBin) }

// 1,000 commands dropped at once across four roles: each gives exactly one
// task and one report; none is lost, none doubled.
func TestThousandCommandsExactlyOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("long")
	}
	dir := t.TempDir()
	var entries []string
	for i := 1; i <= 4; i++ {
		entries = append(entries, fastSim(fmt.Sprintf("worker%d", i), filepath.Join(dir, fmt.Sprintf("w%d.jsonl", i))))
	}
	ws := testWorkspace(t, entries...)
	// The files are there before the supervisor starts, as after a burst.
	cmds := filepath.Join(ws, "runtime", "queue", "commands")
	if err := os.MkdirAll(cmds, 0o755); err != nil {
		t.Fatal(err)
	}
	const n = 1000
	for i := 0; i < n; i++ {
		write(t, filepath.Join(cmds, fmt.Sprintf("c%04d.yaml", i)),
			fmt.Sprintf("id: c%04d\nto: worker%d\ntitle: job %d\nbody: do job %d\n", i, i%4+1, i, i))
	}
	r := startTeam(t, ws)
	tasks := r.waitTasks(t, "1000 tasks done", 7*time.Minute, func(ts []store.Task) bool {
		return len(ts) == n && countStatus(ts, store.StatusDone) == n
	})
	seen := map[string]bool{}
	for _, tk := range tasks {
		if seen[tk.CommandID] {
			t.Fatalf("command %s has two tasks", tk.CommandID)
		}
		seen[tk.CommandID] = true
		reps, err := r.team.Store().ReportsForTask(tk.ID)
		if err != nil || len(reps) != 1 {
			t.Fatalf("task %s has %d reports (%v)", tk.ID, len(reps), err)
		}
	}
	worked := map[string]int{}
	for i := 1; i <= 4; i++ {
		for _, rec := range records(t, filepath.Join(dir, fmt.Sprintf("w%d.jsonl", i))) {
			if rec.Kind == "report" {
				worked[rec.TaskID]++
			}
		}
	}
	for _, tk := range tasks {
		if worked[tk.ID] != 1 {
			t.Fatalf("agents reported task %s %d times", tk.ID, worked[tk.ID])
		}
	}
	left, _ := os.ReadDir(cmds)
	for _, e := range left {
		if !e.IsDir() {
			t.Errorf("file left in commands/: %s", e.Name())
		}
	}
	archived := archivedNames(ws, "commands")
	if len(archived) != n {
		t.Errorf("%d command files archived, want %d", len(archived), n)
	}
}

// The helpers below are those of queue's own tests (helpers_unix_test.go),
// as far as this test needs them.

// fastSim is a roles.yaml entry for an instant agent-sim without
// paste-burst detection, typed into without a submit delay, recording what
// it receives in rec.
func fastSim(id, rec string) string {
	return fmt.Sprintf(`  - id: %s
    prompt_path: roles/agent.md
    command: {exec: "${SHOGUN_EXE}", args: ["agent-sim", "--record", %q, "--work-time", "0s", "--paste-window", "-1ms"]}
    cli: generic
    ready_pattern: "› "
    busy_pattern: "esc to interrupt"
    submit_delay: 0s
    stop: {keys: "/exit\r", timeout: 5s}
`, id, rec)
}

// testWorkspace writes config/roles.yaml with the given entries.
func testWorkspace(t *testing.T, entries ...string) string {
	t.Helper()
	ws := t.TempDir()
	for _, d := range []string{"config", "roles"} {
		if err := os.MkdirAll(filepath.Join(ws, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(t, filepath.Join(ws, "roles", "agent.md"), "# agent\n")
	write(t, filepath.Join(ws, "config", "roles.yaml"), "roles:\n"+strings.Join(entries, ""))
	return ws
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// running is a team under test.
type running struct {
	team *team.Team
}

func startTeam(t *testing.T, ws string) *running {
	t.Helper()
	cfg, err := config.Load(ws, func(k string) (string, bool) {
		if k == "SHOGUN_EXE" {
			return shogunBin, true
		}
		return os.LookupEnv(k)
	})
	if err != nil {
		t.Fatalf("load config: %v", err)
	}
	tm, err := team.Open(team.Options{
		Config:     cfg,
		Logger:     zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel),
		Executable: shogunBin,
		Tune: func(o *supervisor.Options) {
			o.Backoff = supervisor.RestartBackoff{Base: 50 * time.Millisecond, Max: time.Second}
			o.VerifyTimeout = 500 * time.Millisecond
			o.TreeGrace = 500 * time.Millisecond
		},
	})
	if err != nil {
		t.Fatalf("open team: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- tm.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("team run: %v", err)
			}
		case <-time.After(60 * time.Second):
			t.Error("team did not stop")
		}
		tm.Close()
	})
	return &running{team: tm}
}

// waitTasks waits until cond holds for the tasks in the history, reading
// them at ten times the cost of the last read (at least every 20 ms): with
// a thousand tasks under the race detector, reading every 20 ms took more
// CPU than the team under test.
func (r *running) waitTasks(t *testing.T, what string, within time.Duration, cond func([]store.Task) bool) []store.Task {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		read := time.Now()
		tasks, err := r.team.Store().Tasks(store.TaskFilter{})
		if err != nil {
			t.Fatal(err)
		}
		cost := time.Since(read)
		if cond(tasks) {
			return tasks
		}
		if time.Now().After(deadline) {
			n := 0
			for _, tk := range tasks {
				if tk.Status == store.StatusDone {
					n++
				}
			}
			t.Fatalf("timed out after %v waiting for %s; %d tasks, %d done", within, what, len(tasks), n)
		}
		time.Sleep(max(20*time.Millisecond, 10*cost))
	}
}

func countStatus(tasks []store.Task, status string) int {
	n := 0
	for _, tk := range tasks {
		if tk.Status == status {
			n++
		}
	}
	return n
}

func records(t *testing.T, path string) []shoguntest.Record { return shoguntest.Records(t, path) }

// archivedNames lists the names of the files archived as kind on any day.
func archivedNames(ws, kind string) []string {
	paths, _ := filepath.Glob(filepath.Join(workspace.New(ws).Archive(), "*", kind, "*"))
	names := make([]string, 0, len(paths))
	for _, p := range paths {
		names = append(names, filepath.Base(p))
	}
	return names
}
