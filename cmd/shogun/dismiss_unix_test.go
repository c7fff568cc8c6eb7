//go:build !windows

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shogun-dev/shogun/control"
)

// dropCommand writes a command file into the workspace's queue as a writer
// should: a temporary name, then a rename.
func dropCommand(t *testing.T, ws, name, content string) {
	t.Helper()
	dir := filepath.Join(ws, "runtime", "queue", "commands")
	if err := os.WriteFile(filepath.Join(dir, "."+name+".tmp"), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(dir, "."+name+".tmp"), filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
}

func rejectedAlert(name string) func(control.StatusReply) bool {
	return func(s control.StatusReply) bool {
		for _, a := range s.Attention {
			if strings.HasPrefix(a, "rejected "+name+":") {
				return true
			}
		}
		return false
	}
}

// The alert of a rejected file lasts while the file is in failed/: removing
// the file clears it, and so does `shogun status --dismiss`, which leaves
// the file where it is.
func TestRejectedFileAlertGoesWithItsFileOrWhenDismissed(t *testing.T) {
	ws := teamWorkspace(t, simEntry("ashigaru1"))
	cmd, _ := startBackground(t, ws)
	waitStatus(t, ws, "ashigaru1 ready", func(s control.StatusReply) bool { return stateOf(s, "ashigaru1") == "ready" })
	failed := filepath.Join(ws, "runtime", "queue", "failed")

	dropCommand(t, ws, "typo.yaml", "to: nobody\ntitle: t\nbody: b\n")
	waitStatus(t, ws, "typo.yaml's alert", rejectedAlert("typo.yaml"))
	for _, f := range []string{"typo.yaml", "typo.yaml.error.yaml"} {
		if err := os.Remove(filepath.Join(failed, f)); err != nil {
			t.Fatal(err)
		}
	}
	waitStatus(t, ws, "typo.yaml's alert gone with the file", func(s control.StatusReply) bool { return !rejectedAlert("typo.yaml")(s) })

	dropCommand(t, ws, "again.yaml", "to: nobody\ntitle: t\nbody: b\n")
	waitStatus(t, ws, "again.yaml's alert", rejectedAlert("again.yaml"))
	out, errOut, code := shogun(t, "status", "--dismiss", "-w", ws)
	if code != 0 || !strings.Contains(out, "dismissed 1 rejected-file alert(s)") || strings.Contains(out, "rejected again.yaml") {
		t.Fatalf("status --dismiss: exit %d, %s%s", code, out, errOut)
	}
	if out, _, _ := shogun(t, "status", "-w", ws); strings.Contains(out, "rejected again.yaml") {
		t.Errorf("the dismissed alert is back:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(failed, "again.yaml")); err != nil {
		t.Errorf("dismissing removed the rejected file: %v", err)
	}
	if _, errOut, code := shogun(t, "stop", "-w", ws); code != 0 {
		t.Fatalf("stop: %s", errOut)
	}
	_ = cmd.Wait()
}
