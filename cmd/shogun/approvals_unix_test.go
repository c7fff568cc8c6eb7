//go:build !windows

package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/control"
	"github.com/shogun-dev/shogun/hooks"
)

// claudeHookCommand is the hook command `shogun init` wrote into
// .claude/settings.json: what Claude Code runs before each tool call.
func claudeHookCommand(t *testing.T, ws string) string {
	t.Helper()
	var settings struct {
		Hooks struct {
			PreToolUse []struct {
				Hooks []struct {
					Command string `json:"command"`
				} `json:"hooks"`
			} `json:"PreToolUse"`
		} `json:"hooks"`
	}
	b, err := os.ReadFile(filepath.Join(ws, ".claude", "settings.json"))
	if err != nil || json.Unmarshal(b, &settings) != nil || len(settings.Hooks.PreToolUse) != 1 {
		t.Fatalf(".claude/settings.json: %v\n%s", err, b)
	}
	return settings.Hooks.PreToolUse[0].Hooks[0].Command
}

// runHook runs the hook command as Claude Code does (through the shell,
// the tool call as JSON on standard input) for role, and returns its
// decision; "" when it printed nothing.
func runHook(t *testing.T, ws, command, role, tool string, input any) hooks.ClaudeDecision {
	t.Helper()
	in, _ := json.Marshal(map[string]any{"session_id": "s1", "cwd": ws, "hook_event_name": "PreToolUse",
		"tool_name": tool, "tool_input": input, "tool_use_id": "toolu_1", "permission_mode": "default"})
	cmd := exec.Command("/bin/sh", "-c", command)
	cmd.Dir = ws
	cmd.Env = append(os.Environ(), "SHOGUN_WORKSPACE="+ws, "SHOGUN_ROLE="+role)
	cmd.Stdin = bytes.NewReader(in)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("the hook failed: %v\n%s", err, errOut.String())
	}
	if out.Len() == 0 {
		return hooks.ClaudeDecision{}
	}
	var o hooks.ClaudeHookOutput
	if err := json.Unmarshal(out.Bytes(), &o); err != nil || o.HookSpecificOutput.HookEventName != "PreToolUse" {
		t.Fatalf("the hook printed %q: %v", out.String(), err)
	}
	return o.HookSpecificOutput
}

