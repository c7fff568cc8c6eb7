//go:build realcli && linux

package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/config"
	"github.com/shogun-dev/shogun/store"
)

// nativeDeny is what one CLI's own mechanism makes of the policy's deny
// rule for `git init`: the file shogun start writes, a line it must hold,
// and the CLI's refusal as the model is told it.
type nativeDeny struct {
	cli, file, rule, refusal string
}

// The policy denies `git init` (a plain prefix); shogun start writes it
// into the CLI's own rules, and the CLI refuses the command itself: it
// does not run, no prompt is on the screen (the role is never in
// attention, where without the rule the CLI asks), the model is told the
// rule's note, and the task still reports.
func testNativeDeny(t *testing.T, c nativeDeny) {
	if !slices.Contains(e2eCLIs, c.cli) {
		t.Skipf("%s is not in SHOGUN_E2E_CLIS", c.cli)
	}
	policy := e2ePolicy + `  - {decision: deny, kind: shell, command: "git init *", note: "no new repositories here"}
`
	tm := startE2EPolicy(t, []string{c.cli}, nil, policy)
	b, err := os.ReadFile(filepath.Join(tm.ws, filepath.FromSlash(c.file)))
	if err != nil || !strings.Contains(string(b), c.rule) {
		t.Fatalf("%s: %v\n%s", c.file, err, b)
	}
	body := "Make the repository, then report.\n" +
		"fakemodel: run git init denied-repo\n" +
		"fakemodel: report done via write the repository was refused\n"
	id := tm.send(c.cli, "Make the repository", body)
	task, ok := tm.waitTask(id, 3*time.Minute)
	if !ok || task.Status != store.StatusDone || task.Summary != "the repository was refused" {
		t.Fatalf("task = %+v (closed %v); screen:\n%s", task, ok, screen(t, tm.env, tm.ws, c.cli))
	}
	if _, err := os.Stat(filepath.Join(tm.ws, "denied-repo")); err == nil {
		t.Error("the denied command ran")
	}
	if states := readLog(tm.ws, c.cli).states; slices.Contains(states, "attention") {
		t.Errorf("%s asked on its screen; states %v", c.cli, states)
	}
	dumps, _ := filepath.Glob(filepath.Join(tm.model.DumpDir, "*.json"))
	refused := false
	for _, f := range dumps {
		b, _ := os.ReadFile(f)
		refused = refused || strings.Contains(string(b), c.refusal)
	}
	if !refused {
		t.Errorf("no request to the model carries %s's refusal with the rule's note (%d requests)", c.cli, len(dumps))
	}
	tm.stop()
}

// Gemini CLI: .gemini/shogun-policy.toml, which .gemini/settings.json
// (shogun init) names in adminPolicyPaths, is written, but shogun's
// BeforeTool hook refuses first; its policy engine is the second line
// ("Tool execution denied by policy. …" where the hook is not run).
func TestGeminiRefusesThePolicysDenyRules(t *testing.T) {
	testNativeDeny(t, nativeDeny{cli: "gemini", file: config.GeminiPolicyFile, rule: `commandPrefix = "git init"`,
		refusal: "Tool execution blocked: shogun policy: no new repositories here"})
}

// Codex: .codex/rules/shogun.rules is written, but shogun's PreToolUse
// hook (given on the command line) refuses first; the execpolicy is the
// second line ("… rejected: …" where the hook is not run).
func TestCodexRefusesThePolicysDenyRules(t *testing.T) {
	testNativeDeny(t, nativeDeny{cli: "codex", file: config.CodexRulesFile, rule: `pattern = ["git", "init"]`,
		refusal: "Command blocked by PreToolUse hook: shogun policy: no new repositories here"})
}
