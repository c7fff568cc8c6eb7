//go:build !windows

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/shogun-dev/shogun/control"
	"github.com/shogun-dev/shogun/queue"
	"github.com/shogun-dev/shogun/shoguntest"
	"github.com/shogun-dev/shogun/skills"
)

// What a fenced example of the documentation is, and so how it is run.
const (
	exShell      = "shell commands"
	exPowerShell = "PowerShell (tools/psparse checks it: scripts.TestPowerShellExamplesInDocsParse)"
	exTour       = "the tour's task (TestTourAsWritten runs it, make test-e2e)"
	exRoles      = "config/roles.yaml"
	exRoleEntry  = "an entry of config/roles.yaml"
	exSettings   = "config/settings.yaml"
	exPolicy     = "config/policy.yaml"
	exCommand    = "a command file"
	exTask       = "a task file"
	exReport     = "a report file"
	exJSON       = "JSON"
	exSkill      = "a skill file"
	exOutput     = "output or a listing, not run"
)

// exampleKind says what a block shows, from its fence and its keys; "" for
// a block no test knows how to run.
func exampleKind(b shoguntest.DocBlock) string {
	switch b.Lang {
	case "sh":
		return exShell
	case "powershell":
		return exPowerShell
	case "json":
		return exJSON
	case "markdown":
		return exSkill
	case "":
		return exOutput
	case "yaml":
	default:
		return ""
	}
	if strings.HasPrefix(b.Text, "  - id:") {
		return exRoleEntry
	}
	var keys map[string]any
	if err := yaml.Unmarshal([]byte(b.Text), &keys); err != nil {
		return ""
	}
	has := func(k string) bool { _, ok := keys[k]; return ok }
	switch {
	case has("roles"):
		return exRoles
	case has("rules"), has("default"), has("role_defaults"):
		return exPolicy
	case has("notify"), has("queue"), has("agent"), has("ui"), has("logs"), has("skills"), has("usage"), has("accounts"):
		return exSettings
	case has("to") && has("title"):
		return exCommand
	case has("task_id") && has("assigned_at"):
		return exTask
	case has("task_id") && has("status"):
		return exReport
	case has("title") && has("body") && len(keys) == 2:
		return exTour
	}
	return ""
}

// A block the tests cannot run would be an example nobody checks: each
// one must be of a kind exampleKind knows.
func TestEveryDocExampleHasACheck(t *testing.T) {
	blocks := shoguntest.DocBlocks(t)
	if len(blocks) < 50 {
		t.Fatalf("found only %d examples in %q: is the extraction broken?", len(blocks), shoguntest.DocFiles(t))
	}
	seen := map[string]int{}
	for _, b := range blocks {
		k := exampleKind(b)
		if k == "" {
			t.Errorf("%s: no test runs this example; give it a fence exampleKind knows (sh, yaml with the keys of a file shogun reads, json, powershell, markdown), or make it output:\n%s", b.Where(), b.Text)
		}
		seen[k]++
		if k == exOutput {
			for _, line := range strings.Split(b.Text, "\n") {
				if f := strings.Fields(line); len(f) > 0 && (f[0] == "shogun" || f[0] == "make" || f[0] == "$") {
					t.Errorf("%s: %q is a command in a block without a language, which no test runs: fence it ```sh", b.Where(), line)
				}
			}
		}
	}
	for _, k := range []string{exShell, exRoles, exRoleEntry, exSettings, exPolicy, exCommand, exTask, exReport, exSkill, exTour} {
		if seen[k] == 0 {
			t.Errorf("no example of %s was found: did its block change shape?", k)
		}
	}
}

// docEnv is a newcomer's environment after `make install`: shogun on PATH,
// and the four CLIs, which this machine need not have, standing in as the
// simulated agent (a true boundary: the real ones are make test-e2e's).
func docEnv(t *testing.T) []string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Symlink(bin, filepath.Join(dir, "shogun")); err != nil {
		t.Fatal(err)
	}
	for _, cli := range []string{"claude", "codex", "gemini", "copilot"} {
		script := fmt.Sprintf("#!/bin/sh\n# stands in for the %s CLI\nexec shogun agent-sim\n", cli)
		if err := os.WriteFile(filepath.Join(dir, cli), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{"PATH=" + dir + string(os.PathListSeparator) + os.Getenv("PATH"), "NO_COLOR=1"}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PATH=") {
			env = append(env, kv)
		}
	}
	return env
}

// run is one line of a shell example, run by sh in dir as a person would
// type it.
func runLine(t *testing.T, env []string, dir, line string) (string, int) {
	t.Helper()
	cmd := exec.Command("sh", "-c", line)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run %q: %v", line, err)
	}
	return string(out), code
}

// docTeam is a workspace with history (the demo's) and its team running.
type docTeam struct {
	ws string
}

