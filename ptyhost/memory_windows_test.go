package ptyhost

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/windows"
)

// commitEnv is how many MiB the "commit" helper commits.
const commitEnv = "PTYHOST_TEST_COMMIT_MIB"

// commitMemory commits the memory commitEnv asks for, then
// says on the console whether Windows gave it, and waits to be measured.
func commitMemory() int {
	out := os.Stdout
	if h, _ := windows.GetStdHandle(windows.STD_OUTPUT_HANDLE); h == 0 || h == windows.InvalidHandle {
		f, err := os.OpenFile("CONOUT$", os.O_RDWR, 0)
		if err != nil {
			return 2
		}
		out = f
	}
	mib, _ := strconv.Atoi(os.Getenv(commitEnv))
	size := uintptr(mib) << 20
	// Committed memory is charged to the job whether or not it is
	// touched: the commit is what the job's limit refuses.
	if _, err := windows.VirtualAlloc(0, size, windows.MEM_RESERVE|windows.MEM_COMMIT, windows.PAGE_READWRITE); err != nil {
		fmt.Fprintf(out, "refused: %v\r\n", err)
	} else {
		fmt.Fprint(out, "committed\r\n")
	}
	time.Sleep(2 * time.Minute) // bounded: a test that fails to end it leaves nothing for long
	return 0
}

// TreeMemory measures a job's tree: a process that committed 50 MiB is
// counted with them, and a tree within its limit is not told it reached it.
func TestTreeMemoryCountsTheJobsCommittedMemory(t *testing.T) {
	c := helperCommand(t, "commit", commitEnv+"=50")
	c.MemoryMax = 100 << 20
	s := openSession(t, Options{Command: c})
	waitFor(t, "the helper to commit", 30*time.Second, func() bool { return strings.Contains(string(s.Scrollback()), "committed") })
	mem, err := TreeMemory([]*Session{s})
	if err != nil {
		t.Fatal(err)
	}
	if mem[0] == 0 {
		t.Fatal("a running tree measured as 0 bytes")
	}
	if s.MemoryLimitReached() {
		t.Error("a tree within its memory limit was told it reached it")
	}
	if mem[0] < 50<<20 && underWine() {
		t.Skipf("Wine does not charge a VirtualAlloc commit to the process: %d MiB measured", mem[0]>>20)
	}
	if mem[0] < 50<<20 || mem[0] > 200<<20 {
		t.Errorf("a tree that committed 50 MiB: %d MiB", mem[0]>>20)
	}
}

// A role's job with memory_max refuses the tree more than that: a process
// that asks for 300 MiB under a 100 MiB limit is refused, and the session
// tells (the supervisor restarts the role then).
func TestJobMemoryLimitRefusesMoreThanMemoryMax(t *testing.T) {
	over := helperCommand(t, "commit", commitEnv+"=300")
	over.MemoryMax = 100 << 20
	s := openSession(t, Options{Command: over})
	waitFor(t, "the helper to say", 30*time.Second, func() bool {
		out := string(s.Scrollback())
		return strings.Contains(out, "refused") || strings.Contains(out, "committed")
	})
	if !s.MemoryLimited() {
		t.Error("a session with MemoryMax does not say its memory is limited")
	}
	if out := string(s.Scrollback()); strings.Contains(out, "committed") {
		if underWine() {
			t.Skip("Wine does not enforce a job's memory limit (JOB_OBJECT_LIMIT_JOB_MEMORY): 300 MiB committed under 100 MiB")
		}
		t.Fatalf("300 MiB committed in a job limited to 100 MiB: %q", out)
	}
	if !s.MemoryLimitReached() {
		t.Error("the job refused memory, yet its session does not tell")
	}
}
