//go:build realcli && linux

package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/sandbox"
	"github.com/shogun-dev/shogun/store"
)

// TestSandboxedClaudeIsRefusedByTheKernel: Claude Code in a role with
// sandbox: true, and no policy to stop it first, runs shell commands that
// read the console's token and write the policy: the kernel refuses both
// ("Permission denied"), and Claude Code still finishes its task with a
// report, its own home and the workspace's other folders being writable.
func TestSandboxedClaudeIsRefusedByTheKernel(t *testing.T) {
	if !slices.Contains(e2eCLIs, "claude") {
		t.Skip("claude is not in SHOGUN_E2E_CLIS")
	}
	if _, err := sandbox.Available(); err != nil {
		t.Skipf("no sandbox here: %v", err)
	}
	tm := startE2EPolicy(t, []string{"claude"}, func(string) string { return "    sandbox: true\n" }, "")
	state := filepath.Join(tm.ws, "runtime", "state")
	if err := os.MkdirAll(state, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(state, "ui.token"), []byte("0123456789abcdef\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	body := "Try the secrets, then report.\n" +
		"fakemodel: run cat runtime/state/ui.token > skills/tried.txt 2>&1; echo x 2>> skills/tried.txt >> config/policy.yaml; true\n" +
		"fakemodel: report done via write tried\n"
	id := tm.send("claude", "Try the secrets", body)
	task, ok := tm.waitTask(id, 3*time.Minute)
	if !ok || task.Status != store.StatusDone {
		t.Fatalf("task = %+v (closed %v); screen:\n%s", task, ok, screen(t, tm.env, tm.ws, "claude"))
	}
	tried, err := os.ReadFile(filepath.Join(tm.ws, "skills", "tried.txt"))
	if err != nil || strings.Count(string(tried), "Permission denied") != 2 || strings.Contains(string(tried), "0123456789abcdef") {
		t.Errorf("skills/tried.txt = %q, %v; want two refusals and no token", tried, err)
	}
	if _, err := os.Stat(filepath.Join(tm.ws, "config", "policy.yaml")); !os.IsNotExist(err) {
		t.Errorf("the sandboxed agent wrote config/policy.yaml: %v", err)
	}
	if t.Failed() {
		dumps, _ := filepath.Glob(filepath.Join(filepath.Dir(tm.ws), "model-requests", "*"))
		for _, d := range dumps {
			if b, err := os.ReadFile(d); err == nil {
				if i := strings.LastIndex(string(b), "tool_result"); i >= 0 {
					t.Logf("%s: %s", d, b[max(0, i-600):min(len(b), i+600)])
				}
			}
		}
	}
	tm.stop()
}
