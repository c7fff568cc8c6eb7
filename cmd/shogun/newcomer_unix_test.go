//go:build !windows

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/cookiejar"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/control"
	"github.com/shogun-dev/shogun/shoguntest"
	"github.com/shogun-dev/shogun/store"
	"github.com/shogun-dev/shogun/workspace"
)

// fakeCLIs puts programs with these names, which exit at once, in a folder
// that becomes the whole PATH for the rest of the test (the binary under
// test is run by its path); with no names, PATH holds no program at all.
func fakeCLIs(t *testing.T, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", dir)
	return dir
}

// The default team on a machine with neither Codex nor Claude Code: the dry
// run looks each program up as start would, names every role that cannot
// start with its fix and the way to simulated agents, and fails.
func TestDryRunNamesEveryMissingProgram(t *testing.T) {
	ws := t.TempDir()
	shogun(t, "init", ws)
	fakeCLIs(t, "codex") // Codex is installed, Claude Code is not
	out, errOut, code := shogun(t, "start", "-w", ws, "--dry-run")
	if code == 0 {
		t.Fatalf("dry run with missing programs succeeded:\n%s", out)
	}
	if want := "configuration OK, but 4 of 5 role(s) cannot start: their program is not found"; !strings.Contains(out, want) {
		t.Errorf("dry run header lacks %q:\n%s", want, out)
	}
	for _, id := range []string{"karo", "ashigaru1", "ashigaru2", "ashigaru3"} {
		want := fmt.Sprintf("  %s: exec: \"claude\": executable file not found in $PATH: install it (npm install -g @anthropic-ai/claude-code) or change command.exec in config/roles.yaml\n", id)
		if !strings.Contains(errOut, want) {
			t.Errorf("dry run error lacks %q:\n%s", want, errOut)
		}
	}
	if strings.Contains(errOut, "  shogun: ") {
		t.Errorf("dry run names codex as missing although it is on PATH:\n%s", errOut)
	}
	if want := bin + " init --demo --force"; !strings.Contains(errOut, want) {
		t.Errorf("dry run error does not offer simulated agents (%q), with the binary's path as it is not on PATH:\n%s", want, errOut)
	}
	// Installed (this binary is the shogun in PATH): the hint says shogun.
	installed := fakeCLIs(t, "codex")
	if err := os.Symlink(bin, filepath.Join(installed, "shogun")); err != nil {
		t.Fatal(err)
	}
	if _, errOut, _ := shogun(t, "start", "-w", ws, "--dry-run"); !strings.Contains(errOut, "agents that needs no CLI: shogun init --demo --force") {
		t.Errorf("with shogun on PATH, the hint does not say plain shogun:\n%s", errOut)
	}

	// A program named through a ${VAR} is looked up as expanded.
	roles := filepath.Join(ws, "config", "roles.yaml")
	b, _ := os.ReadFile(roles)
	if err := os.WriteFile(roles, []byte(strings.ReplaceAll(string(b), `exec: "claude"`, `exec: "${SHOGUN_TEST_CLAUDE}"`)), 0o644); err != nil {
		t.Fatal(err)
	}
	claude := filepath.Join(fakeCLIs(t, "codex"), "claude-2")
	if err := os.WriteFile(claude, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SHOGUN_TEST_CLAUDE", claude)
	if out, errOut, code := shogun(t, "start", "-w", ws, "--dry-run"); code != 0 || !strings.Contains(out, "configuration OK, 5 role(s) would start") {
		t.Errorf("dry run with ${SHOGUN_TEST_CLAUDE} set to a program: exit %d\n%s%s", code, out, errOut)
	}
}

// A role whose program is missing is fatal at its first try, and every
// place that reports it says the same thing: which program, and the fix,
// not a restart count. start says it once up front; status (table and
// JSON), the notification and `shogun logs ROLE` give the one reason.
func TestMissingProgramIsFatalAtOnceEverywhere(t *testing.T) {
	notes := filepath.Join(t.TempDir(), "notes.jsonl")
	ws := teamWorkspace(t, simEntry("ashigaru1"),
		"  - id: karo\n    prompt_path: roles/karo.md\n    command: {exec: shogun-test-no-such-cli}\n    cli: claude\n")
	settings := filepath.Join(ws, "config", "settings.yaml")
	b, _ := os.ReadFile(settings)
	b = append(b, fmt.Sprintf("\nnotify:\n  command: [\"sh\", \"-c\", \"cat >> '%s'; echo >> '%s'\"]\n", notes, notes)...)
	if err := os.WriteFile(settings, b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut := startBackground(t, ws)
	st := waitStatus(t, ws, "karo fatal, ashigaru1 ready", func(s control.StatusReply) bool {
		return stateOf(s, "karo") == "fatal" && stateOf(s, "ashigaru1") == "ready"
	})
	const reason = `cannot start: ptyhost: start "shogun-test-no-such-cli": exec: "shogun-test-no-such-cli": executable file not found in $PATH; ` +
		"not restarted, as a missing program does not appear by itself: install it (npm install -g @anthropic-ai/claude-code) or change command.exec in config/roles.yaml"
	for _, r := range st.Roles {
		if r.ID == "karo" && (r.LastError != reason || r.Restarts != 0) {
			t.Errorf("status --json: karo restarts %d, last error %q; want 0, %q", r.Restarts, r.LastError, reason)
		}
	}
	out, _, _ := shogun(t, "status", "-w", ws)
	// ashigaru1 may be busy with its startup prompt by now.
	if !regexp.MustCompile(`; 2 roles: 1 (ready|busy), 1 fatal; `).MatchString(out) {
		t.Errorf("status does not count the roles by state:\n%s", out)
	}
	if want := "attention: role karo is fatal (" + reason + "): fix it and run shogun restart karo"; !strings.Contains(out, want) {
		t.Errorf("status lacks %q:\n%s", want, out)
	}
	shoguntest.WaitFor(t, "the fatal notification", 15*time.Second, func() bool {
		b, _ := os.ReadFile(notes)
		return strings.Contains(string(b), `"kind":"fatal"`)
	})
	b, _ = os.ReadFile(notes)
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var ev struct{ Kind, Message string }
		if json.Unmarshal([]byte(l), &ev) == nil && ev.Kind == "fatal" && ev.Message != reason {
			t.Errorf("the fatal notification says %q, want %q", ev.Message, reason)
		}
	}
	_, logErr, code := shogun(t, "logs", "karo", "-w", ws)
	if want := "karo's program never started; the status says fatal: " + reason; code == 0 || !strings.Contains(logErr, want) {
		t.Errorf("logs karo: exit %d, %q; want %q", code, logErr, want)
	}
	time.Sleep(500 * time.Millisecond) // room for restarts, were there any
	log := errOut.String()
	if want := "shogun: 1 of 2 role(s) cannot start, their program is not found (shogun-test-no-such-cli): they go fatal at once"; !strings.Contains(log, want) {
		t.Errorf("start did not say up front %q:\n%s", want, log)
	}
	if n := strings.Count(log, "karo state starting"); n != 1 || strings.Contains(log, "karo state backoff") {
		t.Errorf("the missing program was started %d times (want once, no backoff):\n%s", n, log)
	}
}

// The demo in a temporary folder leaves nothing behind there and prints
// no link to a console that is about to stop; it says how to keep one.
func TestDemoRemovesItsTemporaryWorkspace(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	out, errOut, code := shogun(t, "demo", "--linger", "100ms")
	if code != 0 {
		t.Fatalf("demo exit %d\n%s\n%s", code, out, errOut)
	}
	// (The folder of sockets for long workspace paths, shogun-UID, is
	// shared by every workspace and stays.)
	if left, _ := filepath.Glob(filepath.Join(tmp, "shogun-demo-*")); len(left) != 0 {
		t.Errorf("the demo left %v in the temporary folder", left)
	}
	for _, bad := range []string{"web console:", "http://", "is not a task file", "try:"} {
		if strings.Contains(out+errOut, bad) {
			t.Errorf("the demo printed %q:\n%s\n%s", bad, out, errOut)
		}
	}
	if want := bin + " demo --keep"; !strings.Contains(out, "workspace is removed") || !strings.Contains(out, want) {
		t.Errorf("the demo does not say its workspace is gone and how to keep one (%q):\n%s", want, out)
	}
}

// With --keep the finished team stays up, with a console link that works,
// until Enter; then it stops cleanly and the workspace stays.
func TestDemoKeepWaitsForEnter(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	// --port names a port another program holds: the console takes a
	// free one, says which, and shogun ui finds it there.
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	port := taken.Addr().(*net.TCPAddr).Port
	cmd := exec.Command(bin, "demo", "--keep", "--port", strconv.Itoa(port))
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	enter, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out := &shoguntest.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	shoguntest.WaitFor(t, "the demo waiting for Enter", 90*time.Second, func() bool { return strings.Contains(out.String(), "Press Enter (or Ctrl-C) here to stop it") })
	if !strings.Contains(out.String(), "all 5 tasks closed; the team is kept running (--keep)") || strings.Contains(out.String(), "stopping in") {
		t.Errorf("demo --keep does not say the team is kept:\n%s", out)
	}
	if want := fmt.Sprintf("ui.port %d is in use by another program, so it took port ", port); !strings.Contains(out.String(), want) {
		t.Errorf("demo --keep --port %d (taken) does not say %q:\n%s", port, want, out)
	}
	made, _ := filepath.Glob(filepath.Join(tmp, "shogun-demo-*"))
	if len(made) != 1 {
		t.Fatalf("want the demo's workspace in %s, got %v", tmp, made)
	}
	ws := made[0]
	if _, _, code := shogun(t, "status", "-w", ws); code != 0 {
		t.Errorf("the kept team does not answer status (exit %d)", code)
	}
	// The console is named without its login token; shogun ui makes a
	// one-time link that logs a browser in.
	addr := regexp.MustCompile(`(?m)^web console: (http://\S+) \(log in with .* ui --workspace `).FindAllStringSubmatch(out.String(), -1)
	if len(addr) == 0 || strings.Contains(addr[0][1], fmt.Sprintf(":%d/", port)) {
		t.Errorf("no console address, or on the taken port %d:\n%s", port, out)
	} else {
		if strings.Contains(addr[0][1], "token") {
			t.Errorf("the demo printed a console address with a token: %s", addr[0][1])
		}
		link, errOut, code := shogun(t, "ui", "--no-open", "-w", ws)
		if code != 0 || !strings.HasPrefix(link, strings.TrimSuffix(addr[0][1], "/")+"/login?") {
			t.Fatalf("shogun ui --no-open: exit %d, %q: %s; want a link to %s", code, link, errOut, addr[0][1])
		}
		if resp, err := browserClient(t).Get(strings.TrimSpace(link)); err != nil || resp.StatusCode != http.StatusOK {
			t.Errorf("the login link of shogun ui does not answer: %v %v", resp, err)
		} else {
			resp.Body.Close()
		}
	}
	fmt.Fprintln(enter)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("demo --keep after Enter: %v\n%s", err, out)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("demo --keep did not stop after Enter:\n%s", out)
	}
	if !strings.Contains(out.String(), "supervisor stopped") {
		t.Errorf("no clean stop after Enter:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(ws, "data", "shogun.db")); err != nil {
		t.Errorf("--keep removed the workspace: %v", err)
	}
}

// browserClient keeps cookies, as a browser does: the console's login link
// sets the session cookie and redirects.
func browserClient(t *testing.T) *http.Client {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar, Timeout: 10 * time.Second}
}

