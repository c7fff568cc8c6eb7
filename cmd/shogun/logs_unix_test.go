//go:build !windows

package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/shoguntest"
)

// claudeLog is the kind of output Claude Code writes: a title with "✳",
// words spaced by cursor moves, colours, a spinner redrawn after \r.
var claudeLog = "\x1b]0;✳ Claude Code\x07\x1b[?25l" +
	"\x1b[31m⎿\x1b[39m\x1b[1CUnable\x1b[1Cto\x1b[1Cconnect\x1b[1Cto\x1b[1CAnthropic\x1b[1Cservices\r\n" +
	"\x1b[2m✻ Retrying… 1\x1b[22m\r\x1b[2m✻ Retrying… 2\x1b[22m\r\x1b[2m✻ Retrying… 3\x1b[22m\r\n" +
	strings.Repeat("=", 70) + "\r\n" +
	"\x1b[1m❯\x1b[22m \x1b[?25h"

func TestLogsPrintTheTextThePersonSaw(t *testing.T) {
	ws := teamWorkspace(t, shEntry("claude1", "true", "    terminal: {cols: 60, rows: 10}\n"))
	logPath := filepath.Join(ws, "runtime", "logs", "claude1.log")
	if err := os.WriteFile(logPath, []byte(claudeLog), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := shogun(t, "logs", "claude1", "-w", ws)
	// The 70 "=" wrap at the role's 60 columns, as they did on its screen.
	want := "⎿ Unable to connect to Anthropic services\n✻ Retrying… 3\n" +
		strings.Repeat("=", 60) + "\n" + strings.Repeat("=", 10) + "\n❯\n"
	if code != 0 || out != want {
		t.Errorf("logs (exit %d, %s):\n%s\nwant:\n%s", code, errOut, out, want)
	}
	if out, _, _ := shogun(t, "logs", "claude1", "-n", "2", "-w", ws); out != strings.Repeat("=", 10)+"\n❯\n" {
		t.Errorf("logs -n 2:\n%q", out)
	}
	if out, _, _ := shogun(t, "logs", "claude1", "--raw", "-w", ws); out != claudeLog {
		t.Errorf("logs --raw changed the bytes:\n%q", out)
	}
	// A role the configuration does not know is read at 120 columns.
	other := filepath.Join(ws, "runtime", "logs", "gone.log")
	if err := os.WriteFile(other, []byte(strings.Repeat("-", 100)+"\r\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, _, _ := shogun(t, "logs", "gone", "-w", ws); out != strings.Repeat("-", 100)+"\n" {
		t.Errorf("logs of an unconfigured role:\n%q", out)
	}
}

// Following: the screen when it starts, lines as they scroll, the screen
// again at each pause, and across a rotation, with nothing printed twice.
func TestLogsFollowRendersAcrossRotation(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "r.log")
	appendTo := func(s string) {
		t.Helper()
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(s); err != nil {
			t.Fatal(err)
		}
	}
	appendTo("old\r\nline\x1b[1C1\r\nline\x1b[1C2\r\n")
	var out syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- followLog(ctx, path, &out, logOptions{lines: 2, follow: true, cols: 40, rows: 4,
			pollInterval: 20 * time.Millisecond, quiet: 100 * time.Millisecond})
	}()
	shoguntest.WaitFor(t, "the last two lines", 10*time.Second, func() bool { return out.String() == "line 1\nline 2\n" })

	appendTo("line\x1b[1C3\r\nline\x1b[1C4\r\nline\x1b[1C5\r\n 50%")
	shoguntest.WaitFor(t, "the new lines at the pause", 10*time.Second, func() bool { return strings.HasSuffix(out.String(), " 50%\n") })
	if err := os.Rename(path, filepath.Join(dir, "r-1.log")); err != nil {
		t.Fatal(err)
	}
	appendTo("\r100%\r\nline\x1b[1C6\r\n")
	shoguntest.WaitFor(t, "the rotated log's lines", 10*time.Second, func() bool { return strings.HasSuffix(out.String(), "line 6\n") })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	want := "line 1\nline 2\nline 3\nline 4\nline 5\n 50%\n100%\nline 6\n"
	if out.String() != want {
		t.Errorf("followed:\n%s\nwant:\n%s", out.String(), want)
	}
}
