package supervisor

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"
)

// Work is what the queue holds for a role, as far as sleeping and slots
// care: whether there is any, and the priority and age of the first of it,
// which order the roles that wait for a slot.
type Work struct {
	// Has: a task is queued or in flight for the role, or a line waits
	// to be typed into it.
	Has bool
	// Rank is the priority of that work: 0 high, 1 normal, 2 low.
	Rank int
	// Since is when that work arrived.
	Since time.Time
}

// ErrAsleep means text cannot be typed into a role now: it sleeps, or
// waits for a slot, and no program runs. The role's next run gets it.
var ErrAsleep = errors.New("the role is asleep: no program runs")

// SetWorkCheck tells the supervisor how to ask whether a role has work
// (the queue's view). Without one every role counts as having work: none
// is put to sleep, and each one that finds no slot waits for one.
func (s *Supervisor) SetWorkCheck(f func(role string) Work) {
	s.workMu.Lock()
	s.workCheck = f
	s.workMu.Unlock()
}

// work asks the work check about a role.
func (s *Supervisor) work(role string) Work {
	s.workMu.Lock()
	f := s.workCheck
	s.workMu.Unlock()
	if f == nil {
		return Work{Has: true, Rank: 1}
	}
	return f(role)
}

// Slots says how many roles' programs may run at once (agent.max_running;
// 0: no bound) and how many do. A role counts from its start to the end of
// its process tree.
func (s *Supervisor) Slots() (inUse, max int) {
	if s.slots == nil {
		return 0, 0
	}
	s.slots.mu.Lock()
	defer s.slots.mu.Unlock()
	return len(s.slots.held), s.slots.max
}

// Wake asks a sleeping role, or one waiting for a slot, to start its
// program for work: w orders it among the roles that wait for a slot. A
// role that runs already ignores it.
func (r *Role) Wake(w Work) {
	if r.sup.slots != nil {
		r.sup.slots.update(r, w)
	}
	select {
	case r.wakeReq <- struct{}{}:
	default: // a wake is already pending
	}
}

// slots bound how many roles' programs run at once. Roles with work that
// find none free wait, and get one by the priority of their work, then its
// age; to make room, the idlest running role is asked to sleep.
type slots struct {
	sup *Supervisor
	max int

	mu      sync.Mutex
	held    map[*Role]bool
	waiting []*slotWaiter
	asked   map[*Role]bool // running roles asked to sleep to make room
	seq     uint64
}

type slotWaiter struct {
	r       *Role
	w       Work
	seq     uint64
	granted chan struct{}
}

func newSlots(sup *Supervisor, max int) *slots {
	return &slots{sup: sup, max: max, held: map[*Role]bool{}, asked: map[*Role]bool{}}
}

// inUse says how many slots are held, and how many roles wait.
func (sl *slots) inUse() (held, waiting int) {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	return len(sl.held), len(sl.waiting)
}

// tryTake takes a slot for r if one is free and no role waits for one.
func (sl *slots) tryTake(r *Role) bool {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	if sl.held[r] {
		return true
	}
	if len(sl.held) < sl.max && len(sl.waiting) == 0 {
		sl.held[r] = true
		return true
	}
	return false
}

// wait queues r for a slot and returns the waiter; granted is closed when
// the slot is r's.
func (sl *slots) wait(r *Role, w Work) *slotWaiter {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	sl.seq++
	wt := &slotWaiter{r: r, w: w, seq: sl.seq, granted: make(chan struct{})}
	sl.waiting = append(sl.waiting, wt)
	sl.grantLocked()
	return wt
}

// cancel takes r's waiter out of the line; a slot granted meanwhile is
// given back.
func (sl *slots) cancel(wt *slotWaiter) {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	for i, x := range sl.waiting {
		if x == wt {
			sl.waiting = append(sl.waiting[:i], sl.waiting[i+1:]...)
			return
		}
	}
	select {
	case <-wt.granted:
		delete(sl.held, wt.r)
		sl.grantLocked()
	default:
	}
}

// update gives a waiting role's place in the line its newest work.
func (sl *slots) update(r *Role, w Work) {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	for _, x := range sl.waiting {
		if x.r == r {
			x.w = w
		}
	}
}

// release frees r's slot once its process tree is gone, and grants it.
func (sl *slots) release(r *Role) {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	delete(sl.asked, r)
	if !sl.held[r] {
		return
	}
	delete(sl.held, r)
	sl.grantLocked()
}

// grantLocked gives the free slots to the waiters: highest priority first,
// then the oldest work, then the first to ask.
func (sl *slots) grantLocked() {
	sort.SliceStable(sl.waiting, func(i, j int) bool {
		a, b := sl.waiting[i], sl.waiting[j]
		if a.w.Rank != b.w.Rank {
			return a.w.Rank < b.w.Rank
		}
		if !a.w.Since.Equal(b.w.Since) {
			return a.w.Since.Before(b.w.Since)
		}
		return a.seq < b.seq
	})
	for len(sl.held) < sl.max && len(sl.waiting) > 0 {
		wt := sl.waiting[0]
		sl.waiting = sl.waiting[1:]
		sl.held[wt.r] = true
		close(wt.granted)
	}
}

