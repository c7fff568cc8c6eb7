//go:build !windows

package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shogun-dev/shogun/shoguntest"
)

// A mistyped command or flag is one line on stderr naming it and the
// nearest real one, nothing on stdout, exit 2; no help dump.
func TestTyposNameTheNearestCommandOrFlag(t *testing.T) {
	ws := t.TempDir()
	if _, errOut, code := shogun(t, "init", ws); code != 0 {
		t.Fatalf("init: %s", errOut)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"statsu"}, `shogun: unknown command "statsu"; did you mean "status"?`},
		{[]string{"help", "statsu"}, `shogun: unknown command "statsu"; did you mean "status"?`},
		{[]string{"skills", "scna"}, `shogun: unknown command "scna" for shogun skills; did you mean "scan"?`},
		{[]string{"send", "-w", ws, "--titel", "x", "--to", "karo", "--body", "b"}, `shogun: unknown flag --titel for shogun send; did you mean --title?`},
		{[]string{"--quite", "status"}, `shogun: unknown flag --quite for shogun; did you mean --quiet?`},
		{[]string{"logs", "-w", ws, "-n"}, "shogun: flag needs an argument: -n for shogun logs; see `shogun logs --help`"},
		{[]string{"screen", "-w", ws}, "shogun: screen needs a role id: shogun screen ROLE"},
		{[]string{"send", "-w", ws, "--title", "x", "--to", "karo"}, "shogun: a task needs a body: --body TEXT or --body-file FILE"},
	} {
		out, errOut, code := shogun(t, c.args...)
		if code != 2 || out != "" || errOut != c.want+"\n" {
			t.Errorf("shogun %s: exit %d, stdout %q, stderr %q; want exit 2, no stdout, one line %q",
				strings.Join(c.args, " "), code, out, errOut, c.want)
		}
	}
}

// `shogun help`, `shogun help COMMAND` and `shogun COMMAND --help` print the
// help; the app's help gives the exit codes every command uses.
func TestHelpNamesCommandsAndExitCodes(t *testing.T) {
	out, errOut, code := shogun(t, "help")
	if code != 0 || !strings.Contains(out, "COMMANDS:") || !strings.Contains(out, "version") {
		t.Fatalf("shogun help: exit %d, stderr %q:\n%s", code, errOut, out)
	}
	for _, want := range []string{"EXIT CODES:", "2  usage", "3  no supervisor runs"} {
		if !strings.Contains(out, want) {
			t.Errorf("shogun help does not say %q:\n%s", want, out)
		}
	}
	if top, _, _ := shogun(t, "--help"); top != out {
		t.Errorf("shogun --help differs from shogun help:\n%s", top)
	}
	for _, args := range [][]string{{"help", "start"}, {"start", "--help"}} {
		out, errOut, code := shogun(t, args...)
		if code != 0 || !strings.Contains(out, "shogun start - run every enabled role") || !strings.Contains(out, "--dry-run") {
			t.Errorf("shogun %s: exit %d, stderr %q:\n%s", strings.Join(args, " "), code, errOut, out)
		}
	}
	if out, _, code := shogun(t, "help", "skills", "scan"); code != 0 || !strings.Contains(out, "shogun skills scan - ") {
		t.Errorf("shogun help skills scan: exit %d:\n%s", code, out)
	}
}

// A binary built as the Makefile builds it says its version, commit and
// build date; what -ldflags leaves out comes from the vcs information go
// build records in a git checkout.
func TestVersionSaysVersionCommitAndDate(t *testing.T) {
	root := shoguntest.ModuleRoot(t)
	stamped := filepath.Join(t.TempDir(), "shogun")
	build := exec.Command("go", "build", "-o", stamped, "-ldflags",
		"-X main.version=v9.8.7 -X main.commit=0123456789ab -X main.buildDate=2026-11-28T10:00:00Z", "./cmd/shogun")
	build.Dir = root
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	want := "shogun version v9.8.7 (commit 0123456789ab, built 2026-11-28T10:00:00Z)\n"
	for _, arg := range []string{"version", "--version"} {
		out, err := exec.Command(stamped, arg).Output()
		if err != nil || string(out) != want {
			t.Errorf("shogun %s: %v, %q; want %q", arg, err, out, want)
		}
	}

	head, err := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("not a git checkout (%v): no vcs information to fall back on", err)
	}
	plain := filepath.Join(t.TempDir(), "shogun")
	build = exec.Command("go", "build", "-buildvcs=true", "-o", plain, "-ldflags", "-X main.version=v9.8.7", "./cmd/shogun")
	build.Dir = root
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build -buildvcs=true: %v\n%s", err, b)
	}
	if info, _ := exec.Command("go", "version", "-m", plain).Output(); !strings.Contains(string(info), "vcs.revision") {
		t.Skip("go build recorded no vcs information here (a git worktree, whose .git is a file, or no git): nothing to fall back on")
	}
	out, err := exec.Command(plain, "version").Output()
	if prefix := "shogun version v9.8.7 (commit " + string(head[:12]); err != nil || !strings.HasPrefix(string(out), prefix) || strings.Contains(string(out), "unknown") {
		t.Errorf("shogun version without -X main.commit: %v, %q; want %q… and a commit date", err, out, prefix)
	}
}

// Every command that needs the supervisor exits 3 when none runs, with the
// one line that says how to start it.
func TestNoSupervisorExits3Everywhere(t *testing.T) {
	ws := t.TempDir()
	if _, errOut, code := shogun(t, "init", ws); code != 0 {
		t.Fatalf("init: %s", errOut)
	}
	for _, args := range [][]string{
		{"status"}, {"screen", "karo"}, {"type", "karo", "hello"}, {"restart", "karo"}, {"stop"}, {"reload"},
		{"ui", "--no-open"}, {"retry", "t-1"}, {"cancel", "t-1"}, {"questions"}, {"approvals", "--pending"},
	} {
		_, errOut, code := shogun(t, append(args, "-w", ws)...)
		if code != 3 || !strings.Contains(errOut, "no supervisor is running for this workspace") || strings.Count(errOut, "\n") != 1 {
			t.Errorf("shogun %s without a supervisor: exit %d, stderr %q; want exit 3 and one line", strings.Join(args, " "), code, errOut)
		}
	}
}
