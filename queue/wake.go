package queue

import (
	"time"

	"github.com/shogun-dev/shogun/store"
	"github.com/shogun-dev/shogun/supervisor"
)

// Work says whether the queue has work for a role — a task in flight or
// queued (unless its budget holds it), or a notify line to type — with the priority and age of the
// first of it. The supervisor asks it before putting a role to sleep and
// to order the roles that wait for a slot (supervisor.SetWorkCheck).
func (q *Queue) Work(role string) supervisor.Work {
	w, _ := q.worker(role)
	t, next, err := q.st.Pending(role)
	if err == nil && t == nil && q.budgetHold(role) == "" && !held(w) {
		// A queued task held by a budget, or for a role held until a
		// person looks, is no work: the role sleeps, gives up its slot
		// and is not woken for it until the budget is raised or the day
		// turns (CheckBudgets kicks every worker then), or the person
		// releases it (its state change wakes its worker).
		t = next
	}
	if err != nil {
		// Unknown: count it as work, so the role is not put to sleep on
		// a failed look.
		q.log.Warn().Err(err).Str("role", role).Msg("look up work for a role")
		return supervisor.Work{Has: true, Rank: 1, Since: time.Now()}
	}
	if w != nil {
		w.mu.Lock()
		notes := len(w.notes)
		w.mu.Unlock()
		if notes > 0 && t != nil {
			// A report's line for a role that waits on it: as urgent,
			// and as old, as the task it waits with, so a karo is not
			// kept from its ashigaru's reports by newer work of theirs.
			return supervisor.Work{Has: true, Rank: store.PriorityRank(t.Priority), Since: t.CreatedAt}
		}
		if notes > 0 {
			return supervisor.Work{Has: true, Rank: 1, Since: time.Now()}
		}
	}
	if t != nil && !q.waitsOnOthers(w, *t) {
		return supervisor.Work{Has: true, Rank: store.PriorityRank(t.Priority), Since: t.CreatedAt}
	}
	return supervisor.Work{}
}

// waitsOnOthers reports whether the role's task in flight, t, leaves it
// nothing to do but wait: t was delivered to the program that runs now
// (or ran last, for a sleeping role), and a task it handed on is still
// open. Such a role (a karo waiting for its ashigaru) counts as idle: it
// may be put to sleep, after idle_after or to make room, and it does not
// wake until there is a line to type to it — the report's wake-up. The
// rule is this simple one, not "it does not count against
// agent.max_running", because its CLI is alive and holds memory all the
// same; and without it a chain of work deeper than agent.max_running (a
// shogun, a karo, an ashigaru under a cap of 2) holds every slot with
// roles that wait for the one role that cannot get a slot. Waking, its
// next run is delivered the task again, as after any restart: a role
// that lost its conversation sends its commands again, and each one
// already done answers with its report (answerDuplicate).
func (q *Queue) waitsOnOthers(w *worker, t store.PendingTask) bool {
	if w == nil || t.Status != store.StatusDelivered {
		return false
	}
	gen, _ := w.a.Workable()
	w.mu.Lock()
	handed := w.handed
	w.mu.Unlock()
	if handed.taskID != t.ID || handed.gen != gen {
		return false // the running program has not had the task: it is work
	}
	subs, err := q.st.Subtasks(t.ID)
	if err != nil {
		q.log.Warn().Err(err).Str("task_id", t.ID).Msg("look up the tasks a task handed on")
		return false
	}
	for _, s := range subs {
		if !store.Closed(s.Status) {
			return true
		}
	}
	return false
}

// held reports whether w's role is held until a person looks
// (supervisor.Role.Hold: its approvals hook went missing).
func held(w *worker) bool {
	if w == nil {
		return false
	}
	h, ok := w.a.(interface{ Held() string })
	return ok && h.Held() != ""
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
