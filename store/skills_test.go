package store

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"
)

// finish closes a task with a report, as the queue does.
func finish(t *testing.T, s *Store, id, status string, r ReportRecord) {
	t.Helper()
	if _, err := s.Assign(id, day); err != nil {
		t.Fatal(err)
	}
	r.ClaimName, r.TaskID, r.Status, r.ReceivedAt = "r-"+id, id, status, day.Add(time.Minute)
	if r.Summary == "" {
		r.Summary = status
	}
	if _, _, err := s.AcceptReport(r); err != nil {
		t.Fatal(err)
	}
}

func TestFinishedTasks(t *testing.T) {
	s, run := workspace(t)
	var ids []string
	for i := 0; i < 5; i++ {
		rec := command(run, fmt.Sprintf("c%d.yaml", i), fmt.Sprintf("c%d", i), "ashigaru1")
		rec.Tags = []string{"frontend", `quote"d`}
		ids = append(ids, accept(t, s, rec)[0].Task.ID)
	}
	finish(t, s, ids[0], StatusDone, ReportRecord{Summary: "did it", Details: "all good", Files: []string{"a.go", "b/c.go"},
		SkillName: "a-skill", SkillDescription: "Does a. Use when."})
	finish(t, s, ids[1], StatusFailed, ReportRecord{})
	finish(t, s, ids[2], StatusBlocked, ReportRecord{})
	if _, err := s.Cancel(ids[3], "not needed", day); err != nil {
		t.Fatal(err)
	}
	// ids[4] stays queued.

	got, err := s.FinishedTasks()
	if err != nil {
		t.Fatal(err)
	}
	var gotIDs []string
	for _, ft := range got {
		gotIDs = append(gotIDs, ft.ID)
	}
	if !reflect.DeepEqual(gotIDs, ids[:3]) {
		t.Fatalf("finished tasks %v, want %v (no cancelled or open ones, in arrival order)", gotIDs, ids[:3])
	}
	first := got[0]
	want := FinishedTask{ID: ids[0], Role: "ashigaru1", Title: "Title of c0", Body: "Body of c0", Tags: []string{"frontend", `quote"d`},
		Status: StatusDone, Seq: 1, CreatedAt: day, FinishedAt: day.Add(time.Minute), Summary: "did it", Details: "all good",
		Files: []string{"a.go", "b/c.go"}, SkillName: "a-skill", SkillDescription: "Does a. Use when."}
	if !reflect.DeepEqual(first, want) {
		t.Errorf("finished task\n%+v\nwant\n%+v", first, want)
	}
	if got[1].Files == nil || len(got[1].Files) != 0 {
		t.Errorf("no files should read as an empty list, got %#v", got[1].Files)
	}
}

