package supervisor

import (
	"testing"
	"time"
)

// Slots go to the waiting roles by the priority of their work, then its
// age, then who asked first; a slot is held until its role's program is
// gone, and a waiter that gives up hands back a slot granted meanwhile.
func TestSlotsGoByPriorityThenAge(t *testing.T) {
	sl := newSlots(nil, 1, nil)
	running, old, urgent, oldest, late := &Role{id: "running"}, &Role{id: "old"}, &Role{id: "urgent"}, &Role{id: "oldest"}, &Role{id: "late"}
	if !sl.tryTake(running, "") || sl.tryTake(old, "") {
		t.Fatal("one slot: the first role takes it, the second does not")
	}
	t0 := time.Now()
	wOld := sl.wait(old, "", Work{Has: true, Rank: 1, Since: t0.Add(-time.Minute)})
	wUrgent := sl.wait(urgent, "", Work{Has: true, Rank: 0, Since: t0})
	wOldest := sl.wait(oldest, "", Work{Has: true, Rank: 1, Since: t0.Add(-time.Hour)})
	wLate := sl.wait(late, "", Work{Has: true, Rank: 2, Since: t0.Add(-24 * time.Hour)})
	if sl.tryTake(&Role{id: "other"}, "") {
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

// A CLI's own bound (agent.max_running_per_cli) holds within
// agent.max_running: a role of a CLI at its bound waits even with slots
// free, a role of another CLI behind it in the line is not held up by it,
// and the next slot its CLI frees is its.
func TestSlotsBoundEachCLI(t *testing.T) {
	sl := newSlots(nil, 3, map[string]int{"claude": 1})
	c1, c2, x1, x2, x3 := &Role{id: "c1"}, &Role{id: "c2"}, &Role{id: "x1"}, &Role{id: "x2"}, &Role{id: "x3"}
	if !sl.tryTake(c1, "claude") {
		t.Fatal("the first claude role found no slot free")
	}
	if sl.tryTake(c2, "claude") {
		t.Fatal("a second claude role took a slot beyond max_running_per_cli claude: 1")
	}
	t0 := time.Now()
	wc2 := sl.wait(c2, "claude", Work{Has: true, Rank: 0, Since: t0.Add(-time.Hour)})
	if !sl.tryTake(x1, "codex") {
		t.Fatal("a codex role found no slot while a claude role waits on its CLI's bound")
	}
	wx2 := sl.wait(x2, "codex", Work{Has: true, Rank: 1, Since: t0})
	select {
	case <-wx2.granted:
	default:
		t.Fatal("a codex role behind a claude role that waits on its CLI's bound got no free slot")
	}
	wx3 := sl.wait(x3, "codex", Work{Has: true, Rank: 1, Since: t0})
	if in, waiting := sl.inUse(); in != 3 || waiting != 2 {
		t.Fatalf("%d slots held, %d roles waiting; want 3 (max_running) and 2", in, waiting)
	}
	if got := sl.why("claude"); got != "agent.max_running_per_cli claude: 1" {
		t.Errorf("a claude role waits on %q, want its CLI's bound", got)
	}
	// A codex slot frees: the claude role first in line cannot use it (its
	// CLI is at its bound), the codex role behind it takes it.
	sl.release(x1)
	select {
	case <-wx3.granted:
	default:
		t.Error("a freed slot went to no one, though a codex role waits")
	}
	select {
	case <-wc2.granted:
		t.Error("a second claude role was granted a slot while the first runs")
	default:
	}
	sl.release(x2)
	sl.release(c1)
	select {
	case <-wc2.granted:
	default:
		t.Error("the claude slot freed and the waiting claude role did not get it")
	}
}

// To make room for a role whose CLI is at its own bound, the idlest role
// of that CLI is asked to sleep, not an idler role of another CLI (whose
// sleep would free no slot the waiter can use); for a role that waits on
// agent.max_running, the idlest of all. A role with work is never asked.
func TestMakeRoomAsksTheIdlestRoleThatFreesAUsableSlot(t *testing.T) {
	sup := &Supervisor{}
	busyRoles := map[string]bool{"claudeBusy": true}
	sup.SetWorkCheck(func(role string) Work { return Work{Has: busyRoles[role]} })
	now := time.Now()
	role := func(id string, idleFor time.Duration) *Role {
		return &Role{id: id, state: Ready, since: now.Add(-idleFor), sleepReq: make(chan struct{}, 1)}
	}
	claudeBusy, claudeIdle, codexIdlest := role("claudeBusy", time.Hour), role("claudeIdle", time.Minute), role("codexIdlest", 2*time.Hour)
	asked := func(r *Role) bool {
		select {
		case <-r.sleepReq:
			return true
		default:
			return false
		}
	}

	sl := newSlots(sup, 4, map[string]int{"claude": 2})
	sl.tryTake(claudeBusy, "claude")
	sl.tryTake(claudeIdle, "claude")
	sl.tryTake(codexIdlest, "codex")
	sl.wait(&Role{id: "claudeWaiting"}, "claude", Work{Has: true, Rank: 1, Since: now})
	sl.makeRoom()
	if asked(claudeBusy) || !asked(claudeIdle) || asked(codexIdlest) {
		t.Error("for a claude role at claude's bound: want only the idle claude role asked to sleep (not the busy one, not the idler codex one)")
	}

	sl = newSlots(sup, 3, nil)
	sl.tryTake(claudeBusy, "claude")
	sl.tryTake(claudeIdle, "claude")
	sl.tryTake(codexIdlest, "codex")
	sl.wait(&Role{id: "other"}, "gemini", Work{Has: true, Rank: 1, Since: now})
	sl.makeRoom()
	if asked(claudeBusy) || asked(claudeIdle) || !asked(codexIdlest) {
		t.Error("for a role waiting on agent.max_running: want only the idlest role asked to sleep")
	}
}