func startDocTeam(t *testing.T, env []string, ws string) *docTeam {
	t.Helper()
	cmd := exec.Command(bin, "start", "-w", ws)
	cmd.Env = env
	var out shoguntest.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	waitStatus(t, ws, "every role ready", func(s control.StatusReply) bool {
		for _, r := range s.Roles {
			if r.State != "ready" {
				return false
			}
		}
		return len(s.Roles) > 0
	})
	return &docTeam{ws: ws}
}

// Every example of the documentation, run or read as written: shell
// commands by sh with shogun on PATH (make targets as make -n, make install
// for real into a folder of the test's), configuration by `shogun start
// --dry-run`, a command file dropped into a running team, task and report
// files by the queue's own decoders, a skill by the skill parser.
func TestDocExamplesRunAsWritten(t *testing.T) {
	env := docEnv(t)
	root := shoguntest.ModuleRoot(t)

	// The team the examples of a running workspace are run against: the
	// demo's workspace, with its history, started again.
	// Its path is short enough for the socket to be in it.
	short, err := os.MkdirTemp("", "doc")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(short) })
	demoWS := filepath.Join(short, "team")
	if out, code := runLine(t, env, t.TempDir(), "shogun demo --dir '"+demoWS+"'"); code != 0 {
		t.Fatalf("shogun demo: exit %d\n%s", code, out)
	}
	team := startDocTeam(t, env, demoWS)
	teamWS := func(*testing.T) string { return team.ws }

	for _, b := range shoguntest.DocBlocks(t) {
		kind := exampleKind(b)
		t.Run(fmt.Sprintf("%s:%d-%s", b.File, b.Line, b.Lang), func(t *testing.T) {
			switch kind {
			case exShell:
				var fresh string // the folder the quick start's lines share
				freshDir := func() string {
					if fresh == "" {
						fresh = t.TempDir()
					}
					return fresh
				}
				for _, line := range strings.Split(strings.TrimSpace(b.Text), "\n") {
					runShellExample(t, env, root, teamWS, freshDir, line)
				}
			case exRoles, exRoleEntry, exSettings, exPolicy:
				checkConfigExample(t, env, kind, b.Text)
			case exCommand:
				checkCommandExample(t, teamWS(t), b.Text)
			case exTask:
				var task queue.Task
				dec := yaml.NewDecoder(strings.NewReader(b.Text))
				dec.KnownFields(true)
				if err := dec.Decode(&task); err != nil {
					t.Fatalf("the task file does not read as one: %v\n%s", err, b.Text)
				}
				if err := task.Validate(); err != nil {
					t.Fatalf("the task file is not one shogun writes: %v", err)
				}
			case exReport:
				if _, err := queue.DecodeReport("example.yaml", []byte(b.Text), queue.Limits{}); err != nil {
					t.Fatalf("the queue refuses the report as written: %v\n%s", err, b.Text)
				}
			case exSkill:
				doc, err := skills.Parse([]byte(b.Text))
				if err == nil {
					err = doc.Validate()
				}
				if err != nil {
					t.Fatalf("the skill is not one shogun would export: %v", err)
				}
			case exJSON:
				if !json.Valid([]byte(b.Text)) {
					t.Fatalf("not valid JSON:\n%s", b.Text)
				}
			default:
				t.Skipf("%s", kind)
			}
		})
	}
}

var makeTarget = regexp.MustCompile(`^make ([a-z0-9-]+)\s*(#.*)?$`)

