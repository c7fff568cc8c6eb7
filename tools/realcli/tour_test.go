//go:build realcli && linux

package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/shogun-dev/shogun/shoguntest"
)

// The README's tour, as written: `go run ./tools/realcli tour claude codex`
// from the repository with shogun on PATH, then the commands it prints, run
// in a second process as a person would paste them. The task they send is
// the one the README shows, and the real Claude Code does it against the
// scripted model.
func TestTourAsWritten(t *testing.T) {
	needNode(t)
	var line, example string
	for _, b := range shoguntest.DocBlocks(t) {
		switch {
		case b.File == "README.md" && strings.HasPrefix(b.Text, "go run ./tools/realcli tour"):
			line = strings.TrimSpace(b.Text)
		case b.File == "README.md" && b.Lang == "yaml" && strings.Contains(b.Text, "fakemodel:"):
			example = b.Text
		}
	}
	if line == "" || example == "" {
		t.Fatalf("README has no tour line (%q) or no scripted task (%q)", line, example)
	}
	var task struct{ Title, Body string }
	if err := yaml.Unmarshal([]byte(example), &task); err != nil {
		t.Fatalf("README's scripted task: %v", err)
	}

	onPath := t.TempDir()
	if err := os.Symlink(bin, filepath.Join(onPath, "shogun")); err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	env := append(os.Environ(), "PATH="+onPath+string(os.PathListSeparator)+os.Getenv("PATH"), "TMPDIR="+tmp, "NO_COLOR=1")
	tour := exec.Command("sh", "-c", "exec "+line)
	tour.Dir, tour.Env = shoguntest.ModuleRoot(t), env
	tour.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	tour.WaitDelay = 10 * time.Second
	var printedOut, logs shoguntest.Buffer
	tour.Stdout, tour.Stderr = &printedOut, &logs
	if err := tour.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-tour.Process.Pid, syscall.SIGKILL) })

	// What it prints for the second terminal: start, send, tasks, attach.
	printed := map[string]string{}
	// It installs the CLIs first when the cache lacks them.
	if !waitUntil(5*time.Minute, func() bool {
		for _, l := range strings.Split(printedOut.String(), "\n") {
			if f := strings.Fields(l); len(f) > 1 && filepath.Base(f[0]) == "shogun" {
				printed[f[1]] = strings.TrimSpace(l)
			}
		}
		return printed["attach"] != ""
	}) {
		t.Fatalf("the tour printed no commands:\n%s\n%s", printedOut.String(), logs.String())
	}

	ws := regexp.MustCompile(`start -w (\S+)`).FindStringSubmatch(printed["start"])
	taskFile := regexp.MustCompile(`--body-file (\S+)`).FindStringSubmatch(printed["send"])
	if ws == nil || taskFile == nil || !strings.Contains(printed["send"], `--title "`+task.Title+`"`) {
		t.Fatalf("the printed commands are not the README's: %q", printed)
	}
	if b, err := os.ReadFile(taskFile[1]); err != nil || string(b) != task.Body {
		t.Fatalf("the tour's task file is not the README's example: %v\n%q\nwant %q", err, b, task.Body)
	}

	paste := func(cmdline string) string {
		t.Helper()
		c := exec.Command("sh", "-c", cmdline)
		c.Env = env
		b, err := c.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", cmdline, err, b)
		}
		return string(b)
	}
	start := exec.Command("sh", "-c", "exec "+printed["start"])
	start.Env = env
	var supOut shoguntest.Buffer
	start.Stdout, start.Stderr = &supOut, &supOut
	if err := start.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = start.Process.Kill(); _ = start.Wait() })
	if !waitUntil(90*time.Second, func() bool {
		st, ok := status(t, env, ws[1])
		return ok && stateOf(st, "claude") == "ready" && stateOf(st, "codex") == "ready"
	}) {
		st, _ := status(t, env, ws[1])
		t.Fatalf("the tour's team did not become ready: %+v\n%s", st, supOut.String())
	}
	paste(printed["send"])
	var done bool
	waitUntil(3*time.Minute, func() bool {
		for _, tk := range tasks(t, env, ws[1]) {
			if tk.Title == task.Title && tk.Role == "claude" && (tk.Status == "done" || tk.Status == "failed" || tk.Status == "blocked" || tk.Status == "cancelled") {
				done = tk.Status == "done"
				return true
			}
		}
		return false
	})
	if !done {
		t.Fatalf("the README's task did not end done: %s\n%s", paste(printed["tasks"]), supOut.String())
	}
	if b, _ := os.ReadFile(filepath.Join(ws[1], "hello.txt")); !strings.Contains(string(b), "Hello from the scripted model") {
		t.Errorf("hello.txt reads %q", b)
	}
	if out := paste(printed["tasks"]); !strings.Contains(out, task.Title) {
		t.Errorf("%s does not list the task:\n%s", printed["tasks"], out)
	}
	paste(strings.Replace(printed["start"], " start ", " stop ", 1))
	if err := start.Wait(); err != nil {
		t.Errorf("shogun start after shogun stop: %v\n%s", err, supOut.String())
	}
	// Ctrl-C in the tour's terminal stops the model. `go run` itself exits
	// 1 when it was interrupted, whatever the program's own exit status.
	_ = syscall.Kill(-tour.Process.Pid, syscall.SIGINT)
	if err := waitExit(tour, 30*time.Second); err != nil && !strings.Contains(err.Error(), "exit status 1") {
		t.Errorf("the tour after Ctrl-C: %v\n%s", err, logs.String())
	}
	if c, err := net.DialTimeout("tcp", "127.0.0.1:8787", time.Second); err == nil {
		c.Close()
		t.Errorf("the scripted model still listens on 127.0.0.1:8787 after Ctrl-C")
	}
}

// waitExit waits for cmd, at most within.
func waitExit(cmd *exec.Cmd, within time.Duration) error {
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(within):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		return fmt.Errorf("still running after %s", within)
	}
}

func waitUntil(within time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(250 * time.Millisecond)
	}
	return true
}
