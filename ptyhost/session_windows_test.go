package ptyhost

import (
	"errors"
	"fmt"
	"github.com/shogun-dev/shogun/shoguntest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/windows"
)

// The test binary doubles as the programs the tests run in a pseudo
// console, so the tests need nothing but Windows (or Wine).
const (
	helperEnv  = "PTYHOST_TEST_HELPER"
	pidFileEnv = "PTYHOST_TEST_PIDFILE"
)

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "":
		os.Exit(m.Run())
	case "spawn-detached":
		os.Exit(spawnDetached())
	case "print-env":
		os.Exit(printEnv())
	case "commit":
		os.Exit(commitMemory())
	case "sleep":
		// A grandchild that only waits; bounded so that a test that fails
		// to end it leaves nothing running for long.
		time.Sleep(2 * time.Minute)
		os.Exit(0)
	default:
		fmt.Fprintln(os.Stderr, "unknown helper", os.Getenv(helperEnv))
		os.Exit(2)
	}
}

// spawnDetached starts a grandchild that leaves the console (as daemons
// such as Codex's app-server do), records its pid and exits, so the
// grandchild is left without its parent.
func spawnDetached() int {
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), helperEnv+"=sleep")
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: windows.DETACHED_PROCESS | windows.CREATE_NEW_PROCESS_GROUP}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	pidFile := os.Getenv(pidFileEnv)
	if err := os.WriteFile(pidFile+".tmp", []byte(strconv.Itoa(cmd.Process.Pid)), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if err := os.Rename(pidFile+".tmp", pidFile); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	return 0
}

// printEnv prints the terminal's name and the role as a careful console
// program does: to its standard output, or to the console itself (CONOUT$)
// when it has no standard output. A process started with null standard
// handles in a pseudo console gets the console's from Windows; Wine 8
// leaves them null.
func printEnv() int {
	out := os.Stdout
	if h, _ := windows.GetStdHandle(windows.STD_OUTPUT_HANDLE); h == 0 || h == windows.InvalidHandle {
		f, err := os.OpenFile("CONOUT$", os.O_RDWR, 0)
		if err != nil {
			return 2
		}
		out = f
	}
	fmt.Fprintf(out, "term=%s role=%s\r\n", os.Getenv("TERM"), os.Getenv("SHOGUN_ROLE"))
	return 0
}

// underWine reports whether this is Wine rather than Windows: Wine's
// ntdll exports wine_get_version.
func underWine() bool {
	return windows.NewLazySystemDLL("ntdll.dll").NewProc("wine_get_version").Find() == nil
}

var conPTYOutput = sync.OnceValues(ConPTYOutputWorks)

func TestConPTYOutputProbe(t *testing.T) {
	ok, why := conPTYOutput()
	t.Logf("ConPTY output reaches its pipe: %v %s (Wine: %v)", ok, why, underWine())
	if !ok && !underWine() {
		t.Fatalf("ConPTY output does not work on this Windows: %s", why)
	}
}

func cmdCommand(script string, cols, rows int) Command {
	return Command{
		Path: "cmd.exe",
		Args: []string{"/c", script},
		Env:  append(os.Environ(), "TERM=xterm-256color", "SHOGUN_ROLE=tester"),
		Cols: cols, Rows: rows,
	}
}

func helperCommand(t *testing.T, mode string, env ...string) Command {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return Command{
		Path: exe,
		Env:  append(append(os.Environ(), helperEnv+"="+mode), env...),
		Cols: 80, Rows: 25,
	}
}

func openSession(t *testing.T, opts Options) *Session {
	t.Helper()
	s, err := Open(opts)
	if err != nil {
		t.Fatalf("open session: %v", err)
	}
	t.Cleanup(func() {
		_ = s.Kill()
		_ = s.Close()
	})
	return s
}

