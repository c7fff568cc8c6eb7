//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/control"
	"github.com/shogun-dev/shogun/shoguntest"
)

// Commands sent before the start make tasks whose roles take the slots of
// agent.max_running first: the roles before them in roles.yaml, with
// nothing to do, never start a program (before, the first two of the file
// ran, were then put to sleep, and the roles with tasks waited for that).
func TestAtStartTheRolesWithQueuedTasksRunFirst(t *testing.T) {
	ws := t.TempDir()
	started := filepath.Join(ws, "started")
	var entries []string
	for _, id := range []string{"a", "b", "c", "d"} {
		entries = append(entries, shEntry(id, "echo "+id+" >> "+started+"; sleep 600", ""))
	}
	ws = teamWorkspaceIn(t, ws, append(entries, simEntry("e"), simEntry("f"))...)
	setAgent(t, ws, "  max_running: 2\n")
	for _, to := range []string{"e", "f"} {
		if _, errOut, code := shogun(t, "send", "-w", ws, "--to", to, "--title", "Job for "+to, "--body", "b"); code != 0 {
			t.Fatalf("send to %s: exit %d %s", to, code, errOut)
		}
	}
	startBackground(t, ws)
	// The roles a..d never become ready (no ready pattern, no output):
	// one that took a slot would hold it, and the tasks would wait.
	shoguntest.WaitFor(t, "both tasks done, or a role without work started", 60*time.Second, func() bool {
		if _, err := os.Stat(started); err == nil {
			return true
		}
		tasks, _ := taskList(t, ws)
		done := 0
		for _, tk := range tasks {
			if tk.Status == "done" {
				done++
			}
		}
		return done == 2
	})
	if b, err := os.ReadFile(started); err == nil {
		t.Errorf("roles without work started a program at start, ahead of the roles with tasks: %q", b)
	}
}

// With agent.max_running 1 and nothing queued, one role runs and two
// sleep: shogun stop says it waits for one program of three roles, not
// that each of the three roles' programs is asked to quit.
func TestStopCountsOnlyTheProgramsThatRun(t *testing.T) {
	ws := teamWorkspace(t, simEntry("a"), simEntry("b"), simEntry("c"))
	setAgent(t, ws, "  max_running: 1\n")
	startBackground(t, ws)
	waitStatus(t, ws, "a ready, b and c asleep", func(s control.StatusReply) bool {
		return stateOf(s, "a") == "ready" && stateOf(s, "b") == "sleeping" && stateOf(s, "c") == "sleeping"
	})
	_, errOut, code := shogun(t, "stop", "-w", ws)
	if want := "): 1 program running of 3 roles (the roles asleep or stopped have none)"; code != 0 || !strings.Contains(errOut, want) {
		t.Errorf("stop: exit %d, %q; want it to say %q", code, errOut, want)
	}
}
