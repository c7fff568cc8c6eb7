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
// all of 64 roles' trees, each a shell with two children (192 processes
// more than the machine runs anyway).
func BenchmarkTreeMemory(b *testing.B) {
	sessions := make([]*Session, 64)
	for i := range sessions {
		s, err := Open(Options{Command: Command{Path: "sh", Args: []string{"-c", "sleep 60 & sleep 60 & wait"}, Env: os.Environ(), Cols: 80, Rows: 24}})
		if err != nil {
			b.Fatal(err)
		}
		sessions[i] = s
		defer func() {
			_ = s.Kill()
			s.Wait()
			s.Close()
		}()
	}
	var mem []uint64
	for b.Loop() {
		var err error
		if mem, err = TreeMemory(sessions); err != nil {
			b.Fatal(err)
		}
	}
	var total uint64
	for _, m := range mem {
		total += m
	}
	b.ReportMetric(float64(total>>20)/64, "MiB/tree")
}

// statMemory reads what statFields does, for a command name with spaces
// and parentheses too.
func TestStatMemoryReadsTheFields(t *testing.T) {
	self, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		t.Skip("no /proc")
	}
	odd := []byte("42 (a) b (c) S 7 42 9 34816 42 4194560 99 0 0 0 1 2 0 0 20 0 1 0 123 4096 321 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n")
	for _, b := range [][]byte{self, odd} {
		f, err := statFields(b)
		if err != nil {
			t.Fatal(err)
		}
		ppid, sid, rss, ok := statMemory(b)
		if !ok || strconv.Itoa(ppid) != f[1] || strconv.Itoa(sid) != f[3] || strconv.FormatUint(rss, 10) != f[21] {
			t.Errorf("statMemory(%q) = %d %d %d %v; fields say %s %s %s", b, ppid, sid, rss, ok, f[1], f[3], f[21])
		}
	}
}
