package usage

import (
	"testing"
	"time"
)

// What a person reads of a budget: the bound nearest to being reached,
// counts written short.
func TestBudgetUseSaysHowMuchIsSpent(t *testing.T) {
	for _, c := range []struct {
		u       BudgetUse
		want    string
		reached bool
	}{
		{BudgetUse{Budget: Budget{Tokens: 1_000_000}, Spent: Spent{Tokens: 1_020_000}}, "1.02M of 1M tokens today", true},
		{BudgetUse{Budget: Budget{Tokens: 1_000_000}, Spent: Spent{Tokens: 850_000}}, "850k of 1M tokens today", false},
		{BudgetUse{Budget: Budget{Tokens: 5_000_000, CostUSD: 20}, Spent: Spent{Tokens: 1_000, CostUSD: 20.4}}, "$20.40 of $20.00 today", true},
		{BudgetUse{Budget: Budget{CostUSD: 2.5}, Spent: Spent{Tokens: 999}}, "$0.00 of $2.50 today", false},
	} {
		if got := c.u.Describe(); got != c.want || c.u.Reached() != c.reached {
			t.Errorf("%+v: %q reached %v, want %q reached %v", c.u, got, c.u.Reached(), c.want, c.reached)
		}
	}
}

func TestTokensAsPeopleWriteThem(t *testing.T) {
	for in, want := range map[string]int64{"1000000": 1_000_000, "1_000_000": 1_000_000, "1.5M": 1_500_000, "500k": 500_000, "2G": 2_000_000_000} {
		if got, err := ParseTokens(in); err != nil || got != want {
			t.Errorf("ParseTokens(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "lots", "0", "-5k", "M", "NaN", "1e30"} {
		if got, err := ParseTokens(in); err == nil {
			t.Errorf("ParseTokens(%q) = %d, want an error", in, got)
		}
	}
	for n, want := range map[int64]string{950: "950", 1_000: "1k", 12_500: "12.5k", 1_020_000: "1.02M", 125_000_000: "125M"} {
		if got := FormatTokens(n); got != want {
			t.Errorf("FormatTokens(%d) = %q, want %q", n, got, want)
		}
	}
}

// A budget's day is the local day, 23 or 25 hours long when the clocks
// change.
func TestBudgetDaysAreLocalDays(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Skip("no time zone data:", err)
	}
	at := time.Date(2026, 3, 8, 15, 0, 0, 0, ny) // clocks went forward at 02:00
	if got := DayStart(at); !got.Equal(time.Date(2026, 3, 8, 0, 0, 0, 0, ny)) {
		t.Errorf("DayStart = %v", got)
	}
	if got := NextDay(at); !got.Equal(time.Date(2026, 3, 9, 0, 0, 0, 0, ny)) || got.Sub(DayStart(at)) != 23*time.Hour {
		t.Errorf("NextDay = %v (%v after the start)", got, got.Sub(DayStart(at)))
	}
}

// Every role's tokens count toward the team's budget.
func TestTheTeamsBudgetCountsEveryRole(t *testing.T) {
	b := Budgets{Team: Budget{Tokens: 100}, Roles: map[string]Budget{"a": {Tokens: 60}}}
	uses := b.Check(map[string]Spent{"a": {Tokens: 50}, "b": {Tokens: 55}})
	if len(uses) != 2 || uses[0].Role != "" || !uses[0].Reached() || uses[1].Role != "a" || uses[1].Reached() {
		t.Errorf("uses = %+v, want the team's reached (105 of 100) and a's not (50 of 60)", uses)
	}
}
