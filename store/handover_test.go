package store

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// A hand-over moves an open task to another role, queued there with its
// place and chain, the task in flight with a note in its body; it is
// recorded on the task, and done again (a redo after a crash) it changes
// nothing: the task is no longer the first role's.
func TestHandOverMovesATaskOnceAndRecordsIt(t *testing.T) {
	s, run := workspace(t)
	res := accept(t, s, command(run, "a.yaml", "cmd-1", "ashigaru1"), command(run, "b.yaml", "cmd-2", "ashigaru1"))
	inFlight, queued := res[0].Task, res[1].Task
	if _, err := s.Assign(inFlight.ID, day); err != nil {
		t.Fatal(err)
	}
	if _, err := s.MarkDelivery(inFlight.ID, true, 1, day); err != nil {
		t.Fatal(err)
	}
	at := day.Add(time.Minute)
	why := "ashigaru1 is at its usage limit until 15:04 with no free account"
	moved, err := s.HandOver(Handover{TaskID: inFlight.ID, From: "ashigaru1", To: "ashigaru2", Reason: why,
		Note: "ashigaru1 had it in flight.", RunID: run.ID, At: at})
	if err != nil {
		t.Fatal(err)
	}
	if moved.Role != "ashigaru2" || moved.Status != StatusQueued || !moved.DeliveredAt.IsZero() || moved.Attempts != 1 ||
		moved.Body != "Body of cmd-1\n\nashigaru1 had it in flight." || moved.Seq != inFlight.Seq || moved.Root != inFlight.Root {
		t.Errorf("handed over = %+v", moved)
	}
	if _, err := s.HandOver(Handover{TaskID: queued.ID, From: "ashigaru1", To: "ashigaru2", Reason: why, RunID: run.ID, At: at}); err != nil {
		t.Fatal(err)
	}
	if next, _ := s.NextQueued("ashigaru2"); next == nil || next.ID != inFlight.ID {
		t.Errorf("ashigaru2's next task = %+v, want %s first", next, inFlight.ID)
	}
	if mine, _ := s.InFlight("ashigaru1"); mine != nil {
		t.Errorf("ashigaru1 still has %s in flight", mine.ID)
	}

	// Done again, as after a crash: refused, nothing changes, no second record.
	_, err = s.HandOver(Handover{TaskID: inFlight.ID, From: "ashigaru1", To: "ashigaru2", Reason: why, Note: "again", RunID: run.ID, At: at})
	if !errors.Is(err, ErrWrongRole) {
		t.Errorf("second hand-over: %v, want ErrWrongRole", err)
	}
	if again, _ := s.Task(inFlight.ID); again.Body != moved.Body {
		t.Errorf("body after the refused hand-over = %q", again.Body)
	}
	hs, err := s.Handovers([]string{inFlight.ID, queued.ID, "t-none"})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{inFlight.ID, queued.ID} {
		if h := hs[id]; len(h) != 1 || h[0].From != "ashigaru1" || h[0].To != "ashigaru2" || h[0].Reason != why || !h[0].At.Equal(at) {
			t.Errorf("hand-overs of %s = %+v, want one from ashigaru1 to ashigaru2", id, h)
		}
	}
	// The report of the role that lost the task is refused.
	if _, err := s.CheckReport(inFlight.ID, "ashigaru1"); !errors.Is(err, ErrNotDelivered) && !errors.Is(err, ErrWrongRole) {
		t.Errorf("report from ashigaru1: %v, want a refusal", err)
	}
	// A closed task is never moved.
	if _, err := s.Cancel(queued.ID, "not wanted", at); err != nil {
		t.Fatal(err)
	}
	if _, err := s.HandOver(Handover{TaskID: queued.ID, From: "ashigaru2", To: "ashigaru1", Reason: why, At: at}); !errors.Is(err, ErrTaskClosed) {
		t.Errorf("hand-over of a cancelled task: %v, want ErrTaskClosed", err)
	}
	if _, err := s.HandOver(Handover{TaskID: inFlight.ID, From: "ashigaru2", To: "nobody", Reason: why, At: at}); err == nil || !strings.Contains(err.Error(), "unknown role") {
		t.Errorf("hand-over to an unknown role: %v", err)
	}
}
