package store

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

func count(t *testing.T, s *Store, table string) int {
	t.Helper()
	var n int
	if err := s.r.QueryRow(`SELECT COUNT(*) FROM ` + table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// Pruning removes the events and log records older than the cutoff, and
// nothing else: old tasks, their reports and their place in the search
// index stay, and so do newer events and logs.
func TestPruneRemovesOnlyOldEventsAndLogs(t *testing.T) {
	s, run := workspace(t)
	old, cutoff, recent := day.Add(-100*24*time.Hour), day.Add(-90*24*time.Hour), day.Add(-time.Hour)

	// Old tasks with reports, and one old task left open.
	rec := command(run, "old.yaml", "old", "ashigaru1")
	rec.ReceivedAt, rec.Title = old, "Ancient quest"
	task := accept(t, s, rec)[0].Task
	if _, err := s.Assign(task.ID, old); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.AcceptReport(report(task.ID, "old-report.yaml", StatusDone, old.Add(time.Minute))); err != nil {
		t.Fatal(err)
	}
	rec = command(run, "open.yaml", "open", "ashigaru2")
	rec.ReceivedAt = old
	accept(t, s, rec)

	// Events on both sides of the cutoff, one exactly at it (kept: only
	// rows before it go), and a fraction of a second either side.
	var wantKept []string
	for i, at := range []time.Time{old, old.Add(time.Hour), cutoff.Add(-time.Millisecond), cutoff, cutoff.Add(time.Millisecond), recent} {
		kind := fmt.Sprintf("e%d", i)
		if err := s.AddEvent(Event{At: at, RunID: run.ID, Kind: kind}); err != nil {
			t.Fatal(err)
		}
		if !at.Before(cutoff) {
			wantKept = append(wantKept, kind)
		}
	}
	for _, l := range []struct {
		role string
		at   time.Time
	}{{"ashigaru1", old}, {"ashigaru2", recent}} {
		if err := s.RecordLog(run.ID, l.role, "runtime/logs/"+l.role+".log", l.at); err != nil {
			t.Fatal(err)
		}
	}
	tasksBefore, reportsBefore := count(t, s, "tasks"), count(t, s, "reports")

	res, err := s.Prune(context.Background(), cutoff, PruneOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Events != 3 || res.Logs != 1 {
		t.Errorf("Prune removed %d events and %d logs, want 3 and 1", res.Events, res.Logs)
	}
	evs, err := s.Events(0)
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for i := len(evs) - 1; i >= 0; i-- {
		kept = append(kept, evs[i].Kind)
	}
	if fmt.Sprint(kept) != fmt.Sprint(wantKept) {
		t.Errorf("events kept: %v, want %v", kept, wantKept)
	}
	var logRole string
	if err := s.r.QueryRow(`SELECT role_id FROM logs`).Scan(&logRole); err != nil || count(t, s, "logs") != 1 || logRole != "ashigaru2" {
		t.Errorf("logs kept: %d rows, %q, %v; want only ashigaru2's", count(t, s, "logs"), logRole, err)
	}
	if count(t, s, "tasks") != tasksBefore || count(t, s, "reports") != reportsBefore {
		t.Errorf("tasks %d → %d, reports %d → %d: pruning must keep them", tasksBefore, count(t, s, "tasks"), reportsBefore, count(t, s, "reports"))
	}
	if got, err := s.Task(task.ID); err != nil || got.Status != StatusDone || got.Summary != "Login form added" {
		t.Errorf("the old task after pruning: %+v, %v", got, err)
	}
	if reps, err := s.ReportsForTask(task.ID); err != nil || len(reps) != 1 {
		t.Errorf("the old task's report after pruning: %v, %v", reps, err)
	}
	if ids := searchIDs(t, s, TaskFilter{Search: "ancient"}); len(ids) != 1 {
		t.Errorf("the old task is no longer found: %v", ids)
	}

	// Again: nothing left to remove.
	if res, err := s.Prune(context.Background(), cutoff, PruneOptions{}); err != nil || res.Events+res.Logs != 0 {
		t.Errorf("a second Prune: %+v, %v", res, err)
	}
}

// A backlog is removed in many small batches, growing from a few rows;
// stopped midway, Prune keeps what it removed and the rest goes next time.
func TestPruneWorksInBatches(t *testing.T) {
	s := openAt(t, filepath.Join(t.TempDir(), "shogun.db"))
	old := day.Add(-365 * 24 * time.Hour)
	const n = 2000
	evs := make([]Event, n)
	for i := range evs {
		evs[i] = Event{At: old.Add(time.Duration(i) * time.Second), Kind: "old"}
	}
	if err := s.AddEvents(append(evs, Event{At: day, Kind: "new"})); err != nil {
		t.Fatal(err)
	}
	if err := s.AddEvents([]Event{{At: day}}); err == nil || count(t, s, "events") != n+1 {
		t.Fatalf("AddEvents with an event without a kind: %v, %d events", err, count(t, s, "events"))
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := s.Prune(ctx, day.Add(-time.Hour), PruneOptions{Pause: time.Millisecond})
	if !errors.Is(err, context.Canceled) || res.Events != 0 {
		t.Fatalf("Prune with a cancelled context: %+v, %v", res, err)
	}

	res, err = s.Prune(context.Background(), day.Add(-time.Hour), PruneOptions{Pause: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if res.Events != n || res.Batches < 4 || res.MaxHold <= 0 {
		t.Errorf("Prune of a backlog: %+v, want %d events in several batches", res, n)
	}
	if got := count(t, s, "events"); got != 1 {
		t.Errorf("%d events left, want 1", got)
	}
	t.Logf("%d events in %d batches, the longest held the writer %s", res.Events, res.Batches, res.MaxHold)
}

// Vacuum compacts the file and keeps every row and the search index.
func TestVacuumKeepsTheHistory(t *testing.T) {
	s, run := workspace(t)
	var recs []CommandRecord
	for i := range 50 {
		rec := command(run, fmt.Sprintf("%d.yaml", i), fmt.Sprintf("cmd-%d", i), "ashigaru1")
		rec.Body = fmt.Sprintf("%d %02000d", i, 0)
		recs = append(recs, rec)
	}
	accept(t, s, recs...)
	if _, err := s.w.Exec(fmt.Sprintf(`WITH RECURSIVE i(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM i WHERE k < 3000)
INSERT INTO events (at, kind, message) SELECT '%s', 'old', printf('%%01000d', k) FROM i`, formatTime(day.Add(-time.Hour*24*365)))); err != nil {
		t.Fatal(err)
	}
	if _, err := s.w.Exec(`DELETE FROM events`); err != nil {
		t.Fatal(err)
	}
	before, after, err := s.Vacuum()
	if err != nil {
		t.Fatal(err)
	}
	if after >= before {
		t.Errorf("vacuum: %d bytes before, %d after", before, after)
	}
	if got := count(t, s, "tasks"); got != 50 {
		t.Errorf("%d tasks after vacuum", got)
	}
	if ids := searchIDs(t, s, TaskFilter{Search: "title of cmd 7"}); len(ids) != 1 {
		t.Errorf("search after vacuum: %v", ids)
	}
	checkSearchIntegrity(t, s.w)
	t.Logf("vacuum: %d → %d bytes", before, after)
}
