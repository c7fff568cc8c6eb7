//go:build !windows

package main

import (
	"context"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/shogun-dev/shogun/control"
	"github.com/shogun-dev/shogun/shoguntest"
	"github.com/shogun-dev/shogun/store"
)

// inTerminal runs the binary with a terminal of cols columns as its
// stdout (and stdin, stderr) and returns what the terminal showed.
func inTerminal(t *testing.T, cols int, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: uint16(cols), Rows: 50})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := &shoguntest.Buffer{}
	copied := make(chan struct{})
	go func() { _, _ = io.Copy(out, f); close(copied) }()
	_ = cmd.Wait()
	<-copied // the pty reads EIO once the program and its output are gone
	return strings.ReplaceAll(out.String(), "\r\n", "\n")
}

var ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")

// On a terminal, status and tasks colour the states, fit the terminal's
// width (titles cut with …) and tasks names who sent each task (FROM);
// NO_COLOR or a pipe gets no colour, and a pipe the whole title.
func TestTablesFitTheTerminalAndColourStates(t *testing.T) {
	ws := teamWorkspace(t, simEntry("ashigaru1"), simEntry("ashigaru2"))
	startBackground(t, ws)
	waitStatus(t, ws, "both roles ready", func(s control.StatusReply) bool {
		return stateOf(s, "ashigaru1") == "ready" && stateOf(s, "ashigaru2") == "ready"
	})
	title := "Rewrite the login page so that it keeps every field a person typed when the password is wrong"
	if _, errOut, code := shogun(t, "send", "-w", ws, "--to", "ashigaru1", "--from", "ashigaru2", "--title", title, "--body", "b"); code != 0 {
		t.Fatalf("send: %s", errOut)
	}
	shoguntest.WaitFor(t, "the task done", 60*time.Second, func() bool {
		for _, task := range tasksJSON(t, ws) {
			if task.Title == title && task.Status == store.StatusDone {
				return true
			}
		}
		return false
	})

	out := inTerminal(t, 80, nil, "tasks", "-w", ws)
	plain := ansi.ReplaceAllString(out, "")
	for _, line := range strings.Split(strings.TrimRight(plain, "\n"), "\n") {
		if w := displayWidth(line); w > 80 {
			t.Errorf("a line of tasks is %d columns wide on an 80-column terminal: %q", w, line)
		}
	}
	if !regexp.MustCompile(`(?m)^TASK +ROLE +FROM +STATUS`).MatchString(plain) || !regexp.MustCompile(`ashigaru1 +ashigaru2 +done`).MatchString(plain) {
		t.Errorf("tasks does not show FROM:\n%s", plain)
	}
	if !strings.Contains(plain, "Rewrite the lo") || !strings.Contains(plain, "…") || strings.Contains(plain, title) {
		t.Errorf("tasks does not cut the title to the terminal:\n%s", plain)
	}
	if !strings.Contains(out, "\x1b[32mdone\x1b[0m") {
		t.Errorf("tasks does not colour done:\n%q", out)
	}
	if st := inTerminal(t, 80, nil, "status", "-w", ws); !regexp.MustCompile("\x1b\\[32m(ready|busy)\x1b\\[0m").MatchString(st) {
		t.Errorf("status does not colour the states:\n%q", st)
	}
	if out := inTerminal(t, 80, []string{"NO_COLOR=1"}, "tasks", "-w", ws); strings.Contains(out, "\x1b[") {
		t.Errorf("tasks colours with NO_COLOR set:\n%q", out)
	}
	if piped, _, _ := shogun(t, "tasks", "-w", ws); strings.Contains(piped, "\x1b[") || !strings.Contains(piped, short(title, 40)) {
		t.Errorf("tasks into a pipe: colour, or the title cut below 40 columns:\n%s", piped)
	}
}

// What a newcomer meets when roles cannot run or are mistyped: start with
// no role able to run says why and exits 1 at once; attach to an unknown
// role names the roles; logs of a role that never ran give its reason even
// once the supervisor is gone; tasks without a supervisor shows what sits
// in the queue folder.
func TestRolesThatCannotRunAreNamed(t *testing.T) {
	missing := "  - id: karo\n    prompt_path: roles/karo.md\n    command: {exec: shogun-test-no-such-cli}\n    cli: claude\n"
	alone := teamWorkspace(t, missing)
	// Without the refusal start would supervise a fatal team for ever:
	// the deadline only keeps the test from hanging.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	start := exec.CommandContext(ctx, bin, "start", "-w", alone)
	var stdout, stderr shoguntest.Buffer
	start.Stdout, start.Stderr = &stdout, &stderr
	_ = start.Run()
	out, errOut, code := stdout.String(), stderr.String(), start.ProcessState.ExitCode()
	if code != 1 || out != "" || !strings.Contains(errOut, "1 of 1 role(s) cannot start, their program is not found") ||
		!strings.Contains(errOut, "karo: exec: \"shogun-test-no-such-cli\"") || !strings.Contains(errOut, "nothing started; `") {
		t.Errorf("start with no role able to run: exit %d, stdout %q, stderr:\n%s", code, out, errOut)
	}

	ws := teamWorkspace(t, simEntry("ashigaru1"), missing)
	cmd, _ := startBackground(t, ws)
	waitStatus(t, ws, "karo fatal, ashigaru1 ready", func(s control.StatusReply) bool {
		return stateOf(s, "karo") == "fatal" && stateOf(s, "ashigaru1") == "ready"
	})
	if _, errOut, code := shogun(t, "attach", "ashigru1", "-w", ws); code != 1 ||
		errOut != "shogun: unknown role \"ashigru1\" (did you mean \"ashigaru1\"? roles: ashigaru1, karo)\n" {
		t.Errorf("attach ashigru1: exit %d, stderr %q; want the roles named", code, errOut)
	}
	if _, errOut, code := shogun(t, "stop", "-w", ws); code != 0 {
		t.Fatalf("stop: %s", errOut)
	}
	_ = cmd.Wait()
	_, errOut, code = shogun(t, "logs", "karo", "-w", ws)
	if want := `karo's program never ran; at the last start (`; code != 1 || !strings.Contains(errOut, want) ||
		!strings.Contains(errOut, `it went fatal: cannot start: ptyhost: start "shogun-test-no-such-cli"`) {
		t.Errorf("logs karo after the supervisor is gone: exit %d, %q; want %q… and the reason", code, errOut, want)
	}

	id, errOut, code := shogun(t, "send", "-w", ws, "--to", "ashigaru1", "--from", "karo", "--title", "Waiting for a start", "--body", "b")
	if code != 0 {
		t.Fatalf("send: %s", errOut)
	}
	out, _, code = shogun(t, "tasks", "-w", ws)
	if code != 0 || !strings.Contains(out, "waiting in runtime/queue/commands/ (no supervisor has taken them") ||
		!regexp.MustCompile(regexp.QuoteMeta(strings.TrimSpace(id))+` +ashigaru1 +karo +\S+\.yaml +Waiting for a start`).MatchString(out) {
		t.Errorf("tasks without a supervisor does not show the waiting command %s:\n%s", id, out)
	}
}
