package supervisor

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/shogun-dev/shogun/ptyhost"
)

// An agent runs as the supervisor's user: once the supervisor forbids
// inspection, a process of that user cannot read the supervisor's
// environment from /proc, where the accounts' keys are. (Without the
// guard it can: the first case shows the test can tell.)
func TestSupervisorEnvironUnreadableByItsUsersProcesses(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run the stand-in supervisor and the reader as another user (nobody); as that user itself, the reader could not change users")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "shogun-dumpable-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	bin := filepath.Join(dir, "stand-in")
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	nobody := &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	for _, tc := range []struct {
		mode     string
		readable bool
	}{{"allow", true}, {"forbid", false}} {
		t.Run(tc.mode, func(t *testing.T) {
			sup := exec.Command(bin)
			sup.Env = append(os.Environ(), dumpableEnv+"="+tc.mode, "VICTIM_KEY=victim-secret")
			sup.SysProcAttr = nobody
			stdin, err := sup.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			stdout, err := sup.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := sup.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { stdin.Close(); sup.Wait() }()
			if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "ready\n" {
				t.Fatalf("stand-in supervisor: %q, %v", line, err)
			}
			read := exec.Command("/bin/cat", "/proc/"+strconv.Itoa(sup.Process.Pid)+"/environ")
			read.SysProcAttr = nobody
			out, err := read.CombinedOutput()
			got := err == nil && len(out) > 0
			if got != tc.readable {
				t.Errorf("a process of the same user read the environ: %v (%v, %.80q), want %v", got, err, out, tc.readable)
			}
			// `shogun status` and the workspace lock tell the supervisor
			// by its start time in /proc/<pid>/stat: still readable.
			stat := exec.Command("/bin/cat", "/proc/"+strconv.Itoa(sup.Process.Pid)+"/stat")
			stat.SysProcAttr = nobody
			out, err = stat.Output()
			want, _ := ptyhost.Identity(sup.Process.Pid)
			if f := strings.Fields(string(out)); err != nil || len(f) < 22 || want != "linux-start:"+f[21] {
				t.Errorf("the stand-in's stat as its user: %v, %.120q; want its start time (%s)", err, out, want)
			}
		})
	}
}