func TestDecodeList(t *testing.T) {
	for in, want := range map[string][]string{
		`[]`:                   {},
		`["a"]`:                {"a"},
		`["a","b c","d/e.go"]`: {"a", "b c", "d/e.go"},
		`["a\"b","\u003c"]`:    {`a"b`, "<"},
		`[ "spaced" ]`:         {"spaced"},
	} {
		got, err := decodeList(in)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("decodeList(%s) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := decodeList(`["a",`); err == nil {
		t.Error("bad JSON accepted")
	}
}

func candidate(id, name, status string, sources ...string) SkillCandidate {
	return SkillCandidate{ID: id, Name: name, Description: "Does " + name + ". Use when needed.", Body: "# " + name + "\n",
		SourceTaskIDs: sources, Status: status, Kind: "title", GroupKey: "title:x:" + name}
}

func TestSkillCandidateLifecycle(t *testing.T) {
	s, _ := workspace(t)
	at := day
	put := func(cs ...SkillCandidate) {
		t.Helper()
		at = at.Add(time.Minute)
		if err := s.UpdateSkillCandidates(func([]SkillCandidate) ([]SkillCandidate, error) { return cs, nil }, "scan", at); err != nil {
			t.Fatal(err)
		}
	}
	put(candidate("sc-1", "fix-test", SkillPending, "t-1", "t-2"), candidate("sc-2", "write-notes", SkillPending, "t-3", "t-4"))
	c, err := s.SkillCandidate("fix-test")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c.SourceTaskIDs, []string{"t-1", "t-2"}) || c.Status != SkillPending || !c.CreatedAt.Equal(day.Add(time.Minute)) {
		t.Fatalf("stored candidate %+v", c)
	}

	// The callback sees what is stored; an update keeps created_at.
	var seen []string
	err = s.UpdateSkillCandidates(func(ex []SkillCandidate) ([]SkillCandidate, error) {
		for _, e := range ex {
			seen = append(seen, e.Name)
		}
		c := ex[0]
		c.SourceTaskIDs = append(c.SourceTaskIDs, "t-5")
		return []SkillCandidate{c}, nil
	}, "scan", day.Add(time.Hour))
	if err != nil || !reflect.DeepEqual(seen, []string{"fix-test", "write-notes"}) {
		t.Fatalf("update: %v, saw %v", err, seen)
	}
	c, _ = s.SkillCandidate("fix-test")
	if len(c.SourceTaskIDs) != 3 || !c.CreatedAt.Equal(day.Add(time.Minute)) || !c.UpdatedAt.Equal(day.Add(time.Hour)) {
		t.Errorf("after update %+v", c)
	}

	// A name taken by another candidate, an unknown status: refused.
	if err := s.UpdateSkillCandidates(func([]SkillCandidate) ([]SkillCandidate, error) {
		return []SkillCandidate{candidate("sc-3", "fix-test", SkillPending)}, nil
	}, "scan", at); !errors.Is(err, ErrSkillNameTaken) {
		t.Errorf("duplicate name: %v", err)
	}
	if err := s.UpdateSkillCandidates(func([]SkillCandidate) ([]SkillCandidate, error) {
		return []SkillCandidate{candidate("sc-3", "other", "maybe")}, nil
	}, "scan", at); err == nil {
		t.Error("unknown status accepted")
	}

	// Review decisions: all or nothing, recorded with time.
	if _, err := s.DecideSkillCandidates([]SkillVerdict{{"fix-test", SkillApproved}, {"nope", SkillRejected}}, "review", at); !errors.Is(err, ErrUnknownSkill) {
		t.Fatalf("unknown name: %v", err)
	}
	if c, _ := s.SkillCandidate("fix-test"); c.Status != SkillPending {
		t.Fatal("a refused batch changed a candidate")
	}
	t1 := day.Add(2 * time.Hour)
	out, err := s.DecideSkillCandidates([]SkillVerdict{{"fix-test", SkillApproved}, {"write-notes", SkillRejected}}, "review", t1)
	if err != nil || out[0].Status != SkillApproved || out[1].Status != SkillRejected || out[1].RejectedSize != 2 {
		t.Fatalf("decide: %+v %v", out, err)
	}
	if _, err := s.DecideSkillCandidates([]SkillVerdict{{"fix-test", SkillApproved}}, "review", t1); err != nil {
		t.Fatalf("approving again: %v", err)
	}
	if _, err := s.DecideSkillCandidates([]SkillVerdict{{"fix-test", SkillExported}}, "review", t1); err == nil {
		t.Error("a review exported a candidate")
	}

	// A scan reopening a rejected candidate is recorded as such.
	w, _ := s.SkillCandidate("write-notes")
	w.Status = SkillPending
	put(w)

	// Edits: recorded, name uniqueness kept.
	if _, err := s.EditSkillCandidate("sc-1", "write-notes", "d", "b", "review", t1); !errors.Is(err, ErrSkillNameTaken) {
		t.Errorf("rename onto another name: %v", err)
	}
	e, err := s.EditSkillCandidate("sc-1", "fix-flaky-test", "New. Use when.", "# New\n", "review", t1)
	if err != nil || e.Name != "fix-flaky-test" || !e.EditedAt.Equal(t1) || e.Status != SkillApproved {
		t.Fatalf("edit: %+v %v", e, err)
	}

	// Export: rows per target and path, idempotent, candidate exported.
	sk := Skill{CandidateID: "sc-1", Name: "fix-flaky-test", Description: "New. Use when.", Body: "# New\n", Target: "codex",
		Layout: "flat", Path: "/ws/skills/codex/fix-flaky-test.md", SHA256: "abc"}
	for i := 0; i < 2; i++ {
		if err := s.RecordSkillExports([]Skill{sk}, day.Add(3*time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := s.Skills()
	if err != nil || len(rows) != 1 || rows[0].Path != sk.Path || rows[0].SHA256 != "abc" {
		t.Fatalf("skills rows %+v %v", rows, err)
	}
	if _, err := s.EditSkillCandidate("sc-1", "x", "d", "b", "review", t1); !errors.Is(err, ErrSkillExported) {
		t.Errorf("editing an exported candidate: %v", err)
	}
	if _, err := s.DecideSkillCandidates([]SkillVerdict{{"fix-flaky-test", SkillRejected}}, "review", t1); !errors.Is(err, ErrSkillExported) {
		t.Errorf("rejecting an exported candidate: %v", err)
	}

	ds, err := s.SkillDecisions("")
	if err != nil {
		t.Fatal(err)
	}
	var log []string
	for _, d := range ds {
		log = append(log, fmt.Sprintf("%s %s %s->%s by %s", d.Name, d.Decision, d.FromStatus, d.ToStatus, d.By))
		if d.At.IsZero() {
			t.Errorf("decision without time: %+v", d)
		}
	}
	want := []string{
		"fix-test approved pending->approved by review",
		"write-notes rejected pending->rejected by review",
		"write-notes reopened rejected->pending by scan",
		"fix-flaky-test edited approved->approved by review",
		"fix-flaky-test exported approved->exported by export",
	}
	if !reflect.DeepEqual(log, want) {
		t.Errorf("decisions\n%q\nwant\n%q", log, want)
	}
	if pend, _ := s.SkillCandidates(SkillPending); len(pend) != 1 || pend[0].Name != "write-notes" {
		t.Errorf("pending: %+v", pend)
	}
}

func TestInsertFinishedTasks(t *testing.T) {
	s, run := workspace(t)
	first := accept(t, s, command(run, "c.yaml", "c1", "karo"))[0].Task
	recs := []FinishedTaskRecord{
		{Role: "ashigaru1", Title: "A", Body: "a", Status: StatusDone, Summary: "ok", Files: []string{"x.go"}, CreatedAt: day, FinishedAt: day.Add(time.Minute)},
		{Role: "ashigaru2", Title: "B", Body: "b", Status: StatusFailed, Summary: "no", CreatedAt: day, FinishedAt: day.Add(time.Minute),
			SkillName: "b", SkillDescription: "B. Use when b."},
	}
	ids, err := s.InsertFinishedTasks(run.ID, recs)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"t-20261122-0002", "t-20261122-0003"}; first.ID != "t-20261122-0001" || !reflect.DeepEqual(ids, want) {
		t.Fatalf("ids %v after %s", ids, first.ID)
	}
	// Numbering goes on where the bulk insert left it.
	if next := accept(t, s, command(run, "d.yaml", "c2", "karo"))[0].Task; next.ID != "t-20261122-0004" || next.Seq != 4 {
		t.Errorf("next task %s seq %d", next.ID, next.Seq)
	}
	got, err := s.FinishedTasks()
	if err != nil || len(got) != 2 || got[1].SkillName != "b" || got[0].Files[0] != "x.go" {
		t.Fatalf("finished %+v %v", got, err)
	}
	if _, err := s.InsertFinishedTasks(run.ID, []FinishedTaskRecord{{Role: "karo", Status: StatusQueued}}); err == nil {
		t.Error("an open task was inserted as finished")
	}
}
