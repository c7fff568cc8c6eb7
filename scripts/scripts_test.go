// Package scripts_test tests the scripts in this folder, which hold no Go
// code of their own: scripts/start.sh is run for real (it builds bin/shogun of
// this repository, as a person running it would, and execs
// `shogun start --dry-run`), and scripts/start.ps1 and scripts/terminal.ps1 go
// through the PowerShell syntax check of tools/psparse, which must also reject
// broken scripts with a position.
package scripts_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/shoguntest"
)

// repoRoot is the repository root: the test runs in scripts/.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("repository root %s: %v", root, err)
	}
	return root
}

type result struct {
	stdout, stderr string
	code           int
}

// run runs a program and returns its output and exit code. A cold Go build
// cache makes the first build of bin/shogun take a minute on a small machine,
// hence the generous limit.
func run(t *testing.T, dir string, env []string, name string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("%s %s: %v", name, strings.Join(args, " "), err)
		}
		code = ee.ExitCode()
	}
	return result{stdout.String(), stderr.String(), code}
}

func (r result) String() string {
	return "exit code " + strconv.Itoa(r.code) + "\n--- stdout:\n" + r.stdout + "--- stderr:\n" + r.stderr
}

// tableRoles returns the first column of the dry-run table.
func tableRoles(out string) []string {
	var ids []string
	in := false
	for _, line := range strings.Split(out, "\n") {
		if !in {
			in = strings.HasPrefix(line, "ROLE ")
			continue
		}
		if strings.TrimSpace(line) == "" {
			break
		}
		ids = append(ids, strings.Fields(line)[0])
	}
	return ids
}

