package shoguntest

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// GitEnv makes git usable and predictable for the rest of the test, on a
// fresh machine as on a developer's: an author and committer, no global
// or system configuration (no signing, no hooks path, no default branch
// of the person's own), no prompts. Child processes (shogun, agent-sim)
// inherit it. It skips the test when git is not installed.
func GitEnv(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		if runtime.GOOS == "windows" {
			// make test-windows: the Wine prefix has no Git for Windows.
			t.Skip("git is not on PATH (under make test-windows: the Wine prefix has no Git for Windows; the windows workflow runs these)")
		}
		t.Skip("git is not installed")
	}
	global := filepath.Join(t.TempDir(), "gitconfig")
	if err := os.WriteFile(global, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{
		"GIT_AUTHOR_NAME":     "Test Author",
		"GIT_AUTHOR_EMAIL":    "author@example.com",
		"GIT_COMMITTER_NAME":  "Test Committer",
		"GIT_COMMITTER_EMAIL": "committer@example.com",
		"GIT_CONFIG_GLOBAL":   global,
		"GIT_CONFIG_NOSYSTEM": "1",
		"GIT_TERMINAL_PROMPT": "0",
	} {
		t.Setenv(k, v)
	}
}

// Git runs git in dir and returns its output, failing the test when git
// fails.
func Git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s (in %s): %v\n%s", strings.Join(args, " "), dir, err, out)
	}
	return strings.TrimSpace(string(out))
}

// GitRepo makes dir a git repository on branch main with files committed
// (slash-separated relative path → content). Call GitEnv first.
func GitRepo(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	Git(t, dir, "init", "-q", "-b", "main")
	for rel, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	Git(t, dir, "add", "-A")
	Git(t, dir, "commit", "-q", "-m", "first commit")
}
