package queue

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/workspace"
)

// A claimed file goes to the folder of the day it arrived, even when it is
// archived on a later day (a redo after a crash), so the path the history
// recorded for it stays true.
func TestArchiveDayIsTheDayOfArrival(t *testing.T) {
	ws := t.TempDir()
	l := workspace.New(ws)
	arrived := time.Date(2026, 11, 23, 23, 59, 59, 0, time.Local)
	later := arrived.Add(2 * time.Hour) // the next day
	q := &Queue{layout: l, now: func() time.Time { return later }}
	c := claim{name: "cmd.yaml", id: arrived.UTC().Format(claimStamp) + "-cmd.yaml"}
	c.path = filepath.Join(ws, "claimed", c.id)
	if err := os.MkdirAll(filepath.Dir(c.path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(c.path, []byte("to: x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dst, err := q.archive(c, "commands", c.id, []byte("to: x\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(l.Archive(), "2026-11-23", "commands", c.id)
	if dst != want {
		t.Errorf("archived at %s, want %s", dst, want)
	}
	if _, err := os.Stat(want); err != nil {
		t.Errorf("not there: %v", err)
	}
	// A claim id without a stamp goes to today's folder.
	c2 := claim{name: "x.yaml", id: "x.yaml", path: filepath.Join(ws, "claimed", "x.yaml")}
	if err := os.WriteFile(c2.path, []byte("to: x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dst, err = q.archive(c2, "reports", c2.id, []byte("to: x\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(l.Archive(), later.Format(workspace.ArchiveDayFormat), "reports", "x.yaml"); dst != want {
		t.Errorf("archived at %s, want %s", dst, want)
	}
}
