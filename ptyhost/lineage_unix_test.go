//go:build linux || darwin

package ptyhost

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A process whose ancestry is longer than the walk looks is no person's:
// the walk fails rather than end short of the role it may come from (a
// hostile agent ran requests from 4200 processes down, past the 4096 the
// walk took, and was answered as a person). A chain of 4 processes,
// walked at most 3, stands in for it.
func TestAnAncestryDeeperThanTheWalkIsNoOnesToTell(t *testing.T) {
	dir := t.TempDir()
	pidFile := dir + "/pid"
	cmd := exec.Command("sh", "-c", `sh -c 'sh -c "echo \$\$ > `+pidFile+`; exec sleep 30"; :'; :`)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	var pid int
	deadline := time.Now().Add(10 * time.Second)
	for pid == 0 && time.Now().Before(deadline) {
		b, _ := os.ReadFile(pidFile)
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		time.Sleep(10 * time.Millisecond)
	}
	if pid == 0 {
		t.Fatal("the chain's last process never started")
	}
	// sleep (the innermost sh), sh, sh, the test: 4.
	if links, err := walkLineage(pid, maxLineage); err != nil || len(links) != 4 || links[3].pid != os.Getpid() {
		t.Fatalf("the whole walk: %d processes, %v; want 4 ending at the test", len(links), err)
	}
	if _, err := walkLineage(pid, 3); !errors.Is(err, ErrTooDeep) {
		t.Errorf("a walk of 3 over an ancestry of 4: %v, want ErrTooDeep", err)
	}
}
