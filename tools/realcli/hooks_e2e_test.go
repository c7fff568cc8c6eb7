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

	"github.com/shogun-dev/shogun/control"
	"github.com/shogun-dev/shogun/store"
)

// hookPolicy is the policy of TestApprovalsThroughCodexAndGeminiHooks:
// echo and cat allowed, shogun's files and force pushes denied with a
// note, the rest (mv among it) asked.
const hookPolicy = `default: ask
rules:
  - {decision: deny, kind: shell, path: ["config/**", "runtime/state/**"], note: "shogun's files are not for agents"}
  - {decision: deny, kind: shell, command: "git push * --force*", note: "no force pushes here"}
  - {decision: allow, kind: shell, command: ["echo *", "cat *"]}
  - {decision: allow, kind: read, path: inside}
  - {decision: allow, kind: write, path: inside}
  - {decision: allow, kind: mcp, tool: "shogun/*"}
`

// TestApprovalsThroughCodexAndGeminiHooks: Codex (PreToolUse) and Gemini
// CLI (BeforeTool) run shogun's hook, which start gives them, before each
// tool call. An allowed command runs with no prompt; a force push and an
// append to config/policy.yaml are refused with the rule's note, which the
// model is told, and do not run; an asked command waits, with nothing on
// the CLI's screen, until `shogun answer`, then runs. Each CLI's own
// settings still decide after shogun allows, so the asked command is one
// they allow by themselves (mv, in the CLIs' test settings).
func TestApprovalsThroughCodexAndGeminiHooks(t *testing.T) {
	for _, cli := range []string{"codex", "gemini"} {
		t.Run(cli, func(t *testing.T) {
			if !slices.Contains(e2eCLIs, cli) {
				t.Skipf("%s is not in SHOGUN_E2E_CLIS", cli)
			}
			approvalsThroughNativeHook(t, cli)
		})
	}
}

func approvalsThroughNativeHook(t *testing.T, cli string) {
	tm := startE2EPolicy(t, []string{cli}, nil, hookPolicy)
	before, err := os.ReadFile(filepath.Join(tm.ws, "config", "policy.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	body := "Run the checks, then report.\n" +
		"fakemodel: run echo ran > allowed.txt\n" +
		"fakemodel: run git push --force origin main\n" +
		"fakemodel: run echo x >> config/policy.yaml\n" +
		"fakemodel: run mv allowed.txt asked.txt\n" +
		"fakemodel: report done via write the checks ran\n"
	id := tm.send(cli, "Run the checks", body)

	var pending control.ApprovalsReply
	for deadline := time.Now().Add(3 * time.Minute); time.Now().Before(deadline); time.Sleep(300 * time.Millisecond) {
		out, _, _ := runShogun(tm.env, "approvals", "-w", tm.ws, "--pending", "--json")
		if json.Unmarshal([]byte(out), &pending) == nil && len(pending.Approvals) > 0 {
			break
		}
	}
	if len(pending.Approvals) != 1 || pending.Approvals[0].Subject != "mv allowed.txt asked.txt" || pending.Approvals[0].CLI != cli {
		t.Fatalf("pending questions = %+v; screen:\n%s", pending, screen(t, tm.env, tm.ws, cli))
	}
	if _, err := os.Stat(filepath.Join(tm.ws, "asked.txt")); err == nil {
		t.Fatal("the asked command ran before anyone answered")
	}
	if b, err := os.ReadFile(filepath.Join(tm.ws, "allowed.txt")); err != nil || strings.TrimSpace(string(b)) != "ran" {
		t.Errorf("the allowed command did not run: %q, %v", b, err)
	}
	shogun(t, tm.env, "answer", "-w", tm.ws, cli, "yes")

	task, ok := tm.waitTask(id, 3*time.Minute)
	if !ok || task.Status != store.StatusDone || task.Summary != "the checks ran" {
		t.Fatalf("task = %+v (closed %v); screen:\n%s", task, ok, screen(t, tm.env, tm.ws, cli))
	}
	if b, err := os.ReadFile(filepath.Join(tm.ws, "asked.txt")); err != nil || strings.TrimSpace(string(b)) != "ran" {
		t.Errorf("the answered command did not run: %q, %v", b, err)
	}
	if after, _ := os.ReadFile(filepath.Join(tm.ws, "config", "policy.yaml")); string(after) != string(before) {
		t.Errorf("config/policy.yaml was changed:\n%s", after)
	}
	if states := readLog(tm.ws, cli).states; slices.Contains(states, "attention") {
		t.Errorf("%s asked on its screen; states %v", cli, states)
	}
	// The model was told each refusal's note.
	dumps, _ := filepath.Glob(filepath.Join(tm.model.DumpDir, "*.json"))
	var told strings.Builder
	for _, f := range dumps {
		b, _ := os.ReadFile(f)
		told.Write(b)
	}
	for _, note := range []string{"no force pushes here", "shogun's files are not for agents"} {
		if !strings.Contains(told.String(), note) {
			t.Errorf("no request to the model carries the refusal %q (%d requests)", note, len(dumps))
		}
	}

	var all control.ApprovalsReply
	out := shogun(t, tm.env, "approvals", "-w", tm.ws, "--json")
	if err := json.Unmarshal([]byte(out), &all); err != nil {
		t.Fatalf("shogun approvals --json: %v\n%s", err, out)
	}
	var shells []string
	for _, a := range all.Approvals {
		// Codex reads its task and writes its report in the shell too.
		if a.Kind == "shell" && !strings.Contains(a.Subject, "runtime/queue/") {
			shells = append(shells, a.Subject+": "+a.Decision+" by "+a.DecidedBy)
		}
	}
	want := []string{
		"echo ran > allowed.txt: allow by policy",
		"git push --force origin main: deny by policy",
		"echo x >> config/policy.yaml: deny by policy",
		"mv allowed.txt asked.txt: allow by person",
	}
	if !slices.Equal(shells, want) {
		t.Errorf("shell approvals on record:\n%s\nwant:\n%s", strings.Join(shells, "\n"), strings.Join(want, "\n"))
	}
	tm.stop()
}
