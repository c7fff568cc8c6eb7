package supervisor

import (
	"context"
	"errors"
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

// sleepUntilWork waits, sleeping, for work (Wake) or a restart request; a
// stop request leaves the role stopped. It reports false when ctx ends.
// A wake finds the work check saying there is work, or is ignored: one
// asked while the role still ran (the queue saw it sleeping a moment
// before it woke) stays pending, and would start it again, for nothing,
// the moment it fell asleep next.
func (r *Role) sleepUntilWork(ctx context.Context) bool {
	for {
		select {
		case <-r.wakeReq:
			if r.sup.work(r.id).Has {
				return true
			}
			continue
		case <-r.restartReq:
			r.mu.Lock()
			r.resumable = false // a restart starts afresh
			r.mu.Unlock()
			return true
		case <-r.stopReq:
			r.startedAsked() // a stop takes back a start asked for
			r.setState(Stopped, "stopped on request; `shogun restart "+r.id+"` starts it again")
			return r.waitRestart(ctx)
		case <-ctx.Done():
			r.setState(Stopped, stopReason(ctx))
			return false
		}
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
// and sleep: it is ready, its startup prompt is behind it, no person is at
// it, nothing is being typed into it and the queue has nothing for it.
// (A program put to sleep before its startup prompt would be resumed as
// one that had it; and the prompt, typed from the program's watch, would
// wait for the typing this holds while the program's end waits for the
// watch.) idle asks also that it has
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
	// Asked to make room, a program at a dialog goes too (makeRoom asks
	// one only when no one has answered it for a while).
	state := r.state == Ready && r.settled || !idle && r.state == Attention
	ok := state && r.writer == nil && time.Since(r.humanInput) >= r.sup.humanQuiet && len(r.hookQuestions) == 0
	r.mu.Unlock()
	if !ok || !r.typing.tryLock() {
		return false
	}
	if r.sup.work(r.id).Has {
		r.typing.unlock()
		return false
	}
	return true
}
