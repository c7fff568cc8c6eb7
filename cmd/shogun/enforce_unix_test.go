//go:build !windows

package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// Roles with `worktree: true` get the same approvals hook as any other:
// Claude Code and Codex (here scripts named like them that record where
// and with what they were started) run in their worktree, with the hook
// given from runtime/state and the command line, not from a file of the
// folder they work in.
func TestWorktreeRolesStartWithTheHook(t *testing.T) {
	bin, out := t.TempDir(), t.TempDir()
	for _, name := range []string{"claude", "codex"} {
		rec := filepath.Join(out, name)
		script := "#!/bin/sh\n{ printf 'cwd=%s\\n' \"$PWD\"; for a in \"$@\"; do printf '%s\\n' \"$a\"; done; } > '" + rec + ".tmp'\n" +
			"mv '" + rec + ".tmp' '" + rec + "'\nexec sleep 600\n"
		if err := os.WriteFile(filepath.Join(bin, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	entry := func(id string) string {
		return "  - id: " + id + "\n    prompt_path: roles/ashigaru.md\n    command: {exec: \"" + filepath.Join(bin, id) + "\"}\n    worktree: true\n"
	}
	ws := repoWorkspace(t, entry("claude"), entry("codex"))
	startBackground(t, ws)
	for _, tc := range []struct{ id, want string }{
		{"claude", filepath.Join(ws, "runtime", "state", "cli", "claude-settings.json")},
		{"codex", "features.hooks=true"},
	} {
		lines := strings.Split(strings.TrimSuffix(string(waitFile(t, filepath.Join(out, tc.id), time.Minute)), "\n"), "\n")
		wt := filepath.Join(ws, ".shogun", "worktrees", tc.id)
		if lines[0] != "cwd="+wt || !slices.Contains(lines, tc.want) ||
			(tc.id == "codex" && !slices.ContainsFunc(lines, func(a string) bool { return strings.Contains(a, " hook codex") })) {
			t.Errorf("%s started with %q", tc.id, lines)
		}
	}
	b, err := os.ReadFile(filepath.Join(ws, "runtime", "state", "cli", "claude-settings.json"))
	if err != nil || !strings.Contains(string(b), " hook claude") {
		t.Errorf("claude-settings.json: %v\n%s", err, b)
	}
}
