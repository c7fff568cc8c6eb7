//go:build unix

package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/shogun-dev/shogun/control"
)

// A mistake in config/roles.yaml made while a supervisor runs leaves it on
// its last good configuration, and the queue goes on taking commands: send
// to a role it runs and tasks keep working, with a warning naming the
// mistake. A role neither the supervisor nor the file has is still refused,
// and so is one only the broken file has (the supervisor would not take it).
func TestSendAndTasksWorkWhileTheConfigurationHasErrors(t *testing.T) {
	ws := teamWorkspace(t, simEntry("ashigaru1"))
	startBackground(t, ws)
	waitStatus(t, ws, "ashigaru1 ready", func(s control.StatusReply) bool { return stateOf(s, "ashigaru1") == "ready" })

	broken := "roles:\n" + simEntry("ashigaru1") + "    memory_max: lots\n" + simEntry("newbie")
	if err := os.WriteFile(filepath.Join(ws, "config", "roles.yaml"), []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, ws, "the configuration error", func(s control.StatusReply) bool { return s.ConfigError != "" })
	const where = "config/roles.yaml:10:17"

	out, errOut, code := shogun(t, "send", "-w", ws, "--to", "ashigaru1", "--title", "Despite the typo", "--body", "b")
	if code != 0 || !strings.Contains(errOut, "warning: configuration has errors") || !strings.Contains(errOut, where) ||
		!regexp.MustCompile(`shogun: queued as task t-\S+ for ashigaru1`).MatchString(errOut) {
		t.Errorf("send to a running role with a broken roles.yaml: exit %d, stdout %q, stderr %q; want it queued with a warning naming %s", code, out, errOut, where)
	}
	for _, to := range []string{"nobody", "newbie"} {
		if _, errOut, code := shogun(t, "send", "-w", ws, "--to", to, "--title", "t", "--body", "b"); code == 0 || !strings.Contains(errOut, `unknown role "`+to+`"`) {
			t.Errorf("send to %s, a role the supervisor does not run: exit %d, %q; want it refused", to, code, errOut)
		}
	}
	out, errOut, code = shogun(t, "tasks", "-w", ws)
	if code != 0 || !strings.Contains(out, "Despite the typo") || !strings.Contains(errOut, where) {
		t.Errorf("tasks with a broken roles.yaml: exit %d, stdout %q, stderr %q; want the list and a warning naming %s", code, out, errOut, where)
	}

	// Without a supervisor the roles that parse in the file decide: the
	// next start runs them once the mistake is fixed.
	idle := teamWorkspace(t, simEntry("ashigaru1")+"    memory_max: lots\n")
	if _, errOut, code := shogun(t, "send", "-w", idle, "--to", "ashigaru1", "--title", "Later", "--body", "b"); code != 0 ||
		!strings.Contains(errOut, where) || !strings.Contains(errOut, "at the next `shogun start`") {
		t.Errorf("send without a supervisor to a role of a broken roles.yaml: exit %d, %q", code, errOut)
	}
	if _, errOut, code := shogun(t, "send", "-w", idle, "--to", "nobody", "--title", "t", "--body", "b"); code == 0 || !strings.Contains(errOut, `unknown role "nobody"`) {
		t.Errorf("send without a supervisor to a role nowhere: exit %d, %q; want it refused", code, errOut)
	}
	if _, errOut, code := shogun(t, "start", "--dry-run", "-w", idle); code == 0 || !strings.Contains(errOut, "nothing started") {
		t.Errorf("start --dry-run on the broken file: exit %d, %q; want it refused", code, errOut)
	}
}
