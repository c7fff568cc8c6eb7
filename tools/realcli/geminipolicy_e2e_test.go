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

// TestGeminiRefusesThePolicysDenyRules: config/policy.yaml denies `git
// init` (a plain prefix); shogun start writes it into
// .gemini/shogun-policy.toml, which .gemini/settings.json (shogun init)
// names in adminPolicyPaths. Gemini CLI's own policy engine refuses the
// command: it does not run, no prompt is on the screen (the role is never
// in attention, where without the rule Gemini asks "Allow execution of
// [Shell]?"), and the task still reports.
func TestGeminiRefusesThePolicysDenyRules(t *testing.T) {
	if !slices.Contains(e2eCLIs, "gemini") {
		t.Skip("gemini is not in SHOGUN_E2E_CLIS")
	}
	policy := e2ePolicy + `  - {decision: deny, kind: shell, command: "git init *", note: "no new repositories here"}
`
	tm := startE2EPolicy(t, []string{"gemini"}, nil, policy)
	b, err := os.ReadFile(filepath.Join(tm.ws, filepath.FromSlash(config.GeminiPolicyFile)))
	if err != nil || !strings.Contains(string(b), `commandPrefix = "git init"`) {
		t.Fatalf("%s: %v\n%s", config.GeminiPolicyFile, err, b)
	}
	body := "Make the repository, then report.\n" +
		"fakemodel: run git init denied-repo\n" +
		"fakemodel: report done via write the repository was refused\n"
	id := tm.send("gemini", "Make the repository", body)
	task, ok := tm.waitTask(id, 3*time.Minute)
	if !ok || task.Status != store.StatusDone || task.Summary != "the repository was refused" {
		t.Fatalf("task = %+v (closed %v); screen:\n%s", task, ok, screen(t, tm.env, tm.ws, "gemini"))
	}
	if _, err := os.Stat(filepath.Join(tm.ws, "denied-repo")); err == nil {
		t.Error("the denied command ran")
	}
	for _, st := range readLog(tm.ws, "gemini").states {
		if st == "attention" {
			t.Errorf("gemini asked on its screen; states %v", readLog(tm.ws, "gemini").states)
			break
		}
	}
	// What Gemini CLI told the model of the call: its policy's refusal,
	// with the rule's note.
	dumps, _ := filepath.Glob(filepath.Join(tm.model.DumpDir, "*.json"))
	refused := false
	for _, f := range dumps {
		b, _ := os.ReadFile(f)
		if strings.Contains(string(b), "Tool execution denied by policy. no new repositories here") {
			refused = true
		}
	}
	if !refused {
		t.Errorf("no request to the model carries Gemini CLI's refusal by its policy (%d requests)", len(dumps))
	}
	tm.stop()
}

// TestCodexRefusesThePolicysDenyRules: the same deny rule, written by
// shogun start into .codex/rules/shogun.rules, is refused by Codex's own
// execpolicy: the command does not run, no prompt, the task reports.
func TestCodexRefusesThePolicysDenyRules(t *testing.T) {
	if !slices.Contains(e2eCLIs, "codex") {
		t.Skip("codex is not in SHOGUN_E2E_CLIS")
	}
	policy := e2ePolicy + `  - {decision: deny, kind: shell, command: "git init *", note: "no new repositories here"}
`
	tm := startE2EPolicy(t, []string{"codex"}, nil, policy)
	b, err := os.ReadFile(filepath.Join(tm.ws, filepath.FromSlash(config.CodexRulesFile)))
	if err != nil || !strings.Contains(string(b), `pattern = ["git", "init"]`) {
		t.Fatalf("%s: %v\n%s", config.CodexRulesFile, err, b)
	}
	body := "Make the repository, then report.\n" +
		"fakemodel: run git init denied-repo\n" +
		"fakemodel: report done via write the repository was refused\n"
	id := tm.send("codex", "Make the repository", body)
	task, ok := tm.waitTask(id, 3*time.Minute)
	if !ok || task.Status != store.StatusDone || task.Summary != "the repository was refused" {
		t.Fatalf("task = %+v (closed %v); screen:\n%s", task, ok, screen(t, tm.env, tm.ws, "codex"))
	}
	if _, err := os.Stat(filepath.Join(tm.ws, "denied-repo")); err == nil {
		t.Error("the denied command ran")
	}
	for _, st := range readLog(tm.ws, "codex").states {
		if st == "attention" {
			t.Errorf("codex asked on its screen; states %v", readLog(tm.ws, "codex").states)
			break
		}
	}
	dumps, _ := filepath.Glob(filepath.Join(tm.model.DumpDir, "*.json"))
	refused := false
	for _, f := range dumps {
		b, _ := os.ReadFile(f)
		// exec_command failed: … `/bin/bash -lc 'git init denied-repo'` rejected: no new repositories here
		if strings.Contains(string(b), "git init denied-repo'` rejected: no new repositories here") {
			refused = true
		}
	}
	if !refused {
		t.Errorf("no request to the model carries Codex's refusal with the rule's note (%d requests)", len(dumps))
	}
	tm.stop()
}
