//go:build !windows

package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/control"
	"github.com/shogun-dev/shogun/shoguntest"
	"github.com/shogun-dev/shogun/store"
	"github.com/shogun-dev/shogun/workspace"
)

// historyModes fails the test unless data/ has mode 0700 and the database
// and its -wal and -shm files 0600.
func historyModes(t *testing.T, ws, when string) {
	t.Helper()
	l := workspace.New(ws)
	want := map[string]fs.FileMode{l.Path(workspace.DataDir): 0o700}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		want[l.Database()+suffix] = 0o600
	}
	for p, perm := range want {
		fi, err := os.Stat(p)
		if err != nil {
			t.Errorf("%s: %s: %v", when, workspace.RelTo(ws, p), err)
		} else if got := fi.Mode().Perm(); got != perm {
			t.Errorf("%s: %s has mode %04o, want %04o", when, workspace.RelTo(ws, p), got, perm)
		}
	}
}

// Under the usual umask (022) the history is the owner's alone: data/ is
// 0700 from `shogun init`, the database and its -wal and -shm 0600 from
// their creation. A workspace whose history an older shogun left readable
// by everyone (data/ 0755, the files 0644) is tightened at start.
func TestHistoryIsOwnerOnly(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	ws := teamWorkspace(t, simEntry("ashigaru1", "--work-time", "100ms"))
	if fi, err := os.Stat(filepath.Join(ws, "data")); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("init made data/ %v (%v), want 0700", fi.Mode().Perm(), err)
	}
	run := func(title string) {
		t.Helper()
		cmd, _ := startBackground(t, ws)
		waitStatus(t, ws, "ready", func(s control.StatusReply) bool { return stateOf(s, "ashigaru1") == "ready" })
		send(t, ws, title)
		shoguntest.WaitFor(t, "the task done", 30*time.Second, func() bool {
			ts := tasksJSON(t, ws)
			return len(ts) > 0 && ts[0].Title == title && ts[0].Status == store.StatusDone
		})
		historyModes(t, ws, title)
		if _, errOut, code := shogun(t, "stop", "-w", ws); code != 0 {
			t.Fatalf("stop: %s", errOut)
		}
		_ = cmd.Wait()
	}
	run("in a new workspace")

	// As an older shogun left it; the -wal and -shm of a killed one too.
	l := workspace.New(ws)
	if err := os.Chmod(l.Path(workspace.DataDir), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		f, err := os.OpenFile(l.Database()+suffix, os.O_WRONLY|os.O_CREATE, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		if err := os.Chmod(l.Database()+suffix, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run("in an older workspace")
	if ts := tasksJSON(t, ws); len(ts) != 2 {
		t.Errorf("the history holds %d tasks after the second run, want both", len(ts))
	}
}
