package supervisor

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// A CLI that outgrows its memory_max at every start is restarted for it
// each time, under restart policy never too, and given up on after
// max_restarts, the fatal reason saying it was its memory.
func TestARoleAlwaysOverMemoryMaxEndsFatalSayingWhy(t *testing.T) {
	ws := testWorkspace(t, fmt.Sprintf(`roles:
  - id: hog
    prompt_path: roles/hog.md
    command: {exec: %q, args: ["agent-sim", "--hold-memory", "150MiB"]}
    cli: generic
    ready_pattern: "› "
    memory_max: 64MiB
    restart: {policy: never, max_restarts: 2, window: 10m}
    stop: {timeout: 5s}
`, shogunBin))
	r := start(t, ws, func(o *Options) { o.MemoryEvery = 100 * time.Millisecond })
	r.waitState(t, "hog", Fatal, 60*time.Second)
	st := r.role(t, "hog").Status()
	if !strings.HasPrefix(st.LastError, "memory ") || !strings.Contains(st.LastError, "over memory_max 64 MiB; given up after 2 restarts") {
		t.Errorf("fatal reason %q; want the memory over memory_max and the restarts", st.LastError)
	}
	if st.Restarts != 2 {
		t.Errorf("%d restarts, want 2", st.Restarts)
	}
	memoryEvents := 0
	for _, e := range r.events.all() {
		if e.Kind == EventMemory && e.Role == "hog" {
			memoryEvents++
			if !strings.Contains(e.Message, "MiB over memory_max 64 MiB") {
				t.Errorf("memory event %q", e.Message)
			}
		}
	}
	if memoryEvents != 3 {
		t.Errorf("%d memory events, want 3 (two restarts and the last)", memoryEvents)
	}
}