// `shogun start 2>&1 | tee log` and Ctrl-C: tee dies with the interrupt
// and the supervisor's next lines go to a closed pipe. It must not die of
// SIGPIPE there: it stops its roles, says so in its own log, and the
// history records the run as stopped, not crashed.
func TestStartSurvivesItsOutputPipeClosing(t *testing.T) {
	sigs := filepath.Join(t.TempDir(), "sigignore")
	ws := teamWorkspace(t, simEntry("ashigaru1"),
		shEntry("shell", fmt.Sprintf("grep SigIgn /proc/$$/status > %q; exec sleep 60", sigs), ""))
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "start", "-w", ws)
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	waitStatus(t, ws, "ashigaru1 ready", func(s control.StatusReply) bool { return stateOf(s, "ashigaru1") == "ready" })
	// The roles' programs get SIGPIPE as usual (Linux shows what a process
	// ignores): what the supervisor does about it is its own.
	if b := waitFile(t, sigs, 10*time.Second); runtime.GOOS == "linux" {
		var mask uint64
		if _, err := fmt.Sscanf(strings.TrimSpace(string(b)), "SigIgn: %x", &mask); err != nil || mask&(1<<(13-1)) != 0 {
			t.Errorf("a role's program starts with SIGPIPE ignored (%q, %v)", b, err)
		}
	}
	r.Close() // tee is gone
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("start with its output pipe closed ended with %v, want a clean exit", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("start did not stop after Ctrl-C")
	}
	log, _ := os.ReadFile(workspace.New(ws).SupervisorLog())
	if !strings.Contains(string(log), "supervisor stopped (received interrupt)") {
		t.Errorf("shogun.log does not say the supervisor stopped:\n%s", lastLines(string(log), 5))
	}
	st, err := store.Open(filepath.Join(ws, "data", "shogun.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, err := st.Runs(5)
	if err != nil || len(runs) != 1 || runs[0].Status != store.RunStopped {
		t.Errorf("the history's runs: %+v (%v); want one, stopped", runs, err)
	}
}

// shogunIn runs the binary in dir with extra environment variables and
// returns stdout, stderr and the exit code.
func shogunIn(t *testing.T, dir string, env []string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "NO_COLOR=1"), env...)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return out.String(), errOut.String(), ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run shogun %v in %s: %v", args, dir, err)
	}
	return out.String(), errOut.String(), 0
}