// makeRoom asks as many idle running roles to sleep as roles wait for a
// slot, less the ones asked already: the idlest first (ready the longest).
// A role asked declines if it has work by the time it looks (declined).
func (sl *slots) makeRoom() {
	sl.mu.Lock()
	need := len(sl.waiting) - len(sl.asked)
	var cands []*Role
	for r := range sl.held {
		if !sl.asked[r] {
			cands = append(cands, r)
		}
	}
	sl.mu.Unlock()
	if need <= 0 {
		return
	}
	type idle struct {
		r     *Role
		since time.Time
	}
	var idles []idle
	for _, r := range cands {
		r.mu.Lock()
		st, since := r.state, r.since
		r.mu.Unlock()
		if st == Ready && !sl.sup.work(r.id).Has {
			idles = append(idles, idle{r, since})
		}
	}
	sort.Slice(idles, func(i, j int) bool { return idles[i].since.Before(idles[j].since) })
	for _, x := range idles[:min(need, len(idles))] {
		sl.mu.Lock()
		sl.asked[x.r] = true
		sl.mu.Unlock()
		select {
		case x.r.sleepReq <- struct{}{}:
		default:
		}
	}
}

// declined forgets that r was asked to sleep: it had work after all.
func (sl *slots) declined(r *Role) {
	sl.mu.Lock()
	delete(sl.asked, r)
	sl.mu.Unlock()
}

// admit gets the role a slot for its next start (there is always one
// without agent.max_running). With none free, a role with work waits for
// one, asking idle roles to make room; a role without work sleeps until
// work comes. It reports false when the role is to go on without starting
// (the caller loops: stopped, or woken to try again) and ends the role's
// goroutine when ctx ends (ok false, alive false).
func (r *Role) admit(ctx context.Context) (ok, alive bool) {
	sl := r.sup.slots
	if sl == nil || sl.tryTake(r) {
		return true, true
	}
	w := r.sup.work(r.id)
	if !w.Has {
		r.mu.Lock()
		r.asleep = true // its start is a wake, without a conversation to resume
		r.mu.Unlock()
		r.setState(Sleeping, fmt.Sprintf("no slot free (agent.max_running %d): sleeps until a task comes", sl.max))
		return false, r.sleepUntilWork(ctx)
	}
	wt := sl.wait(r, w)
	r.setState(WaitingSlot, fmt.Sprintf("has work; waits for one of the %d slots (agent.max_running)", sl.max))
	retry := time.NewTicker(time.Second)
	defer retry.Stop()
	sl.makeRoom()
	for {
		select {
		case <-wt.granted:
			return true, true
		case <-retry.C:
			// A role asked to make room may have declined; ask again.
			sl.makeRoom()
		case <-r.wakeReq:
		case <-r.restartReq:
			// It starts afresh once it has a slot: nothing to restart now.
			r.mu.Lock()
			r.resumable = false
			r.mu.Unlock()
		case <-r.stopReq:
			sl.cancel(wt)
			r.setState(Stopped, "stopped on request; `shogun restart "+r.id+"` starts it again")
			return false, r.waitRestart(ctx)
		case <-ctx.Done():
			sl.cancel(wt)
			r.setState(Stopped, stopReason(ctx))
			return false, false
		}
	}
}

// sleepUntilWork waits, sleeping, for work (Wake) or a restart request; a
// stop request leaves the role stopped. It reports false when ctx ends.
func (r *Role) sleepUntilWork(ctx context.Context) bool {
	select {
	case <-r.wakeReq:
		return true
	case <-r.restartReq:
		r.mu.Lock()
		r.resumable = false // a restart starts afresh
		r.mu.Unlock()
		return true
	case <-r.stopReq:
		r.setState(Stopped, "stopped on request; `shogun restart "+r.id+"` starts it again")
		return r.waitRestart(ctx)
	case <-ctx.Done():
		r.setState(Stopped, stopReason(ctx))
		return false
	}
}

// idleLeft is how long until the running role has been idle for its
// idle_after: ready, nothing typed by a person; ok false when it does not
// sleep when idle, or is not ready.
func (r *Role) idleLeft() (time.Duration, bool) {
	after := r.conf().IdleAfter
	r.mu.Lock()
	defer r.mu.Unlock()
	if after <= 0 || r.state != Ready {
		return 0, false
	}
	since := r.since
	if r.humanInput.After(since) {
		since = r.humanInput
	}
	return max(time.Until(since.Add(after)), 0), true
}

// trySleep decides, for the running role, whether to end its program now
// and sleep: it is ready, no person is at it, nothing is being typed
// into it and the queue has nothing for it. idle asks also that it has
// been so for its idle_after. On true, r.typing is held: nothing is typed
// into the program while it is stopped, and the caller lets go of it once
// the role is marked sleeping, so a delivery that waited learns it sleeps
// (ErrAsleep) instead of waiting for a ready program that never comes.
func (r *Role) trySleep(idle bool) bool {
	if idle {
		if left, ok := r.idleLeft(); !ok || left > 0 {
			return false
		}
	}
	r.mu.Lock()
	ok := r.state == Ready && r.writer == nil && time.Since(r.humanInput) >= r.sup.humanQuiet && len(r.hookQuestions) == 0
	r.mu.Unlock()
	if !ok || !r.typing.TryLock() {
		return false
	}
	if r.sup.work(r.id).Has {
		r.typing.Unlock()
		return false
	}
	return true
}
