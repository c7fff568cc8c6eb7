package queue

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/store"
	"github.com/shogun-dev/shogun/supervisor"
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

// taskWriter is a role's worker in a fresh workspace, as far as its task
// files go.
func taskWriter(t *testing.T) *worker {
	t.Helper()
	ws := t.TempDir()
	q := &Queue{ws: ws, dirs: dirs{
		tasks:   filepath.Join(ws, "runtime", "queue", "tasks"),
		archive: filepath.Join(ws, "runtime", "queue", "archive"),
	}}
	for _, d := range []string{q.dirs.tasks, filepath.Join(q.dirs.archive, "tasks")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return &worker{q: q, a: namedAgent("ashigaru1")}
}

func storeTask(id, title string) store.Task {
	return store.Task{ID: id, CommandID: "cmd-" + id, Role: "ashigaru1", Title: title, Body: "do " + title,
		Priority: "normal", AssignedAt: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC), Attempts: 1}
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
	w := taskWriter(t)
	if err := w.writeTaskFile(storeTask("t-1", "first task")); err != nil {
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
	go func() { done <- w.writeTaskFile(storeTask("t-2", "second task")) }()
	select {
	case err := <-done:
		t.Fatalf("the next task was written while the agent still had the file open: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	// The agent still reads its whole first task, then closes the file.
	buf := make([]byte, 4096)
	n, _ := held.Read(buf)
	if !strings.Contains(string(buf[:n]), "t-1") {
		t.Errorf("the agent read %q, want its first task", buf[:n])
	}
	held.Close()

	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("write the next task: %v", err)
		}
	case <-time.After(renameRetryFor):
		t.Fatal("the next task was not written after the agent closed the file")
	}
	if got := readFile(t, path); !strings.Contains(got, "task_id: t-2") || !strings.Contains(got, "second task") {
		t.Errorf("task file after the wait:\n%s", got)
	}
	if got := readFile(t, filepath.Join(w.q.dirs.archive, "tasks", "ashigaru1-t-1.yaml")); !strings.Contains(got, "task_id: t-1") {
		t.Errorf("archived task file:\n%s", got)
	}
	assertNoTempFiles(t, w.q.dirs.tasks)
}

// A task file held open for longer than the queue waits: the write fails
// with an error (the queue tries again later), the agent's file is intact
// and no temporary file is left behind.
func TestTaskFileHeldOpenTooLongFailsCleanly(t *testing.T) {
	w := taskWriter(t)
	if err := w.writeTaskFile(storeTask("t-1", "first task")); err != nil {
		t.Fatal(err)
	}
	before := readFile(t, w.taskPath())
	held, err := os.Open(w.taskPath())
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err = w.writeTaskFile(storeTask("t-2", "second task"))
	held.Close()
	if err == nil {
		t.Fatal("the task file was replaced while open elsewhere")
	}
	if took := time.Since(start); took < renameRetryFor {
		t.Errorf("gave up after %v, want at least %v of retries", took, renameRetryFor)
	}
	t.Logf("after %v: %v", time.Since(start).Round(time.Millisecond), err)
	if got := readFile(t, w.taskPath()); got != before {
		t.Errorf("the task file changed:\n%s", got)
	}
	assertNoTempFiles(t, w.q.dirs.tasks)

	// Once the file is free the same task is written.
	if err := w.writeTaskFile(storeTask("t-2", "second task")); err != nil {
		t.Fatalf("write after the file was closed: %v", err)
	}
	if got := readFile(t, w.taskPath()); !strings.Contains(got, "task_id: t-2") {
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
	w := taskWriter(t)
	if err := w.writeTaskFile(storeTask("t-1", "first task")); err != nil {
		t.Fatal(err)
	}
	held, err := os.Open(w.taskPath())
	if err != nil {
		t.Fatal(err)
	}
	again := storeTask("t-1", "first task")
	again.Attempts = 2
	done := make(chan error, 1)
	go func() { done <- w.writeTaskFile(again) }()
	time.Sleep(200 * time.Millisecond)
	held.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("write the task again: %v", err)
		}
	case <-time.After(renameRetryFor):
		t.Fatal("the task was not written again after the agent closed the file")
	}
	if got := readFile(t, w.taskPath()); !strings.Contains(got, "attempt: 2") {
		t.Errorf("task file after the redelivery:\n%s", got)
	}
	assertNoTempFiles(t, w.q.dirs.tasks)
}
