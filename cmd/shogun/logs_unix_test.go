//go:build !windows

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
