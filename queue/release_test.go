package queue

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/store"
	"github.com/shogun-dev/shogun/workspace"
)

// The task file of a role that stopped or was removed goes to the day's
// tasks folder of the archive, beside every other archived task file
// (workspace.Layout.ArchiveFor), not to a folder of its own.
func TestReleasedTaskFileGoesToTheDaysArchive(t *testing.T) {
	ws := t.TempDir()
	st, err := store.Open(filepath.Join(ws, "shogun.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.Local)
	if err := st.SyncRoles([]store.RoleInfo{{ID: "ashigaru1", Name: "A", PromptPath: "a.md", Enabled: true}}, at); err != nil {
		t.Fatal(err)
	}
	l := workspace.New(ws)
	q := &Queue{ws: ws, layout: l, st: st, dirs: dirs{tasks: l.Tasks(), archive: l.Archive()}, now: func() time.Time { return at }}
	if err := os.MkdirAll(l.Tasks(), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(l.TaskFile("ashigaru1"), []byte("task_id: t-1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := q.ReleaseTasks("ashigaru1", false); err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(l.ArchiveFor("tasks", at), "ashigaru1-unknown.yaml")
	if b, err := os.ReadFile(want); err != nil || string(b) != "task_id: t-1\n" {
		entries, _ := filepath.Glob(filepath.Join(l.Archive(), "*", "*"))
		t.Errorf("the released task file is not at %s (%v); the archive holds %v", want, err, entries)
	}
}
