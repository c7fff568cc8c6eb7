//go:build unix

package supervisor

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// A role whose program is Claude Code or Codex itself is started with the
// approvals hook and shogun's MCP server from outside its folder (a file
// under runtime/state, command-line settings a project file cannot turn
// off), before its own arguments; a role run by a wrapper is left as
// configured. The programs here are scripts named like the CLIs that
// record what they were started with.
func TestCLIsStartWithTheirHookFromOutsideTheirFolder(t *testing.T) {
	bin := t.TempDir()
	out := t.TempDir()
	for _, name := range []string{"claude", "codex"} {
		script := "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > '" + filepath.Join(out, name) + ".tmp'\n" +
			"mv '" + filepath.Join(out, name) + ".tmp' '" + filepath.Join(out, name) + "'\nexec sleep 600\n"
		if err := os.WriteFile(filepath.Join(bin, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ws := testWorkspace(t, `
roles:
  - id: claude
    prompt_path: roles/a.md
    command: {exec: "`+filepath.Join(bin, "claude")+`", args: ["--model", "x"]}
  - id: codex
    prompt_path: roles/a.md
    command: {exec: "`+filepath.Join(bin, "codex")+`", args: ["--no-daemon"]}
  - id: wrapped
    prompt_path: roles/a.md
    cli: claude
    command: {exec: /bin/sh, args: ["-c", "for a in \"$@\"; do printf '%s\\n' \"$a\"; done > '`+filepath.Join(out, "wrapped.tmp")+`'; mv '`+filepath.Join(out, "wrapped.tmp")+`' '`+filepath.Join(out, "wrapped")+`'; exec sleep 600", "sh", "--model", "x"]}
`)
	start(t, ws, nil)
	args := func(name string) []string {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if b, err := os.ReadFile(filepath.Join(out, name)); err == nil {
				return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
			}
		}
		t.Fatalf("%s never started", name)
		return nil
	}
	hook := shogunBin + " hook "

	claude := args("claude")
	mcpFile := filepath.Join(ws, "runtime", "state", "cli", "claude-mcp.json")
	i := slices.Index(claude, "--settings")
	if i < 0 || i+1 >= len(claude) || !slices.Equal(claude[len(claude)-2:], []string{"--model", "x"}) ||
		!slices.Contains(claude, "--strict-mcp-config") || slices.Index(claude, "--setting-sources") < 0 ||
		claude[slices.Index(claude, "--setting-sources")+1] != "user" || claude[slices.Index(claude, "--mcp-config")+1] != mcpFile {
		t.Fatalf("claude started with %q", claude)
	}
	var settings struct {
		Hooks map[string][]struct {
			Hooks []struct{ Type, Command string }
		}
	}
	b, err := os.ReadFile(claude[i+1])
	if err := json.Unmarshal(b, &settings); err != nil || claude[i+1] != filepath.Join(ws, "runtime", "state", "cli", "claude-settings.json") ||
		len(settings.Hooks["PreToolUse"]) != 1 || settings.Hooks["PreToolUse"][0].Hooks[0].Command != hook+"claude" {
		t.Errorf("--settings %s: %s (%v)", claude[i+1], b, err)
	}
	b, err = os.ReadFile(mcpFile)
	fi, _ := os.Stat(mcpFile)
	if err != nil || !strings.Contains(string(b), `"command": "`+shogunBin+`"`) || fi.Mode().Perm() != 0o600 {
		t.Errorf("%s: %v\n%s", mcpFile, err, b)
	}

	codex := args("codex")
	if len(codex) < 2 || codex[len(codex)-1] != "--no-daemon" || !slices.Contains(codex, "--dangerously-bypass-hook-trust") || !slices.Contains(codex, "features.hooks=true") ||
		!slices.ContainsFunc(codex, func(a string) bool {
			return strings.HasPrefix(a, "hooks.PreToolUse=") && strings.Contains(a, `command="`+hook+`codex"`)
		}) || !slices.ContainsFunc(codex, func(a string) bool { return strings.HasPrefix(a, "mcp_servers.shogun=") }) {
		t.Errorf("codex started with %q", codex)
	}

	if wrapped := args("wrapped"); !slices.Equal(wrapped, []string{"--model", "x"}) {
		t.Errorf("a wrapper was started with %q", wrapped)
	}
}
