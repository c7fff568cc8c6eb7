//go:build !windows

package main

import (
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
	out := &syncBuffer{}
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
