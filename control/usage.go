package control

import (
	"fmt"
	"net/http"
	"sort"
	"time"

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
	prices := usage.DefaultPrices().With(s.team.Config().Settings.Usage.Prices)
	reply(w, UsageFrom(sums, by, since, prices))
}
