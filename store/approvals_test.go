package store

import (
	"errors"
	"path/filepath"
	"testing"
	"time"
)

// Every decision is on record: by the policy at once, by a person once,
// never twice; questions left open by a run that died are closed as
// denied by the next.
func TestApprovalsAreOnRecord(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shogun.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 27, 3, 0, 0, 0, time.UTC)
	byPolicy, err := s.AddApproval(Approval{AskedAt: t0, DecidedAt: t0, RunID: "run-1", Role: "dev", TaskID: "t-1", CLI: "claude",
		Kind: "shell", Subject: "git push --force", Decision: ApprovalDeny, DecidedBy: DecidedByPolicy,
		Rule: "config/policy.yaml:40", Reason: "force pushes rewrite shared history"})
	if err != nil {
		t.Fatal(err)
	}
	asked, err := s.AddApproval(Approval{AskedAt: t0.Add(time.Minute), RunID: "run-1", Role: "dev", CLI: "claude",
		Kind: "shell", Subject: "python3 x.py", Decision: ApprovalPending, Asked: true})
	if err != nil {
		t.Fatal(err)
	}
	left, err := s.AddApproval(Approval{AskedAt: t0.Add(2 * time.Minute), RunID: "run-0", Role: "qa", Kind: "fetch",
		Subject: "https://example.com", Decision: ApprovalPending, Asked: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.DecideApproval(asked, ApprovalAllow, DecidedByPerson, "cli", "fine, it is the test", t0.Add(90*time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := s.DecideApproval(asked, ApprovalDeny, DecidedByTimeout, "", "", t0.Add(3*time.Minute)); !errors.Is(err, ErrApprovalDecided) {
		t.Errorf("a second answer: %v, want ErrApprovalDecided", err)
	}
	if err := s.DecideApproval(999, ApprovalDeny, DecidedByTimeout, "", "", t0); !errors.Is(err, ErrUnknownApproval) {
		t.Errorf("an unknown approval: %v, want ErrUnknownApproval", err)
	}
	if n, err := s.CloseStaleApprovals("run-1", t0.Add(4*time.Minute)); err != nil || n != 1 {
		t.Errorf("CloseStaleApprovals = %d, %v; want 1 (run-0's question)", n, err)
	}
	all, err := s.Approvals(time.Time{}, 0)
	if err != nil || len(all) != 3 {
		t.Fatalf("Approvals = %d, %v", len(all), err)
	}
	if a := all[0]; a.ID != byPolicy || a.Decision != ApprovalDeny || a.DecidedBy != DecidedByPolicy || a.Rule != "config/policy.yaml:40" || a.TaskID != "t-1" || !a.DecidedAt.Equal(t0) {
		t.Errorf("the policy's deny = %+v", a)
	}
	if a := all[1]; a.Decision != ApprovalAllow || a.DecidedBy != DecidedByPerson || a.Via != "cli" || a.Note != "fine, it is the test" || !a.Asked {
		t.Errorf("the person's allow = %+v", a)
	}
	if a := all[2]; a.ID != left || a.Decision != ApprovalDeny || a.DecidedBy != DecidedByShutdown {
		t.Errorf("the question left open = %+v", a)
	}
	if since, _ := s.Approvals(t0.Add(30*time.Second), 0); len(since) != 2 || since[0].ID != asked {
		t.Errorf("since a minute: %+v", since)
	}
	if last, _ := s.Approvals(time.Time{}, 1); len(last) != 1 || last[0].ID != left {
		t.Errorf("the last one: %+v", last)
	}
	// They survive a reopen: the history is the record.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if again, _ := s.Approvals(time.Time{}, 0); len(again) != 3 {
		t.Errorf("after reopening: %d approvals, want 3", len(again))
	}
}

// A task's approvals and the history's list are cut to the last n, and
// the count says how many there are in all.
func TestApprovalListsAreCutWithACount(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "shogun.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	t0 := time.Date(2026, 11, 27, 3, 0, 0, 0, time.UTC)
	for i := range 30 {
		task := "t-1"
		if i%3 == 0 {
			task = "t-2"
		}
		if _, err := s.AddApproval(Approval{AskedAt: t0.Add(time.Duration(i) * time.Second), RunID: "run-1", Role: "dev", TaskID: task,
			Kind: "shell", Subject: "cmd " + string(rune('a'+i)), Decision: ApprovalDeny, DecidedBy: DecidedByPolicy}); err != nil {
			t.Fatal(err)
		}
	}
	list, total, err := s.TaskApprovals("t-1", 5)
	if err != nil || len(list) != 5 || total != 20 || list[4].Subject != "cmd "+string(rune('a'+29)) || list[0].ID >= list[4].ID {
		t.Errorf("TaskApprovals(t-1, 5) = %d listed, total %d, %v", len(list), total, err)
	}
	if n, err := s.CountApprovals(t0.Add(10 * time.Second)); err != nil || n != 20 {
		t.Errorf("CountApprovals since the 11th = %d, %v", n, err)
	}
}
