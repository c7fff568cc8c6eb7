//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/control"
	"github.com/shogun-dev/shogun/ptyhost"
)

// stranger starts a process that has nothing to do with any workspace: the
// leader of its own session and process group, as role programs are.
func stranger(t *testing.T, script string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_, _ = cmd.Process.Wait()
	})
	return cmd
}

// groupMembers lists the processes of the process group pgid.
func groupMembers(pgid int) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if g, err := syscall.Getpgid(pid); err == nil && g == pgid {
			out = append(out, pid)
		}
	}
	return out
}

// ledgerEntry is one entry of runtime/state/pids.json as written by hand.
type ledgerEntry struct {
	Role     string    `json:"role"`
	Pid      int       `json:"pid"`
	Identity string    `json:"identity"`
	Started  time.Time `json:"started"`
	UID      int       `json:"uid,omitempty"`
	Exe      string    `json:"exe,omitempty"`
}

func writeLedger(t *testing.T, ws string, mode os.FileMode, entries ...ledgerEntry) {
	t.Helper()
	b, err := json.MarshalIndent(entries, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(ws, "runtime", "state", "pids.json")
	if err := os.WriteFile(path, b, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil { // past the umask
		t.Fatal(err)
	}
}

// A hand-edited pid ledger lists processes that are not the workspace's,
// with what can be copied from /proc. The next start kills none of them and
// says why; only a ledger owned by the user, writable by nobody else, whose
// entries match pid, start time, user and executable is acted on.
func TestForgedPidLedgerKillsNothing(t *testing.T) {
	ws := shWorkspace(t, "echo working; while :; do sleep 0.2; done") // ready after its first output and quiet

	// The right pid, start time and user, but not the program the ledger
	// claims (the agent's): an unrelated `sleep` of the same user.
	other := stranger(t, "exec sleep 1000")
	otherID, err := ptyhost.Identity(other.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	// A group whose leader's pid the ledger lists with an earlier start
	// time: the recorded program is gone and its pid was reused (issue 9,
	// item 12). Every member started later, as leftovers would have.
	reused := stranger(t, "sleep 1000 & wait")
	var start uint64
	ident, _ := ptyhost.Identity(reused.Process.Pid)
	fmt.Sscanf(ident, "linux-start:%d", &start)
	var members []int
	deadline := time.Now().Add(10 * time.Second)
	for len(members) < 2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		members = groupMembers(reused.Process.Pid)
	}
	if len(members) < 2 {
		t.Fatalf("the reused group has %d members, want the shell and its sleep", len(members))
	}
	uid := os.Geteuid()
	writeLedger(t, ws, 0o600,
		ledgerEntry{Role: "worker", Pid: other.Process.Pid, Identity: otherID, UID: uid, Exe: "/usr/local/bin/codex", Started: time.Now()},
		ledgerEntry{Role: "karo", Pid: reused.Process.Pid, Identity: fmt.Sprintf("linux-start:%d", start-1), UID: uid, Exe: "/bin/sh", Started: time.Now()},
	)
	cmd, errOut := startBackground(t, ws)
	waitStatus(t, ws, "the supervisor up", func(s control.StatusReply) bool { return stateOf(s, "worker") == "ready" })
	// The supervisor's own ledger is owner-only.
	if fi, err := os.Stat(filepath.Join(ws, "runtime", "state", "pids.json")); err != nil {
		t.Error(err)
	} else if fi.Mode().Perm() != 0o600 {
		t.Errorf("pids.json has mode %v, want 0600", fi.Mode().Perm())
	}
	for _, pid := range append([]int{other.Process.Pid}, members...) {
		if !alive(pid) {
			t.Errorf("pid %d, listed in a forged ledger, was killed", pid)
		}
	}
	for _, want := range []string{
		fmt.Sprintf(`pid %d runs`, other.Process.Pid),
		`recorded \"/usr/local/bin/codex\"`,
		fmt.Sprintf("pid %d started at", reused.Process.Pid),
		"left alone",
	} {
		if !strings.Contains(errOut.String(), want) {
			t.Errorf("the supervisor's log does not say %q:\n%s", want, errOut)
		}
	}
	if _, e, code := shogun(t, "stop", "-w", ws); code != 0 {
		t.Fatalf("stop: %s", e)
	}
	_ = cmd.Wait()

	// Every field right, but the ledger is writable by other users: anyone
	// could have listed the process. It is refused as a whole.
	info, err := ptyhost.Inspect(other.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	writeLedger(t, ws, 0o666, ledgerEntry{Role: "worker", Pid: info.Pid, Identity: info.Identity, UID: info.UID, Exe: info.Exe, Started: time.Now()})
	_, errOut = startBackground(t, ws)
	waitStatus(t, ws, "the supervisor up again", func(s control.StatusReply) bool { return stateOf(s, "worker") == "ready" })
	if !alive(other.Process.Pid) {
		t.Error("a process listed in a world-writable ledger was killed")
	}
	if want := "is writable by other users (mode 0666), ignoring it: nothing killed"; !strings.Contains(errOut.String(), want) {
		t.Errorf("the supervisor's log does not say %q:\n%s", want, errOut)
	}
}