// Claude Code's hook, as `shogun init` configures it, under a running
// supervisor: the policy's allow and deny at once, an ask answered by a
// person with `shogun answer`, a time-out, and every decision listed by
// `shogun approvals`.
func TestClaudeHookDecidesByThePolicy(t *testing.T) {
	ws := teamWorkspace(t, simEntry("dev"))
	hook := claudeHookCommand(t, ws)
	startBackground(t, ws)
	waitStatus(t, ws, "dev ready", func(st control.StatusReply) bool { return len(st.Roles) == 1 && st.Roles[0].State == "ready" })

	if d := runHook(t, ws, hook, "dev", "Bash", map[string]any{"command": "git push --force origin main"}); d.PermissionDecision != "deny" ||
		!strings.Contains(d.PermissionDecisionReason, "force pushes rewrite shared history") {
		t.Errorf("git push --force: %+v, want denied with the rule's note", d)
	}
	if d := runHook(t, ws, hook, "dev", "Write", map[string]any{"file_path": filepath.Join(ws, "notes.md"), "content": "x"}); d.PermissionDecision != "allow" {
		t.Errorf("a write in the workspace: %+v, want allowed", d)
	}
	if d := runHook(t, ws, hook, "dev", "TodoWrite", map[string]any{"todos": []any{}}); d.PermissionDecision != "" {
		t.Errorf("a tool the policy does not govern: %+v, want no opinion", d)
	}
	if d := runHook(t, ws, hook, "", "Bash", map[string]any{"command": "git push --force"}); d.PermissionDecision != "" {
		t.Errorf("a Claude Code not run by shogun: %+v, want no opinion", d)
	}

	// An ask waits for a person.
	got := make(chan hooks.ClaudeDecision, 1)
	go func() { got <- runHook(t, ws, hook, "dev", "Bash", map[string]any{"command": "python3 check.py"}) }()
	var pending string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if pending, _, _ = shogun(t, "approvals", "--pending", "-w", ws); strings.Contains(pending, "python3 check.py") {
			break
		}
	}
	if !strings.Contains(pending, "python3 check.py") || !strings.Contains(pending, "shogun answer ROLE") {
		t.Fatalf("shogun approvals --pending:\n%s", pending)
	}
	out, errOut, code := shogun(t, "answer", "-w", ws, "dev", "yes", "--note", "fine for the check")
	if code != 0 || !strings.Contains(out, "dev: allow shell python3 check.py") {
		t.Fatalf("shogun answer: %d %s %s", code, out, errOut)
	}
	select {
	case d := <-got:
		if d.PermissionDecision != "allow" || !strings.Contains(d.PermissionDecisionReason, "fine for the check") {
			t.Errorf("after the answer the hook said %+v", d)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the hook did not return after the answer")
	}
	if _, errOut, code := shogun(t, "answer", "-w", ws, "dev", "no"); code == 0 || !strings.Contains(errOut, "no question is waiting") {
		t.Errorf("an answer with nothing waiting: %d %s", code, errOut)
	}

	// An unanswered question is denied at approvals.timeout, taken from
	// settings.yaml as it is now.
	if err := os.WriteFile(filepath.Join(ws, "config", "settings.yaml"), []byte("approvals: {timeout: 1s}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := shogun(t, "reload", "-w", ws); code != 0 {
		t.Fatalf("reload: %s", errOut)
	}
	if d := runHook(t, ws, hook, "dev", "WebFetch", map[string]any{"url": "https://example.com/", "prompt": "p"}); d.PermissionDecision != "deny" ||
		!strings.Contains(d.PermissionDecisionReason, "nobody answered") {
		t.Errorf("an unanswered fetch: %+v, want denied by the time-out", d)
	}

	// A change of config/policy.yaml is taken into use by itself, as one
	// of roles.yaml is: the command asked before is allowed now.
	policyFile := filepath.Join(ws, "config", "policy.yaml")
	def, err := os.ReadFile(policyFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(policyFile, append(def, "  - {decision: allow, kind: shell, command: \"python3 check.py\"}\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	var live hooks.ClaudeDecision
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(300 * time.Millisecond) {
		st := waitStatus(t, ws, "the status", func(control.StatusReply) bool { return true })
		if st.ConfigError != "" {
			t.Fatalf("the edited policy was refused: %s", st.ConfigError)
		}
		probe := control.ApprovalRequest{Role: "dev", Kind: "shell", Command: "python3 check.py"}
		if a, err := control.NewClient(ws).Ask(probe); err == nil && a.Decision == "allow" {
			live = runHook(t, ws, hook, "dev", "Bash", map[string]any{"command": "python3 check.py"})
			break
		}
	}
	if live.PermissionDecision != "allow" {
		t.Fatalf("after editing config/policy.yaml the hook says %+v, want allow", live)
	}

	out, _, _ = shogun(t, "approvals", "-w", ws, "--json")
	var list control.ApprovalsReply
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("shogun approvals --json: %v\n%s", err, out)
	}
	var seen []string
	for _, a := range list.Approvals {
		seen = append(seen, a.Decision+" by "+a.DecidedBy)
	}
	// The probes of the reload, then the hook's allow, follow.
	if len(seen) < 5 || strings.Join(seen[:4], ", ") != "deny by policy, allow by policy, allow by person, deny by timeout" ||
		seen[len(seen)-1] != "allow by policy" {
		t.Errorf("the record: %v", seen)
	}
	table, _, _ := shogun(t, "approvals", "-w", ws)
	for _, want := range []string{"git push --force origin main", "deny", "person (cli)", "timeout"} {
		if !strings.Contains(table, want) {
			t.Errorf("shogun approvals does not show %q:\n%s", want, table)
		}
	}
}

// dialogEntry is a simulated agent that shows dialog first, with an
// attention pattern that knows it.
func dialogEntry(id, dialog string) string {
	return strings.Replace(simEntry(id, "--dialog", dialog), "    cli: generic\n",
		"    cli: generic\n    attention_pattern: \"Do you want to proceed|Quick safety check\"\n", 1)
}

// choices is what the simulated agent recorded of its dialogs' answers.
func choices(t *testing.T, ws string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(ws, ".agentsim-choices.json"))
	if err != nil {
		return nil
	}
	var list []struct {
		Choice string `json:"choice"`
	}
	if err := json.Unmarshal(b, &list); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, c := range list {
		out = append(out, c.Choice)
	}
	return out
}

// A permission prompt on a role's screen is listed by `shogun questions`
// and answered by `shogun answer ROLE no`; a trust dialog is not answered
// by a "yes" meant for a permission, only when its kind is named. Both
// answers are on record.
func TestScreenQuestionsAnsweredFromTheCLI(t *testing.T) {
	ws := teamWorkspace(t)
	trustWS := filepath.Join(ws, "trusting")
	if err := os.MkdirAll(trustWS, 0o755); err != nil {
		t.Fatal(err)
	}
	// The trusting agent works in a folder of its own, so that each
	// agent's record of its answers is its own.
	entries := dialogEntry("asker", "permission") + strings.Replace(dialogEntry("truster", "trust"), `"trust"]}`, `"trust"], cwd: trusting}`, 1)
	if err := os.WriteFile(filepath.Join(ws, "config", "roles.yaml"), []byte("roles:\n"+entries), 0o644); err != nil {
		t.Fatal(err)
	}
	startBackground(t, ws)
	waitStatus(t, ws, "both waiting", func(st control.StatusReply) bool {
		return stateOf(st, "asker") == "attention" && stateOf(st, "truster") == "attention"
	})
	out, errOut, code := shogun(t, "questions", "-w", ws)
	for _, want := range []string{"asker (generic, permission screen): Do you want to proceed?", "rm -rf build/",
		"shogun answer asker yes|always|no", "truster (generic, trust screen)", "--kind trust"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("shogun questions does not say %q (%d %s):\n%s", want, code, errOut, out)
		}
	}

	if out, errOut, code := shogun(t, "answer", "-w", ws, "truster", "yes"); code == 0 || !strings.Contains(errOut, "is a trust dialog") {
		t.Errorf("yes into a trust dialog: %d %s %s", code, out, errOut)
	}
	time.Sleep(300 * time.Millisecond)
	if c := choices(t, trustWS); len(c) != 0 {
		t.Fatalf("a yes meant for a permission answered the trust dialog: %v", c)
	}
	if out, errOut, code := shogun(t, "answer", "-w", ws, "asker", "no", "--note", "not the build folder"); code != 0 || !strings.Contains(out, "asker: deny permission rm -rf build/") {
		t.Errorf("answer asker no: %d %s %s", code, out, errOut)
	}
	if out, errOut, code := shogun(t, "answer", "-w", ws, "truster", "1", "--kind", "trust"); code != 0 || !strings.Contains(out, "truster: allow trust") {
		t.Errorf("answer truster 1 --kind trust: %d %s %s", code, out, errOut)
	}
	waitStatus(t, ws, "both answered", func(st control.StatusReply) bool {
		return stateOf(st, "asker") != "attention" && stateOf(st, "truster") != "attention"
	})
	if c := choices(t, ws); len(c) != 1 || !strings.HasPrefix(c[0], "No") {
		t.Errorf("the permission prompt got %v, want its No", c)
	}
	if c := choices(t, trustWS); len(c) != 1 || c[0] != "Yes, I trust this folder" {
		t.Errorf("the trust dialog got %v, want its first option", c)
	}
	out, _, _ = shogun(t, "approvals", "-w", ws, "--json")
	var list control.ApprovalsReply
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatal(err)
	}
	var seen []string
	for _, a := range list.Approvals {
		seen = append(seen, a.Role+" "+a.Kind+" "+a.Decision+" by "+a.DecidedBy+" via "+a.Via)
	}
	if strings.Join(seen, "; ") != "asker permission deny by person via cli; truster trust allow by person via cli" {
		t.Errorf("on record: %v", seen)
	}
}
