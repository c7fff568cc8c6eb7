package store

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/usage"
)

// An account's last limit is kept across a reopen (a restarted
// supervisor), a later limit replacing it; its tokens of a day are those
// read from files in its own config folder.
func TestAccountLimitsSurviveAReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data", "shogun.db")
	s := openAt(t, path)
	first := AccountLimit{Account: "team/a", Role: "karo", LimitedAt: day, Until: day.Add(time.Hour)}
	if err := s.RecordAccountLimit(first); err != nil {
		t.Fatal(err)
	}
	later := AccountLimit{Account: "team/a", Role: "ashigaru1", LimitedAt: day.Add(2 * time.Hour), Until: day.Add(5 * time.Hour)}
	if err := s.RecordAccountLimit(later); err != nil {
		t.Fatal(err)
	}
	f := UsageFile{Role: "karo", CLI: "claude", Path: "/h/.claude-b/projects/p/s.jsonl"}
	if err := s.AddUsage(f, []usage.Record{{Key: "m1", At: day.Add(time.Minute), Tokens: usage.Tokens{Input: 7, Output: 3}}}, day); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openAt(t, path)
	got, err := s.AccountLimits()
	if err != nil || len(got) != 1 || got[0].Role != "ashigaru1" || !got[0].Until.Equal(later.Until) || !got[0].LimitedAt.Equal(later.LimitedAt) {
		t.Fatalf("AccountLimits after a reopen = %+v, %v; want only %+v", got, err, later)
	}
	for folder, want := range map[string]int64{"/h/.claude-b": 10, "/h/.claude-b/": 10, "/h/.claude": 0, "/h/.claude-": 0} {
		tok, err := s.TokensUnder(folder, day)
		if err != nil || tok.Input+tok.Output != want {
			t.Errorf("TokensUnder(%s) = %+v, %v; want %d in all", folder, tok, err, want)
		}
	}
}
