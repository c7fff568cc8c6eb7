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

// `shogun status` shows what each running role's process tree holds,
// against its memory_max, and --json has it in bytes with the documented
// keys.
func TestStatusShowsEachRolesMemory(t *testing.T) {
	ws := teamWorkspace(t, simEntry("holder", "--hold-memory", "60MB")+"    memory_max: 2GB\n", simEntry("plain"))
	startBackground(t, ws)
	st := waitStatus(t, ws, "both measured", func(s control.StatusReply) bool {
		return memoryOf(s, "holder") > 0 && memoryOf(s, "plain") > 0
	})
	if m := memoryOf(st, "holder"); m < 60e6 || m > 400e6 {
		t.Errorf("holder's tree: %d bytes, want its 60 MB and the program's own", m)
	}
	for _, r := range st.Roles {
		if want := map[string]uint64{"holder": 2e9, "plain": 0}[r.ID]; r.MemoryMaxBytes != want {
			t.Errorf("%s: memory_max_bytes %d, want %d", r.ID, r.MemoryMaxBytes, want)
		}
	}
	out := jsonOutput(t, "status", "--json", "-w", ws)
	shoguntest.CheckOutput(t, shoguntest.ReadDocShape(t, "api.md", docStatus), control.StatusReply{}, out)

	text, _, _ := shogun(t, "status", "-w", ws)
	lines := strings.Split(text, "\n")
	if !strings.Contains(lines[0], "MEMORY") {
		t.Fatalf("no MEMORY column:\n%s", text)
	}
	for _, l := range lines {
		f := strings.Fields(l)
		switch {
		case len(f) > 0 && f[0] == "holder" && !strings.HasSuffix(l, "MB/2 GB"):
			t.Errorf("holder's row does not end with its memory over memory_max: %q", l)
		case len(f) > 0 && f[0] == "plain" && !strings.HasSuffix(l, " MB"):
			t.Errorf("plain's row does not end with its memory: %q", l)
		}
	}
}

func memoryOf(s control.StatusReply, id string) uint64 {
	for _, r := range s.Roles {
		if r.ID == id {
			return r.MemoryBytes
		}
	}
	return 0
}

// A role restarted for going over its memory_max says so in `shogun
// status` while it waits to start again, not bare "backoff" (which reads
// as a crash): the state cell, --json's backoff_reason and status.yaml
// name the memory and the ceiling. Before, only the log and the events did.
func TestStatusSaysABackoffIsForMemory(t *testing.T) {
	ws := teamWorkspace(t, simEntry("hog", "--hold-memory", "150MB")+"    memory_max: 64MB\n    restart: {policy: on-failure, max_restarts: 50, window: 10m}\n")
	startBackground(t, ws)
	var row string
	shoguntest.WaitFor(t, "hog in backoff in shogun status", 60*time.Second, func() bool {
		text, _, _ := shogun(t, "status", "-w", ws)
		for _, l := range strings.Split(text, "\n") {
			if f := strings.Fields(l); len(f) > 2 && f[0] == "hog" && strings.Contains(l, "backoff") {
				row = l
				return true
			}
		}
		return false
	})
	if !strings.Contains(row, "backoff (memory ") || !strings.Contains(row, "over memory_max 64 MB)") {
		t.Errorf("hog's row in backoff: %q; want it to say \"backoff (memory … over memory_max 64 MB)\"", row)
	}
	st := waitStatus(t, ws, "hog in backoff", func(s control.StatusReply) bool { return stateOf(s, "hog") == "backoff" })
	for _, r := range st.Roles {
		if r.ID == "hog" && !strings.Contains(r.BackoffReason, "over memory_max 64 MB") {
			t.Errorf("--json backoff_reason = %q, want the memory over memory_max 64 MB", r.BackoffReason)
		}
	}
	shoguntest.WaitFor(t, "status.yaml with hog's backoff_reason", 60*time.Second, func() bool {
		b, _ := os.ReadFile(filepath.Join(ws, "runtime", "state", "status.yaml"))
		return strings.Contains(string(b), "backoff_reason: memory ")
	})
}
