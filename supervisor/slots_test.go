package supervisor

import (
	"testing"
	"time"
)

// Slots go to the waiting roles by the priority of their work, then its
// age, then who asked first; a slot is held until its role's program is
// gone, and a waiter that gives up hands back a slot granted meanwhile.
func TestSlotsGoByPriorityThenAge(t *testing.T) {
	sl := newSlots(nil, 1)
	running, old, urgent, oldest, late := &Role{id: "running"}, &Role{id: "old"}, &Role{id: "urgent"}, &Role{id: "oldest"}, &Role{id: "late"}
	if !sl.tryTake(running) || sl.tryTake(old) {
		t.Fatal("one slot: the first role takes it, the second does not")
	}
	t0 := time.Now()
	wOld := sl.wait(old, Work{Has: true, Rank: 1, Since: t0.Add(-time.Minute)})
	wUrgent := sl.wait(urgent, Work{Has: true, Rank: 0, Since: t0})
	wOldest := sl.wait(oldest, Work{Has: true, Rank: 1, Since: t0.Add(-time.Hour)})
	wLate := sl.wait(late, Work{Has: true, Rank: 2, Since: t0.Add(-24 * time.Hour)})
	if sl.tryTake(&Role{id: "other"}) {
		t.Fatal("a role took a slot while others wait")
	}
	granted := func(w *slotWaiter) bool {
		select {
		case <-w.granted:
			return true
		default:
			return false
		}
	}
	order := []*slotWaiter{wUrgent, wOldest, wOld}
	prev := running
	for _, want := range order {
		sl.release(prev)
		for _, w := range []*slotWaiter{wOld, wUrgent, wOldest, wLate} {
			if granted(w) != (w == want || slicesContainsBefore(order, w, want)) {
				t.Fatalf("after %s's slot freed: %s granted = %v; want the slot to go to %s", prev.id, w.r.id, granted(w), want.r.id)
			}
		}
		prev = want.r
	}
	// The low-priority waiter gives up: nothing is granted to it, and once
	// granted, a cancelled slot is handed back.
	sl.cancel(wLate)
	sl.release(prev)
	if in, _ := sl.inUse(); in != 0 || granted(wLate) {
		t.Errorf("after the last waiter gave up: %d slots in use, late granted %v; want 0, false", in, granted(wLate))
	}
}

// slicesContainsBefore reports whether w comes before want in order
// (it was granted earlier and keeps its slot until released).
func slicesContainsBefore(order []*slotWaiter, w, want *slotWaiter) bool {
	for _, x := range order {
		if x == want {
			return false
		}
		if x == w {
			return true
		}
	}
	return false
}