// Every command finds its workspace from a folder inside it, as git finds
// a repository, unless --workspace or SHOGUN_WORKSPACE_DIR says otherwise;
// init makes one where it is asked, not above. Outside any workspace a
// command says so, and a read-only one never says "nothing started".
func TestCommandsFindTheWorkspaceAbove(t *testing.T) {
	ws := teamWorkspace(t, simEntry("ashigaru1"))
	sub := filepath.Join(ws, "config", "deeper")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	startBackground(t, ws)
	waitStatus(t, ws, "ashigaru1 ready", func(s control.StatusReply) bool { return stateOf(s, "ashigaru1") == "ready" })

	if out, errOut, code := shogunIn(t, sub, nil, "status"); code != 0 || !regexp.MustCompile(`; 1 role: 1 (ready|busy); `).MatchString(out) {
		t.Errorf("status from %s: exit %d\n%s%s", sub, code, out, errOut)
	}
	if out, errOut, code := shogunIn(t, sub, nil, "send", "--to", "ashigaru1", "--title", "From below", "--body", "b"); code != 0 {
		t.Errorf("send from %s: exit %d\n%s%s", sub, code, out, errOut)
	}
	shoguntest.WaitFor(t, "the task sent from below in the history", 30*time.Second, func() bool {
		out, _, code := shogunIn(t, sub, nil, "tasks")
		return code == 0 && strings.Contains(out, "From below")
	})

	// SHOGUN_WORKSPACE_DIR and --workspace win over the folder's workspace.
	other := teamWorkspace(t, simEntry("ashigaru9"))
	_, errOut, code := shogunIn(t, sub, []string{"SHOGUN_WORKSPACE_DIR=" + other}, "status")
	if code != 3 || !strings.Contains(errOut, other) {
		t.Errorf("status with SHOGUN_WORKSPACE_DIR=%s from %s: exit %d, %q; want the other workspace's (none running, exit 3)", other, sub, code, errOut)
	}
	if _, _, code := shogunIn(t, sub, nil, "status", "-w", other); code != 3 {
		t.Errorf("status -w %s from inside another workspace: exit %d, want 3", other, code)
	}

	// Outside any workspace: one line saying so, for a read-only command too.
	nowhere := t.TempDir()
	for _, args := range [][]string{{"status"}, {"tasks"}, {"roles"}} {
		_, errOut, code := shogunIn(t, nowhere, nil, args...)
		if code == 0 || !strings.Contains(errOut, "no shogun workspace here") || !strings.Contains(errOut, "init") || strings.Contains(errOut, "nothing started") {
			t.Errorf("%v outside a workspace: exit %d, %q", args, code, errOut)
		}
	}
	// A read-only command on a broken configuration does not claim that
	// nothing started: it starts nothing.
	broken := teamWorkspace(t, "  - id: Bad\n")
	if _, errOut, _ := shogunIn(t, broken, nil, "tasks"); strings.Contains(errOut, "nothing started") || !strings.Contains(errOut, "configuration has errors") {
		t.Errorf("tasks on a broken configuration: %q", errOut)
	}

	// init makes a workspace in the current folder, even inside another.
	if _, errOut, code := shogunIn(t, sub, nil, "init", "--demo"); code != 0 {
		t.Fatalf("init in %s: exit %d %s", sub, code, errOut)
	}
	if _, err := os.Stat(filepath.Join(sub, "config", "roles.yaml")); err != nil {
		t.Errorf("init did not make its workspace in the current folder: %v", err)
	}
}

