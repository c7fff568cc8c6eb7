package approvals

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/policy"
	"github.com/shogun-dev/shogun/store"
)

// An agent that asks and asks does not take the supervisor with it: 3,000
// asks of 60 KB leave at most MaxOpenPerRole questions of a role and
// MaxOpen in all waiting, each whole for the person; the rest are denied
// at once with the reason, and the history keeps cut subjects, so that the
// database stays a few megabytes instead of the 180 MB asked. (The asks
// are MCP calls: the bounds do not depend on the kind, and judging 3,000
// shell lines of 60 KB costs minutes under the race detector.)
func TestAQuestionFloodIsBounded(t *testing.T) {
	d, st, cfg, asked := testDesk(t, "30m")
	var roles []string
	for _, r := range cfg.Roles {
		roles = append(roles, r.ID)
	}
	pad := strings.Repeat("x", 60<<10)
	const asks = 3000
	refused := 0
	for i := range asks {
		role := roles[i%len(roles)]
		a, err := d.Ask(Request{Role: role, CLI: "claude", Action: policy.Action{Kind: policy.MCP, Tool: "tools/job" + strconv.Itoa(i) + pad}})
		if err != nil {
			t.Fatalf("ask %d: %v", i, err)
		}
		switch a.Decision {
		case store.ApprovalPending:
		case store.ApprovalDeny:
			refused++
			if a.DecidedBy != store.DecidedByPolicy || !strings.Contains(a.Reason, "denied without asking") || !strings.Contains(a.Reason, "already wait for a person") {
				t.Fatalf("ask %d refused as %+v", i, a)
			}
		default:
			t.Fatalf("ask %d = %s", i, a.Decision)
		}
	}
	open := d.Open()
	want := min(len(roles)*MaxOpenPerRole, MaxOpen)
	if len(open) != want || refused != asks-want || len(*asked) != want {
		t.Errorf("%d open, %d refused, %d announced; want %d open, the other %d refused", len(open), refused, len(*asked), want, asks-want)
	}
	perRole := map[string]int{}
	for _, a := range open {
		perRole[a.Role]++
		if len(a.Subject) < 60<<10 {
			t.Fatalf("an open question's subject is cut to %d bytes: the person must read it whole", len(a.Subject))
		}
	}
	for role, n := range perRole {
		if n > MaxOpenPerRole {
			t.Errorf("%s has %d open questions, more than %d", role, n, MaxOpenPerRole)
		}
	}
	list, err := st.Approvals(time.Time{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	stored := 0
	for _, a := range list {
		stored += len(a.Subject)
		if len(a.Subject) > MaxStoredSubject+64 || (len(a.Subject) > 1000 && !strings.Contains(a.Subject, "more bytes not kept]")) {
			t.Fatalf("approval %d keeps a subject of %d bytes: %q", a.ID, len(a.Subject), a.Subject[len(a.Subject)-40:])
		}
	}
	if len(list) != asks || stored > want*(MaxStoredSubject+64)+(asks-want)*(maxRefusedSubject+64) {
		t.Errorf("the history holds %d approvals with %d bytes of subjects", len(list), stored)
	}
	var size int64
	for _, f := range []string{"shogun.db", "shogun.db-wal"} {
		if fi, err := os.Stat(filepath.Join(filepath.Dir(st.Path()), f)); err == nil {
			size += fi.Size()
		}
	}
	if size > 16<<20 {
		t.Errorf("the database takes %d MB after the flood", size>>20)
	}
}

// "always" covers the same action again even when its subject is longer
// than the history keeps.
func TestAlwaysCoversALongAction(t *testing.T) {
	d, _, _, _ := testDesk(t, "30m")
	long := "python3 check.py " + strings.Repeat("--flag ", 2000)
	q, err := d.Ask(Request{Role: "ashigaru1", CLI: "claude", Action: shell(long)})
	if err != nil || q.Decision != store.ApprovalPending || q.Subject != long {
		t.Fatalf("ask = %s %d bytes, %v", q.Decision, len(q.Subject), err)
	}
	if _, err := d.Answer(q.ID, true, true, "cli", ""); err != nil {
		t.Fatal(err)
	}
	again, err := d.Ask(Request{Role: "ashigaru1", CLI: "claude", Action: shell(long)})
	if err != nil || again.Decision != store.ApprovalAllow {
		t.Errorf("the same long action again = %s, %v; want allowed by the earlier always", again.Decision, err)
	}
}

// A role's program that ends takes its hook with it: its open questions
// are withdrawn (denied, on record why), another role's stay open, and
// the role is told it waits on nothing.
func TestQuestionsOfAnEndedProgramAreWithdrawn(t *testing.T) {
	d, st, _, _ := testDesk(t, "30m")
	var told [][]store.Approval
	d.opts.Waiting = func(role string, open []store.Approval) {
		if role == "ashigaru1" {
			told = append(told, open)
		}
	}
	mine, _ := d.Ask(Request{Role: "ashigaru1", CLI: "claude", Action: shell("python3 a.py")})
	other, _ := d.Ask(Request{Role: "ashigaru2", CLI: "claude", Action: shell("python3 b.py")})
	if mine.Decision != store.ApprovalPending || other.Decision != store.ApprovalPending {
		t.Fatalf("asks: %s %s", mine.Decision, other.Decision)
	}
	if n := d.Withdraw("ashigaru1", "its program exited"); n != 1 {
		t.Fatalf("withdrew %d, want 1", n)
	}
	a, err := st.Approval(mine.ID)
	if err != nil || a.Decision != store.ApprovalDeny || a.DecidedBy != store.DecidedByShutdown || a.Note != "its program exited" {
		t.Errorf("the withdrawn question: %+v %v", a, err)
	}
	if open := d.Open(); len(open) != 1 || open[0].ID != other.ID {
		t.Errorf("open after: %+v", open)
	}
	if len(told) != 2 || len(told[0]) != 1 || len(told[1]) != 0 {
		t.Errorf("ashigaru1 was told %v", told)
	}
}