// pathWithoutGo returns a PATH of one folder holding links to the programs
// start.sh uses, and no go.
func pathWithoutGo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"cat", "dirname", "find", "head", "mkdir", "mv", "rm"} {
		p, err := exec.LookPath(name)
		if err != nil {
			t.Skipf("%s not on PATH", name)
		}
		if err := os.Symlink(p, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// envWith is the test's environment with the given variables replaced.
func envWith(kv ...string) []string {
	env := os.Environ()
	for _, s := range kv {
		name := s[:strings.IndexByte(s, '=')+1]
		out := env[:0:0]
		for _, e := range env {
			if !strings.HasPrefix(e, name) {
				out = append(out, e)
			}
		}
		env = append(out, s)
	}
	return env
}

func TestStartShSyntax(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("start.sh is for Unix shells")
	}
	root := repoRoot(t)
	script := filepath.Join(root, "scripts", "start.sh")
	if r := run(t, root, nil, "sh", "-n", script); r.code != 0 {
		t.Fatalf("sh -n start.sh: %s", r)
	}
	if _, err := exec.LookPath("shellcheck"); err != nil {
		t.Log("shellcheck not installed; only sh -n was run")
		return
	}
	if r := run(t, root, nil, "shellcheck", script); r.code != 0 {
		t.Fatalf("shellcheck start.sh: %s", r)
	}
}

// TestStartSh runs scripts/start.sh for real. It builds bin/shogun in the
// repository (git-ignored), as the script does for a person.
func TestStartSh(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("start.sh is for Unix shells")
	}
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh on PATH")
	}
	root := repoRoot(t)
	script := filepath.Join(root, "scripts", "start.sh")
	bin := filepath.Join(root, "bin", "shogun")

	t.Run("usage", func(t *testing.T) {
		r := run(t, root, nil, script, "-h")
		if r.code != 0 || !strings.Contains(r.stdout, "usage: scripts/start.sh") || r.stderr != "" {
			t.Fatalf("-h: want usage on stdout and exit 0, got %s", r)
		}
		for _, args := range [][]string{{"-x"}, {"-w"}, {"-n", "extra"}, {"--dry-run"}} {
			r := run(t, root, nil, script, args...)
			if r.code != 2 || !strings.Contains(r.stderr, "usage: scripts/start.sh") || r.stdout != "" {
				t.Errorf("%q: want usage on stderr and exit 2, got %s", args, r)
			}
		}
		r = run(t, root, nil, script, "-n", "-w", filepath.Join(t.TempDir(), "nowhere"))
		if r.code != 1 || !strings.Contains(r.stderr, "start.sh: workspace ") || !strings.Contains(r.stderr, "no such folder") {
			t.Errorf("missing workspace: want one error line and exit 1, got %s", r)
		}
	})

	// An empty folder is not a workspace: shogun's own error and exit code
	// come through. This run builds bin/shogun if it is missing or stale.
	empty := t.TempDir()
	r := run(t, root, nil, script, "-w", empty, "-n")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("bin/shogun not built: %v\n%s", err, r)
	}
	direct := run(t, root, nil, bin, "--log-level", "info", "start", "--workspace", empty, "--dry-run")
	if r.code == 0 || r.code != direct.code || !strings.Contains(r.stderr, direct.stderr) || !strings.Contains(r.stderr, "shogun: ") {
		t.Fatalf("empty workspace: want shogun's error and exit code (%s), got %s", direct, r)
	}

	// Simulated agents: the dry run fails for a program that is not
	// installed, and this machine need not have the real CLIs.
	ws := filepath.Join(t.TempDir(), "team")
	if r := run(t, root, nil, bin, "init", "--demo", ws); r.code != 0 {
		t.Fatalf("shogun init: %s", r)
	}
	want := run(t, root, nil, bin, "start", "--workspace", ws, "--dry-run")
	if want.code != 0 {
		t.Fatalf("shogun start --dry-run: %s", want)
	}

	t.Run("dry-run", func(t *testing.T) {
		before := stat(t, bin)
		r := run(t, root, nil, script, "-w", ws, "-n")
		if r.code != 0 || r.stdout != want.stdout || r.stderr != "" {
			t.Fatalf("want exactly the output of `shogun start --dry-run` (%s), got %s", want, r)
		}
		if !strings.Contains(r.stdout, "configuration OK") {
			t.Errorf("no 'configuration OK' in %q", r.stdout)
		}
		if ids := tableRoles(r.stdout); strings.Join(ids, ",") != "shogun,karo,ashigaru1,ashigaru2,ashigaru3" {
			t.Errorf("roles in the table: %q", ids)
		}
		if !os.SameFile(before, stat(t, bin)) {
			t.Error("an up-to-date bin/shogun was rebuilt")
		}
	})

	t.Run("roles and default workspace", func(t *testing.T) {
		// No -w: the current folder is the workspace.
		r := run(t, ws, nil, script, "-r", "karo,shogun", "-n", "-l", "debug")
		if r.code != 0 {
			t.Fatalf("-r karo,shogun: %s", r)
		}
		if ids := tableRoles(r.stdout); strings.Join(ids, ",") != "karo,shogun" {
			t.Errorf("-r karo,shogun: table has %q\n%s", ids, r)
		}
		if !strings.Contains(r.stdout, filepath.Base(ws)+": configuration OK, 2 role(s)") {
			t.Errorf("default workspace: %s", r)
		}
		// A relative -w.
		r = run(t, filepath.Dir(ws), nil, script, "-w", filepath.Base(ws), "-n", "-r", "ashigaru2")
		if ids := tableRoles(r.stdout); r.code != 0 || strings.Join(ids, ",") != "ashigaru2" {
			t.Errorf("relative -w: %s", r)
		}
		r = run(t, root, nil, script, "-w", ws, "-n", "-r", "nobody")
		if r.code != 1 || !strings.Contains(r.stderr, `unknown role "nobody"`) {
			t.Errorf("-r nobody: want shogun's error, got %s", r)
		}
	})

	t.Run("rebuild when older than the sources", func(t *testing.T) {
		old := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
		if err := os.Chtimes(bin, old, old); err != nil {
			t.Fatal(err)
		}
		before := stat(t, bin)
		r := run(t, root, nil, script, "-w", ws, "-n")
		if r.code != 0 || r.stdout != want.stdout || !regexp.MustCompile(`building bin/shogun \(\S+ is newer than bin/shogun\)`).MatchString(r.stderr) {
			t.Fatalf("stale binary: want a rebuild, then the dry run: %s", r)
		}
		after := stat(t, bin)
		if os.SameFile(before, after) || !after.ModTime().After(old) {
			t.Errorf("bin/shogun was not replaced (mtime %s)", after.ModTime())
		}
	})

	t.Run("-B rebuilds", func(t *testing.T) {
		before := stat(t, bin)
		r := run(t, root, nil, script, "-B", "-w", ws, "-n")
		if r.code != 0 || r.stdout != want.stdout || !strings.Contains(r.stderr, "building bin/shogun (-B given)") {
			t.Fatalf("-B: %s", r)
		}
		after := stat(t, bin)
		if os.SameFile(before, after) || after.ModTime().Equal(before.ModTime()) {
			t.Errorf("-B did not replace bin/shogun (mtime %s, was %s)", after.ModTime(), before.ModTime())
		}
		if m, _ := filepath.Glob(filepath.Join(root, "bin", ".shogun.*.tmp")); len(m) > 0 {
			t.Errorf("temporary build outputs left behind: %q", m)
		}
	})

	t.Run("no go on PATH", func(t *testing.T) {
		noGo := envWith("PATH=" + pathWithoutGo(t))
		before := stat(t, bin)
		r := run(t, root, noGo, script, "-B", "-w", ws, "-n")
		if r.code != 1 || !strings.Contains(r.stderr, "'go' is not on PATH") || r.stdout != "" {
			t.Fatalf("want one clear error and exit 1, got %s", r)
		}
		if strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("want one line on stderr, got %q", r.stderr)
		}
		if !os.SameFile(before, stat(t, bin)) {
			t.Error("bin/shogun changed although nothing could be built")
		}
		// An up-to-date binary needs no Go.
		r = run(t, root, noGo, script, "-w", ws, "-n")
		if r.code != 0 || r.stdout != want.stdout {
			t.Errorf("up to date, no go: %s", r)
		}
	})
}

