package approvals

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/config"
	"github.com/shogun-dev/shogun/policy"
	"github.com/shogun-dev/shogun/store"
)

// testDesk is a Desk over a workspace made by `shogun init` (its default
// policy), with approvals.timeout set to timeout.
func testDesk(t *testing.T, timeout string) (*Desk, *store.Store, *config.Config, *[]store.Approval) {
	t.Helper()
	ws := t.TempDir()
	if _, err := config.Scaffold(ws, config.ScaffoldOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "config", "settings.yaml"), []byte("approvals: {timeout: "+timeout+"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(ws, func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(filepath.Join(t.TempDir(), "shogun.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	var (
		mu    sync.Mutex
		asked []store.Approval
	)
	d, err := New(Options{Store: st, RunID: "run-1", Config: func() *config.Config { return cfg },
		TaskOf: func(role string) string { return "t-" + role },
		Asked: func(a store.Approval) {
			mu.Lock()
			defer mu.Unlock()
			asked = append(asked, a)
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	return d, st, cfg, &asked
}

func shell(cmd string) policy.Action { return policy.Action{Kind: policy.Shell, Command: cmd} }

// The policy decides at once and the decision is on record; an ask waits
// for a person, whose answer is on record with where it came from.
func TestDeskDecidesAndRecords(t *testing.T) {
	d, st, cfg, asked := testDesk(t, "1m")
	deny, err := d.Ask(Request{Role: "ashigaru1", CLI: "claude", Action: shell("git push --force")})
	if err != nil || deny.Decision != store.ApprovalDeny || deny.DecidedBy != store.DecidedByPolicy || deny.TaskID != "t-ashigaru1" {
		t.Fatalf("git push --force = %+v, %v; want denied by the policy", deny, err)
	}
	allow, err := d.Ask(Request{Role: "ashigaru1", CLI: "claude", Action: policy.Action{Kind: policy.Write, Path: filepath.Join(cfg.Workspace, "notes.md")}})
	if err != nil || allow.Decision != store.ApprovalAllow {
		t.Fatalf("a write inside = %+v, %v; want allowed", allow, err)
	}
	q, err := d.Ask(Request{Role: "ashigaru1", CLI: "claude", Action: shell("python3 check.py")})
	if err != nil || q.Decision != store.ApprovalPending || !q.Asked {
		t.Fatalf("python3 = %+v, %v; want a pending question", q, err)
	}
	if len(*asked) != 1 || (*asked)[0].ID != q.ID {
		t.Errorf("the question was not announced: %+v", *asked)
	}
	if open := d.Open(); len(open) != 1 || open[0].Subject != "python3 check.py" {
		t.Errorf("Open = %+v", open)
	}
	waited := make(chan store.Approval, 1)
	go func() {
		a, _ := d.Wait(context.Background(), q.ID)
		waited <- a
	}()
	if _, err := d.Answer(q.ID, true, false, "cli", "ok for the check"); err != nil {
		t.Fatal(err)
	}
	select {
	case a := <-waited:
		if a.Decision != store.ApprovalAllow || a.DecidedBy != store.DecidedByPerson || a.Via != "cli" || a.Note != "ok for the check" {
			t.Errorf("after the answer: %+v", a)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Wait did not return after the answer")
	}
	if _, err := d.Answer(q.ID, false, false, "console", ""); !errors.Is(err, store.ErrApprovalDecided) {
		t.Errorf("a second answer: %v, want ErrApprovalDecided", err)
	}
	if _, err := d.Answer(12345, true, false, "cli", ""); !errors.Is(err, ErrNoQuestion) {
		t.Errorf("an answer to nothing: %v, want ErrNoQuestion", err)
	}
	if _, err := d.Ask(Request{Role: "nobody", Action: shell("ls")}); !errors.Is(err, ErrUnknownRole) {
		t.Errorf("an unknown role: %v", err)
	}
	all, _ := st.Approvals(time.Time{}, 0)
	if len(all) != 3 {
		t.Errorf("%d approvals on record, want 3", len(all))
	}
}

// An unanswered question is denied at approvals.timeout, and says so.
func TestUnansweredQuestionIsDenied(t *testing.T) {
	d, _, _, _ := testDesk(t, "200ms")
	q, err := d.Ask(Request{Role: "karo", CLI: "claude", Action: policy.Action{Kind: policy.Fetch, URL: "https://example.com"}})
	if err != nil || q.Decision != store.ApprovalPending {
		t.Fatalf("fetch = %+v, %v", q, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	a, err := d.Wait(ctx, q.ID)
	if err != nil || a.Decision != store.ApprovalDeny || a.DecidedBy != store.DecidedByTimeout || a.Note != "nobody answered within 200ms" {
		t.Fatalf("after the time-out: %+v, %v", a, err)
	}
	if len(d.Open()) != 0 {
		t.Errorf("still open: %+v", d.Open())
	}
}

// "Always" allows the same action of the same role again without asking,
// and nothing else.
func TestAlwaysCoversTheSameAction(t *testing.T) {
	d, _, _, _ := testDesk(t, "1m")
	q, _ := d.Ask(Request{Role: "ashigaru1", Action: shell("python3 lint.py")})
	if _, err := d.Answer(q.ID, true, true, "console", ""); err != nil {
		t.Fatal(err)
	}
	again, _ := d.Ask(Request{Role: "ashigaru1", Action: shell("python3 lint.py")})
	if again.Decision != store.ApprovalAllow || again.DecidedBy != store.DecidedByPerson {
		t.Errorf("the same action again = %+v, want allowed by the earlier answer", again)
	}
	other, _ := d.Ask(Request{Role: "ashigaru2", Action: shell("python3 lint.py")})
	if other.Decision != store.ApprovalPending {
		t.Errorf("another role's = %+v, want asked", other)
	}
}

// "Always" covers the folder it was given in: the same command in
// another folder is another action.
func TestAlwaysIsScopedToTheFolder(t *testing.T) {
	d, _, cfg, _ := testDesk(t, "1m")
	here := filepath.Join(cfg.Workspace, "a")
	in := func(cwd string) policy.Action { a := shell("python3 clean.py"); a.Cwd = cwd; return a }
	q, _ := d.Ask(Request{Role: "ashigaru1", Action: in(here)})
	if _, err := d.Answer(q.ID, true, true, "cli", ""); err != nil {
		t.Fatal(err)
	}
	if same, _ := d.Ask(Request{Role: "ashigaru1", Action: in(here + "/")}); same.Decision != store.ApprovalAllow {
		t.Errorf("in the same folder = %+v, want allowed by the answer", same)
	}
	if elsewhere, _ := d.Ask(Request{Role: "ashigaru1", Action: in("/tmp")}); elsewhere.Decision != store.ApprovalPending {
		t.Errorf("in another folder = %+v, want asked", elsewhere)
	}
	if root, _ := d.Ask(Request{Role: "ashigaru1", Action: shell("python3 clean.py")}); root.Decision != store.ApprovalPending {
		t.Errorf("in the role's own folder = %+v, want asked", root)
	}
}

// Questions open when the supervisor stops are denied and on record; the
// next run closes those a crashed one left.
func TestQuestionsClosedAtStop(t *testing.T) {
	d, st, cfg, _ := testDesk(t, "1m")
	q, _ := d.Ask(Request{Role: "ashigaru1", Action: shell("python3 x.py")})
	d.Close()
	if a, _ := st.Approval(q.ID); a.Decision != store.ApprovalDeny || a.DecidedBy != store.DecidedByShutdown {
		t.Errorf("after Close: %+v", a)
	}
	if _, err := d.Ask(Request{Role: "ashigaru1", Action: shell("ls")}); !errors.Is(err, ErrClosed) {
		t.Errorf("Ask after Close: %v", err)
	}
	left, _ := st.AddApproval(store.Approval{RunID: "run-0", Role: "ashigaru1", Kind: "shell", Subject: "x", Decision: store.ApprovalPending})
	if _, err := New(Options{Store: st, RunID: "run-2", Config: func() *config.Config { return cfg }}); err != nil {
		t.Fatal(err)
	}
	if a, _ := st.Approval(left); a.Decision != store.ApprovalDeny || a.DecidedBy != store.DecidedByShutdown {
		t.Errorf("a question a crashed run left: %+v", a)
	}
}
