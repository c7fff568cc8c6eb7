package workspace

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Every path of DESIGN.md section 2 has its one definition here.
func TestLayoutMatchesTheDesign(t *testing.T) {
	l := New(filepath.FromSlash("/ws"))
	want := map[string]string{ // DESIGN.md section 2, as written there
		"config/settings.yaml":               l.Path(SettingsFile),
		"config/roles.yaml":                  l.Path(RolesFile),
		"roles/":                             l.Path(RolesDir),
		"runtime/queue/commands/":            l.Commands(),
		"runtime/queue/tasks/":               l.Tasks(),
		"runtime/queue/reports/":             l.Reports(),
		"runtime/queue/archive/":             l.Archive(),
		"runtime/queue/failed/":              l.Failed(),
		"runtime/logs/<role>.log":            l.RoleLog("<role>"),
		"runtime/logs/supervisor/shogun.log": l.SupervisorLog(),
		"runtime/state/":                     l.State(),
		"runtime/dashboard.md":               l.Dashboard(),
		"data/shogun.db":                     l.Database(),
		"runtime/state/shogun.sock":          l.Socket(),
		"runtime/state/shogun.lock":          l.Lock(),
		"runtime/state/status.yaml":          l.Status(),
		"runtime/state/pids.json":            l.PidLedger(),
		"runtime/queue/tasks/a.yaml":         l.TaskFile("a"),
		"runtime/queue/reports/a.yaml":       l.ReportFile("a"),
	}
	for rel, got := range want {
		if exp := filepath.Join(l.Root, filepath.FromSlash(strings.TrimSuffix(rel, "/"))); got != exp {
			t.Errorf("%s: layout says %s, want %s", rel, got, exp)
		}
	}
	// The design itself, where the shared folder is beside the checkout.
	design, err := os.ReadFile(filepath.Join("..", "..", "shared", "DESIGN.md"))
	if err != nil {
		t.Skipf("DESIGN.md not beside the checkout: %v", err)
	}
	sec := string(design)
	start := strings.Index(sec, "## 2. A workspace")
	end := strings.Index(sec, "## 3.")
	if start < 0 || end < start {
		t.Fatal("DESIGN.md has no section 2")
	}
	for _, line := range strings.Split(sec[start:end], "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || !strings.Contains(f[0], "/") || strings.HasPrefix(f[0], "skills/") || strings.HasPrefix(f[0], "roles/<") {
			continue
		}
		if _, ok := want[f[0]]; !ok {
			t.Errorf("DESIGN.md section 2 lists %s, which the layout does not name", f[0])
		}
	}
}

func TestRelTo(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("POSIX paths")
	}
	cases := []struct{ dir, path, want string }{
		{"/ws", "/ws/runtime/queue/tasks/a.yaml", "runtime/queue/tasks/a.yaml"},
		{"/ws/sub", "/ws/runtime/queue/tasks/a.yaml", "/ws/runtime/queue/tasks/a.yaml"},
		{"/ws", "/ws/..notes/x.md", "..notes/x.md"},
		{"/ws", "/ws", "."},
		{"/ws", "/other/x", "/other/x"},
	}
	for _, c := range cases {
		if got := RelTo(c.dir, c.path); got != c.want {
			t.Errorf("RelTo(%s, %s) = %s, want %s", c.dir, c.path, got, c.want)
		}
	}
}

// A workspace is found from any folder inside it, the nearest one first,
// as git finds a repository; a folder in none has none.
func TestFind(t *testing.T) {
	outer := t.TempDir()
	inner := filepath.Join(outer, "team", "nested")
	deep := filepath.Join(outer, "team", "nested", "src", "pkg")
	// A role's worktree checks out the committed config/roles.yaml too.
	worktree := filepath.Join(outer, filepath.FromSlash(WorktreesDir), "ashigaru1")
	for _, ws := range []string{outer, inner, worktree} {
		if err := os.MkdirAll(filepath.Join(ws, "config"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ws, filepath.FromSlash(RolesFile)), []byte("roles: []\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	for dir, want := range map[string]string{
		deep:                              inner,
		inner:                             inner,
		filepath.Join(inner, "config"):    inner,
		filepath.Join(outer, "team"):      outer,
		filepath.Join(outer, "config"):    outer,
		worktree:                          outer,
		filepath.Join(worktree, "config"): outer,
	} {
		if got, ok := Find(dir); !ok || got != want {
			t.Errorf("Find(%s) = %q, %v; want %q", dir, got, ok, want)
		}
	}
	if got, ok := Find(t.TempDir()); ok {
		t.Errorf("Find in a folder in no workspace = %q", got)
	}
}