func stat(t *testing.T, path string) os.FileInfo {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi
}

// psCheck prepares tools/psparse and returns a function that runs its check
// on some files.
func psCheck(t *testing.T) func(files ...string) result {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not on PATH: the PowerShell syntax check (tools/psparse) needs Node.js 18 or later; CI has it")
	}
	root := repoRoot(t)
	dir := filepath.Join(root, "tools", "psparse")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "web-tree-sitter")); err != nil {
		npm, err := exec.LookPath("npm")
		if err != nil {
			t.Skip("tools/psparse/node_modules is missing and npm is not on PATH; run `make check-scripts`")
		}
		if r := run(t, dir, nil, npm, "ci", "--no-audit", "--no-fund", "--ignore-scripts"); r.code != 0 {
			t.Fatalf("npm ci in tools/psparse: %s", r)
		}
	}
	check := filepath.Join(dir, "check.js")
	return func(files ...string) result {
		t.Helper()
		return run(t, root, nil, node, append([]string{check}, files...)...)
	}
}

func TestPowerShellScriptsParse(t *testing.T) {
	check := psCheck(t)
	root := repoRoot(t)
	scripts, err := filepath.Glob(filepath.Join(root, "scripts", "*.ps1"))
	if err != nil {
		t.Fatal(err)
	}
	if len(scripts) != 3 {
		t.Fatalf("want install.ps1, start.ps1 and terminal.ps1, found %q", scripts)
	}
	if r := check(scripts...); r.code != 0 || !strings.Contains(r.stdout, "3 file(s) parse") {
		t.Fatalf("the real scripts must parse: %s", r)
	}
	for _, s := range scripts {
		src, err := os.ReadFile(s)
		if err != nil {
			t.Fatal(err)
		}
		wants := []string{"[CmdletBinding()]", "param(", ".SYNOPSIS", ".DESCRIPTION", ".EXAMPLE", "Set-StrictMode -Version Latest", "$ErrorActionPreference = 'Stop'"}
		if filepath.Base(s) != "install.ps1" {
			wants = append(wants, ".PARAMETER Workspace")
		}
		for _, want := range wants {
			if !bytes.Contains(src, []byte(want)) {
				t.Errorf("%s lacks %q", filepath.Base(s), want)
			}
		}
	}
}

