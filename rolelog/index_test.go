package rolelog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// swapFile is a log file that the test rotates as lumberjack does.
type swapFile struct{ f *os.File }

func (s *swapFile) Write(p []byte) (int, error) { return s.f.Write(p) }

func openLog(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// The output written while a task ran is found again in the log, across a
// rotation, and what came before and after is left out.
func TestSpanFindsTheOutputOfAMoment(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "worker.log")
	// Another role whose id starts like this one's: not this log's rotation.
	if err := os.WriteFile(filepath.Join(dir, "worker-2.log"), []byte("other role\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// What an earlier supervisor wrote stays in the file, before the stream.
	if err := os.WriteFile(path, []byte("earlier run\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sf := &swapFile{f: openLog(t, path)}
	defer func() { sf.f.Close() }()
	x := NewIndex(sf)
	x.every = 20 * time.Millisecond
	write := func(s string) {
		t.Helper()
		if _, err := x.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	pause := func() { time.Sleep(3 * x.every) }

	write("before\n")
	pause()
	from := time.Now()
	pause()
	write("task starts\n")
	// The log rotates mid-task.
	sf.f.Close()
	if err := os.Rename(path, filepath.Join(dir, "worker-2026-11-22T10-15-00.000.log")); err != nil {
		t.Fatal(err)
	}
	sf.f = openLog(t, path)
	pause()
	write("task ends\n")
	pause()
	to := time.Now()
	pause()
	write("after\n")

	sp := x.Span(from, to)
	if sp.Before {
		t.Error("a span inside the index's life is said to begin before it")
	}
	ex, err := ReadStream(path, x, sp, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(ex.Data); got != "task starts\ntask ends\n" || ex.Skipped != 0 {
		t.Errorf("span = %q (skipped %d), want the task's two lines", got, ex.Skipped)
	}
	// A limit keeps the end.
	if ex, _ := ReadStream(path, x, sp, 10); string(ex.Data) != "task ends\n" || ex.Skipped != int64(len("task starts\n")) {
		t.Errorf("limited span = %q (skipped %d)", ex.Data, ex.Skipped)
	}
	// From before the supervisor started: its whole stream, and a word
	// that the earlier part is not there.
	sp = x.Span(from.Add(-time.Hour), time.Now())
	ex, err = ReadStream(path, x, sp, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !sp.Before || !strings.HasPrefix(string(ex.Data), "before\n") || !strings.HasSuffix(string(ex.Data), "after\n") {
		t.Errorf("span from an hour ago = %+v, %q", sp, ex.Data)
	}
	// The rotated file is deleted: the excerpt says what is missing.
	if err := os.Remove(filepath.Join(dir, "worker-2026-11-22T10-15-00.000.log")); err != nil {
		t.Fatal(err)
	}
	ex, err = ReadStream(path, x, x.Span(from, to), 0)
	if err != nil {
		t.Fatal(err)
	}
	if string(ex.Data) != "task ends\n" || ex.Skipped != int64(len("task starts\n")) {
		t.Errorf("span with its rotated part gone = %q (skipped %d)", ex.Data, ex.Skipped)
	}
}

// Marks are bounded: a long run thins them and still covers its start.
func TestIndexMarksAreBounded(t *testing.T) {
	x := NewIndex(discard{})
	x.every = 0
	for i := 0; i < 3*maxMarks; i++ {
		if _, err := x.Write([]byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(x.marks); n > maxMarks || n < maxMarks/4 {
		t.Errorf("%d marks after %d writes, want at most %d", n, 3*maxMarks, maxMarks)
	}
	if x.marks[0].off != 0 || x.Total() != 3*maxMarks {
		t.Errorf("first mark at %d, total %d", x.marks[0].off, x.Total())
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
