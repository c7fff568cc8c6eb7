//go:build !windows

package supervisor

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// At start the slots go to the first roles of config/roles.yaml, as the
// docs say: with agent.max_running 2 and six roles, a and b run and the
// four after them wait. Before the fix the roles'
// goroutines raced for the slots and the last one started usually won.
func TestAtStartTheSlotsGoToTheFirstRolesInFileOrder(t *testing.T) {
	ids := []string{"a", "b", "c", "d", "e", "f"}
	yaml := "roles:"
	for _, id := range ids {
		yaml += simRole(id, "")
	}
	ws := testWorkspace(t, yaml)
	if err := os.WriteFile(filepath.Join(ws, "config", "settings.yaml"), []byte("agent:\n  max_running: 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := start(t, ws, nil)
	var running []string
	waitFor(t, "four roles without a slot", 30*time.Second, func() bool {
		running = running[:0]
		without := 0
		for _, id := range ids {
			switch r.role(t, id).State() {
			case Sleeping, WaitingSlot:
				without++
			case Starting, Ready, Busy:
				running = append(running, id)
			}
		}
		return without == 4 && len(running) == 2
	})
	if !slices.Equal(running, []string{"a", "b"}) {
		t.Errorf("roles holding the 2 slots at start: %v, want the first two of roles.yaml [a b]; events:\n%s", running, r.describe())
	}
}

// At start the roles with work take the slots before the roles without,
// by priority then age as the slots go later; the first roles of the
// file, with nothing to do, wait (and sleep) instead of holding the slots
// while the roles with tasks wait for them to be put to sleep.
func TestAtStartTheSlotsGoFirstToTheRolesWithWork(t *testing.T) {
	ids := []string{"a", "b", "c", "d", "e", "f"}
	yaml := "roles:"
	for _, id := range ids {
		yaml += simRole(id, "")
	}
	ws := testWorkspace(t, yaml)
	if err := os.WriteFile(filepath.Join(ws, "config", "settings.yaml"), []byte("agent:\n  max_running: 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	work := map[string]Work{
		"c": {Has: true, Rank: 2, Since: old},                      // low priority, oldest
		"d": {Has: true, Rank: 1, Since: old.Add(2 * time.Minute)}, // normal, newer
		"e": {Has: true, Rank: 1, Since: old.Add(time.Minute)},     // normal, older
		"f": {Has: true, Rank: 0, Since: time.Now()},               // high
	}
	r := startWithWork(t, ws, nil, func(role string) Work { return work[role] })
	var running []string
	waitFor(t, "four roles without a slot", 30*time.Second, func() bool {
		running = running[:0]
		without := 0
		for _, id := range ids {
			switch r.role(t, id).State() {
			case Sleeping, WaitingSlot:
				without++
			case Starting, Ready, Busy:
				running = append(running, id)
			}
		}
		return without == 4 && len(running) == 2
	})
	if !slices.Equal(running, []string{"e", "f"}) {
		t.Errorf("roles holding the 2 slots at start: %v, want [e f] (high f, then the older normal e); events:\n%s", running, r.describe())
	}
}
