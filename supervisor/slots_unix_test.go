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
	ws, ids := sixRolesTwoSlots(t)
	r := start(t, ws, nil)
	running := slotHolders(t, r, ids)
	if !slices.Equal(running, []string{"a", "b"}) {
		t.Errorf("roles holding the 2 slots at start: %v, want the first two of roles.yaml [a b]; events:\n%s", running, r.describe())
	}
}

// At start the roles with work take the slots before the roles without,
// by priority then age as the slots go later; the first roles of the
// file, with nothing to do, wait (and sleep) instead of holding the slots
// while the roles with tasks wait for them to be put to sleep.
func TestAtStartTheSlotsGoFirstToTheRolesWithWork(t *testing.T) {
	ws, ids := sixRolesTwoSlots(t)
	old := time.Now().Add(-time.Hour)
	work := map[string]Work{
		"c": {Has: true, Rank: 2, Since: old},                      // low priority, oldest
		"d": {Has: true, Rank: 1, Since: old.Add(2 * time.Minute)}, // normal, newer
		"e": {Has: true, Rank: 1, Since: old.Add(time.Minute)},     // normal, older
		"f": {Has: true, Rank: 0, Since: time.Now()},               // high
	}
	r := startWithWork(t, ws, nil, func(role string) Work { return work[role] })
	running := slotHolders(t, r, ids)
	if !slices.Equal(running, []string{"e", "f"}) {
		t.Errorf("roles holding the 2 slots at start: %v, want [e f] (high f, then the older normal e); events:\n%s", running, r.describe())
	}
}

// sixRolesTwoSlots is a workspace of six agent-sim roles, a to f, under
// agent.max_running 2.
func sixRolesTwoSlots(t *testing.T) (ws string, ids []string) {
	t.Helper()
	ids = []string{"a", "b", "c", "d", "e", "f"}
	yaml := "roles:"
	for _, id := range ids {
		yaml += simRole(id, "")
	}
	ws = testWorkspace(t, yaml)
	if err := os.WriteFile(filepath.Join(ws, "config", "settings.yaml"), []byte("agent:\n  max_running: 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return ws, ids
}

// slotHolders waits until two of ids run and the other four sleep or wait
// for a slot, and returns the two, in the order of ids.
func slotHolders(t *testing.T, r *running, ids []string) []string {
	t.Helper()
	var holders []string
	waitFor(t, "four roles without a slot", 30*time.Second, func() bool {
		holders = holders[:0]
		without := 0
		for _, id := range ids {
			switch r.role(t, id).State() {
			case Sleeping, WaitingSlot:
				without++
			case Starting, Ready, Busy:
				holders = append(holders, id)
			}
		}
		return without == 4 && len(holders) == 2
	})
	return holders
}
