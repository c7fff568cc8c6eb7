//go:build realcli && linux

package main

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/sandbox"
	"github.com/shogun-dev/shogun/store"
)

// TestSandboxedCLIsDoWholeTasks: Codex, Gemini CLI and Copilot CLI in
// roles with sandbox: true, in a workspace that lies in the temp folder
// (as a team tried out in /tmp does), become ready and finish a task whose
// shell command is refused by the kernel where it reaches for the console's
// token and the policy. Codex never became ready: its state database's
// journal could not be made in a temp folder granted entry by entry; then
// each of its commands failed in its own sandbox (bubblewrap), which cannot
// run inside Landlock. Gemini CLI runs its shell commands through plain
// pipes (its settings), as its own terminal pair is refused.
func TestSandboxedCLIsDoWholeTasks(t *testing.T) {
	if _, err := sandbox.Available(); err != nil {
		t.Skipf("no sandbox here: %v", err)
	}
	for _, name := range []string{"codex", "gemini", "copilot"} {
		t.Run(name, func(t *testing.T) {
			if !slices.Contains(e2eCLIs, name) {
				t.Skipf("%s is not in SHOGUN_E2E_CLIS", name)
			}
			setup := func(ws string) error {
				if name != "gemini" {
					return nil
				}
				// Its shell tool opens a terminal pair of its own
				// (node-pty), whose far end the sandbox refuses
				// ("forkpty(3) failed"): plain pipes instead, as
				// docs/security.md tells.
				return mergeJSON(filepath.Join(filepath.Dir(ws), "home-gemini", ".gemini", "settings.json"),
					map[string]any{"tools": map[string]any{"shell": map[string]any{"enableInteractiveShell": false}}})
			}
			tm := startE2ESetup(t, []string{name}, func(string) string { return "    sandbox: true\n" }, "", false, setup)
			state := filepath.Join(tm.ws, "runtime", "state")
			if err := os.WriteFile(filepath.Join(state, "ui.token"), []byte("0123456789abcdef\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			body := "Try the secrets, then report.\n" +
				"fakemodel: run cat runtime/state/ui.token > skills/tried.txt 2>&1; echo x 2>> skills/tried.txt >> config/policy.yaml; true\n" +
				"fakemodel: report done via write tried\n"
			id := tm.send(name, "Try the secrets", body)
			task, ok := tm.waitTask(id, 3*time.Minute)
			if !ok || task.Status != store.StatusDone {
				t.Fatalf("task = %+v (closed %v); screen:\n%s", task, ok, screen(t, tm.env, tm.ws, name))
			}
			tried, err := os.ReadFile(filepath.Join(tm.ws, "skills", "tried.txt"))
			if err != nil || strings.Count(strings.ToLower(string(tried)), "permission denied") != 2 || strings.Contains(string(tried), "0123456789abcdef") {
				t.Errorf("skills/tried.txt = %q, %v; want two refusals and no token", tried, err)
			}
			if _, err := os.Stat(filepath.Join(tm.ws, "config", "policy.yaml")); !os.IsNotExist(err) {
				t.Errorf("the sandboxed agent wrote config/policy.yaml: %v", err)
			}
			tm.stop()
		})
	}
}

// mergeJSON sets the top-level keys of add in the JSON object in file.
func mergeJSON(file string, add map[string]any) error {
	m := map[string]any{}
	if b, err := os.ReadFile(file); err == nil {
		if err := json.Unmarshal(b, &m); err != nil {
			return err
		}
	}
	maps.Copy(m, add)
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return os.WriteFile(file, b, 0o600)
}
