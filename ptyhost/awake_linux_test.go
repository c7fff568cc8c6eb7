package ptyhost

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fakeInhibitor puts a systemd-inhibit on PATH that records its arguments
// and then behaves as script says: the real one needs a system bus, which
// test machines and containers lack.
func fakeInhibitor(t *testing.T, script string) (argsFile string) {
	dir := t.TempDir()
	argsFile = filepath.Join(dir, "args")
	body := "#!/bin/sh\necho \"$@\" > '" + argsFile + "'\necho $$ >> '" + argsFile + "'\n" + script + "\n"
	if err := os.WriteFile(filepath.Join(dir, "systemd-inhibit"), []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+":"+os.Getenv("PATH"))
	return argsFile
}

func TestKeepAwakeHoldsAnInhibitorUntilReleased(t *testing.T) {
	args := fakeInhibitor(t, "exec sleep 60")
	inh, err := KeepAwake("agents are working")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(args)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "--what=idle:sleep") || !strings.Contains(lines[0], "--why=agents are working") ||
		!strings.Contains(lines[0], "tail --pid="+itoa(os.Getpid())) {
		t.Fatalf("inhibitor started with %q", b)
	}
	if inh.How != "systemd-inhibit" {
		t.Errorf("How = %q", inh.How)
	}
	pid, _ := strconv.Atoi(lines[1])
	if syscall.Kill(pid, 0) != nil {
		t.Fatal("the inhibitor is not running while held")
	}
	inh.Release()
	inh.Release() // twice is harmless
	deadline := time.Now().Add(5 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatal("the inhibitor still runs after Release")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestKeepAwakeSaysWhyItCannot(t *testing.T) {
	fakeInhibitor(t, "echo 'Failed to connect to bus: No such file or directory' >&2; exit 1")
	_, err := KeepAwake("x")
	if !errors.Is(err, ErrNoInhibitor) || !strings.Contains(err.Error(), "Failed to connect to bus") {
		t.Fatalf("err = %v, want ErrNoInhibitor with the inhibitor's own reason", err)
	}
	t.Setenv("PATH", t.TempDir())
	if _, err := KeepAwake("x"); !errors.Is(err, ErrNoInhibitor) || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("without systemd-inhibit: %v", err)
	}
}
