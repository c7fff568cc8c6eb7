package control_test

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/control"
	"github.com/shogun-dev/shogun/shoguntest"
)

// shellRole is a roles.yaml entry for a role whose program is an
// interactive shell: what an agent's shell tool runs, typed into by the
// test as an agent would run commands.
func shellRole(id string) string {
	return `  - id: ` + id + `
    prompt_path: roles/ashigaru.md
    command: {exec: "/bin/sh", args: ["-i"], env: {PS1: "agent$ "}}
    cli: generic
    stop: {keys: "exit\r", timeout: 5s}
`
}

// inRole runs a shell command line inside the role's process tree, typed
// into its shell, and returns what it printed once it printed "rc=".
func (r *running) inRole(t *testing.T, role, line string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out")
	var written bool
	shoguntest.WaitFor(t, "role "+role+"'s shell", 30*time.Second, func() bool {
		rl, ok := r.team.Supervisor().Role(role)
		if !ok || rl.Session() == nil || !strings.Contains(rl.Session().Screen().Text(), "agent$") {
			return false
		}
		_, err := rl.Session().Write([]byte(strings.ReplaceAll(line, "OUT", out) + "\n"))
		written = err == nil
		return written
	})
	var got string
	shoguntest.WaitFor(t, "the command in role "+role+" to end: "+line, 60*time.Second, func() bool {
		b, _ := os.ReadFile(out)
		got = string(b)
		return strings.Contains(got, "rc=")
	})
	return got
}

// An agent's process, however it was started (in the foreground of its
// shell, double-forked, double-forked into a session of its own, a raw
// request with curl), cannot answer its own question: the control socket
// asks the OS which process is at the other end, and a process inside a
// role's tree is refused with 403 and the reason, which is recorded with
// the role's name (one left behind in its own session, with none). The question stays open, no person's decision is
// recorded, and a person's own `shogun answer` still decides it. The agent
// keeps what it needs: the team's status.
func TestAnAgentCannotAnswerItsOwnQuestion(t *testing.T) {
	r := runTeam(t, shellRole("dev"))
	c := control.NewClient(r.ws)
	q, err := c.Ask(control.ApprovalRequest{Role: "dev", CLI: "claude", Kind: "shell", Command: "python3 check.py"})
	if err != nil || q.Decision != "pending" {
		t.Fatalf("the question = %+v, %v; want pending", q, err)
	}
	answer := `"$SHOGUN_EXE" answer -w '` + r.ws + `' dev yes --note mine`
	for _, tc := range []struct{ name, line, who string }{
		{"in the foreground", answer + ` >OUT 2>&1; echo rc=$? >>OUT`, "in role dev's process tree"},
		{"double-forked", `( (` + answer + ` >OUT 2>&1; echo rc=$? >>OUT) & )`, "in role dev's process tree"},
		{"double-forked into its own session", `(setsid sh -c '` + strings.ReplaceAll(answer, "'", `'"'"'`) + ` >OUT 2>&1; echo rc=$? >>OUT' &)`,
			"a process left behind by an agent"},
		{"a raw request", `curl -sS --unix-socket '` + control.Endpoint(r.ws) + `' -X POST -d '{"decision":"allow","via":"cli"}' http://shogun/v1/roles/dev/answer >OUT 2>&1; echo rc=$? >>OUT`,
			"in role dev's process tree"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := r.inRole(t, "dev", tc.line)
			if !strings.Contains(out, "may not answer a question: only a person may") || !strings.Contains(out, tc.who) {
				t.Errorf("the agent's answer printed %q; want a refusal naming %q", out, tc.who)
			}
			if tc.name != "a raw request" && strings.Contains(out, "rc=0") {
				t.Errorf("shogun answer exited 0 inside the role: %q", out)
			}
		})
	}
	var pending control.ApprovalsReply
	r.get(t, "/v1/approvals?pending=true", &pending)
	if len(pending.Approvals) != 1 || pending.Approvals[0].ID != q.ID {
		t.Fatalf("after the agent's answers the open questions are %+v; want question %d still open", pending, q.ID)
	}
	evs, err := r.team.Store().Events(0)
	if err != nil {
		t.Fatal(err)
	}
	refusals := 0
	for _, e := range evs {
		if e.Kind == "refused" && strings.Contains(e.Message, "answer a question") {
			refusals++
			// The process left behind in its own session proves no role.
			want := "dev"
			if strings.Contains(e.Message, "a process left behind by an agent") {
				want = ""
			}
			if e.Role != want {
				t.Errorf("refusal event %+v names role %q, want %q", e, e.Role, want)
			}
		}
	}
	if refusals != 4 {
		t.Errorf("%d refusals recorded, want 4: %+v", refusals, evs)
	}

	// The agent still reads the team's status.
	if out := r.inRole(t, "dev", `"$SHOGUN_EXE" status -w '`+r.ws+`' >OUT 2>&1; echo rc=$? >>OUT`); !strings.Contains(out, "rc=0") || !strings.Contains(out, "dev") {
		t.Errorf("shogun status inside the role printed %q; want the status", out)
	}

	// The agent asks for its own role's approvals, as its hook does,
	// and for no other role's.
	ask := `curl -sS --unix-socket '` + control.Endpoint(r.ws) + `' -d '{"role":"ROLE","cli":"claude","kind":"shell","command":"ls"}' http://shogun/v1/approvals >OUT 2>&1; echo rc=$? >>OUT`
	if out := r.inRole(t, "dev", strings.ReplaceAll(ask, "ROLE", "dev")); !strings.Contains(out, `"role":"dev"`) || !strings.Contains(out, `"subject":"ls"`) {
		t.Errorf("the agent asking for its own approval got %q; want the approval", out)
	}
	if out := r.inRole(t, "dev", strings.ReplaceAll(ask, "ROLE", "lead")); !strings.Contains(out, "may not ask for an approval as role lead: an agent may do so for its own role only") {
		t.Errorf("the agent asking as another role got %q; want a refusal", out)
	}

	// A person's shogun, from outside the team, decides it.
	out, err := exec.Command(shogunBin, "answer", "-w", r.ws, "dev", "no", "--note", "not now").CombinedOutput()
	if err != nil {
		t.Fatalf("a person's shogun answer: %v\n%s", err, out)
	}
	list, err := c.Approvals(time.Time{}, 0, false)
	if err != nil || len(list.Approvals) != 2 {
		t.Fatalf("the record = %+v, %v", list, err)
	}
	if a := list.Approvals[0]; a.Decision != "deny" || a.DecidedBy != "person" || a.Note != "not now" {
		t.Errorf("the recorded decision = %+v; want the person's deny", a)
	}
	code, _ := r.do(t, http.MethodGet, "/v1/questions", nil)
	if code != http.StatusOK {
		t.Errorf("a person's GET /v1/questions: %d", code)
	}
}

