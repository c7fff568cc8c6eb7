//go:build !windows

package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/shoguntest"
	"github.com/shogun-dev/shogun/workspace"
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

// A role named shogun has a log of its own, like every role: a record it
// prints that looks like the supervisor's, and the megabytes that rotate
// its log, never reach the supervisor's log, which keeps every record of
// the run. `shogun logs shogun` shows the role, `shogun logs --supervisor`
// the supervisor. The log of an older workspace (runtime/logs/shogun.log)
// is kept, moved into the supervisor's folder at start.
func TestRoleShogunHasItsOwnLog(t *testing.T) {
	fake := `{"level":"info","role":"karo","message":"FAKE supervisor record"}`
	script := fmt.Sprintf(`printf '%%s\n' '%s'; head -c 3000000 /dev/zero | tr '\0' x; echo; echo done-flooding; exec sleep 1000`, fake)
	ws := teamWorkspace(t, shEntry("shogun", script, ""))
	settings := filepath.Join(ws, "config", "settings.yaml")
	b, _ := os.ReadFile(settings)
	b = bytes.Replace(b, []byte("max_size_mb: 20"), []byte("max_size_mb: 1"), 1)
	if err := os.WriteFile(settings, b, 0o644); err != nil {
		t.Fatal(err)
	}
	l := workspace.New(ws)
	older := `{"level":"info","message":"a record of an older shogun"}` + "\n"
	if err := os.WriteFile(l.SupervisorLogLegacy(), []byte(older), 0o600); err != nil {
		t.Fatal(err)
	}

	cmd, errOut := startBackground(t, ws)
	shoguntest.WaitFor(t, "the role shogun to flood its own log", 60*time.Second, func() bool {
		b, _ := os.ReadFile(l.RoleLog("shogun"))
		return bytes.Contains(b, []byte("done-flooding"))
	})
	if _, stopErr, code := shogun(t, "stop", "-w", ws); code != 0 {
		t.Fatalf("stop: %s", stopErr)
	}
	_ = cmd.Wait()

	sup, err := os.ReadFile(l.SupervisorLog())
	if err != nil {
		t.Fatalf("the supervisor's log: %v\n%s", err, errOut)
	}
	for _, want := range []string{"a record of an older shogun", "supervisor started", "supervisor stopped"} {
		if !bytes.Contains(sup, []byte(want)) {
			t.Errorf("the supervisor's log lacks %q:\n%s", want, lastLines(string(sup), 20))
		}
	}
	// (The role's command line, logged at its start, names the record
	// escaped, as a string.)
	if bytes.Contains(sup, []byte(fake)) || bytes.Contains(sup, []byte("xxxxxxxx")) {
		t.Errorf("the role's output reached the supervisor's log")
	}
	if rotated, _ := filepath.Glob(filepath.Join(ws, "runtime", "logs", "shogun-*.log")); len(rotated) == 0 {
		t.Errorf("the role's 3 MB did not rotate its own 1 MB log")
	}
	if rotated, _ := filepath.Glob(filepath.Join(l.Path(workspace.SupervisorLogDir), "shogun-*.log")); len(rotated) != 0 {
		t.Errorf("the supervisor's log was rotated: %v", rotated)
	}

	out, logsErr, code := shogun(t, "logs", "shogun", "--raw", "-n", "3", "-w", ws)
	if code != 0 || !strings.Contains(out, "done-flooding") || strings.Contains(out, "supervisor started") {
		t.Errorf("logs shogun (exit %d, %s) does not show the role's log:\n%s", code, logsErr, out)
	}
	out, logsErr, code = shogun(t, "logs", "--supervisor", "-n", "0", "-w", ws)
	if code != 0 || !strings.Contains(out, "a record of an older shogun") || !strings.Contains(out, "supervisor stopped") || strings.Contains(out, fake) {
		t.Errorf("logs --supervisor (exit %d, %s) does not show the supervisor's log:\n%s", code, logsErr, lastLines(out, 20))
	}
	if _, logsErr, code = shogun(t, "logs", "--supervisor", "shogun", "-w", ws); code == 0 || !strings.Contains(logsErr, "takes no role") {
		t.Errorf("logs --supervisor shogun: exit %d, %q; want a refusal", code, logsErr)
	}
}
