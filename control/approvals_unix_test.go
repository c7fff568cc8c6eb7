//go:build !windows

package control_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/approvals"
	"github.com/shogun-dev/shogun/control"
)

// A CLI's hook asks through the API: the policy's allow and deny come back
// at once, an ask waits for a person who answers by role, and the history
// lists all three with who decided.
func TestApprovalsThroughTheAPI(t *testing.T) {
	r := runTeam(t, simRole("dev"))
	c := control.NewClient(r.ws)

	deny, err := c.Ask(control.ApprovalRequest{Role: "dev", CLI: "claude", Kind: "shell", Command: "git push --force origin main"})
	if err != nil || deny.Decision != "deny" || deny.DecidedBy != "policy" || deny.Rule == "" {
		t.Fatalf("force push = %+v, %v; want denied by a rule", deny, err)
	}
	allow, err := c.Ask(control.ApprovalRequest{Role: "dev", CLI: "claude", Kind: "write", Path: filepath.Join(r.ws, "notes.md")})
	if err != nil || allow.Decision != "allow" {
		t.Fatalf("a write in the workspace = %+v, %v; want allowed", allow, err)
	}
	q, err := c.Ask(control.ApprovalRequest{Role: "dev", CLI: "claude", Kind: "shell", Command: "python3 check.py"})
	if err != nil || q.Decision != "pending" || !q.Asked {
		t.Fatalf("python3 = %+v, %v; want a pending question", q, err)
	}
	var pending control.ApprovalsReply
	r.get(t, "/v1/approvals?pending=true", &pending)
	if len(pending.Approvals) != 1 || pending.Approvals[0].ID != q.ID || pending.Approvals[0].Subject != "python3 check.py" {
		t.Errorf("pending = %+v", pending)
	}
	// The hook waits; a short wait comes back still pending.
	if still, err := c.WaitApproval(q.ID, 100*time.Millisecond); err != nil || still.Decision != "pending" {
		t.Errorf("a short wait = %+v, %v", still, err)
	}
	waited := make(chan control.Approval, 1)
	go func() {
		a, _ := c.WaitApproval(q.ID, 20*time.Second)
		waited <- a
	}()
	time.Sleep(100 * time.Millisecond)
	ans, err := c.AnswerRole("dev", control.AnswerRequest{Decision: "allow", Note: "fine for the check", Via: "cli"})
	if err != nil || ans.ID != q.ID || ans.Decision != "allow" || ans.DecidedBy != "person" || ans.Via != "cli" {
		t.Fatalf("the answer = %+v, %v", ans, err)
	}
	select {
	case a := <-waited:
		if a.Decision != "allow" || a.Note != "fine for the check" {
			t.Errorf("the waiting hook got %+v", a)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiting hook was not told of the answer")
	}

	var apiErr *control.APIError
	if _, err := c.AnswerRole("dev", control.AnswerRequest{Decision: "allow"}); !errors.As(err, &apiErr) || apiErr.Status != http.StatusNotFound {
		t.Errorf("an answer with nothing waiting: %v, want 404", err)
	}
	if _, err := c.Answer(q.ID, control.AnswerRequest{Decision: "deny"}); !errors.As(err, &apiErr) || apiErr.Status != http.StatusConflict {
		t.Errorf("a second answer: %v, want 409", err)
	}
	r.refused(t, http.MethodPost, "/v1/roles/dev/answer", control.AnswerRequest{Decision: "yes please"}, http.StatusBadRequest, "decision must be allow or deny")
	r.refused(t, http.MethodPost, "/v1/approvals", control.ApprovalRequest{Role: "dev", Kind: "teleport", Command: "x"}, http.StatusBadRequest, "unknown kind")
	r.refused(t, http.MethodPost, "/v1/approvals", control.ApprovalRequest{Role: "nobody", Kind: "shell", Command: "ls"}, http.StatusNotFound, "unknown role")

	list, err := c.Approvals(time.Time{}, 0, false)
	if err != nil || len(list.Approvals) != 3 {
		t.Fatalf("the record = %+v, %v; want 3 decisions", list, err)
	}
	for i, want := range []struct{ decision, by string }{{"deny", "policy"}, {"allow", "policy"}, {"allow", "person"}} {
		if a := list.Approvals[i]; a.Decision != want.decision || a.DecidedBy != want.by || a.DecidedAt.IsZero() {
			t.Errorf("decision %d = %+v, want %s by %s", i+1, a, want.decision, want.by)
		}
	}
}

// The API's lists of approvals and questions are bounded however much an
// agent asks: the questions waiting are at most approvals.MaxOpenPerRole
// of the role, each whole; the history's list is the last
// MaxApprovalsListed with the total count.
func TestApprovalListsAreBounded(t *testing.T) {
	r := runTeam(t, simRole("dev"))
	c := control.NewClient(r.ws)
	pad := strings.Repeat("y", 60<<10)
	const asks = control.MaxApprovalsListed + 50
	for i := range asks {
		cmd := "python3 job" + strconv.Itoa(i) + ".py"
		if i < 2*approvals.MaxOpenPerRole {
			cmd += " " + pad
		}
		a, err := c.Ask(control.ApprovalRequest{Role: "dev", CLI: "claude", Kind: "shell", Command: cmd})
		if err != nil {
			t.Fatalf("ask %d: %v", i, err)
		}
		if (a.Decision == "pending") != (i < approvals.MaxOpenPerRole) {
			t.Fatalf("ask %d = %s (%s)", i, a.Decision, a.Reason)
		}
	}
	code, body := r.do(t, http.MethodGet, "/v1/questions", nil)
	var qs control.QuestionsReply
	if code != http.StatusOK || json.Unmarshal(body, &qs) != nil {
		t.Fatalf("GET /v1/questions: %d", code)
	}
	if len(qs.Questions) != approvals.MaxOpenPerRole || len(body) > approvals.MaxOpenPerRole*(61<<10+2<<10) {
		t.Errorf("GET /v1/questions: %d questions in %d bytes", len(qs.Questions), len(body))
	}
	for _, q := range qs.Questions {
		if !strings.HasSuffix(q.Subject, pad) {
			t.Fatalf("question %s is not shown whole: %d bytes", q.ID, len(q.Subject))
		}
	}
	var list control.ApprovalsReply
	r.get(t, "/v1/approvals", &list)
	if len(list.Approvals) != control.MaxApprovalsListed || list.Total != asks || list.Approvals[len(list.Approvals)-1].Subject != "python3 job"+strconv.Itoa(asks-1)+".py" {
		t.Errorf("GET /v1/approvals: %d listed, total %d", len(list.Approvals), list.Total)
	}
	r.get(t, "/v1/approvals?limit=5000", &list)
	if len(list.Approvals) != control.MaxApprovalsListed {
		t.Errorf("GET /v1/approvals?limit=5000: %d listed", len(list.Approvals))
	}
	r.get(t, "/v1/approvals?pending=true", &list)
	if len(list.Approvals) != approvals.MaxOpenPerRole || list.Total != approvals.MaxOpenPerRole {
		t.Errorf("GET /v1/approvals?pending=true: %d listed, total %d", len(list.Approvals), list.Total)
	}
}
