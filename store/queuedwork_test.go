package store

import (
	"os"
	"path/filepath"
	"testing"
)

// QueuedWork reads, without changing the history, each role's tasks that
// wait (queued or in flight) and their highest priority; a history not
// there yet is no work, and is not created.
func TestQueuedWorkReadsTheWaitingTasksByRole(t *testing.T) {
	s, run := workspace(t)
	high := command(run, "a.yaml", "c1", "ashigaru1")
	high.Priority = PriorityHigh
	low := command(run, "b.yaml", "c3", "karo")
	low.Priority = PriorityLow
	accept(t, s, high, command(run, "a.yaml", "c2", "ashigaru1"), low)

	got, err := QueuedWork(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]RoleWork{"ashigaru1": {Tasks: 2, Rank: 0}, "karo": {Tasks: 1, Rank: 2}}
	if len(got) != len(want) || got["ashigaru1"] != want["ashigaru1"] || got["karo"] != want["karo"] {
		t.Errorf("queued work = %+v, want %+v", got, want)
	}

	missing := filepath.Join(t.TempDir(), "data", "shogun.db")
	if got, err := QueuedWork(missing); err != nil || got != nil {
		t.Errorf("no history: %+v, %v; want none", got, err)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Error("reading the work of a history that is not there created it")
	}
}
