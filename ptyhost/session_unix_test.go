//go:build !windows

package ptyhost

import (
	"github.com/shogun-dev/shogun/shoguntest"
	"os"
	"strings"
	"testing"
	"time"
)

func shCommand(script string, cols, rows int) Command {
	return Command{
		Path: "/bin/sh",
		Args: []string{"-c", script},
		Env:  []string{"TERM=xterm-256color", "PATH=" + os.Getenv("PATH"), "SHOGUN_ROLE=tester"},
		Cols: cols, Rows: rows,
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

// waitFor polls cond until it holds or the deadline passes.
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

func finish(t *testing.T, s *Session) Exit {
	t.Helper()
	ex, err := s.Wait()
	if err != nil {
		t.Fatalf("wait: %v", err)
	}
	select {
	case <-s.OutputDone():
	case <-time.After(5 * time.Second):
		t.Fatal("output did not end after the program exited")
	}
	if err := s.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	return ex
}

func TestSessionGivesTheProgramATerminal(t *testing.T) {
	log := &shoguntest.Buffer{}
	s := openSession(t, Options{
		Command: shCommand(`stty size; echo "term=$TERM role=$SHOGUN_ROLE"; test -t 0 && echo stdin-is-tty`, 97, 31),
		Log:     log,
	})
	ex := finish(t, s)
	if !ex.Success() {
		t.Fatalf("exit = %v, want success", ex)
	}
	out := log.String()
	for _, want := range []string{"31 97", "term=xterm-256color role=tester", "stdin-is-tty"} {
		if !strings.Contains(out, want) {
			t.Errorf("log %q lacks %q", out, want)
		}
	}
	screen := s.Screen().Text()
	if !strings.Contains(screen, "term=xterm-256color role=tester") {
		t.Errorf("screen %q lacks the program's line", screen)
	}
	if !strings.Contains(string(s.Scrollback()), "stdin-is-tty") {
		t.Errorf("scrollback lacks the output")
	}
	if !s.ScreenWhole() {
		t.Errorf("the screen model took in a few lines, yet says it dropped some")
	}
}

func TestSessionReportsExitCode(t *testing.T) {
	s := openSession(t, Options{Command: shCommand(`exit 7`, 80, 24)})
	if ex := finish(t, s); ex.Code != 7 {
		t.Fatalf("exit = %v, want code 7", ex)
	}
}

// A TUI that asks the terminal where the cursor is, and waits for the answer,
// must get one from the screen model when nobody is attached.
func TestSessionAnswersTerminalQueries(t *testing.T) {
	queries := []struct {
		name, query, want string
		n                 int
	}{
		{"cursor position", `\033[6n`, "\x1b[1;1R", 6},
		{"device status", `\033[5n`, "\x1b[0n", 4},
		{"device attributes", `\033[c`, "\x1b[?", 3},
		{"background colour", `\033]11;?\007`, "\x1b]11;rgb:", 10},
	}
	for _, q := range queries {
		t.Run(q.name, func(t *testing.T) {
			log := &shoguntest.Buffer{}
			script := `stty raw -echo; printf '` + q.query + `'; r=$(dd bs=1 count=` + itoa(q.n) + ` 2>/dev/null); stty sane; printf 'REPLY<%s>\n' "$r"`
			s := openSession(t, Options{Command: shCommand(script, 80, 24), Log: log})
			done := make(chan Exit, 1)
			go func() { ex, _ := s.Wait(); done <- ex }()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Fatalf("program still waiting for an answer to %q; output %q", q.query, log.String())
			}
			finish(t, s)
			if !strings.Contains(log.String(), "REPLY<"+q.want) {
				t.Fatalf("reply = %q, want prefix %q", log.String(), q.want)
			}
		})
	}
}

func itoa(n int) string { return itoaBig(n) }

// blockingWriter stands for a log disk that has stopped answering.
type blockingWriter struct{ release chan struct{} }

func (w blockingWriter) Write(p []byte) (int, error) {
	<-w.release
	return len(p), nil
}

// A program flooding its terminal while the screen model or the log is stuck
// must run to its end: the reader never waits for a consumer. Once the stuck
// consumer resumes it catches up with the latest output; what it could not
// hold is dropped and said so, never waited for.
func TestSessionFloodWithStalledConsumerNeverBlocksTheChild(t *testing.T) {
	const total = 8 << 20 // 8 MiB, far more than the kernel's PTY buffer
	script := `head -c ` + itoaBig(total) + ` /dev/zero | tr '\0' 'x'; echo; echo FLOOD-END`

	t.Run("screen model stalled", func(t *testing.T) {
		release := make(chan struct{})
		log := &shoguntest.Buffer{}
		s, err := Open(Options{
			Command:    shCommand(script, 120, 40),
			Log:        log,
			ScreenLag:  64 << 10,
			screenHook: func() { <-release },
		})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Kill()
		assertExitsWhileStalled(t, s)
		close(release)
		<-s.OutputDone()
		_ = s.Close()
		if got := strings.Count(log.String(), "x"); got != total {
			t.Errorf("log has %d of %d bytes", got, total)
		}
		if !strings.Contains(s.Screen().Text(), "FLOOD-END") {
			t.Errorf("screen does not show the latest output: %q", s.Screen().Text())
		}
		if s.ScreenWhole() {
			t.Errorf("the screen model dropped output it could not hold, yet says it took in all")
		}
	})

	t.Run("log stalled", func(t *testing.T) {
		w := blockingWriter{release: make(chan struct{})}
		s, err := Open(Options{Command: shCommand(script, 120, 40), Log: w, LogLag: 256 << 10, ScreenLag: 64 << 10})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Kill()
		assertExitsWhileStalled(t, s)
		waitFor(t, "screen to show the end", 10*time.Second, func() bool {
			return strings.Contains(s.Screen().Text(), "FLOOD-END")
		})
		close(w.release)
		<-s.OutputDone()
		_ = s.Close()
		if got := s.OutputBytes(); got < total {
			t.Errorf("reader saw %d bytes, want at least %d", got, total)
		}
	})
}

// assertExitsWhileStalled fails if the program cannot finish while a
// consumer is stuck. The deadline only detects a hang; it measures nothing.
func assertExitsWhileStalled(t *testing.T, s *Session) {
	t.Helper()
	exited := make(chan Exit, 1)
	go func() { ex, _ := s.Wait(); exited <- ex }()
	select {
	case ex := <-exited:
		if !ex.Success() {
			t.Fatalf("flooding program exit = %v", ex)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the flooding program is blocked behind a stalled consumer")
	}
}

func itoaBig(n int) string {
	var b []byte
	for n > 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(b)
}

func TestSessionResize(t *testing.T) {
	log := &shoguntest.Buffer{}
	s := openSession(t, Options{Command: shCommand(`trap 'stty size; exit 0' WINCH; stty size; while :; do sleep 0.05; done`, 80, 24), Log: log})
	waitFor(t, "first size", 5*time.Second, func() bool { return strings.Contains(log.String(), "24 80") })
	if err := s.Resize(132, 50); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "new size", 5*time.Second, func() bool { return strings.Contains(log.String(), "50 132") })
	if err := s.Resize(0, 10); err == nil {
		t.Error("resize to 0 columns succeeded")
	}
	// A size that would make the screen model allocate a billion cells is
	// refused before anything changes.
	if err := s.Resize(32767, 32767); err == nil || !strings.Contains(err.Error(), "out of range (20 to 1000 columns, 5 to 500 rows)") {
		t.Errorf("resize to 32767x32767: %v, want an out-of-range error", err)
	}
	if scr := s.Screen(); scr.Cols != 132 || len(scr.Lines) > 50 {
		t.Errorf("screen is %d columns, %d lines after a refused resize; want 132 columns", scr.Cols, len(scr.Lines))
	}
}

func TestInputAreaIsTheComposer(t *testing.T) {
	cases := []struct {
		name   string
		marker string
		snap   ScreenSnapshot
		want   string
	}{
		{"one line", "", ScreenSnapshot{Lines: []string{"hello", "› read the file"}, CursorRow: 1, Cols: 40}, "›readthefile"},
		{"wrapped onto the cursor row", "", ScreenSnapshot{Lines: []string{"history", "› read the task file and rep", "  ort."}, CursorRow: 2, Cols: 28}, "›readthetaskfileandreport."},
		{"short row above is not input", "", ScreenSnapshot{Lines: []string{"Understood: hi", "› "}, CursorRow: 1, Cols: 40}, "›"},
		{"cursor outside the screen", "", ScreenSnapshot{Lines: []string{"x"}, CursorRow: 5, Cols: 40}, ""},
		{"unmarked newline: blank cursor row takes the rows above", "", ScreenSnapshot{Lines: []string{"", "› read the file", "  "}, CursorRow: 2, Cols: 40}, "›readthefile"},
		{"marker: composer grown by a newline", "›", ScreenSnapshot{Lines: []string{"Understood: hi", "", "› read the file", "", ""}, CursorRow: 3, Cols: 40}, "readthefile"},
		{"marker: boxed composer of three rows", "❯", ScreenSnapshot{Lines: []string{"────", "│ ❯ read the task │", "│   file and      │", "│   report        │", "────", "? for shortcuts"}, CursorRow: 3, Cols: 40}, "readthetaskfileandreport"},
		{"marker: submitted text in the transcript is outside", "›", ScreenSnapshot{Lines: []string{"› read the file", "", "• Working", "", "› "}, CursorRow: 4, Cols: 40}, ""},
		{"marker: a dialog's selection above is outside", "❯", ScreenSnapshot{Lines: []string{"❯ 1. Yes", "  2. No", "", "❯ hello"}, CursorRow: 3, Cols: 40}, "hello"},
		{"marker: the second of two marks (Gemini CLI's yolo mode), the first in the transcript", "> *", ScreenSnapshot{Lines: []string{"> Read the file", "", " * read the task"}, CursorRow: 2, Cols: 40}, "readthetask"},
		{"marker missing: falls back to the cursor row", "❯", ScreenSnapshot{Lines: []string{"output", "$ ls"}, CursorRow: 1, Cols: 40}, "$ls"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, marked := c.snap.InputArea(c.marker)
			if got != c.want || marked != (c.marker != "" && !strings.HasPrefix(c.name, "marker missing")) {
				t.Errorf("InputArea(%q) = %q, %v; want %q", c.marker, got, marked, c.want)
			}
		})
	}
}

