package queue

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
)

// The watcher tells a file renamed into the folder (the documented way to
// drop one) from a file created there, which may still be being written:
// only the first is taken without the settle wait.
func TestMovedInTellsRenameFromCreate(t *testing.T) {
	dir := t.TempDir()
	w, err := fsnotify.NewWatcher()
	if err != nil {
		t.Skipf("no file watcher here: %v", err)
	}
	defer w.Close()
	if err := w.Add(dir); err != nil {
		t.Fatal(err)
	}
	// created is what movedIn said of the Create event for name.
	created := func(name string) bool {
		t.Helper()
		deadline := time.After(10 * time.Second)
		for {
			select {
			case ev := <-w.Events:
				if filepath.Base(ev.Name) == name && ev.Op.Has(fsnotify.Create) {
					return movedIn(ev)
				}
			case err := <-w.Errors:
				t.Fatal(err)
			case <-deadline:
				t.Fatalf("no Create event for %s", name)
			}
		}
	}

	tmp := filepath.Join(dir, ".sent.yaml.tmp")
	if err := os.WriteFile(tmp, []byte("to: a\ntitle: t\nbody: b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, "sent.yaml")); err != nil {
		t.Fatal(err)
	}
	if !created("sent.yaml") {
		t.Error("a file renamed in from a temporary name was not seen as moved in")
	}

	f, err := os.Create(filepath.Join(dir, "in-place.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("to: a\n")
	f.Close()
	if created("in-place.yaml") {
		t.Error("a file created in place was seen as moved in")
	}
}
