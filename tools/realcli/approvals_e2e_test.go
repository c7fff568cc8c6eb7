//go:build realcli && linux

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/config"
	"github.com/shogun-dev/shogun/control"
	"github.com/shogun-dev/shogun/store"
)

// TestApprovalsThroughClaudesHook: Claude Code, under the default policy
// plus one allow rule, runs a task whose commands are allowed, denied (a
// force push, an append to config/policy.yaml) and asked. Its PreToolUse hook (written by shogun init) lets the allowed one
// run with no prompt, refuses the denied one with the rule's note, and
// holds the asked one until a person answers with `shogun answer`; the role
// never waits on its screen, and `shogun approvals` lists all three.
func TestApprovalsThroughClaudesHook(t *testing.T) {
	for _, cli := range []string{"claude", "copilot"} {
		t.Run(cli, func(t *testing.T) {
			if !slices.Contains(e2eCLIs, cli) {
				t.Skipf("%s is not in SHOGUN_E2E_CLIS", cli)
			}
			approvalsThroughHook(t, cli)
		})
	}
}

// approvalsThroughHook is TestApprovalsThroughClaudesHook for one CLI
// that runs Claude Code's hooks: Claude Code, and Copilot CLI, which reads
// them from .claude/settings.json too.
func approvalsThroughHook(t *testing.T, cli string) {
	def, err := config.DefaultFile("", "policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	policy := string(def) + `  - {decision: allow, kind: shell, command: "python3 -c *"}
`
	tm := startE2EPolicy(t, []string{cli}, nil, policy)
	policyBefore, err := os.ReadFile(filepath.Join(tm.ws, "config", "policy.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	body := "Run the checks, then report.\n" +
		`fakemodel: run python3 -c "open('allowed.txt','w').write('ran')"` + "\n" +
		"fakemodel: run git push --force origin main\n" +
		"fakemodel: run echo x >> config/policy.yaml\n" +
		"fakemodel: run git init asked-repo\n" +
		"fakemodel: report done via write the checks ran\n"
	id := tm.send(cli, "Run the checks", body)

	// The asked command waits for a person, not on the screen.
	var pending control.ApprovalsReply
	for deadline := time.Now().Add(3 * time.Minute); time.Now().Before(deadline); time.Sleep(300 * time.Millisecond) {
		out, _, _ := runShogun(tm.env, "approvals", "-w", tm.ws, "--pending", "--json")
		if json.Unmarshal([]byte(out), &pending) == nil && len(pending.Approvals) > 0 {
			break
		}
	}
	if len(pending.Approvals) != 1 || pending.Approvals[0].Subject != "git init asked-repo" || pending.Approvals[0].CLI != cli {
		t.Fatalf("pending questions = %+v; screen:\n%s", pending, screen(t, tm.env, tm.ws, cli))
	}
	if _, err := os.Stat(filepath.Join(tm.ws, "asked-repo")); err == nil {
		t.Fatal("the asked command ran before anyone answered")
	}
	if st, _ := status(t, tm.env, tm.ws); stateOf(st, cli) == "attention" {
		t.Errorf("%s waits on its screen too:\n%s", cli, screen(t, tm.env, tm.ws, cli))
	}
	out := shogun(t, tm.env, "answer", "-w", tm.ws, cli, "yes", "--note", "a test repository is fine")
	if !strings.Contains(out, cli+": allow shell git init asked-repo") {
		t.Errorf("shogun answer said %q", out)
	}

	task, ok := tm.waitTask(id, 3*time.Minute)
	if !ok || task.Status != store.StatusDone || task.Summary != "the checks ran" {
		t.Fatalf("task = %+v (closed %v); screen:\n%s", task, ok, screen(t, tm.env, tm.ws, cli))
	}
	if b, err := os.ReadFile(filepath.Join(tm.ws, "allowed.txt")); err != nil || string(b) != "ran" {
		t.Errorf("the allowed command did not run: %q, %v", b, err)
	}
	if fi, err := os.Stat(filepath.Join(tm.ws, "asked-repo", ".git")); err != nil || !fi.IsDir() {
		t.Errorf("the answered command did not run: %v", err)
	}
	if after, _ := os.ReadFile(filepath.Join(tm.ws, "config", "policy.yaml")); string(after) != string(policyBefore) {
		t.Errorf("config/policy.yaml was changed:\n%s", after)
	}
	logOut, _, _ := runShogun(tm.env, "logs", "-w", tm.ws, cli)
	if !strings.Contains(logOut, "force pushes rewrite shared history") {
		t.Errorf("%s did not show the refusal's reason; its log:\n%s", cli, tail([]byte(logOut), 40))
	}

	out = shogun(t, tm.env, "approvals", "-w", tm.ws, "--json")
	var all control.ApprovalsReply
	if err := json.Unmarshal([]byte(out), &all); err != nil {
		t.Fatalf("shogun approvals --json: %v\n%s", err, out)
	}
	var shells []string
	for _, a := range all.Approvals {
		if a.Kind == "shell" {
			shells = append(shells, a.Subject+": "+a.Decision+" by "+a.DecidedBy)
		}
		if a.TaskID != task.ID || a.Role != cli || a.CLI != cli {
			t.Errorf("approval %d is not on record with its role, task and CLI: %+v", a.ID, a)
		}
	}
	want := []string{
		`python3 -c "open('allowed.txt','w').write('ran')": allow by policy`,
		"git push --force origin main: deny by policy",
		"echo x >> config/policy.yaml: deny by policy",
		"git init asked-repo: allow by person",
	}
	if !slices.Equal(shells, want) {
		t.Errorf("shell approvals on record:\n%s\nwant:\n%s", strings.Join(shells, "\n"), strings.Join(want, "\n"))
	}
	for _, st := range readLog(tm.ws, cli).states {
		if st == "attention" {
			t.Errorf("%s was in attention; states %v", cli, readLog(tm.ws, cli).states)
			break
		}
	}
	tm.stop()
	// Stopped at the end of its turn, Copilot CLI took a first Ctrl+C as
	// cancelling the turn and lost the second.
	noRoleTerminated(t, tm.ws)
}

// TestScreenQuestionAnsweredWithShogunAnswer: a CLI's own permission
// prompt (Claude Code in a workspace without a policy, Codex asking to
// leave its sandbox) is listed by `shogun questions` with the command it
// asks about, and `shogun answer ROLE yes` picks its Yes on the screen; the
// command runs, the task finishes, and the answer is on record.
func TestScreenQuestionAnsweredWithShogunAnswer(t *testing.T) {
	for _, tc := range []struct{ cli, directive, command string }{
		{"claude", "run", "git init screen-repo"},
		{"codex", "ask", "git init screen-repo"},
	} {
		t.Run(tc.cli, func(t *testing.T) {
			if !slices.Contains(e2eCLIs, tc.cli) {
				t.Skipf("%s is not in SHOGUN_E2E_CLIS", tc.cli)
			}
			tm := startE2EPolicy(t, []string{tc.cli}, nil, "")
			body := "Make the repository, then report.\nfakemodel: " + tc.directive + " " + tc.command + "\nfakemodel: report done via write the repository is made\n"
			id := tm.send(tc.cli, "Make the repository", body)
			var qs control.QuestionsReply
			for deadline := time.Now().Add(3 * time.Minute); time.Now().Before(deadline); time.Sleep(300 * time.Millisecond) {
				out, _, _ := runShogun(tm.env, "questions", "-w", tm.ws, "--json")
				if json.Unmarshal([]byte(out), &qs) == nil && len(qs.Questions) > 0 {
					break
				}
			}
			if len(qs.Questions) != 1 {
				t.Fatalf("questions = %+v; screen:\n%s", qs, screen(t, tm.env, tm.ws, tc.cli))
			}
			q := qs.Questions[0]
			if q.Source != "screen" || q.Kind != "permission" || !strings.Contains(q.Subject, tc.command) {
				t.Errorf("the question read from %s's screen: %+v", tc.cli, q)
			}
			out := shogun(t, tm.env, "answer", "-w", tm.ws, tc.cli, "yes")
			if !strings.Contains(out, tc.cli+": allow permission") {
				t.Errorf("shogun answer said %q", out)
			}
			task, ok := tm.waitTask(id, 3*time.Minute)
			if !ok || task.Status != store.StatusDone {
				t.Fatalf("task = %+v (closed %v); screen:\n%s", task, ok, screen(t, tm.env, tm.ws, tc.cli))
			}
			if fi, err := os.Stat(filepath.Join(tm.ws, "screen-repo", ".git")); err != nil || !fi.IsDir() {
				t.Errorf("the answered command did not run: %v", err)
			}
			out = shogun(t, tm.env, "approvals", "-w", tm.ws, "--json")
			var all control.ApprovalsReply
			if err := json.Unmarshal([]byte(out), &all); err != nil || len(all.Approvals) != 1 ||
				all.Approvals[0].Kind != "permission" || all.Approvals[0].Decision != "allow" || all.Approvals[0].Via != "cli" {
				t.Errorf("on record: %s (%v)", out, err)
			}
			tm.stop()
		})
	}
}
