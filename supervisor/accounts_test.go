package supervisor

import (
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/shogun-dev/shogun/config"
)

// The next account is a free one: never limited first, in the list's
// order, then the one limited longest ago; with none free, the one whose
// limit lifts first, and ok false.
func TestNextAccountIsTheLeastRecentlyLimited(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	list := []config.Account{{Key: "p/a"}, {Key: "p/b"}, {Key: "p/c"}}
	limit := func(key string, agoMin, liftsInMin int) AccountLimit {
		return AccountLimit{Account: key, LimitedAt: now.Add(-time.Duration(agoMin) * time.Minute), Until: now.Add(time.Duration(liftsInMin) * time.Minute)}
	}
	for _, tc := range []struct {
		name   string
		limits []AccountLimit
		skip   string
		want   string
		wantOK bool
	}{
		{"none limited: the first", nil, "", "p/a", true},
		{"the one met: the next", nil, "p/a", "p/b", true},
		{"never limited before limited long ago", []AccountLimit{limit("p/a", 300, -200)}, "", "p/b", true},
		{"all limited once: the longest ago", []AccountLimit{limit("p/a", 30, -10), limit("p/b", 300, -200), limit("p/c", 60, -5)}, "", "p/b", true},
		{"a limited one is passed over", []AccountLimit{limit("p/a", 1, 60), limit("p/b", 300, -200)}, "p/c", "p/b", true},
		{"none free: the first to lift", []AccountLimit{limit("p/a", 1, 60), limit("p/b", 2, 30), limit("p/c", 3, 90)}, "", "p/b", false},
		{"only the one met", []AccountLimit{limit("p/b", 1, 60), limit("p/c", 1, 60)}, "p/a", "p/b", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newAccountBook(nil, zerolog.Nop())
			for _, l := range tc.limits {
				b.record(l)
			}
			got, ok := b.pick(list, tc.skip, now)
			if got.Key != tc.want || ok != tc.wantOK {
				t.Errorf("pick = %s, %v; want %s, %v", got.Key, ok, tc.want, tc.wantOK)
			}
		})
	}
}