// runShellExample runs one line of a shell example where it belongs: make
// in the repository, shogun init in an empty folder, the rest in the team's
// workspace.
func runShellExample(t *testing.T, env []string, root string, teamWS func(*testing.T) string, freshDir func() string, line string) {
	t.Helper()
	fields := strings.Fields(line)
	switch {
	case len(fields) == 0:
	case fields[0] == "make":
		m := makeTarget.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("%q: want make TARGET [# comment]", line)
		}
		if m[1] != "install" {
			// Recipes are printed, not run: make test here would run this test.
			if out, code := runLine(t, env, root, "make -n "+m[1]); code != 0 {
				t.Errorf("%q: make -n %s: exit %d\n%s", line, m[1], code, out)
			}
			return
		}
		gobin := t.TempDir()
		out, code := runLine(t, append(env, "GOBIN="+gobin), root, line)
		if code != 0 || !strings.Contains(out, "installed "+filepath.Join(gobin, "shogun")) || !strings.Contains(out, "is not on PATH") {
			t.Errorf("%q: exit %d, want it to say where shogun went and how to put it on PATH:\n%s", line, code, out)
		}
		if fi, err := os.Stat(filepath.Join(gobin, "shogun")); err != nil || fi.Mode()&0o111 == 0 {
			t.Errorf("%q: no executable shogun in GOBIN: %v", line, err)
		}
	case strings.HasPrefix(line, "go run ./tools/realcli tour"):
		t.Logf("%q: TestTourAsWritten runs it (make test-e2e)", line)
	case fields[0] == "curl" && strings.HasSuffix(line, "/scripts/install.sh | sh"):
		// Fetches the published release; scripts.TestInstallSh runs this
		// script against the archives of make release instead.
		if _, err := os.Stat(filepath.Join(root, "scripts", "install.sh")); err != nil {
			t.Errorf("%q: %v", line, err)
		}
	case fields[0] == "curl" && strings.Contains(line, "shogun.sock.path"):
		ws := longPathTeam(t, env)
		if out, code := runLine(t, env, ws, line); code != 0 || !strings.Contains(out, `"roles"`) {
			t.Errorf("%q in a workspace whose path is too long for a socket: exit %d\n%s", line, code, out)
		}
	case fields[0] == "curl":
		ws := teamWS(t)
		if out, code := runLine(t, env, ws, line); code != 0 || !strings.Contains(out, `"roles"`) {
			t.Errorf("%q in the team's workspace: exit %d\n%s", line, code, out)
		}
	case fields[0] == "shogun" && len(fields) > 1 && fields[1] == "init":
		// The quick start: an empty folder becomes a workspace.
		freshExample(t, env, freshDir(), line)
	case fields[0] == "shogun" && len(fields) > 1 && fields[1] == "start":
		// Continues the quick start in the folder init made.
		freshExample(t, env, freshDir(), line)
	case fields[0] == "shogun":
		if out, code := runLine(t, env, teamWS(t), line); code != 0 {
			t.Errorf("%q in the team's workspace: exit %d\n%s", line, code, out)
		}
	default:
		t.Errorf("%q: no rule runs this command; add one to runShellExample", line)
	}
}

// freshExample runs a line of the quick start in dir, a folder that was
// empty before its first line; `shogun start` is stopped with Ctrl-C once
// it serves.
func freshExample(t *testing.T, env []string, dir, line string) {
	t.Helper()
	f := strings.Fields(line)
	if len(f) == 2 && f[1] == "start" || strings.HasPrefix(line, "shogun start ") && !strings.Contains(line, "--dry-run") {
		// Runs until Ctrl-C: check it serves, then press it.
		// Ctrl-C in a terminal signals the foreground process group;
		// exec stands for the interactive shell, which would live on.
		cmd := exec.Command("sh", "-c", "exec "+line)
		cmd.Dir, cmd.Env = dir, env
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.WaitDelay = 5 * time.Second
		var out shoguntest.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
		waitStatus(t, dir, "the supervisor answers", func(control.StatusReply) bool { return true })
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
		if err := waitExit(cmd, 30*time.Second); err != nil {
			t.Errorf("%q then Ctrl-C: %v\n%s", line, err, out.String())
		}
		if !strings.Contains(out.String(), "supervisor stopped") {
			t.Errorf("%q then Ctrl-C: no \"supervisor stopped\":\n%s", line, out.String())
		}
		return
	}
	if out, code := runLine(t, env, dir, line); code != 0 {
		t.Errorf("%q in a new folder: exit %d\n%s", line, code, out)
	}
}

// waitExit waits for cmd and says how it ended when not with exit 0.
func waitExit(cmd *exec.Cmd, within time.Duration) error {
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(within):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		return fmt.Errorf("still running after %s", within)
	}
}

// longPathTeam is a demo team in a workspace whose path does not fit in a
// socket address, so its socket lives elsewhere and is named in
// runtime/state/shogun.sock.path.
func longPathTeam(t *testing.T, env []string) string {
	t.Helper()
	ws := filepath.Join(t.TempDir(), strings.Repeat("a-rather-long-folder-name-", 5))
	if out, code := runLine(t, env, t.TempDir(), "shogun init --demo '"+ws+"'"); code != 0 {
		t.Fatalf("init --demo: %s", out)
	}
	startDocTeam(t, env, ws)
	return ws
}