func TestPowerShellCheckRejectsBrokenScripts(t *testing.T) {
	check := psCheck(t)
	root := repoRoot(t)
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}

	// A stray closing parenthesis at a known place.
	broken := write("broken.ps1", "Set-StrictMode -Version Latest\n$total = 0\n$total = ($total + 1))\nWrite-Output $total\n")
	r := check(broken)
	if r.code != 1 || !strings.Contains(r.stdout, broken+`:3:22: syntax error: unexpected ")`) {
		t.Errorf("stray ')': want %s:3:22 and exit 1, got %s", broken, r)
	}

	// The real scripts, each with one mistake a person could make.
	pos := regexp.MustCompile(`(?m)^.+\.ps1:\d+:\d+: syntax error: .+$`)
	mutate := func(script, old, new string) {
		t.Helper()
		src, err := os.ReadFile(filepath.Join(root, "scripts", script))
		if err != nil {
			t.Fatal(err)
		}
		// A Windows checkout may have CRLF line ends.
		src = bytes.ReplaceAll(src, []byte("\r\n"), []byte("\n"))
		if !bytes.Contains(src, []byte(old)) {
			t.Fatalf("%s no longer contains %q; update the test", script, old)
		}
		p := write("broken-"+script, strings.Replace(string(src), old, new, 1))
		r := check(p)
		if r.code != 1 || !pos.MatchString(r.stdout) || !strings.Contains(r.stdout, p+":") {
			t.Errorf("%s with %q replaced by %q: want file:line:col and exit 1, got %s", script, old, new, r)
		}
	}
	mutate("start.ps1", "\n)\n\nSet-StrictMode", "\n\nSet-StrictMode")            // param block not closed
	mutate("start.ps1", "'--dry-run'\n}", "'--dry-run'\n")                        // if block not closed
	mutate("terminal.ps1", `"terminal.ps1: $Message"`, `"terminal.ps1: $Message`) // string not closed
	mutate("terminal.ps1", "@('new-tab', '--title'", "@('new-tab' '--title'")     // comma missing in an array
	mutate("terminal.ps1", "if ($null -ne $why) {", "if ($null -ne $why {")       // condition not closed

	// Non-ASCII text needs a byte order mark for Windows PowerShell 5.1.
	noBOM := write("nobom.ps1", "Write-Output 'caf\u00e9'\n")
	if r := check(noBOM); r.code != 1 || !strings.Contains(r.stdout, noBOM+":1:18: encoding: ") {
		t.Errorf("non-ASCII without BOM: %s", r)
	}
	withBOM := write("bom.ps1", "\ufeffWrite-Output 'caf\u00e9'\n")
	if r := check(withBOM); r.code != 0 {
		t.Errorf("non-ASCII with BOM: %s", r)
	}

	if r := check(); r.code != 2 || !strings.Contains(r.stderr, "usage:") {
		t.Errorf("no files: want usage and exit 2, got %s", r)
	}
	if r := check(filepath.Join(dir, "missing.ps1")); r.code != 2 {
		t.Errorf("missing file: want exit 2, got %s", r)
	}
}

// The PowerShell of README.md and docs/ parses as written, and each call
// of a script of this folder names the script's own parameters.
func TestPowerShellExamplesInDocsParse(t *testing.T) {
	check := psCheck(t)
	root := repoRoot(t)
	call := regexp.MustCompile(`\.\\scripts\\([a-z]+\.ps1)((?:\s+-[A-Za-z]+(?:\s+(?:"[^"]*"|[^\s#-][^\s#]*))?)*)`)
	param := regexp.MustCompile(`-([A-Za-z]+)`)
	dir := t.TempDir()
	var files []string
	for _, b := range shoguntest.DocBlocks(t) {
		if b.Lang != "powershell" {
			continue
		}
		f := filepath.Join(dir, fmt.Sprintf("%s-%d.ps1", strings.NewReplacer("/", "_", ".", "_").Replace(b.File), b.Line))
		// As pasted into a console: no file encoding to get wrong.
		if err := os.WriteFile(f, append([]byte("\ufeff"), b.Text...), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
		for _, m := range call.FindAllStringSubmatch(b.Text, -1) {
			src, err := os.ReadFile(filepath.Join(root, "scripts", m[1]))
			if err != nil {
				t.Errorf("%s: calls scripts\\%s: %v", b.Where(), m[1], err)
				continue
			}
			for _, p := range param.FindAllStringSubmatch(m[2], -1) {
				if !regexp.MustCompile(`(?i)\[(switch|string|int)(\[\])?\]\$` + p[1] + `\b`).Match(src) {
					t.Errorf("%s: scripts\\%s has no parameter -%s", b.Where(), m[1], p[1])
				}
			}
		}
	}
	if len(files) < 3 {
		t.Fatalf("found %d PowerShell examples in the documentation, want README's two and docs/api.md's", len(files))
	}
	if r := check(files...); r.code != 0 {
		t.Fatalf("a PowerShell example does not parse: %s", r)
	}
}
