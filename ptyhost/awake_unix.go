//go:build linux || darwin

package ptyhost

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// keepAwake runs the platform's inhibitor as a child that holds the
// inhibition for as long as it runs, and that ends by itself when this
// process does (tail --pid, caffeinate -w), so a supervisor killed with -9
// leaves nothing behind.
func keepAwake(why string) (*Inhibitor, error) {
	self := strconv.Itoa(os.Getpid())
	var argv []string
	switch runtime.GOOS {
	case "darwin":
		argv = []string{"caffeinate", "-i", "-w", self}
	default:
		argv = []string{"systemd-inhibit", "--what=idle:sleep", "--who=shogun", "--why=" + why, "--mode=block",
			"tail", "--pid=" + self, "-f", "/dev/null"}
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return nil, fmt.Errorf("%w: %s not found", ErrNoInhibitor, argv[0])
	}
	cmd := exec.Command(path, argv[1:]...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%w: start %s: %v", ErrNoInhibitor, argv[0], err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	// An inhibitor that cannot take its lock (no system bus in a container,
	// say) says so and exits at once.
	select {
	case err := <-exited:
		return nil, fmt.Errorf("%w: %s exited: %v: %s", ErrNoInhibitor, argv[0], err, strings.TrimSpace(stderr.String()))
	case <-time.After(300 * time.Millisecond):
	}
	return &Inhibitor{How: argv[0], release: func() {
		_ = cmd.Process.Kill()
		<-exited
	}}, nil
}
