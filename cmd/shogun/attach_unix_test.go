//go:build !windows

package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/control"
	"github.com/shogun-dev/shogun/ptyhost"
	"github.com/shogun-dev/shogun/shoguntest"
)

// detachAndLook presses Ctrl-] in an attached terminal and returns what the
// person's terminal shows afterwards, and the bytes it was sent.
func detachAndLook(t *testing.T, a *attachClient, cols, rows int) (ptyhost.ScreenSnapshot, []byte) {
	t.Helper()
	if _, err := a.pty.Write([]byte{0x1d}); err != nil {
		t.Fatal(err)
	}
	if code := a.wait(t); code != 0 {
		t.Errorf("detach exit code %d", code)
	}
	shoguntest.WaitFor(t, "the goodbye line", 10*time.Second, func() bool { return a.seen("shogun: detached") })
	a.mu.Lock()
	out := bytes.Clone(a.out.Bytes())
	a.mu.Unlock()
	return ptyhost.ReplayScreen(out, cols, rows), out
}

// lastRow is the last row of the screen with text.
func lastRow(s ptyhost.ScreenSnapshot) (int, string) {
	for i := len(s.Lines) - 1; i >= 0; i-- {
		if strings.TrimSpace(s.Lines[i]) != "" {
			return i, strings.TrimRight(s.Lines[i], " ")
		}
	}
	return -1, ""
}

// The agent's cursor sits in its prompt with its footer below; the goodbye
// goes on a line of its own below the whole screen, which stays readable.
func TestDetachEndsOnAFreshLine(t *testing.T) {
	ws := teamWorkspace(t, simEntry("ashigaru1"))
	startBackground(t, ws)
	waitStatus(t, ws, "ready", func(s control.StatusReply) bool { return stateOf(s, "ashigaru1") == "ready" })
	a := attach(t, ws, "ashigaru1", 80, 24, true)
	shoguntest.WaitFor(t, "the painted screen", 10*time.Second, func() bool { return a.seen("? for shortcuts") })

	scr, _ := detachAndLook(t, a, 80, 24)
	row, text := lastRow(scr)
	if text != "shogun: detached" {
		t.Errorf("last row %q, want the goodbye alone on it; screen:\n%s", text, scr.Text())
	}
	if row <= 0 || !strings.Contains(scr.Lines[row-1], "? for shortcuts") {
		t.Errorf("the agent's footer is not intact right above the goodbye; screen:\n%s", scr.Text())
	}
	if scr.CursorRow != row+1 || scr.CursorCol != 0 {
		t.Errorf("cursor at %d,%d, want the start of the row after the goodbye (%d)", scr.CursorRow, scr.CursorCol, row+1)
	}
}

// A full-screen program on the alternate screen is painted there; leaving
// gives the person's own screen back, and the modes it turned on are off.
func TestDetachLeavesTheAlternateScreen(t *testing.T) {
	app := `printf '\033[?1049h\033[?1000h\033[?2004h\033[?25l\033[H\033[7m full screen app'; while :; do sleep 1; done`
	ws := teamWorkspace(t, shEntry("tui", app, ""))
	startBackground(t, ws)
	waitStatus(t, ws, "running", func(s control.StatusReply) bool { return s.Roles[0].Pid > 0 })
	a := attach(t, ws, "tui", 80, 24, true)
	shoguntest.WaitFor(t, "the painted screen", 10*time.Second, func() bool { return a.seen("full screen app") })

	scr, out := detachAndLook(t, a, 80, 24)
	if scr.AltScreen {
		t.Errorf("the terminal was left on the alternate screen")
	}
	if strings.Contains(scr.Text(), "full screen app") {
		t.Errorf("the program's screen is left over the person's:\n%s", scr.Text())
	}
	if _, text := lastRow(scr); text != "shogun: detached" {
		t.Errorf("last row %q, want the goodbye; screen:\n%s", text, scr.Text())
	}
	rest := out[bytes.LastIndex(out, []byte("full screen app")):]
	for _, off := range []string{"\x1b[0m", "\x1b[?25h", "\x1b[?1000l", "\x1b[?2004l"} {
		if !bytes.Contains(rest, []byte(off)) {
			t.Errorf("detaching did not send %q", off)
		}
	}
}