// Every waiter on ScreenNext is let go once the screen takes in the
// program's next output, and not before: typing waits on it for the echo
// of its keys, as the role's watcher waits on ScreenChanged.
func TestScreenNextLetsEveryWaiterGoAtTheNextChange(t *testing.T) {
	s := openSession(t, Options{Command: shCommand(`echo ready; read l; echo "got $l"; sleep 5`, 80, 24)})
	waitFor(t, "the first screen, whole", 5*time.Second, func() bool {
		return strings.Contains(s.Screen().Text(), "ready") && s.ScreenBytes() == s.OutputBytes()
	})
	// ScreenBytes moves a moment before the generation: wait for both.
	var gen uint64
	waitFor(t, "the screen to rest", 5*time.Second, func() bool {
		gen = s.ScreenGeneration()
		time.Sleep(20 * time.Millisecond)
		return s.ScreenGeneration() == gen
	})
	waiters := []<-chan struct{}{s.ScreenNext(gen), s.ScreenNext(gen), s.ScreenNext(gen)}
	time.Sleep(50 * time.Millisecond) // the program writes nothing until it reads a line
	for i, w := range waiters {
		select {
		case <-w:
			t.Fatalf("waiter %d let go with no new output (screen %q)", i, s.Screen().Text())
		default:
		}
	}
	if _, err := s.Write([]byte("hi\r")); err != nil {
		t.Fatal(err)
	}
	for i, w := range waiters {
		select {
		case <-w:
		case <-time.After(5 * time.Second):
			t.Fatalf("waiter %d still waits after the program wrote (screen %q)", i, s.Screen().Text())
		}
	}
	waitFor(t, "the answer on the screen", 5*time.Second, func() bool { return strings.Contains(s.Screen().Text(), "got hi") })
	select {
	case <-s.ScreenNext(gen):
	default:
		t.Fatal("ScreenNext of a generation already past waits")
	}
}
