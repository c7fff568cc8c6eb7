package store

import (
	"testing"
	"time"
)

// A disabled role's task in flight goes back to its queue, first in line
// and with its attempts kept; a removed role's open tasks are all closed as
// blocked with the reason; closed tasks and other roles' tasks are left.
func TestReleaseRole(t *testing.T) {
	for _, removed := range []bool{false, true} {
		s, run := workspace(t)
		at := day.Add(time.Minute)
		tasks := accept(t, s,
			command(run, "a.yaml", "cmd-1", "ashigaru1"),
			command(run, "b.yaml", "cmd-2", "ashigaru1"),
			command(run, "c.yaml", "cmd-3", "ashigaru2"),
			command(run, "d.yaml", "cmd-4", "ashigaru1"))
		done, inFlight, queued, other := tasks[0].Task, tasks[1].Task, tasks[3].Task, tasks[2].Task
		if _, err := s.Assign(done.ID, at); err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.AcceptReport(report(done.ID, "reports/a.yaml", StatusDone, at)); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Assign(inFlight.ID, at); err != nil {
			t.Fatal(err)
		}
		if _, err := s.MarkDelivery(inFlight.ID, true, 1, at); err != nil {
			t.Fatal(err)
		}
		got, err := s.ReleaseRole("ashigaru1", removed, "role ashigaru1 was removed", at.Add(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		status := func(id string) Task {
			tk, err := s.Task(id)
			if err != nil {
				t.Fatal(err)
			}
			return tk
		}
		if removed {
			if len(got) != 2 || got[0].ID != inFlight.ID || got[1].ID != queued.ID {
				t.Fatalf("removed: released %+v, want the task in flight and the queued one", got)
			}
			for _, id := range []string{inFlight.ID, queued.ID} {
				if tk := status(id); tk.Status != StatusBlocked || tk.Summary != "role ashigaru1 was removed" || tk.FinishedAt.IsZero() {
					t.Errorf("removed: task %s = %+v, want blocked with the reason", id, tk)
				}
			}
		} else {
			if len(got) != 1 || got[0].ID != inFlight.ID {
				t.Fatalf("disabled: released %+v, want the task in flight only", got)
			}
			if tk := status(inFlight.ID); tk.Status != StatusQueued || tk.Attempts != 1 || !tk.DeliveredAt.IsZero() {
				t.Errorf("disabled: task in flight = %+v, want queued again with its attempt", tk)
			}
			if next, err := s.NextQueued("ashigaru1"); err != nil || next == nil || next.ID != inFlight.ID {
				t.Errorf("disabled: next queued = %+v, %v; want the task that was in flight first", next, err)
			}
			if tk := status(queued.ID); tk.Status != StatusQueued {
				t.Errorf("disabled: queued task = %+v", tk)
			}
		}
		if tk := status(done.ID); tk.Status != StatusDone {
			t.Errorf("a closed task changed: %+v", tk)
		}
		if tk := status(other.ID); tk.Status != StatusQueued {
			t.Errorf("another role's task changed: %+v", tk)
		}
	}
}