// send says where its command went: a missing flag in one line; without a
// supervisor, that it is queued at the next start; with one, the task id it
// became. tasks takes the command id send printed. attach names its detach
// key, and stop says what it waits for.
func TestSendSaysWhereItsCommandWent(t *testing.T) {
	ws := teamWorkspace(t, simEntry("ashigaru1"))
	out, errOut, code := shogun(t, "send", "-w", ws, "--to", "ashigaru1", "--body", "no title")
	if want := "shogun: send needs a one-line title: --title T (shogun send --to ROLE --title T --body B)\n"; code != 2 || out != "" || errOut != want {
		t.Errorf("send without --title: exit %d, stdout %q, stderr %q; want one line %q", code, out, errOut, want)
	}

	out, errOut, code = shogun(t, "send", "-w", ws, "--to", "ashigaru1", "--title", "Before the start", "--body", "b")
	early := strings.TrimSpace(out)
	if want := "no supervisor is running for this workspace: command " + early + " becomes a task for ashigaru1 at the next `shogun start`"; code != 0 || !strings.Contains(errOut, want) {
		t.Errorf("send without a supervisor: exit %d, %q; want %q", code, errOut, want)
	}

	startBackground(t, ws)
	waitStatus(t, ws, "ashigaru1 ready", func(s control.StatusReply) bool { return stateOf(s, "ashigaru1") == "ready" })
	shoguntest.WaitFor(t, "the early command in the history", 30*time.Second, func() bool {
		out, _, code := shogun(t, "tasks", early, "-w", ws)
		return code == 0 && strings.Contains(out, "command      "+early) && strings.Contains(out, "Before the start")
	})

	out, errOut, code = shogun(t, "send", "-w", ws, "--to", "ashigaru1", "--title", "While it runs", "--body", "b")
	cmdID := strings.TrimSpace(out)
	m := regexp.MustCompile(`shogun: queued as task (t-\S+) for ashigaru1 \(shogun tasks (t-\S+)\)`).FindStringSubmatch(errOut)
	if code != 0 || m == nil || m[1] != m[2] {
		t.Fatalf("send with a supervisor: exit %d, %q; want the task id", code, errOut)
	}
	var task control.Task
	js, _, _ := shogun(t, "tasks", cmdID, "--json", "-w", ws)
	if err := json.Unmarshal([]byte(js), &task); err != nil || task.ID != m[1] || task.CommandID != cmdID {
		t.Errorf("tasks %s --json: %+v (%v); want task %s", cmdID, task, err, m[1])
	}

	a := attach(t, ws, "ashigaru1", 80, 24, true)
	shoguntest.WaitFor(t, "attach's hint", 15*time.Second, func() bool { return a.seen("shogun: attached to ashigaru1; Ctrl-] detaches") })
	if _, err := a.pty.Write([]byte{0x1d}); err != nil {
		t.Fatal(err)
	}
	a.wait(t)

	_, errOut, code = shogun(t, "stop", "-w", ws)
	if code != 0 || !strings.Contains(errOut, "shogun: stopping the supervisor (pid ") || !strings.Contains(errOut, "and its 1 role: each program is asked to quit") ||
		!regexp.MustCompile(`shogun: stopped \(\d`).MatchString(errOut) {
		t.Errorf("stop: exit %d, %q; want what it waits for, then how long it took", code, errOut)
	}
}
