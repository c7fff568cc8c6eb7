package usage

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Budget is what a role, or the whole team, may spend in a day: tokens
// (Tokens.Total: input, output, cache read and cache write), an estimated
// cost in US dollars (the price table's), or both, whichever is reached
// first. A zero field sets no bound.
type Budget struct {
	Tokens  int64   `json:"tokens,omitempty"`
	CostUSD float64 `json:"cost_usd,omitempty"`
}

// IsZero reports whether b bounds nothing.
func (b Budget) IsZero() bool { return b.Tokens <= 0 && b.CostUSD <= 0 }

// Budgets are the daily budgets of settings.yaml (usage.budgets): one for
// the team, all roles together, and one per role.
type Budgets struct {
	Team  Budget
	Roles map[string]Budget
}

// IsZero reports whether no budget is set.
func (b Budgets) IsZero() bool {
	if !b.Team.IsZero() {
		return false
	}
	for _, r := range b.Roles {
		if !r.IsZero() {
			return false
		}
	}
	return true
}

// Spent is what a role, or the team, used in a day.
type Spent struct {
	Tokens  int64
	CostUSD float64
}

// BudgetUse is one budget held against what was spent on its day.
type BudgetUse struct {
	// Role is the role the budget is for; "" for the team's.
	Role   string
	Budget Budget
	Spent  Spent
}

// WarnAt is the part of a budget whose use is told to a person once a day.
const WarnAt = 0.8

// Fraction is how much of the budget is spent: the larger of its tokens'
// and its cost's parts (1 is all of it).
func (u BudgetUse) Fraction() float64 {
	f := 0.0
	if u.Budget.Tokens > 0 {
		f = float64(u.Spent.Tokens) / float64(u.Budget.Tokens)
	}
	if u.Budget.CostUSD > 0 {
		f = max(f, u.Spent.CostUSD/u.Budget.CostUSD)
	}
	return f
}

// Reached reports whether the budget is all spent.
func (u BudgetUse) Reached() bool { return !u.Budget.IsZero() && u.Fraction() >= 1 }

// Describe says how much of the budget is spent, by the bound nearest to
// being reached: "1.02M of 1M tokens today", "$20.40 of $20.00 today".
func (u BudgetUse) Describe() string {
	var tf, cf float64 = -1, -1
	if u.Budget.Tokens > 0 {
		tf = float64(u.Spent.Tokens) / float64(u.Budget.Tokens)
	}
	if u.Budget.CostUSD > 0 {
		cf = u.Spent.CostUSD / u.Budget.CostUSD
	}
	if cf > tf {
		return fmt.Sprintf("$%.2f of $%.2f today", u.Spent.CostUSD, u.Budget.CostUSD)
	}
	return fmt.Sprintf("%s of %s tokens today", FormatTokens(u.Spent.Tokens), FormatTokens(u.Budget.Tokens))
}

// Check holds every budget set against spent, what each role used today
// (every role's counts toward the team's). The team's comes first, then
// the roles' by name.
func (b Budgets) Check(spent map[string]Spent) []BudgetUse {
	var out []BudgetUse
	if !b.Team.IsZero() {
		var all Spent
		for _, s := range spent {
			all.Tokens += s.Tokens
			all.CostUSD += s.CostUSD
		}
		out = append(out, BudgetUse{Budget: b.Team, Spent: all})
	}
	names := make([]string, 0, len(b.Roles))
	for r, bu := range b.Roles {
		if !bu.IsZero() {
			names = append(names, r)
		}
	}
	sort.Strings(names)
	for _, r := range names {
		out = append(out, BudgetUse{Role: r, Budget: b.Roles[r], Spent: spent[r]})
	}
	return out
}

// DayStart is the start of t's day in t's location: budgets are per day of
// the supervisor's local time (its TZ), which turns at local midnight.
func DayStart(t time.Time) time.Time {
	y, m, d := t.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, t.Location())
}

// NextDay is the start of the day after t's.
func NextDay(t time.Time) time.Time {
	y, m, d := t.Date()
	return time.Date(y, m, d+1, 0, 0, 0, 0, t.Location())
}

// FormatTokens writes a count of tokens short: 950, 12.5k, 1.02M.
func FormatTokens(n int64) string {
	f := float64(n)
	switch {
	case n >= 1_000_000_000:
		return trim(f/1e9) + "G"
	case n >= 1_000_000:
		return trim(f/1e6) + "M"
	case n >= 1_000:
		return trim(f/1e3) + "k"
	}
	return strconv.FormatInt(n, 10)
}

// trim writes x with up to three significant digits and no trailing zeros.
func trim(x float64) string {
	prec := 2
	switch {
	case x >= 100:
		prec = 0
	case x >= 10:
		prec = 1
	}
	s := strconv.FormatFloat(x, 'f', prec, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// ParseTokens reads a count of tokens as a person writes it in settings:
// 1000000, 1_000_000, 1.5M, 500k.
func ParseTokens(s string) (int64, error) {
	t := strings.ReplaceAll(strings.TrimSpace(s), "_", "")
	mult := 1.0
	if n := len(t); n > 0 {
		switch t[n-1] {
		case 'k', 'K':
			mult, t = 1e3, t[:n-1]
		case 'm', 'M':
			mult, t = 1e6, t[:n-1]
		case 'g', 'G':
			mult, t = 1e9, t[:n-1]
		}
	}
	x, err := strconv.ParseFloat(t, 64)
	if err != nil || x <= 0 || x*mult > 1e15 || x != x {
		return 0, fmt.Errorf("want a count of tokens above 0 such as 1000000, 500k or 1.5M, got %q", s)
	}
	return int64(x * mult), nil
}
