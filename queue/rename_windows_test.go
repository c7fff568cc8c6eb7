package queue

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/atomicfile"
	"github.com/shogun-dev/shogun/store"
	"github.com/shogun-dev/shogun/supervisor"
	"github.com/shogun-dev/shogun/workspace"
)

// namedAgent is a role as far as writing its task file goes: an id. The
// rest of Agent is never called by writeTaskFile.
type namedAgent string

func (a namedAgent) ID() string              { return string(a) }
func (namedAgent) Workable() (int, bool)     { return 0, false }
func (namedAgent) Changed() <-chan struct{}  { return nil }
func (namedAgent) Status() supervisor.Status { return supervisor.Status{} }
func (namedAgent) Type(context.Context, string, supervisor.TypeOptions) (supervisor.Delivery, error) {
	return supervisor.Delivery{}, nil
}
func (namedAgent) SendKeys(context.Context, string) error { return nil }
func (namedAgent) ForgetSession()                         {}

// taskWriter is a role's worker in a fresh workspace with a real history,
// as far as its task files go; task records a command for the role in that
// history and hands it out, as the worker would before writing its file.
func taskWriter(t *testing.T) (w *worker, task func(title string) store.Task) {
	t.Helper()
	ws := t.TempDir()
	st, err := store.Open(filepath.Join(ws, "shogun.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	if err := st.SyncRoles([]store.RoleInfo{{ID: "ashigaru1", Name: "A", PromptPath: "a.md", Enabled: true}}, at); err != nil {
		t.Fatal(err)
	}
	run, err := st.StartRun(1, ws, at)
	if err != nil {
		t.Fatal(err)
	}
	l := workspace.New(ws)
	q := &Queue{ws: ws, layout: l, st: st, dirs: dirs{tasks: l.Tasks(), archive: l.Archive()}}
	for _, d := range []string{q.dirs.tasks, l.ArchiveFor("tasks", time.Now())} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	n := 0
	var pending *store.Task // handed out at the next call, as the worker does after writing its file
	return &worker{q: q, a: namedAgent("ashigaru1")}, func(title string) store.Task {
		t.Helper()
		if pending != nil {
			if _, err := st.Assign(pending.ID, pending.CreatedAt); err != nil {
				t.Fatal(err)
			}
			if _, _, err := st.AcceptReport(store.ReportRecord{TaskID: pending.ID, Status: store.StatusDone, Summary: "ok", Role: "ashigaru1",
				ClaimName: pending.ID + ".report", File: "ashigaru1.yaml", ReceivedAt: at}); err != nil {
				t.Fatal(err)
			}
		}
		n++
		id := fmt.Sprintf("cmd-%d", n)
		acc, err := st.AcceptCommands([]store.CommandRecord{{ID: id, ClaimName: id + ".yaml", File: id + ".yaml", To: "ashigaru1",
			Title: title, Body: "do " + title, RunID: run.ID, ReceivedAt: at.Add(time.Duration(n) * time.Minute)}})
		if err != nil {
			t.Fatal(err)
		}
		tk := acc[0].Task
		pending = &tk
		return tk
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// An agent (or an editor, or a virus scanner) that has its task file open
// makes Windows refuse to replace it: the next task waits until the file
// is closed, then lands, and the previous task is archived.
func TestNextTaskWaitsForTheAgentToCloseItsTaskFile(t *testing.T) {
	w, task := taskWriter(t)
	first := task("first task")
	if err := w.writeTaskFile(first, first.CreatedAt); err != nil {
		t.Fatal(err)
	}
	path := w.taskPath()
	held, err := os.Open(path) // Go opens without FILE_SHARE_DELETE, like most programs
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()

	// What the queue did before: a plain rename fails while the file is open.
	probe := filepath.Join(filepath.Dir(path), ".probe.tmp")
	if err := os.WriteFile(probe, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(probe, path); err == nil {
		t.Fatal("renaming over a task file that is open elsewhere succeeded; this test proves nothing here")
	} else {
		t.Logf("a plain rename over the open task file: %v", err)
	}
	os.Remove(probe)

	done := make(chan error, 1)
	second := task("second task")
	go func() { done <- w.writeTaskFile(second, second.CreatedAt) }()
	select {
	case err := <-done:
		t.Fatalf("the next task was written while the agent still had the file open: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	// The agent still reads its whole first task, then closes the file.
	buf := make([]byte, 4096)
	n, _ := held.Read(buf)
	if !strings.Contains(string(buf[:n]), first.ID) {
		t.Errorf("the agent read %q, want its first task", buf[:n])
	}
	held.Close()

	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("write the next task: %v", err)
		}
	case <-time.After(atomicfile.RenameRetryFor):
		t.Fatal("the next task was not written after the agent closed the file")
	}
	if got := readFile(t, path); !strings.Contains(got, "task_id: "+second.ID) || !strings.Contains(got, "second task") {
		t.Errorf("task file after the wait:\n%s", got)
	}
	if got := readFile(t, filepath.Join(w.q.layout.ArchiveFor("tasks", second.CreatedAt), "ashigaru1-"+first.ID+".yaml")); !strings.Contains(got, "task_id: "+first.ID) {
		t.Errorf("archived task file:\n%s", got)
	}
	assertNoTempFiles(t, w.q.dirs.tasks)
}

// A task file held open for longer than the queue waits: the write fails
// with an error (the queue tries again later), the agent's file is intact
// and no temporary file is left behind.
func TestTaskFileHeldOpenTooLongFailsCleanly(t *testing.T) {
	w, task := taskWriter(t)
	first := task("first task")
	if err := w.writeTaskFile(first, first.CreatedAt); err != nil {
		t.Fatal(err)
	}
	before := readFile(t, w.taskPath())
	held, err := os.Open(w.taskPath())
	if err != nil {
		t.Fatal(err)
	}
	second := task("second task")
	start := time.Now()
	err = w.writeTaskFile(second, second.CreatedAt)
	held.Close()
	if err == nil {
		t.Fatal("the task file was replaced while open elsewhere")
	}
	if took := time.Since(start); took < atomicfile.RenameRetryFor {
		t.Errorf("gave up after %v, want at least %v of retries", took, atomicfile.RenameRetryFor)
	}
	t.Logf("after %v: %v", time.Since(start).Round(time.Millisecond), err)
	if got := readFile(t, w.taskPath()); got != before {
		t.Errorf("the task file changed:\n%s", got)
	}
	assertNoTempFiles(t, w.q.dirs.tasks)

	// Once the file is free the same task is written.
	if err := w.writeTaskFile(second, second.CreatedAt); err != nil {
		t.Fatalf("write after the file was closed: %v", err)
	}
	if got := readFile(t, w.taskPath()); !strings.Contains(got, "task_id: "+second.ID) {
		t.Errorf("task file:\n%s", got)
	}
}

func assertNoTempFiles(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}

// Delivering the same task again (its program restarted) rewrites the task
// file in place: the rename over the open file waits for it as well.
func TestRedeliveryWaitsForTheAgentToCloseItsTaskFile(t *testing.T) {
	w, task := taskWriter(t)
	first := task("first task")
	if err := w.writeTaskFile(first, first.CreatedAt); err != nil {
		t.Fatal(err)
	}
	held, err := os.Open(w.taskPath())
	if err != nil {
		t.Fatal(err)
	}
	again := first
	again.Attempts = 1 // handed out once: this is the second attempt
	done := make(chan error, 1)
	go func() { done <- w.writeTaskFile(again, again.CreatedAt) }()
	time.Sleep(200 * time.Millisecond)
	held.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("write the task again: %v", err)
		}
	case <-time.After(atomicfile.RenameRetryFor):
		t.Fatal("the task was not written again after the agent closed the file")
	}
	if got := readFile(t, w.taskPath()); !strings.Contains(got, "attempt: 2") {
		t.Errorf("task file after the redelivery:\n%s", got)
	}
	assertNoTempFiles(t, w.q.dirs.tasks)
}
