package main

import (
	"strings"
	"testing"

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
