package queue

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/shogun-dev/shogun/notify"
	"github.com/shogun-dev/shogun/usage"
)

// budgets is the queue's view of the daily budgets (usage.budgets): what
// each has spent today as of the last CheckBudgets, and which a person
// has been told about today. Days are the supervisor's local days.
type budgets struct {
	// checking makes CheckBudgets one at a time: a sum read before
	// another's is not stored after it.
	checking sync.Mutex
	mu       sync.Mutex
	day      time.Time // the local day uses are of (its midnight)
	uses     []usage.BudgetUse
	// told are the budgets told about today, by event kind and role
	// ("" for the team's), loaded from the history's events once a day
	// so that a restart does not tell them again.
	told     map[string]bool
	toldDay  time.Time
	lastHold map[string]string // the hold last recorded per role, for its event
}

// CheckBudgets sums what each role spent today (from the history's usage
// records) against the budgets of settings.yaml, tells a person once a
// day of each budget 80 % spent and of each all spent, and lets held
// roles work again when their budget was raised or the day turned. team
// calls it after reading the CLIs' records; SetConfig and the turn of the
// day call it too.
func (q *Queue) CheckBudgets() {
	q.budget.checking.Lock()
	defer q.budget.checking.Unlock()
	cfg := q.config()
	b := cfg.Settings.Usage.Budgets
	now := q.now().Local()
	day := usage.DayStart(now)
	var uses []usage.BudgetUse
	if !b.IsZero() {
		spent, err := q.st.Spent(day, usage.DefaultPrices().With(cfg.Settings.Usage.Prices))
		if err != nil {
			q.log.Warn().Err(err).Msg("budgets: read today's usage; budgets are held as they were")
			return
		}
		uses = b.Check(spent)
	}
	q.budget.mu.Lock()
	held := map[string]bool{}
	for _, u := range q.budget.uses {
		held[u.Role] = u.Reached()
	}
	released := false
	q.budget.day, q.budget.uses = day, uses
	for _, u := range uses {
		if u.Reached() {
			held[u.Role] = false
		}
	}
	for _, h := range held {
		released = released || h
	}
	q.budget.mu.Unlock()
	if len(uses) == 0 && len(held) == 0 {
		return // no budget, before or now
	}
	q.tellBudgets(day, uses)
	if released {
		// A budget raised, removed or of a day gone: its roles' tasks go.
		for _, w := range q.allWorkers() {
			w.kick()
		}
	}
	q.touched()
}

// tellBudgets sends the notifications of budgets 80 % and all spent that
// were not sent today, and records each as an event.
func (q *Queue) tellBudgets(day time.Time, uses []usage.BudgetUse) {
	q.budget.mu.Lock()
	if !q.budget.toldDay.Equal(day) {
		q.budget.told, q.budget.toldDay = map[string]bool{}, day
		evs, err := q.st.EventsOfKinds(day, notify.KindBudgetWarning, notify.KindBudgetReached)
		if err != nil {
			q.log.Warn().Err(err).Msg("budgets: read what was told today; it may be told again")
		}
		for _, e := range evs {
			q.budget.told[e.Kind+"\x00"+e.Role] = true
		}
	}
	var send []notify.Event
	for _, u := range uses {
		kind := ""
		switch {
		case u.Reached():
			kind = notify.KindBudgetReached
		case u.Fraction() >= usage.WarnAt:
			kind = notify.KindBudgetWarning
		default:
			continue
		}
		if q.budget.told[kind+"\x00"+u.Role] {
			continue
		}
		// Told all spent, 80 % goes without saying.
		q.budget.told[notify.KindBudgetWarning+"\x00"+u.Role] = true
		q.budget.told[kind+"\x00"+u.Role] = true
		send = append(send, notify.Event{Kind: kind, Role: u.Role, Message: budgetMessage(u)})
	}
	q.budget.mu.Unlock()
	for _, e := range send {
		q.log.Info().Str("role", e.Role).Str("kind", e.Kind).Str("budget", e.Message).Msg("daily budget told")
		q.event(e.Role, e.Kind, "", e.Message)
		q.notify(e)
	}
}

// budgetMessage is what a person is told of a budget.
func budgetMessage(u usage.BudgetUse) string {
	whose := "the team's daily budget"
	if u.Role != "" {
		whose = u.Role + "'s daily budget"
	}
	if u.Reached() {
		held := "no new task is typed to " + u.Role
		if u.Role == "" {
			held = "no new task is typed to any role"
		}
		return fmt.Sprintf("%s is reached (%s): %s until the budget is raised (usage.budgets in config/settings.yaml) or the day turns at local midnight",
			whose, u.Describe(), held)
	}
	return fmt.Sprintf("%s is %d%% spent (%s)", whose, int(u.Fraction()*100), u.Describe())
}

// budgetHold says why role gets no new task now ("budget reached: 1.02M
// of 1M tokens today"), or "" when it may get one. A day that turned
// since the last CheckBudgets holds nothing until the next.
func (q *Queue) budgetHold(role string) string {
	q.budget.mu.Lock()
	defer q.budget.mu.Unlock()
	if !usage.DayStart(q.now().Local()).Equal(q.budget.day) {
		return ""
	}
	for _, u := range q.budget.uses {
		if !u.Reached() {
			continue
		}
		if u.Role == "" {
			return "team budget reached: " + u.Describe()
		}
		if u.Role == role {
			return "budget reached: " + u.Describe()
		}
	}
	return ""
}

// noteHold records, once per change, that role's next task waits for a
// budget (hold non-empty) or no longer does.
func (q *Queue) noteHold(role, taskID, hold string) {
	q.budget.mu.Lock()
	if q.budget.lastHold == nil {
		q.budget.lastHold = map[string]string{}
	}
	prev := q.budget.lastHold[role]
	q.budget.lastHold[role] = hold
	q.budget.mu.Unlock()
	switch {
	case hold != "" && prev == "":
		q.log.Info().Str("role", role).Str("task_id", taskID).Msg("next task held: " + hold)
		q.event(role, "budget-hold", taskID, "next task held: "+hold)
	case hold == "" && prev != "":
		q.event(role, "budget-release", taskID, "tasks typed again: the budget was raised or the day turned")
	}
}

// keepBudgets checks the budgets when the local day turns, so that roles
// held for the day's budget get their tasks, until ctx ends. (Run checks
// them once before any role is given work.)
func (q *Queue) keepBudgets(ctx context.Context) {
	for {
		now := q.now().Local()
		// A second past midnight: a clock that wakes a hair early still
		// finds the new day.
		t := time.NewTimer(usage.NextDay(now).Sub(now) + time.Second)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		q.CheckBudgets()
	}
}
