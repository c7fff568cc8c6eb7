package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/shogun-dev/shogun/workspace"
)

// TestGeminiRunsUnattendedOnlyWhereTheHookGuardsIt: Gemini CLI's own
// confirmation is skipped (--approval-mode yolo) only where shogun's hook
// runs before every tool call: in a workspace `shogun init` made, not in a
// folder without the hook (a worktree role's), nor once the hook was taken
// out or switched off.
func TestGeminiRunsUnattendedOnlyWhereTheHookGuardsIt(t *testing.T) {
	ws := t.TempDir()
	if _, err := Scaffold(ws, ScaffoldOptions{Executable: "/opt/shogun"}); err != nil {
		t.Fatal(err)
	}
	l := workspace.New(ws)
	exec := "/usr/local/bin/gemini"
	yolo := func(cwd string) bool {
		t.Helper()
		e, ok, err := CLIEnforcement(l, "gemini", exec, cwd, "/opt/shogun")
		if err != nil {
			t.Fatal(err)
		}
		return ok && slices.Equal(e.Args[:2], GeminiUnattendedArgs)
	}
	if !yolo(ws) {
		t.Errorf("a role in the workspace shogun init made is not run unattended")
	}
	if yolo(t.TempDir()) {
		t.Errorf("a role in a folder with no .gemini/settings.json (a worktree) runs unattended, unguarded")
	}
	settings := filepath.Join(ws, filepath.FromSlash(workspace.GeminiSettingsFile))
	orig, err := os.ReadFile(settings)
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{
		"hook taken out":    `{"mcpServers": {}}`,
		"hooks off":         strings.Replace(string(orig), "{", `{"hooksConfig": {"enabled": false},`, 1),
		"hook disabled":     strings.Replace(string(orig), "{", `{"hooksConfig": {"disabled": ["/opt/shogun hook gemini"]},`, 1),
		"only for one tool": strings.Replace(string(orig), `"hooks": [`, `"matcher": "read_file", "hooks": [`, 1),
		"not JSON":          "{",
	} {
		if err := os.WriteFile(settings, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if geminiTrustsSystemFile(l.CLIState("")) {
			continue // the system file carries the hook whatever the project says
		}
		if yolo(ws) {
			t.Errorf("%s: Gemini CLI still runs unattended:\n%s", name, content)
		}
	}
}

// A Codex role in a worktree may write its report and its commands into
// the workspace's queue, outside its folder, without Codex's sandbox
// asking a person; a role in the workspace needs no more than its folder.
func TestCodexWorktreeRoleMayWriteItsReport(t *testing.T) {
	ws := t.TempDir()
	l := workspace.New(ws)
	wt := filepath.Join(ws, ".shogun", "worktrees", "codex")
	e, ok, err := CLIEnforcement(l, "codex", "/usr/bin/codex", wt, "/opt/shogun")
	if err != nil || !ok {
		t.Fatalf("CLIEnforcement = %v, %v", ok, err)
	}
	args := strings.Join(e.Args, " ")
	for _, dir := range []string{l.Reports(), l.Commands()} {
		if !strings.Contains(args, "--add-dir "+dir) {
			t.Errorf("a worktree role's Codex cannot write %s: %s", dir, args)
		}
	}
	if e, _, _ := CLIEnforcement(l, "codex", "/usr/bin/codex", ws, "/opt/shogun"); slices.Contains(e.Args, "--add-dir") {
		t.Errorf("a role in the workspace gets writable roots it has: %v", e.Args)
	}
}

// A Gemini CLI role in a worktree reads its task file and writes its
// report in the workspace's queue: Gemini CLI's file tools refuse a path
// outside its workspace directories unless it is included (a tester's
// worktree role never read its task: "Path not in workspace").
func TestGeminiWorktreeRoleMayReadItsTask(t *testing.T) {
	ws := t.TempDir()
	l := workspace.New(ws)
	wt := filepath.Join(ws, ".shogun", "worktrees", "gemini")
	e, ok, err := CLIEnforcement(l, "gemini", "/usr/bin/gemini", wt, "/opt/shogun")
	if err != nil || !ok {
		t.Fatalf("CLIEnforcement = %v, %v", ok, err)
	}
	if args := strings.Join(e.Args, " "); !strings.Contains(args, "--include-directories "+l.Path(workspace.QueueDir)) {
		t.Errorf("a worktree role's Gemini CLI cannot read its task: %s", args)
	}
	if e, _, _ := CLIEnforcement(l, "gemini", "/usr/bin/gemini", ws, "/opt/shogun"); slices.Contains(e.Args, "--include-directories") {
		t.Errorf("a role in the workspace gets a folder it has: %v", e.Args)
	}
}