// A process an agent leaves behind in a session of its own, reparented to
// the supervisor and in no live role's tree, proves no role, whatever its
// environment says: from role evil, `SHOGUN_ROLE=victim setsid curl …`
// cannot send a task as victim (nor as no one), nor ask for victim's
// approvals, and the refusals name it as a process left behind by an agent,
// never as victim.
func TestALeftBehindProcessClaimsNoRole(t *testing.T) {
	r := runTeam(t, shellRole("evil"), shellRole("victim"))
	sock := control.Endpoint(r.ws)
	detached := func(req string) string {
		return `(SHOGUN_ROLE=victim setsid sh -c '` + req + ` >OUT 2>&1; echo rc=$? >>OUT' &)`
	}
	for _, tc := range []struct{ name, req, want string }{
		{"send as the role its env names", `curl -sS --unix-socket ` + sock + ` -d "{\"to\":\"victim\",\"title\":\"t\",\"body\":\"b\",\"from\":\"victim\"}" http://shogun/v1/send`,
			"may not send a task as role victim"},
		{"send as no one", `curl -sS --unix-socket ` + sock + ` -d "{\"to\":\"victim\",\"title\":\"t\",\"body\":\"b\"}" http://shogun/v1/send`,
			"may not send a task"},
		{"ask as the role its env names", `curl -sS --unix-socket ` + sock + ` -d "{\"role\":\"victim\",\"cli\":\"claude\",\"kind\":\"shell\",\"command\":\"ls\"}" http://shogun/v1/approvals`,
			"may not ask for an approval as role victim"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := r.inRole(t, "evil", detached(tc.req))
			if !strings.Contains(out, tc.want) || !strings.Contains(out, "a process left behind by an agent") {
				t.Errorf("the left-behind request printed %q; want a refusal %q naming a process left behind by an agent", out, tc.want)
			}
		})
	}
	if files, _ := filepath.Glob(filepath.Join(r.ws, "runtime", "queue", "*", "*")); len(files) > 0 {
		for _, f := range files {
			if b, _ := os.ReadFile(f); strings.Contains(string(b), "title: t") {
				t.Errorf("a left-behind process's task was queued: %s\n%s", f, b)
			}
		}
	}
	evs, err := r.team.Store().Events(0)
	if err != nil {
		t.Fatal(err)
	}
	refusals := 0
	for _, e := range evs {
		if e.Kind != "refused" {
			continue
		}
		refusals++
		if e.Role != "" || strings.Contains(strings.ReplaceAll(e.Message, "role victim", ""), "victim") || !strings.Contains(e.Message, "a process left behind by an agent") {
			t.Errorf("refusal event %+v; want one of no role naming a process left behind by an agent", e)
		}
	}
	if refusals != 3 {
		t.Errorf("%d refusals recorded, want 3: %+v", refusals, evs)
	}
}
