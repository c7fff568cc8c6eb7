package supervisor

import (
	"testing"
	"time"
)

func TestResetAt(t *testing.T) {
	now := time.Date(2026, 11, 23, 14, 0, 0, 0, time.Local)
	wait := 15 * time.Minute
	cases := []struct {
		reset string
		want  time.Time
	}{
		{"", now.Add(wait)},
		{"soon", now.Add(wait)},
		{"3:45pm", time.Date(2026, 11, 23, 15, 46, 0, 0, time.Local).Add(time.Minute)},
		// A minute shown cut from a reset within it, already begun: the
		// end of that minute, not a moment ago.
		{"2pm", time.Date(2026, 11, 23, 14, 0, 0, 0, time.Local).Add(time.Second)},
		{"14:00", time.Date(2026, 11, 23, 14, 1, 0, 0, time.Local).Add(3 * time.Second)},
		{"3pm", time.Date(2026, 11, 23, 15, 0, 0, 0, time.Local).Add(time.Minute)},
		{"at 9:05 am", time.Date(2026, 11, 24, 9, 6, 0, 0, time.Local).Add(time.Minute)},
		{"14:00:30", time.Date(2026, 11, 23, 14, 0, 30, 0, time.Local).Add(1500 * time.Millisecond)},
		{"12am", time.Date(2026, 11, 24, 0, 0, 0, 0, time.Local).Add(time.Minute)},
		{"in 2h 30m", now.Add(150*time.Minute + time.Minute)},
		{"in 40 seconds", now.Add(42 * time.Second)},
		{"5s", now.Add(6 * time.Second)},
		{"99:99", now.Add(wait)},
	}
	for _, c := range cases {
		if got := resetAt(now, c.reset, wait); !got.Equal(c.want) {
			t.Errorf("resetAt(%q) = %v, want %v", c.reset, got.Format(time.TimeOnly), c.want.Format(time.TimeOnly))
		}
	}
}

// A limit message stays on screen after the limit lifted: the role is not
// limited again by it, but by a new one.
func TestLimitWatchCountsNewMessagesOnly(t *testing.T) {
	var w limitWatch
	now := time.Now()
	steps := []struct {
		at      time.Duration
		limits  int
		limited bool
	}{
		{0, 0, false},
		{time.Second, 1, true},       // a limit: 5 s (+1 s margin)
		{3 * time.Second, 1, true},   // still
		{7 * time.Second, 1, false},  // lifted; the old message stays
		{8 * time.Second, 1, false},  // not limited by it again
		{9 * time.Second, 2, true},   // a second message: limited again
		{20 * time.Second, 0, false}, // lifted, and the screen cleared
		{21 * time.Second, 1, true},  // a new message after the clear
	}
	for i, s := range steps {
		_, limited := w.check(signals{limits: s.limits, reset: "in 5s"}, now.Add(s.at), time.Minute)
		if limited != s.limited {
			t.Errorf("step %d (%v, %d on screen): limited = %v, want %v", i, s.at, s.limits, limited, s.limited)
		}
	}
}

// A limit whose reset time has already passed when its message is read
// still limits the role for a moment, so the limit's end is seen.
func TestLimitReadLateStillShows(t *testing.T) {
	var w limitWatch
	now := time.Date(2026, 11, 23, 12, 0, 10, 0, time.Local)
	until, limited := w.check(signals{limits: 1, reset: "12:00:05"}, now, time.Minute)
	if !limited || until.Before(now) || until.After(now.Add(2*time.Second)) {
		t.Fatalf("limited %v until %v, want a moment past %v", limited, until, now)
	}
	if _, limited := w.check(signals{limits: 1, reset: "12:00:05"}, now.Add(2*time.Second), time.Minute); limited {
		t.Error("still limited after the moment")
	}
}