// checkConfigExample puts a configuration example into a new workspace
// (a git repository, for a role's worktree) and asks `shogun start
// --dry-run` about it.
func checkConfigExample(t *testing.T, env []string, kind, text string) {
	t.Helper()
	ws := t.TempDir()
	shoguntest.GitRepo(t, ws, map[string]string{"README.md": "an app\n"})
	if out, code := runLine(t, env, ws, "shogun init"); code != 0 {
		t.Fatalf("shogun init: %s", out)
	}
	file := "config/settings.yaml"
	switch kind {
	case exPolicy:
		file = "config/policy.yaml"
	case exRoleEntry:
		text = "roles:\n" + text
		fallthrough
	case exRoles:
		file = "config/roles.yaml"
	}
	if err := os.WriteFile(filepath.Join(ws, file), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, code := runLine(t, env, ws, "shogun start --dry-run"); code != 0 {
		t.Errorf("as %s, shogun start --dry-run refuses it: exit %d\n%s\n%s", file, code, out, text)
	}
}

// checkCommandExample drops the command file into the team's queue as a
// person would (written elsewhere, then renamed in) and waits for its task.
func checkCommandExample(t *testing.T, ws, text string) {
	t.Helper()
	var c struct {
		To    string `yaml:"to"`
		Title string `yaml:"title"`
	}
	if err := yaml.Unmarshal([]byte(text), &c); err != nil {
		t.Fatal(err)
	}
	commands := filepath.Join(ws, "runtime", "queue", "commands")
	tmp := filepath.Join(ws, "runtime", "example.yaml.tmp")
	if err := os.WriteFile(tmp, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(commands, "example.yaml")); err != nil {
		t.Fatal(err)
	}
	failed := filepath.Join(ws, "runtime", "queue", "failed")
	shoguntest.WaitFor(t, "the command example's task", 20*time.Second, func() bool {
		if fs, _ := os.ReadDir(failed); len(fs) > 0 {
			var b bytes.Buffer
			for _, f := range fs {
				r, _ := os.ReadFile(filepath.Join(failed, f.Name()))
				fmt.Fprintf(&b, "%s:\n%s\n", f.Name(), r)
			}
			t.Fatalf("the example was refused:\n%s", b.String())
		}
		for _, task := range tasksJSON(t, ws) {
			if task.Title == c.Title && task.Role == c.To {
				return true
			}
		}
		return false
	})
}

// A command named in the prose (`shogun tasks --search WORDS`) is one
// shogun has, and each flag it shows is in that command's --help. A span
// may name several commands: `shogun status | roles | reload`.
func TestDocCommandsInProseExist(t *testing.T) {
	root := shoguntest.ModuleRoot(t)
	span := regexp.MustCompile("`(shogun [^`]+)`")
	flag := regexp.MustCompile(`(?:^|[\s\[(|])(--?[a-z][a-z-]*)`)
	helps := map[string]string{}
	help := func(path string) (string, bool) {
		if h, ok := helps[path]; ok {
			return h, h != ""
		}
		out, errOut, code := shogun(t, append(strings.Fields(path), "--help")...)
		if code != 0 || !strings.Contains(out, "USAGE:") {
			t.Logf("shogun %s --help: exit %d: %s", path, code, errOut)
			out = ""
		}
		helps[path] = out
		return out, out != ""
	}
	checked := 0
	for _, file := range shoguntest.DocFiles(t) {
		b, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			t.Fatal(err)
		}
		for n, line := range strings.Split(string(b), "\n") {
			for _, m := range span.FindAllStringSubmatch(line, -1) {
				where := fmt.Sprintf("%s:%d: `%s`", file, n+1, m[1])
				parent := ""
				for i, seg := range topLevel(strings.ReplaceAll(strings.TrimPrefix(m[1], "shogun "), `\|`, "|")) {
					words := commandWords(seg)
					if len(words) == 0 {
						continue
					}
					if i == 0 && len(words) > 1 {
						parent = words[0] + " "
					}
					path := strings.Join(words, " ")
					if i > 0 {
						path = parent + path
					}
					h, ok := help(path)
					if !ok && i > 0 {
						h, ok = help(strings.Join(words, " ")) // a sibling of the first command
					}
					if !ok {
						t.Errorf("%s: shogun has no command %q", where, path)
						continue
					}
					checked++
					for _, f := range flag.FindAllStringSubmatch(seg, -1) {
						if !regexp.MustCompile(`(^|[\s,])` + regexp.QuoteMeta(f[1]) + `([\s,=]|$)`).MatchString(h) {
							t.Errorf("%s: shogun %s has no flag %s", where, path, f[1])
						}
					}
				}
			}
		}
	}
	if checked < 50 {
		t.Errorf("only %d commands were found in the prose: is the extraction broken?", checked)
	}
}

// topLevel splits s at the " | " that stand outside brackets and
// parentheses.
func topLevel(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, r := range s {
		switch r {
		case '[', '(':
			depth++
		case ']', ')':
			depth--
		case '|':
			// "status | roles" names two commands; "yes|no" is one argument.
			if depth == 0 && i > 0 && i+1 < len(s) && s[i-1] == ' ' && s[i+1] == ' ' {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

// commandWords are the command names a segment starts with: the lowercase
// words before its first flag, argument or placeholder.
func commandWords(seg string) []string {
	var words []string
	for _, w := range strings.Fields(seg) {
		if !regexp.MustCompile(`^[a-z][a-z-]*$`).MatchString(w) {
			break
		}
		words = append(words, w)
	}
	return words
}
