package queue

import (
	"time"

	"github.com/shogun-dev/shogun/store"
	"github.com/shogun-dev/shogun/supervisor"
)

// Work says whether the queue has work for a role — a task in flight or
// queued, or a notify line to type — with the priority and age of the
// first of it. The supervisor asks it before putting a role to sleep and
// to order the roles that wait for a slot (supervisor.SetWorkCheck).
func (q *Queue) Work(role string) supervisor.Work {
	t, err := q.st.InFlight(role)
	if err == nil && t == nil {
		t, err = q.st.NextQueued(role)
	}
	if err != nil {
		// Unknown: count it as work, so the role is not put to sleep on
		// a failed look.
		q.log.Warn().Err(err).Str("role", role).Msg("look up work for a role")
		return supervisor.Work{Has: true, Rank: 1, Since: time.Now()}
	}
	if t != nil {
		return supervisor.Work{Has: true, Rank: priorityRank(t.Priority), Since: t.CreatedAt}
	}
	if w, ok := q.worker(role); ok {
		w.mu.Lock()
		notes := len(w.notes)
		w.mu.Unlock()
		if notes > 0 {
			return supervisor.Work{Has: true, Rank: 1, Since: time.Now()}
		}
	}
	return supervisor.Work{}
}

func priorityRank(p string) int {
	switch p {
	case store.PriorityHigh:
		return 0
	case store.PriorityLow:
		return 2
	default:
		return 1
	}
}

// waker is a role that can be woken from sleep (supervisor.Role).
type waker interface {
	Wake(supervisor.Work)
}

// wakeIfAsleep wakes the worker's role when it sleeps, or waits for a
// slot, and the queue has work for it: the task is typed once the woken
// program is ready, as for any role.
func (w *worker) wakeIfAsleep() {
	wk, ok := w.a.(waker)
	if !ok {
		return
	}
	switch w.a.Status().State {
	case supervisor.Sleeping, supervisor.WaitingSlot:
	default:
		return
	}
	if work := w.q.Work(w.a.ID()); work.Has {
		wk.Wake(work)
	}
}
