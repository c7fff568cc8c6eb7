package control

import (
	"fmt"
	"net/http"
	"sort"
	"time"

	"github.com/shogun-dev/shogun/config"
	"github.com/shogun-dev/shogun/store"
	"github.com/shogun-dev/shogun/textsafe"
	"github.com/shogun-dev/shogun/usage"
)

// The groupings of UsageReply (GET /v1/usage?by=, shogun usage --by).
var UsageGroupings = []string{"role", "task", "day", "model"}

// UsageReply is GET /v1/usage and `shogun usage --json`: the tokens the
// roles' CLIs recorded, counted, and what they cost, estimated.
type UsageReply struct {
	// By is what the rows group by: role, task, day or model.
	By string `json:"by"`
	// Since is the first day (UTC) counted; left out when every day is.
	Since string `json:"since,omitempty"`
	// PricesAsOf dates the price table the costs are estimated from.
	PricesAsOf string `json:"prices_as_of"`
	// Rows are sorted by key.
	Rows []UsageRow `json:"rows"`
	// Total sums the rows; its key is "total".
	Total UsageRow `json:"total"`
	// Budgets are the daily budgets of settings.yaml (usage.budgets)
	// against what was spent today, the team's first; left out when none
	// is set.
	Budgets []BudgetRow `json:"budgets,omitempty"`
}

// BudgetRow is one daily budget against what was spent on the
// supervisor's local day (docs/usage.md#budgets).
type BudgetRow struct {
	// Role is the role the budget is for; "" for the team's.
	Role   string       `json:"role"`
	Budget usage.Budget `json:"budget"`
	// SpentTokens and SpentCostUSD are what was spent today.
	SpentTokens  int64   `json:"spent_tokens"`
	SpentCostUSD float64 `json:"spent_cost_usd"`
	// Percent is how much of the budget is spent, by its nearest bound.
	Percent int `json:"percent"`
	// Reached: no new task is typed to the role (any, for the team's).
	Reached bool `json:"reached"`
	// Text says it as a person reads it: "1.02M of 1M tokens today".
	Text string `json:"text"`
}

// BudgetsToday holds the budgets of settings against what was spent on
// now's local day, as the queue does.
func BudgetsToday(st *store.Store, settings config.UsageSettings, now time.Time) ([]BudgetRow, error) {
	if settings.Budgets.IsZero() {
		return nil, nil
	}
	spent, err := st.Spent(usage.DayStart(now.Local()), usage.DefaultPrices().With(settings.Prices))
	if err != nil {
		return nil, err
	}
	var out []BudgetRow
	for _, u := range settings.Budgets.Check(spent) {
		out = append(out, BudgetRow{Role: u.Role, Budget: u.Budget, SpentTokens: u.Spent.Tokens, SpentCostUSD: u.Spent.CostUSD,
			Percent: int(u.Fraction() * 100), Reached: u.Reached(), Text: u.Describe()})
	}
	return out, nil
}

// UsageRow is the tokens of one role, task, day or model.
type UsageRow struct {
	// Key is the role, the task id ("" for calls outside any task), the
	// day (YYYY-MM-DD, UTC) or the model.
	Key    string       `json:"key"`
	Tokens usage.Tokens `json:"tokens"`
	// Calls is how many model calls the tokens are from.
	Calls int64 `json:"calls"`
	// CostUSD estimates the cost in US dollars from the price table.
	CostUSD float64 `json:"cost_usd"`
	// Unpriced are the models the table has no price for; their tokens
	// are counted but add nothing to CostUSD.
	Unpriced []string `json:"unpriced,omitempty"`
}

// UsageFrom groups the sums of store.Usage by by and prices them.
func UsageFrom(sums []store.UsageSum, by string, since time.Time, prices usage.Prices) UsageReply {
	out := UsageReply{By: by, PricesAsOf: prices.AsOf, Rows: []UsageRow{}, Total: UsageRow{Key: "total"}}
	if !since.IsZero() {
		out.Since = since.UTC().Format(time.DateOnly)
	}
	rows := map[string]*UsageRow{}
	add := func(r *UsageRow, s store.UsageSum, cost float64, known bool) {
		r.Tokens = r.Tokens.Add(s.Tokens)
		r.Calls += s.Calls
		r.CostUSD += cost
		if !known && !contains(r.Unpriced, s.Model) {
			r.Unpriced = append(r.Unpriced, s.Model)
		}
	}
	for _, s := range sums {
		key := map[string]string{"role": s.Role, "task": s.TaskID, "day": s.Day, "model": s.Model}[by]
		r := rows[key]
		if r == nil {
			r = &UsageRow{Key: key}
			rows[key] = r
		}
		cost, known := prices.Cost(s.Model, s.Tokens)
		add(r, s, cost, known)
		add(&out.Total, s, cost, known)
	}
	for _, r := range rows {
		sort.Strings(r.Unpriced)
		out.Rows = append(out.Rows, *r)
	}
	sort.Strings(out.Total.Unpriced)
	sort.Slice(out.Rows, func(i, j int) bool { return out.Rows[i].Key < out.Rows[j].Key })
	return out
}

// usageReport answers GET /v1/usage: by (role, task, day or model;
// default role), since (a date, YYYY-MM-DD) and role (only its tokens).
func (s *Server) usageReport(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	by := q.Get("by")
	if by == "" {
		by = "role"
	}
	if !contains(UsageGroupings, by) {
		fail(w, http.StatusBadRequest, fmt.Errorf("by: want role, task, day or model, got %q", textsafe.Escape(by)))
		return
	}
	var since time.Time
	if v := q.Get("since"); v != "" {
		t, err := time.Parse(time.DateOnly, v)
		if err != nil {
			fail(w, http.StatusBadRequest, fmt.Errorf("since: want a date YYYY-MM-DD, got %q", textsafe.Escape(v)))
			return
		}
		since = t
	}
	sums, err := s.team.Store().Usage(store.UsageFilter{Since: since, Role: q.Get("role")})
	if err != nil {
		fail(w, http.StatusInternalServerError, err)
		return
	}
	settings := s.team.Config().Settings.Usage
	rep := UsageFrom(sums, by, since, usage.DefaultPrices().With(settings.Prices))
	if rep.Budgets, err = BudgetsToday(s.team.Store(), settings, time.Now()); err != nil {
		fail(w, http.StatusInternalServerError, err)
		return
	}
	reply(w, rep)
}
