//go:build !windows

package main

import (
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/shogun-dev/shogun/shoguntest"
)

// On a terminal, shogun start prints a short human log: roles coming up,
// tasks and reports, the stop; the routine steps (a process started, a
// startup prompt delivered, a command queued) and JSON stay in the log
// file. shogun logs --supervisor prints the file the same way, every
// event; --json prints its lines as written.
func TestStartOnATerminalPrintsAShortHumanLog(t *testing.T) {
	ws := teamWorkspace(t, simEntry("ashigaru1"))
	cmd := exec.Command(bin, "start", "-w", ws)
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: 200, Rows: 50})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_, _ = cmd.Process.Wait()
		f.Close()
	})
	term := &shoguntest.Buffer{}
	go func() { _, _ = io.Copy(term, f) }() // ends when the pty closes

	shoguntest.WaitFor(t, "ashigaru1 ready on the terminal", 60*time.Second, func() bool {
		return strings.Contains(term.String(), "ashigaru1 ready (ready pattern on screen)")
	})
	if _, errOut, code := shogun(t, "send", "-w", ws, "--to", "ashigaru1", "--title", "Say hello", "--body", "b"); code != 0 {
		t.Fatalf("send: %s", errOut)
	}
	shoguntest.WaitFor(t, "the report on the terminal", 60*time.Second, func() bool {
		return strings.Contains(term.String(), "ashigaru1 report received status=done")
	})
	if _, errOut, code := shogun(t, "stop", "-w", ws); code != 0 {
		t.Fatalf("stop: %s", errOut)
	}
	shoguntest.WaitFor(t, "the supervisor's last line", 30*time.Second, func() bool {
		return strings.Contains(term.String(), "supervisor stopped")
	})
	out := term.String()
	for _, want := range []string{"supervisor started", "ashigaru1 task delivered task_id=t-"} {
		if !strings.Contains(out, want) {
			t.Errorf("the terminal does not show %q:\n%s", want, out)
		}
	}
	for _, routine := range []string{"startup prompt delivered", "command queued", "ashigaru1 started", "state starting", `{"level"`, "INF "} {
		if strings.Contains(out, routine) {
			t.Errorf("the terminal shows the routine %q:\n%s", routine, out)
		}
	}

	logs, errOut, code := shogun(t, "logs", "--supervisor", "-n", "0", "-w", ws)
	if code != 0 || strings.Contains(logs, `{"level"`) {
		t.Fatalf("logs --supervisor: exit %d, %s:\n%s", code, errOut, logs)
	}
	for _, want := range []string{"ashigaru1 ready (ready pattern on screen)", "ashigaru1 startup prompt delivered", "ashigaru1 command queued"} {
		if !strings.Contains(logs, want) {
			t.Errorf("logs --supervisor does not show %q:\n%s", want, logs)
		}
	}
	raw, _, code := shogun(t, "logs", "--supervisor", "--json", "-n", "1", "-w", ws)
	if code != 0 || !strings.HasPrefix(raw, `{"level":"info"`) {
		t.Errorf("logs --supervisor --json: exit %d, %q; want the JSON line", code, raw)
	}
}
