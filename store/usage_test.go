package store

import (
	"testing"
	"time"

	"github.com/shogun-dev/shogun/usage"
)

// Tokens a role's CLI spent go to the task it was working on at the time;
// calls before its first task, or after it finished, to no task. A reply
// read again as it streamed counts once, with its last numbers, and the
// cursor says where to read on after a restart.
func TestUsageAttributedToTheTaskOfTheTime(t *testing.T) {
	s, run := workspace(t)
	at := func(min int) time.Time { return day.Add(time.Duration(min) * time.Minute) }
	task := accept(t, s, command(run, "a.yaml", "cmd-1", "ashigaru1"))[0].Task
	if _, err := s.Assign(task.ID, at(10)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.MarkDelivery(task.ID, true, 1, at(11)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.AcceptReport(report(task.ID, "reports/a.yaml", StatusDone, at(20))); err != nil {
		t.Fatal(err)
	}
	rec := func(key string, min int, in, out int64) usage.Record {
		return usage.Record{Key: key, At: at(min), Model: "claude-opus-4-5",
			Tokens: usage.Tokens{Input: in, Output: out, CacheRead: 100}}
	}
	f := UsageFile{Role: "ashigaru1", CLI: "claude", Path: "/home/a/.claude/projects/p/s.jsonl",
		Cursor: usage.Cursor{Offset: 300}}
	if err := s.AddUsage(f, []usage.Record{rec("m0", 5, 1, 1), rec("m1", 12, 10, 5)}, at(13)); err != nil {
		t.Fatal(err)
	}
	// m1 again, streamed further; m2 within the task; m3 after it.
	f.Cursor = usage.Cursor{Offset: 900, State: "x"}
	if err := s.AddUsage(f, []usage.Record{rec("m1", 12, 10, 50), rec("m2", 15, 20, 7), rec("m3", 25, 3, 3)}, at(26)); err != nil {
		t.Fatal(err)
	}
	got, err := s.TaskTokens([]string{task.ID, "t-none"})
	if err != nil {
		t.Fatal(err)
	}
	if want := (usage.Tokens{Input: 30, Output: 57, CacheRead: 200}); len(got) != 1 || got[task.ID] != want {
		t.Errorf("TaskTokens = %+v, want %s: %+v", got, task.ID, want)
	}
	sums, err := s.Usage(UsageFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var noTask usage.Tokens
	var calls int64
	for _, u := range sums {
		calls += u.Calls
		if u.TaskID == "" {
			noTask = noTask.Add(u.Tokens)
		}
		if u.Role != "ashigaru1" || u.Day != day.Format(time.DateOnly) || u.Model != "claude-opus-4-5" {
			t.Errorf("sum %+v: wrong role, day or model", u)
		}
	}
	if want := (usage.Tokens{Input: 4, Output: 4, CacheRead: 200}); noTask != want || calls != 4 {
		t.Errorf("outside the task: %+v in %d calls in all, want %+v in 4", noTask, calls, want)
	}
	if later, _ := s.Usage(UsageFilter{Since: day.AddDate(0, 0, 1)}); len(later) != 0 {
		t.Errorf("Usage since the next day = %+v", later)
	}
	c, err := s.UsageCursor("ashigaru1", f.Path)
	if err != nil || c != f.Cursor {
		t.Errorf("UsageCursor = %+v, %v; want %+v", c, err, f.Cursor)
	}
	if c, _ := s.UsageCursor("ashigaru1", "/never/read"); c != (usage.Cursor{}) {
		t.Errorf("cursor of a file never read = %+v", c)
	}
	// Another role sharing the CLI home has its own cursor in the file.
	if c, _ := s.UsageCursor("ashigaru2", f.Path); c != (usage.Cursor{}) {
		t.Errorf("another role's cursor in the same file = %+v", c)
	}
}

// A budget's day is a local day: Usage From its midnight leaves out the
// calls of the evening before, though they share its UTC date in zones
// west of UTC (or the morning's, east of it).
func TestUsageFromALocalMidnight(t *testing.T) {
	s, _ := workspace(t)
	zone := time.FixedZone("UTC-5", -5*3600)
	midnight := time.Date(2026, 11, 28, 0, 0, 0, 0, zone) // 05:00 UTC
	recs := []usage.Record{
		{Key: "evening", At: midnight.Add(-30 * time.Minute), Tokens: usage.Tokens{Input: 1000}},
		{Key: "night", At: midnight.Add(30 * time.Minute), Tokens: usage.Tokens{Input: 7}},
	}
	if err := s.AddUsage(UsageFile{Role: "a", CLI: "claude", Path: "/f"}, recs, midnight); err != nil {
		t.Fatal(err)
	}
	sums, err := s.Usage(UsageFilter{From: midnight})
	if err != nil {
		t.Fatal(err)
	}
	if len(sums) != 1 || sums[0].Input != 7 {
		t.Errorf("Usage from local midnight = %+v, want the call after it only", sums)
	}
}

// A record written again under its key keeps the larger of each count: a
// reply's count grows as it streams, and a line rewritten with smaller
// numbers (an agent lowering what it spent, to get past its budget) takes
// nothing back.
func TestUsageRecordWrittenAgainNeverShrinks(t *testing.T) {
	st, _ := workspace(t)
	at := day.Add(time.Hour)
	f := UsageFile{Role: "a", CLI: "claude", Path: "/a.jsonl"}
	for _, out := range []int64{100, 2_000_000, 5} {
		if err := st.AddUsage(f, []usage.Record{{Key: "msg1/req1", At: at, Model: "m", Tokens: usage.Tokens{Input: 10, Output: out}}}, at); err != nil {
			t.Fatal(err)
		}
	}
	sum, err := st.Usage(UsageFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var got usage.Tokens
	for _, r := range sum {
		got = got.Add(r.Tokens)
	}
	if got.Output != 2_000_000 || got.Input != 10 {
		t.Errorf("after 100, 2M and 5 output tokens under one key: %+v, want 2M output and 10 input", got)
	}
}
