//go:build !windows

package queue_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
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

// sim is a roles.yaml entry for an agent-sim role recording what it receives
// in rec.
func sim(id, rec string, extra ...string) string {
	args := append([]string{"agent-sim", "--record", rec}, extra...)
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = fmt.Sprintf("%q", a)
	}
	return fmt.Sprintf(`  - id: %s
    prompt_path: roles/agent.md
    command: {exec: "${SHOGUN_EXE}", args: [%s]}
    cli: generic
    ready_pattern: "› "
    busy_pattern: "esc to interrupt"
    submit_delay: 60ms
    stop: {keys: "/exit\r", timeout: 5s}
`, id, strings.Join(q, ", "))
}

// fastSim is an instant agent without paste-burst detection, typed into
// without a submit delay.
func fastSim(id, rec string) string {
	return strings.Replace(sim(id, rec, "--work-time", "0s", "--paste-window", "-1ms"), "submit_delay: 60ms", "submit_delay: 0s", 1)
}

// workspace writes config/roles.yaml with the given entries.
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
	ws     string
	team   *team.Team
	cancel context.CancelFunc
	done   chan error
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
	r := &running{ws: ws, team: tm, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- tm.Run(ctx) }()
	t.Cleanup(func() {
		r.stop(t)
		tm.Close()
	})
	return r
}

func (r *running) stop(t *testing.T) {
	t.Helper()
	r.cancel()
	select {
	case err, ok := <-r.done:
		if ok {
			close(r.done)
			if err != nil {
				t.Errorf("team run: %v", err)
			}
		}
	case <-time.After(60 * time.Second):
		t.Fatal("team did not stop")
	}
}

// drop writes a command file the way a careful writer does.
func (r *running) drop(t *testing.T, name, content string) {
	t.Helper()
	dir := filepath.Join(r.ws, "runtime", "queue", "commands")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(dir, "."+name+".tmp")
	write(t, tmp, content)
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
}

// waitTasks waits until cond holds for the tasks in the history.
func (r *running) waitTasks(t *testing.T, what string, within time.Duration, cond func([]store.Task) bool) []store.Task {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		tasks, err := r.team.Store().Tasks(store.TaskFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if cond(tasks) {
			return tasks
		}
		if time.Now().After(deadline) {
			var b strings.Builder
			for _, tk := range tasks {
				fmt.Fprintf(&b, "  %s %s %s attempts=%d %q\n", tk.ID, tk.Role, tk.Status, tk.Attempts, tk.Title)
			}
			t.Fatalf("timed out after %v waiting for %s; tasks:\n%s", within, what, b.String())
		}
		time.Sleep(20 * time.Millisecond)
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

func waitFor(t *testing.T, what string, within time.Duration, cond func() bool) {
	t.Helper()
	shoguntest.WaitFor(t, what, within, cond)
}

// archivedReportLine is the notify line for the login form's report, which
// names the report's archived file.
var archivedReportLine = regexp.MustCompile(`^Report from ashigaru1 on 'Add the login form': read runtime/queue/archive/\d{4}-\d\d-\d\d/reports/`)

// archivedNames lists the names of the files archived as kind on any day.
func archivedNames(ws, kind string) []string {
	paths, _ := filepath.Glob(filepath.Join(workspace.New(ws).Archive(), "*", kind, "*"))
	names := make([]string, 0, len(paths))
	for _, p := range paths {
		names = append(names, filepath.Base(p))
	}
	return names
}

// archivedPath is where the file name of kind was archived, on whichever
// day; "" when it was not.
func archivedPath(ws, kind, name string) string {
	paths, _ := filepath.Glob(filepath.Join(workspace.New(ws).Archive(), "*", kind, name))
	if len(paths) != 1 {
		return ""
	}
	return paths[0]
}
