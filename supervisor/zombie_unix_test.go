//go:build !windows

package supervisor

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// zombieEnv makes the test binary a program that leaves a zombie in its
// own process group, whose parent, in a group of its own that ignores
// SIGTERM, never reaps it (runZombie): "holder" is the role's program,
// "outsider:PGID" the parent, "joiner:PGID" the zombie to be.
const zombieEnv = "SHOGUN_TEST_ZOMBIE"

func runZombie(mode string) int {
	self, _ := os.Executable()
	switch {
	case mode == "holder":
		c := exec.Command(self)
		c.Env = append(os.Environ(), zombieEnv+"=outsider:"+strconv.Itoa(os.Getpid()))
		if err := c.Start(); err != nil {
			return 1
		}
		fmt.Print("› ")
		time.Sleep(time.Hour)
	case len(mode) > 9 && mode[:9] == "outsider:":
		_ = syscall.Setpgid(0, 0)
		signal.Ignore(syscall.SIGTERM, syscall.SIGHUP)
		c := exec.Command(self)
		c.Env = append(os.Environ(), zombieEnv+"=joiner:"+mode[9:])
		if err := c.Start(); err != nil {
			return 1
		}
		if f := os.Getenv("SHOGUN_TEST_ZOMBIE_PIDS"); f != "" {
			_ = os.WriteFile(f, []byte(strconv.Itoa(os.Getpid())), 0o644)
		}
		time.Sleep(time.Hour) // and never wait for the joiner
	case len(mode) > 7 && mode[:7] == "joiner:":
		pgid, _ := strconv.Atoi(mode[7:])
		_ = syscall.Setpgid(0, pgid)
	}
	return 0
}

// A role's stop ends even when its process group keeps a zombie that
// SIGKILL cannot end, its parent outside the group never reaping it: the
// kills go on for killFor, then the role goes on without it. Before, the
// role's restart, its slot and `shogun stop` waited for ever (a hostile
// agent; only kill -9 of the supervisor ended it).
func TestAStopEndsThoughTheGroupKeepsAZombie(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	pids := filepath.Join(t.TempDir(), "outsider.pid")
	t.Cleanup(func() {
		if b, err := os.ReadFile(pids); err == nil {
			if pid, _ := strconv.Atoi(string(b)); pid > 0 {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	ws := testWorkspace(t, fmt.Sprintf(`
roles:
  - id: z
    prompt_path: roles/z.md
    command: {exec: %q, env: {%s: holder, SHOGUN_TEST_ZOMBIE_PIDS: %q}}
    cli: generic
    ready_pattern: "› "
    startup_prompt: ""
    stop: {timeout: 1s}
`, self, zombieEnv, pids))
	r := start(t, ws, nil)
	r.waitState(t, "z", Ready, 15*time.Second)
	waitFor(t, "the zombie's parent", 10*time.Second, func() bool {
		_, err := os.Stat(pids)
		return err == nil
	})
	time.Sleep(200 * time.Millisecond) // the joiner joins and exits
	if err := r.stop(t); err != nil {
		t.Errorf("stop: %v", err)
	}
}
