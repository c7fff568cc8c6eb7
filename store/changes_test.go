package store

import (
	"slices"
	"testing"
	"time"
)

// A watcher learns of every write: Changed closes after a task is recorded
// and after an event, and the tasks in flight and those named by the events
// since its last look are what changed.
func TestWatchingChanges(t *testing.T) {
	s, run := workspace(t)
	last, err := s.LastEventID()
	if err != nil || last != 0 {
		t.Fatalf("last event of an empty history = %d, %v", last, err)
	}
	ch := s.Changed()
	task := accept(t, s, command(run, "a.yaml", "c1", "ashigaru1"))[0].Task
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatal("Changed did not close after a task was recorded")
	}
	ch = s.Changed()
	if err := s.AddEvent(Event{At: day, RunID: run.ID, Role: "ashigaru1", Kind: "queued", TaskID: task.ID}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatal("Changed did not close after an event was recorded")
	}
	if err := s.AddEvent(Event{At: day, Kind: "rejected"}); err != nil { // names no task
		t.Fatal(err)
	}
	ids, to, err := s.TasksInEventsAfter(last, 100)
	if err != nil || !slices.Equal(ids, []string{task.ID}) || to != 2 {
		t.Errorf("tasks in events after %d = %v up to %d, %v", last, ids, to, err)
	}
	if ids, again, _ := s.TasksInEventsAfter(to, 100); len(ids) != 0 || again != to {
		t.Errorf("nothing new: %v up to %d", ids, again)
	}
	if fl, _ := s.InFlightTasks(); len(fl) != 0 {
		t.Errorf("in flight before any assignment: %+v", fl)
	}
	if _, err := s.Assign(task.ID, day.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if fl, err := s.InFlightTasks(); err != nil || len(fl) != 1 || fl[0].ID != task.ID || fl[0].Status != StatusAssigned {
		t.Errorf("in flight = %+v, %v", fl, err)
	}
	evs, err := s.EventsForTask(task.ID)
	if err != nil || len(evs) != 1 || evs[0].Kind != "queued" {
		t.Errorf("events of %s = %+v, %v", task.ID, evs, err)
	}
}

// Runs lists the runs newest first, the running one without an end.
func TestRunsNewestFirst(t *testing.T) {
	s, first := workspace(t)
	if err := s.EndRun(first.ID, RunStopped, day.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	second, err := s.StartRun(4343, "/ws", day.Add(2*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	runs, err := s.Runs(0)
	if err != nil || len(runs) != 2 || runs[0].ID != second.ID || runs[1].ID != first.ID {
		t.Fatalf("runs = %+v, %v", runs, err)
	}
	if !runs[0].EndedAt.IsZero() || runs[1].Status != RunStopped || !runs[1].EndedAt.Equal(day.Add(time.Hour)) {
		t.Errorf("runs = %+v", runs)
	}
	if one, _ := s.Runs(1); len(one) != 1 {
		t.Errorf("Runs(1) = %+v", one)
	}
}