func waitFor(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func waitExit(t *testing.T, s *Session) Exit {
	t.Helper()
	done := make(chan struct{})
	var ex Exit
	var err error
	go func() {
		ex, err = s.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the program did not exit")
	}
	if err != nil {
		t.Fatalf("wait: %v", err)
	}
	return ex
}

// The program's environment names the terminal and the role, and what it
// writes to its console reaches the log and the screen model.
func TestSessionGivesTheProgramATerminalWindows(t *testing.T) {
	log := &shoguntest.Buffer{}
	cmd := helperCommand(t, "print-env", "TERM=xterm-256color", "SHOGUN_ROLE=tester")
	cmd.Cols, cmd.Rows = 97, 31
	s := openSession(t, Options{Command: cmd, Log: log})
	if ex := waitExit(t, s); !ex.Success() {
		t.Fatalf("exit = %v, want success", ex)
	}
	waitFor(t, "the program's line in the log and on screen", 10*time.Second, func() bool {
		return strings.Contains(log.String(), "term=xterm-256color role=tester") &&
			strings.Contains(s.Screen().Text(), "term=xterm-256color role=tester")
	})
}

func TestSessionReportsExitCodeWindows(t *testing.T) {
	s := openSession(t, Options{Command: cmdCommand("exit 7", 80, 24)})
	if ex := waitExit(t, s); ex.Code != 7 {
		t.Fatalf("exit = %v, want code 7", ex)
	}
}

// startDetachedTree starts a child that leaves a detached grandchild behind
// and exits; it returns the session, a handle on the grandchild and its pid.
func startDetachedTree(t *testing.T) (*Session, windows.Handle, int) {
	t.Helper()
	pidFile := filepath.Join(t.TempDir(), "grandchild.pid")
	s := openSession(t, Options{Command: helperCommand(t, "spawn-detached", pidFileEnv+"="+pidFile)})
	if ex := waitExit(t, s); !ex.Success() {
		t.Fatalf("the child that spawns the grandchild: exit %v", ex)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("the child recorded no grandchild: %v", err)
	}
	pid, err := strconv.Atoi(string(b))
	if err != nil {
		t.Fatal(err)
	}
	h, err := windows.OpenProcess(windows.SYNCHRONIZE|windows.PROCESS_TERMINATE, false, uint32(pid))
	if err != nil {
		t.Fatalf("open the grandchild %d: %v", pid, err)
	}
	t.Cleanup(func() {
		_ = windows.TerminateProcess(h, 1) // in case the test failed
		_ = windows.CloseHandle(h)
	})
	if gone(h, 0) {
		t.Fatal("the grandchild ended by itself")
	}
	if !s.TreeAlive() {
		t.Fatal("TreeAlive is false while the detached grandchild runs: it left the job")
	}
	return s, h, pid
}

// gone waits up to d for the process behind h to end.
func gone(h windows.Handle, d time.Duration) bool {
	ev, err := windows.WaitForSingleObject(h, uint32(d/time.Millisecond))
	return err == nil && ev == windows.WAIT_OBJECT_0
}

func TestKillEndsADetachedGrandchild(t *testing.T) {
	s, grandchild, _ := startDetachedTree(t)
	if err := s.Kill(); err != nil {
		t.Fatalf("kill: %v", err)
	}
	if !gone(grandchild, 10*time.Second) {
		t.Fatal("the detached grandchild outlived Kill")
	}
	waitFor(t, "TreeAlive to see the empty job", 10*time.Second, func() bool { return !s.TreeAlive() })
}

func TestCloseEndsADetachedGrandchild(t *testing.T) {
	s, grandchild, _ := startDetachedTree(t)
	if err := s.Close(); err != nil && !errors.Is(err, os.ErrClosed) {
		t.Logf("close: %v", err)
	}
	if !gone(grandchild, 10*time.Second) {
		t.Fatal("the detached grandchild outlived Close: the job is not kill-on-close")
	}
}

// Keeping the machine awake holds SetThreadExecutionState until Release.
func TestKeepAwakeWindows(t *testing.T) {
	in, err := KeepAwake("agents are working")
	if err != nil {
		t.Fatalf("keep awake: %v", err)
	}
	if in.How != "SetThreadExecutionState" {
		t.Errorf("kept awake by %q, want SetThreadExecutionState", in.How)
	}
	done := make(chan struct{})
	go func() { in.Release(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Release did not return")
	}
}

// A leftover of an earlier supervisor (a process the ledger recorded) is
// killed while it is still the process recorded, and left alone once its
// pid names another.
func TestKillLeftoversWindows(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), helperEnv+"=sleep")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-exited })

	info, err := Inspect(cmd.Process.Pid)
	if err != nil {
		t.Fatalf("inspect %d: %v", cmd.Process.Pid, err)
	}
	if !strings.EqualFold(filepath.Base(info.Exe), filepath.Base(exe)) {
		t.Errorf("inspect names program %q, want %q", info.Exe, exe)
	}
	other := info
	other.Identity = "windows-created:1"
	if killed, err := KillLeftovers(other); killed || !errors.Is(err, ErrOtherProcess) {
		t.Fatalf("a recorded process of another start time: killed %v, %v; want left alone with ErrOtherProcess", killed, err)
	}
	if killed, err := KillLeftovers(info); !killed || err != nil {
		t.Fatalf("the recorded process: killed %v, %v", killed, err)
	}
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		t.Fatal("the leftover still runs 10 s after KillLeftovers")
	}
	if killed, err := KillLeftovers(info); killed || err != nil {
		t.Errorf("a leftover already gone: killed %v, %v; want nothing to do", killed, err)
	}
}

// A role's process tree is its job: a grandchild that left the console
// and outlived its parent is still in it, and the test itself is not.
func TestHoldsADetachedGrandchildWindows(t *testing.T) {
	s, _, pid := startDetachedTree(t)
	if in, err := s.Holds(pid); err != nil || !in {
		t.Errorf("Holds(the detached grandchild %d) = %v, %v; want true", pid, in, err)
	}
	if in, err := s.Holds(os.Getpid()); err != nil || in {
		t.Errorf("Holds(the test itself) = %v, %v; want false", in, err)
	}
}
