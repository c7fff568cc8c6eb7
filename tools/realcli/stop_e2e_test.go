//go:build realcli && linux

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/roles"
	"github.com/shogun-dev/shogun/store"
)

// TestRealCLIsQuitOnTheirStopKeys: shogun stop types each preset's stop
// keys into a team of the real CLIs, and each quits on them: no role's
// process tree is terminated after half the stop timeout. The stop comes
// as users' often does, right after the last task closed, while its CLI
// starts afresh on its between_tasks keys (/clear): Copilot CLI dropped
// /exit typed while it reloaded, and stopping the team took 5.5 s, not 1.
func TestRealCLIsQuitOnTheirStopKeys(t *testing.T) {
	tm := startE2E(t, e2eCLIs, nil)
	last := e2eCLIs[len(e2eCLIs)-1]
	for _, role := range e2eCLIs {
		id := tm.send(role, "Write a file", "Write it.\nfakemodel: report done via write written\n")
		if task, ok := tm.waitTask(id, 3*time.Minute); !ok || task.Status != store.StatusDone {
			t.Fatalf("%s: task = %+v (closed %v); screen:\n%s", role, task, ok, screen(t, tm.env, tm.ws, role))
		}
		if role == last {
			break
		}
		if !tm.waitState(role, "ready", time.Minute) {
			t.Fatalf("%s not ready after its task; screen:\n%s", role, screen(t, tm.env, tm.ws, role))
		}
	}
	if p, _ := roles.LookupPreset(last); p.BetweenTasks != "" {
		// Typed (in the raw log), then submitted (gone from the screen,
		// or a second later where the transcript shows it): the CLI
		// starts afresh now, and the stop comes meanwhile.
		raw := filepath.Join(tm.ws, "runtime", "logs", last+".log")
		var typed time.Time
		for end := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
			if typed.IsZero() {
				if b, _ := os.ReadFile(raw); bytes.Contains(b, []byte(p.BetweenTasks)) {
					typed = time.Now()
				}
			} else if time.Since(typed) > time.Second || !strings.Contains(screen(t, tm.env, tm.ws, last), p.BetweenTasks) {
				break
			}
			if time.Now().After(end) {
				t.Fatalf("%s: between_tasks %q never typed and submitted; screen:\n%s", last, p.BetweenTasks, screen(t, tm.env, tm.ws, last))
			}
		}
	}
	tm.stop()
	noRoleTerminated(t, tm.ws)
}

// noRoleTerminated fails the test for each role of the stopped team in ws
// whose process tree was terminated: it did not quit on its stop keys.
func noRoleTerminated(t *testing.T, ws string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(ws, "runtime", "logs", "supervisor", "shogun.log"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.Contains(line, "terminating process tree") {
			t.Errorf("a CLI did not quit on its stop keys: %s", line)
		}
	}
}
