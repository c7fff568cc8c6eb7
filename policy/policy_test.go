package policy

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func mustPattern(t *testing.T, s string) Pattern {
	t.Helper()
	p, err := ParsePattern(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func mustPath(t *testing.T, s string) PathCond {
	t.Helper()
	c, err := ParsePathCond(s)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// testPlace is a workspace with a role working in worktrees/dev, a link
// inside the worktree that leads out of it, and a home folder.
func testPlace(t *testing.T) Place {
	t.Helper()
	root := t.TempDir()
	ws := filepath.Join(root, "ws")
	dir := filepath.Join(ws, "worktrees", "dev")
	for _, d := range []string{dir, filepath.Join(ws, "config"), filepath.Join(root, "elsewhere"), filepath.Join(root, "home")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(root, "elsewhere"), filepath.Join(dir, "out")); err != nil {
		t.Skipf("symbolic links: %v", err)
	}
	if err := os.Symlink(filepath.Join(dir, "src"), filepath.Join(dir, "in")); err != nil {
		t.Fatal(err)
	}
	return Place{Dir: dir, Workspace: ws, Home: filepath.Join(root, "home")}
}

// skipLinkCase skips a case that goes through testPlace's links where the
// system makes links it cannot find again (Wine).
func skipLinkCase(t *testing.T, place Place, situation string) {
	t.Helper()
	if !strings.Contains(situation, "link") {
		return
	}
	if _, err := os.Stat(filepath.Join(place.Dir, "out")); err != nil {
		t.Skipf("symbolic links are made but not found here (Wine): %v", err)
	}
}

// The paths a rule sees: inside or outside the role's working directory
// after "..", links and the command's own cd; globs relative to the
// workspace and to the working directory.
func TestPathConditions(t *testing.T) {
	place := testPlace(t)
	inside, outside := mustPath(t, "inside"), mustPath(t, "outside")
	git, cfg := mustPath(t, "**/.git/**"), mustPath(t, "config/**")
	for _, tc := range []struct {
		path      string
		want      PathCond
		match     bool
		situation string
	}{
		{"src/main.go", inside, true, "a relative file in the worktree"},
		{filepath.Join(place.Dir, "src/main.go"), inside, true, "an absolute file in the worktree"},
		{"new/dir/file.go", inside, true, "a file not yet made, in the worktree"},
		{"../../etc/passwd", inside, false, "climbing out with .."},
		{"../../etc/passwd", outside, true, "climbing out with .. is outside"},
		{"src/../../dev/x", inside, true, ".. that comes back in"},
		{"out/secret", inside, false, "a link that leads out of the worktree"},
		{"out/secret", outside, true, "a link that leads out is outside"},
		{"in/file", inside, true, "a link that stays inside"},
		{"/etc/hosts", outside, true, "an absolute path elsewhere"},
		{"~/notes.txt", outside, true, "the home folder"},
		{".git/config", git, true, "the worktree's .git"},
		{"src/.git/hooks/pre-commit", git, true, "a nested .git"},
		{"src/.github/x", git, false, ".github is not .git"},
		{"../../config/roles.yaml", cfg, true, "the workspace's config, from a worktree"},
		{"../../config", cfg, true, "the config folder itself"},
		{"configs/x", cfg, false, "a folder that only starts like config"},
		{"../../../elsewhere/config/x", cfg, false, "a config folder outside the workspace"},
		{"config/x", cfg, false, "a config folder of the worktree is not the workspace's"},
		{"out/.git/x", git, true, "a .git outside the workspace, through a link"},
	} {
		t.Run(tc.situation, func(t *testing.T) {
			skipLinkCase(t, place, tc.situation)
			pa := resolvePath(place, place.Dir, tc.path)
			if got := tc.want.match(place, "dev", pa); got != tc.match {
				t.Errorf("%s (%q → %q) matches %s = %v, want %v", tc.situation, tc.path, pa.abs, tc.want, got, tc.match)
			}
		})
	}
}

func TestCommandPatterns(t *testing.T) {
	for _, tc := range []struct {
		pattern, command string
		match            bool
	}{
		{"git push * --force", "git push --force", true},
		{"git push * --force", "git push origin main --force", true},
		{"git push * --force", "git push --force-with-lease", false},
		{"git push * --force*", "git push --force-with-lease", true},
		{"git push * --force", "git pull --force", false},
		{"rm * -*r*", "rm -rf build", true},
		{"rm * -*r*", "rm -v -r x", true},
		{"rm * -*r*", "rm file", false},
		{"go test *", "go test ./...", true},
		{"go test *", "go test", true},
		{"go", "go test", true},
		{"go test", "go", false},
		{"go", "gofmt -l .", false},
		{"ls", "ls", true},
		{"npm run ?est", "npm run test", true},
	} {
		p := mustPattern(t, tc.pattern)
		cmds := splitShell(tc.command, Place{})
		if len(cmds) != 1 {
			t.Fatalf("%q split into %d commands", tc.command, len(cmds))
		}
		if got := p.Match(cmds[0].views[0]); got != tc.match {
			t.Errorf("%q matches %q = %v, want %v", tc.pattern, tc.command, got, tc.match)
		}
	}
}

// A line of shell is judged command by command, with the strictest
// decision; what a rule cannot see through is never allowed.
func TestShellLinesAreJudgedWhole(t *testing.T) {
	place := testPlace(t)
	p := &Policy{Default: Ask, Rules: []Rule{
		{Decision: Deny, Kind: Shell, Commands: []Pattern{mustPattern(t, "rm * -*r*")}, Paths: []PathCond{mustPath(t, "outside")}, Where: "policy.yaml:1"},
		{Decision: Deny, Kind: Shell, Commands: []Pattern{mustPattern(t, "git reset * --hard *")}, BaseBranch: true, Where: "policy.yaml:2"},
		{Decision: Deny, Kind: Shell, Paths: []PathCond{mustPath(t, "config/**")}, Where: "policy.yaml:3"},
		{Decision: Allow, Kind: Shell, Commands: []Pattern{mustPattern(t, "ls *"), mustPattern(t, "echo *"), mustPattern(t, "cat *"),
			mustPattern(t, "rm *"), mustPattern(t, "cd *"), mustPattern(t, "git *")}, Where: "policy.yaml:4"},
	}}
	onBase := place
	onBase.OnBaseBranch = true
	for _, tc := range []struct {
		command string
		place   Place
		want    Decision
		why     string
	}{
		{"ls -la", place, Allow, "an allowed command"},
		{"rm -rf build", place, Allow, "rm -rf inside the worktree"},
		{"rm -rf /", place, Deny, "rm -rf of the root"},
		{"rm -rf ~", place, Deny, "rm -rf of the home folder"},
		{"rm -rf $HOME/x", place, Deny, "a path that is only known when it runs"},
		{"rm -rf ../..", place, Deny, "climbing out with .."},
		{"rm -rf out/", place, Deny, "through a link that leads out"},
		{"cd / && rm -rf *", place, Deny, "cd out first, then a relative path"},
		{"cd src; rm -rf *", place, Allow, "cd within, then a relative path"},
		{"ls; rm -rf /", place, Deny, "a deny hidden after a harmless command"},
		{"ls | sudo rm -fr /tmp/x", place, Deny, "behind sudo in a pipe"},
		{"FOO=1 env -i rm -r /var", place, Deny, "behind an assignment and env"},
		{"bash -c 'rm -rf /'", place, Deny, "inside bash -c"},
		{"echo $(rm -rf /)", place, Deny, "inside a substitution"},
		{"echo $(date)", place, Ask, "a substitution is never allowed by a rule"},
		{"eval ls", place, Ask, "eval is never allowed by a rule"},
		{"echo hi > ../../config/roles.yaml", place, Deny, "a redirection into config/"},
		{"cat ../../config/roles.yaml", place, Deny, "a command touching config/"},
		{"echo 'rm -rf /'", place, Allow, "quoted text is an argument, not a command"},
		{"cat <<EOF > notes.txt\nrm -rf /\nEOF", place, Allow, "a here-document's body is text"},
		{"git reset --hard HEAD~1", place, Allow, "reset --hard on the role's own branch"},
		{"git reset --hard HEAD~1", onBase, Deny, "reset --hard on the base branch"},
		{"python3 x.py", place, Ask, "no rule: the default"},
		{"ls 2>&1 | cat", place, Allow, "descriptor redirections are not paths"},
	} {
		t.Run(tc.why, func(t *testing.T) {
			skipLinkCase(t, tc.place, tc.why)
			v := p.Decide("dev", tc.place, Action{Kind: Shell, Command: tc.command})
			if v.Decision != tc.want {
				t.Errorf("%s: %q is %s (%s), want %s", tc.why, tc.command, v.Decision, v.Reason, tc.want)
			}
		})
	}
}

// Rules apply in order, by kind, role, file, host and tool; a role's own
// default stands in for the workspace's.
func TestRulesByKindRoleAndDefault(t *testing.T) {
	place := testPlace(t)
	p := &Policy{Default: Ask, RoleDefaults: map[string]Decision{"karo": Deny}, Rules: []Rule{
		{Decision: Deny, Kind: Write, Paths: []PathCond{mustPath(t, "**/.git/**")}, Where: "r1"},
		{Decision: Allow, Kind: Write, Paths: []PathCond{mustPath(t, "inside")}, Where: "r2"},
		{Decision: Allow, Kind: Read, Paths: []PathCond{mustPath(t, "inside")}, Where: "r3"},
		{Decision: Allow, Kind: Fetch, Hosts: []string{"*.golang.org", "golang.org"}, Where: "r4"},
		{Decision: Allow, Kind: MCP, Tools: []string{"shogun/*"}, Where: "r5"},
		{Decision: Allow, Kind: Shell, Commands: []Pattern{mustPattern(t, "make *")}, Roles: []string{"dev"}, Where: "r6"},
	}}
	for _, tc := range []struct {
		role string
		a    Action
		want Decision
		rule string
	}{
		{"dev", Action{Kind: Write, Path: "src/a.go"}, Allow, "r2"},
		{"dev", Action{Kind: Write, Path: ".git/config"}, Deny, "r1"},
		{"dev", Action{Kind: Write, Path: "/etc/hosts"}, Ask, ""},
		{"dev", Action{Kind: Read, Path: "out/secret"}, Ask, ""},
		{"dev", Action{Kind: Fetch, URL: "https://pkg.golang.org/x"}, Allow, "r4"},
		{"dev", Action{Kind: Fetch, URL: "https://GOLANG.org/"}, Allow, "r4"},
		{"dev", Action{Kind: Fetch, URL: "https://evil.example/golang.org"}, Ask, ""},
		{"dev", Action{Kind: MCP, Tool: "shogun/report"}, Allow, "r5"},
		{"dev", Action{Kind: MCP, Tool: "other/report"}, Ask, ""},
		{"dev", Action{Kind: Shell, Command: "make test"}, Allow, "r6"},
		{"qa", Action{Kind: Shell, Command: "make test"}, Ask, ""},
		{"karo", Action{Kind: Shell, Command: "make test"}, Deny, ""},
		{"dev", Action{Kind: "teleport", Command: "x"}, Deny, ""},
		{"dev", Action{Kind: Write, Path: "a.go", Cwd: "/etc"}, Ask, ""},
		{"dev", Action{Kind: Write, Path: "a.go", Cwd: place.Dir + "/src"}, Allow, "r2"},
	} {
		t.Run(fmt.Sprintf("%s %s %s", tc.role, tc.a.Kind, tc.a.Subject()), func(t *testing.T) {
			if strings.HasPrefix(tc.a.Path, "out/") {
				skipLinkCase(t, place, "through the link")
			}
			v := p.Decide(tc.role, place, tc.a)
			if v.Decision != tc.want || v.Rule != tc.rule {
				t.Errorf("%s: %s %q = %s by %q (%s), want %s by %q", tc.role, tc.a.Kind, tc.a.Subject(), v.Decision, v.Rule, v.Reason, tc.want, tc.rule)
			}
		})
	}
}

func FuzzSplitShell(f *testing.F) {
	for _, s := range []string{"ls; rm -rf /", "echo 'a' \"b$(c)\" `d` <<EOF\nx\nEOF\n", "a 2>&1 >f <g &>h", "bash -c 'bash -c \"x\"'"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_ = splitShell(s, Place{Dir: "/w", Workspace: "/w"})
	})
}
