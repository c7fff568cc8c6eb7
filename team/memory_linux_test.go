package team

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/notify"
	"github.com/shogun-dev/shogun/shoguntest"
	"github.com/shogun-dev/shogun/store"
	"github.com/shogun-dev/shogun/supervisor"
	"github.com/shogun-dev/shogun/workspace"
)

// A role whose CLI grows past its memory_max while on a task is restarted:
// the reason is in its status, its history and a notification, and the
// task is delivered again and done once, by the next run of the CLI (which
// stays small: agent-sim takes its 300 MB at the start of the second task
// of a run).
func TestARoleOverMemoryMaxIsRestartedAndItsTaskDoneOnce(t *testing.T) {
	srv := notifySink(t)
	rec := filepath.Join(t.TempDir(), "a.jsonl")
	roles := `roles:
  - id: grower
    prompt_path: roles/ashigaru.md
    command: {exec: "${SHOGUN_EXE}", args: ["agent-sim", "--work-time", "1s", "--hold-memory", "300MB", "--hold-from-task", "2", "--record", "` + rec + `"]}
    cli: generic
    ready_pattern: "› "
    busy_pattern: "esc to interrupt"
    submit_delay: 60ms
    stop: {keys: "/exit\r", timeout: 5s}
    memory_max: 100MB
`
	tm := runTeam(t, roles, "notify:\n  webhook: "+srv.URL+"\nkeep_awake: false\n", func(o *Options) {
		o.Tune = func(so *supervisor.Options) {
			so.MemoryEvery = 100 * time.Millisecond
			so.Backoff = supervisor.RestartBackoff{Base: 50 * time.Millisecond, Max: time.Second}
		}
	})
	dir := workspace.New(filepath.Dir(filepath.Dir(tm.Store().Path()))).Commands()
	send := func(name, body string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, "."+name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(filepath.Join(dir, "."+name), filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	tasks := func() []store.Task {
		ts, err := tm.Store().Tasks(store.TaskFilter{})
		if err != nil {
			t.Fatal(err)
		}
		return ts
	}
	role, _ := tm.Supervisor().Role("grower")
	send("one.yaml", "id: cmd-one\nto: grower\ntitle: first\nbody: small\n")
	shoguntest.WaitFor(t, "the first task done", 40*time.Second, func() bool {
		ts := tasks()
		return len(ts) == 1 && ts[0].Status == store.StatusDone
	})
	if st := role.Status(); st.Memory == 0 || st.Memory > 100e6 || st.Restarts != 0 {
		t.Errorf("before the second task: memory %d bytes, %d restarts; want a measure under memory_max and none", st.Memory, st.Restarts)
	}
	send("two.yaml", "id: cmd-two\nto: grower\ntitle: second\nbody: grows\n")
	shoguntest.WaitFor(t, "both tasks done", 60*time.Second, func() bool {
		ts := tasks()
		return len(ts) == 2 && ts[0].Status == store.StatusDone && ts[1].Status == store.StatusDone
	})
	// The task is done by the second run; let the first's report, if
	// one were written twice, be collected before counting.
	time.Sleep(500 * time.Millisecond)

	st := role.Status()
	if st.Restarts != 1 || !strings.Contains(st.OverMemory, "over memory_max 100 MB") {
		t.Errorf("status: %d restarts, over memory %q; want one restart for going over memory_max 100 MB", st.Restarts, st.OverMemory)
	}
	// The task was worked on by both runs of the CLI and reported once.
	var second string
	for _, tk := range tasks() {
		if tk.Title == "second" {
			second = tk.ID
		}
	}
	starts, worked, reports := 0, map[string]int{}, map[string]int{}
	for _, r := range shoguntest.Records(t, rec) {
		switch r.Kind {
		case "start":
			starts++
		case "task":
			worked[r.TaskID]++
		case "report":
			reports[r.TaskID]++
		}
	}
	if worked[second] != 2 || reports[second] != 1 || len(reports) != 2 {
		t.Errorf("the second task was worked on %d times and reported %d times (reports %v); want twice (once per run) and once", worked[second], reports[second], reports)
	}

	evs, err := tm.Store().Events(200)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range evs {
		if e.Role == "grower" && e.Kind == string(supervisor.EventMemory) && strings.Contains(e.Message, "over memory_max 100 MB") {
			found = true
		}
	}
	if !found {
		t.Errorf("no memory event in the history: %+v", evs)
	}
	shoguntest.WaitFor(t, "the memory notification", 20*time.Second, func() bool {
		return srv.has(func(e notify.Event) bool {
			return e.Kind == notify.KindMemory && e.Role == "grower" && strings.Contains(e.Message, "over memory_max 100 MB")
		})
	})
}
