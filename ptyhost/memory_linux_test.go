package ptyhost

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// holdEnv makes the test binary a program that holds that many MiB
// resident (every page written) and prints "held", then waits: a process
// of a tree whose memory is measured.
const holdEnv = "PTYHOST_TEST_HOLD_MIB"

func TestMain(m *testing.M) {
	if v := os.Getenv(holdEnv); v != "" {
		n, _ := strconv.Atoi(v)
		b := make([]byte, n<<20)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		fmt.Print("held\r\n")
		time.Sleep(2 * time.Minute) // bounded: a test that fails to end it leaves nothing for long
		fmt.Print(b[len(b)-1])
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TreeMemory counts the memory the grandchildren of a role's program hold,
// and only its own tree's: two sessions measured together get their own.
func TestTreeMemorySumsTheWholeTree(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	holders := openUnixSession(t, Command{
		Path: "sh", Args: []string{"-c", `"$0" & "$0" & wait`, exe},
		Env: append(os.Environ(), holdEnv+"=64"), Cols: 80, Rows: 24,
	})
	idle := openUnixSession(t, Command{Path: "sleep", Args: []string{"60"}, Env: os.Environ(), Cols: 80, Rows: 24})
	waitFor(t, "both holders to hold their memory", 30*time.Second, func() bool {
		return strings.Count(string(holders.Scrollback()), "held") == 2
	})
	mem, err := TreeMemory([]*Session{holders, idle})
	if err != nil {
		t.Fatal(err)
	}
	if mem[0] < 128<<20 || mem[0] > 300<<20 {
		t.Errorf("tree of two 64 MiB holders: %d MiB, want 128 MiB and the programs' own", mem[0]>>20)
	}
	if mem[1] == 0 || mem[1] > 16<<20 {
		t.Errorf("tree of a sleep: %d KiB, want a few hundred", mem[1]>>10)
	}
	_ = holders.Kill()
	holders.Wait()
	waitFor(t, "the holders' tree to end", 10*time.Second, func() bool { return !holders.TreeAlive() })
	if mem, err = TreeMemory([]*Session{holders}); err != nil || mem[0] != 0 {
		t.Errorf("a tree that ended: %d bytes, %v; want 0", mem[0], err)
	}
}

func openUnixSession(t *testing.T, c Command) *Session {
	t.Helper()
	s, err := Open(Options{Command: c})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = s.Kill()
		s.Wait()
		s.Close()
	})
	return s
}

// BenchmarkTreeMemory is the watch's cost per look: one walk of /proc for
// all of 64 roles' trees (here 64 roots that are not running; the walk is
// the same).
func BenchmarkTreeMemory(b *testing.B) {
	procs := make([]Process, 64)
	for i := range procs {
		procs[i] = fakePid(1_000_000 + i)
	}
	for b.Loop() {
		if _, err := treeMemory(procs); err != nil {
			b.Fatal(err)
		}
	}
}

// fakePid is a Process with a pid only.
type fakePid int

func (p fakePid) Pid() int                { return int(p) }
func (fakePid) Read([]byte) (int, error)  { return 0, nil }
func (fakePid) Write([]byte) (int, error) { return 0, nil }
func (fakePid) Resize(int, int) error     { return nil }
func (fakePid) Wait() (Exit, error)       { return Exit{}, nil }
func (fakePid) Terminate() error          { return nil }
func (fakePid) Kill() error               { return nil }
func (fakePid) TreeAlive() bool           { return false }
func (fakePid) Holds(int) (bool, error)   { return false, nil }
func (fakePid) Close() error              { return nil }
