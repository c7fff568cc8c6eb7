package queue

import (
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/shogun-dev/shogun/config"
	"github.com/shogun-dev/shogun/notify"
	"github.com/shogun-dev/shogun/store"
	"github.com/shogun-dev/shogun/usage"
)

// budgetQueue is a queue over the history st (a fresh one when nil) whose
// settings set budgets, and the notifications it sends; now is its clock.
func budgetQueue(t *testing.T, b usage.Budgets, now *time.Time, st *store.Store) (*Queue, *store.Store, func() []string) {
	t.Helper()
	ws := t.TempDir()
	if st == nil {
		var err error
		if st, err = store.Open(filepath.Join(ws, "shogun.db")); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
	}
	cfg := &config.Config{Workspace: ws, Roles: []config.Role{{ID: "a", Enabled: true}, {ID: "b", Enabled: true}}}
	cfg.Settings.Usage.Budgets = b
	var mu sync.Mutex
	var told []string
	q, err := New(Options{Config: cfg, Store: st, Logger: zerolog.Nop(), Now: func() time.Time { return *now },
		Notify: func(e notify.Event) {
			mu.Lock()
			told = append(told, e.Kind+" "+e.Role)
			mu.Unlock()
		}})
	if err != nil {
		t.Fatal(err)
	}
	return q, st, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(told)
	}
}

func spend(t *testing.T, st *store.Store, role, key string, at time.Time, tokens int64) {
	t.Helper()
	if err := st.AddUsage(store.UsageFile{Role: role, CLI: "claude", Path: "/" + role}, []usage.Record{
		{Key: key, At: at, Model: "claude-opus-4-5", Tokens: usage.Tokens{Input: tokens}}}, at); err != nil {
		t.Fatal(err)
	}
}

// The team's budget holds every role once all roles together spent it,
// each budget is told once a day, also by a queue started again that day
// (the history's events say it was), and the next local day holds nothing
// and tells again.
func TestTheTeamsBudgetHoldsEveryRoleUntilTheDayTurns(t *testing.T) {
	now := time.Date(2026, 11, 28, 15, 0, 0, 0, time.Local)
	b := usage.Budgets{Team: usage.Budget{Tokens: 1000}}
	q, st, told := budgetQueue(t, b, &now, nil)
	spend(t, st, "a", "1", now.Add(-time.Hour), 500)
	spend(t, st, "b", "2", now.Add(-time.Hour), 350)
	q.CheckBudgets()
	if got := told(); !slices.Equal(got, []string{"budget-warning "}) || q.budgetHold("a") != "" {
		t.Fatalf("at 850 of 1000: told %q, a held %q; want the warning only", got, q.budgetHold("a"))
	}
	spend(t, st, "b", "3", now.Add(-time.Minute), 200)
	q.CheckBudgets()
	q.CheckBudgets()
	if got := told(); !slices.Equal(got, []string{"budget-warning ", "budget-reached "}) {
		t.Errorf("at 1050 of 1000, checked twice: told %q", got)
	}
	for _, role := range []string{"a", "b"} {
		if got := q.budgetHold(role); got != "team budget reached: 1.05k of 1k tokens today" {
			t.Errorf("%s held %q", role, got)
		}
	}

	// The supervisor starts again the same day: nothing is told again.
	again, _, toldAgain := budgetQueue(t, b, &now, st)
	again.CheckBudgets()
	if got := toldAgain(); len(got) != 0 || again.budgetHold("a") == "" {
		t.Errorf("restarted the same day: told %q, a held %q", got, again.budgetHold("a"))
	}

	// Past local midnight: yesterday's tokens count for nothing.
	now = time.Date(2026, 11, 29, 0, 0, 1, 0, time.Local)
	if got := q.budgetHold("a"); got != "" {
		t.Errorf("after midnight, before the check: a held %q", got)
	}
	q.CheckBudgets()
	spend(t, st, "a", "4", now, 900)
	q.CheckBudgets()
	if got := told(); len(got) != 3 || got[2] != "budget-warning " || q.budgetHold("a") != "" {
		t.Errorf("the next day at 900 of 1000: told %q, a held %q", got, q.budgetHold("a"))
	}
}

// A role whose budget is spent has no work in its queued tasks: it may be
// put to sleep, gives up its slot to roles that can work, and is not
// woken for them until its budget is raised; a task in flight is still
// its work.
func TestABudgetHeldRoleHasNoWorkToHoldASlotFor(t *testing.T) {
	now := time.Date(2026, 11, 28, 15, 0, 0, 0, time.Local)
	q, st, _ := budgetQueue(t, usage.Budgets{Roles: map[string]usage.Budget{"a": {Tokens: 1000}}}, &now, nil)
	run, err := st.StartRun(1, "/ws", now)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SyncRoles([]store.RoleInfo{{ID: "a"}, {ID: "b"}}, now); err != nil {
		t.Fatal(err)
	}
	if _, err := st.AcceptCommands([]store.CommandRecord{{ID: "c1", ClaimName: "c1.yaml", File: "c1.yaml",
		To: "a", From: "b", Title: "t", Body: "b", RunID: run.ID, ReceivedAt: now}}); err != nil {
		t.Fatal(err)
	}
	if w := q.Work("a"); !w.Has {
		t.Fatalf("a queued task under budget: work %+v, want work", w)
	}
	spend(t, st, "a", "1", now.Add(-time.Hour), 1500)
	q.CheckBudgets()
	if w := q.Work("a"); w.Has {
		t.Errorf("a queued task held by a spent budget: work %+v, want none", w)
	}
	q.config().Settings.Usage.Budgets.Roles["a"] = usage.Budget{Tokens: 5000}
	q.CheckBudgets()
	if w := q.Work("a"); !w.Has {
		t.Errorf("the budget raised: work %+v, want the queued task", w)
	}
}
