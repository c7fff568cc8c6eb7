//go:build !windows

package agentsim

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
)

// waitLimit bounds every wait; tests that pass take a fraction of it.
const waitLimit = 5 * time.Second

// pause is longer than the paste window: what a person or the supervisor
// leaves between the text and the separate `\r` that submits it.
const pause = 3 * DefaultPasteWindow

// ptyAgent is the simulated agent running in a real pseudo-terminal, as the
// supervisor runs it.
type ptyAgent struct {
	t      *testing.T
	dir    string // its working directory
	record string
	cmd    *exec.Cmd
	tty    *os.File // the terminal's master side

	mu  sync.Mutex
	out []byte

	readDone chan struct{}
	exited   chan struct{}
}

// startAgent starts the agent in a temporary directory that is also its
// workspace; env is added to its environment last, so it can override that.
func startAgent(t *testing.T, opts Options, env ...string) *ptyAgent {
	t.Helper()
	// The real path, as the agent's os.Getwd sees it, so that the absolute
	// paths it records compare equal where the temporary folder is a symlink.
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	a := &ptyAgent{t: t, dir: dir, readDone: make(chan struct{}), exited: make(chan struct{})}
	a.record = filepath.Join(a.dir, "record.jsonl")
	opts.RecordPath = a.record
	raw, err := json.Marshal(opts)
	if err != nil {
		t.Fatal(err)
	}
	a.cmd = exec.Command(os.Args[0])
	a.cmd.Dir = a.dir
	a.cmd.Env = append(os.Environ(), childEnv+"=1", optionsEnv+"="+string(raw), "SHOGUN_ROLE=ashigaru1",
		// Under -race a child otherwise lingers a second at exit, waiting
		// for reports from its reader, which is blocked in read(2).
		"GORACE=atexit_sleep_ms=0", "SHOGUN_WORKSPACE="+a.dir)
	a.cmd.Env = append(a.cmd.Env, env...)
	a.tty, err = pty.StartWithSize(a.cmd, &pty.Winsize{Cols: 100, Rows: 30})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(a.readDone)
		buf := make([]byte, 64<<10)
		for {
			n, err := a.tty.Read(buf)
			a.mu.Lock()
			a.out = append(a.out, buf[:n]...)
			a.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	go func() {
		a.cmd.Wait()
		close(a.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-a.exited:
		default:
			a.cmd.Process.Kill()
			<-a.exited
		}
		a.tty.Close()
		<-a.readDone
	})
	return a
}

func (a *ptyAgent) write(s string) {
	a.t.Helper()
	if _, err := a.tty.Write([]byte(s)); err != nil {
		a.t.Fatalf("typing %q: %v", s, err)
	}
}

// mark is a position in the output, to wait for what comes after it.
func (a *ptyAgent) mark() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.out)
}

func (a *ptyAgent) output() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return string(a.out)
}

// waitFor waits until s appears in the output after from, and returns the
// position just after it.
func (a *ptyAgent) waitFor(s string, from int) int {
	a.t.Helper()
	deadline := time.Now().Add(waitLimit)
	for {
		a.mu.Lock()
		i := bytes.Index(a.out[from:], []byte(s))
		a.mu.Unlock()
		if i >= 0 {
			return from + i + len(s)
		}
		if time.Now().After(deadline) {
			out := a.output()
			a.t.Fatalf("output never showed %q; the last of it:\n%q", s, out[max(0, len(out)-2000):])
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitPrompt waits for the idle prompt with its hint.
func (a *ptyAgent) waitPrompt() {
	a.t.Helper()
	a.waitFor("? for shortcuts", 0)
}

// typeLine types text, waits for the agent to show it, pauses and submits it
// with a separate `\r`, as section 6 of DESIGN.md asks of the supervisor.
func (a *ptyAgent) typeLine(text string) {
	a.t.Helper()
	m := a.mark()
	a.write(text)
	a.waitFor("› "+text, m)
	time.Sleep(pause)
	a.write("\r")
}

// records is everything the agent recorded, checked for the fields each kind
// of entry must have.
func (a *ptyAgent) records() []recordEntry {
	a.t.Helper()
	data, err := os.ReadFile(a.record)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		a.t.Fatal(err)
	}
	var entries []recordEntry
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		var e recordEntry
		if err := dec.Decode(&e); err != nil {
			a.t.Fatalf("record line %q: %v", sc.Bytes(), err)
		}
		if _, err := time.Parse(time.RFC3339Nano, e.At); err != nil {
			a.t.Errorf("record entry %+v: time is not RFC 3339: %v", e, err)
		}
		switch e.Kind {
		case recordSubmit, recordNewline:
			if e.TaskID != "" || e.Dialog != "" {
				a.t.Errorf("record entry %+v: a %s names a task or a dialog", e, e.Kind)
			}
		case recordTask, recordReport:
			if e.TaskID == "" || e.Line == "" || e.Dialog != "" {
				a.t.Errorf("record entry %+v: want a task id and a line, no dialog", e)
			}
		case recordDialog:
			if e.Dialog == "" || e.Line == "" || e.TaskID != "" {
				a.t.Errorf("record entry %+v: want a dialog and a line, no task", e)
			}
		default:
			a.t.Errorf("record entry %+v: unknown kind", e)
		}
		entries = append(entries, e)
	}
	return entries
}

// withoutTimes drops the times from entries, to compare the rest.
func withoutTimes(entries []recordEntry) []recordEntry {
	out := make([]recordEntry, len(entries))
	for i, e := range entries {
		e.At = ""
		out[i] = e
	}
	return out
}

// submissions is what the agent recorded as submitted.
func (a *ptyAgent) submissions() []string {
	a.t.Helper()
	var lines []string
	for _, e := range a.records() {
		if e.Kind == recordSubmit {
			lines = append(lines, e.Line)
		}
	}
	return lines
}

// waitSubmissions waits until n lines were submitted and returns them.
func (a *ptyAgent) waitSubmissions(n int) []string {
	a.t.Helper()
	deadline := time.Now().Add(waitLimit)
	for {
		got := a.submissions()
		if len(got) >= n || time.Now().After(deadline) {
			if len(got) != n {
				a.t.Fatalf("submitted %q, want %d lines", got, n)
			}
			return got
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitExit waits for the agent to end and for all its output to be read, and
// returns its exit status.
func (a *ptyAgent) waitExit() int {
	a.t.Helper()
	select {
	case <-a.exited:
		select {
		case <-a.readDone: // the terminal reports its end after the last byte
		case <-time.After(waitLimit):
			a.t.Fatalf("output still open %v after the agent exited", waitLimit)
		}
		if ws, ok := a.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return a.cmd.ProcessState.ExitCode()
	case <-time.After(waitLimit):
		a.t.Fatalf("agent still running after %v; output:\n%q", waitLimit, a.output())
		return -1
	}
}

// stillRunning fails the test if the agent has exited.
func (a *ptyAgent) stillRunning() {
	a.t.Helper()
	select {
	case <-a.exited:
		a.t.Fatalf("agent exited (%v); output:\n%q", a.cmd.ProcessState, a.output())
	default:
	}
}

func TestPasteBurstIsNotSubmitted(t *testing.T) {
	t.Parallel()
	a := startAgent(t, Options{})
	a.waitPrompt()

	// Text and `\r` in one write, as a paste or a careless supervisor sends
	// them: the `\r` becomes a newline in the composer.
	m := a.mark()
	a.write("hello world\r")
	a.waitFor("› hello world\r\n\r\x1b[2K  \r\n\r\x1b[2K  ? for shortcuts", m)
	if got := a.submissions(); len(got) != 0 {
		t.Fatalf("text and \\r in one write were submitted: %q", got)
	}

	// Ctrl-U clears it; text, a pause and a separate `\r` submit.
	m = a.mark()
	a.write("\x15")
	a.waitFor("\r\x1b[2K› \r\n", m)
	a.typeLine("typed line")
	if got := a.waitSubmissions(1); got[0] != "typed line" {
		t.Errorf("submitted %q, want exactly %q", got[0], "typed line")
	}
	a.waitFor("Understood: typed line", m)
}

func TestBracketedPasteThenSubmit(t *testing.T) {
	t.Parallel()
	a := startAgent(t, Options{})
	a.waitPrompt()
	m := a.mark()
	a.write("\x1b[200~first line\r\nsecond line\rthird line\x1b[201~")
	a.waitFor("  third line", m)
	time.Sleep(pause)
	a.write("\r")
	if got := a.waitSubmissions(1); got[0] != "first line\nsecond line\nthird line" {
		t.Errorf("submitted %q, want the three pasted lines as one entry", got[0])
	}
	a.waitFor("Understood: first line second line third line", m)
}

func TestTaskFileGetsReport(t *testing.T) {
	t.Parallel()
	for _, fail := range []bool{false, true} {
		name := map[bool]string{false: "done", true: "failed"}[fail]
		t.Run(name, func(t *testing.T) {
			a := startAgent(t, Options{WorkTime: 100 * time.Millisecond, Fail: fail})
			writeFile(t, filepath.Join(a.dir, "tasks", "ashigaru1.yaml"), `task_id: t-20261122-0001
command_id: cmd-042
role: ashigaru1
title: Add the login form
body: |
  Create src/login.tsx
assigned_at: 2026-11-22T10:15:00Z
report_to: runtime/queue/reports/ashigaru1.yaml
`)
			a.waitPrompt()
			m := a.mark()
			a.typeLine("New task: read tasks/ashigaru1.yaml and report.")
			a.waitFor("Working… (esc to interrupt)", m)
			a.waitFor("✓ Reported t-20261122-0001", m)

			reportPath := filepath.Join(a.dir, "runtime", "queue", "reports", "ashigaru1.yaml")
			r := readReport(t, reportPath)
			if r.TaskID != "t-20261122-0001" || r.Status != name {
				t.Errorf("report %+v, want task t-20261122-0001 with status %s", r, name)
			}
			if !fail && r.Summary != "Done: Add the login form" {
				t.Errorf("summary %q, want %q", r.Summary, "Done: Add the login form")
			}
			if !strings.Contains(r.Details, "ashigaru1") {
				t.Errorf("details %q do not name the role", r.Details)
			}
			if _, err := os.Stat(reportPath + ".tmp"); !os.IsNotExist(err) {
				t.Errorf("temporary report left behind: %v", err)
			}
			wantRecords := []recordEntry{
				{Kind: recordSubmit, Line: "New task: read tasks/ashigaru1.yaml and report."},
				{Kind: recordTask, TaskID: "t-20261122-0001", Line: "Add the login form"},
				{Kind: recordReport, TaskID: "t-20261122-0001", Line: reportPath},
			}
			if got := withoutTimes(a.records()); !reflect.DeepEqual(got, wantRecords) {
				t.Errorf("records %+v, want %+v", got, wantRecords)
			}
			// Idle again: the busy indicator has left the pane.
			reported := a.waitFor("✓ Reported", m)
			idle := a.waitFor("? for shortcuts", reported)
			if pane := a.output()[reported:idle]; strings.Contains(pane, "esc to interrupt") {
				t.Errorf("busy indicator still drawn after the report: %q", pane)
			}
		})
	}
}

func TestEscapeInterruptsWork(t *testing.T) {
	t.Parallel()
	a := startAgent(t, Options{WorkTime: time.Hour})
	writeFile(t, filepath.Join(a.dir, "t.yaml"), "task_id: t-1\ntitle: T\nbody: B\nreport_to: r.yaml\n")
	a.waitPrompt()
	m := a.mark()
	a.typeLine("t.yaml")
	a.waitFor("Working… (esc to interrupt)", m)
	a.write("\x1b")
	a.waitFor("■ Interrupted t-1", m)
	if _, err := os.Stat(filepath.Join(a.dir, "r.yaml")); !os.IsNotExist(err) {
		t.Errorf("an interrupted task was reported: %v", err)
	}
}

func TestExitCommand(t *testing.T) {
	t.Parallel()
	a := startAgent(t, Options{})
	a.waitPrompt()
	a.typeLine("/exit")
	if code := a.waitExit(); code != 0 {
		t.Errorf("/exit: exit status %d, want 0", code)
	}
	a.waitFor("Bye.", 0)
}

func TestCrashAfter(t *testing.T) {
	t.Parallel()
	start := time.Now()
	a := startAgent(t, Options{CrashAfter: 200 * time.Millisecond, ExitCode: 3})
	a.waitPrompt()
	if code := a.waitExit(); code != 3 {
		t.Errorf("crash: exit status %d, want 3", code)
	}
	if d := time.Since(start); d < 200*time.Millisecond {
		t.Errorf("crashed after %v, before CrashAfter", d)
	}
}

func TestTermSignals(t *testing.T) {
	t.Parallel()
	t.Run("ignored", func(t *testing.T) {
		a := startAgent(t, Options{IgnoreTerm: true})
		a.waitPrompt()
		for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGHUP, syscall.SIGINT} {
			if err := a.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
		}
		// Still answering after the signals: the line is handled, then /exit.
		m := a.mark()
		a.typeLine("still there?")
		a.waitFor("Understood: still there?", m)
		a.stillRunning()
		a.typeLine("/exit")
		if code := a.waitExit(); code != 0 {
			t.Errorf("exit status %d after /exit, want 0", code)
		}
	})
	t.Run("honoured", func(t *testing.T) {
		a := startAgent(t, Options{})
		a.waitPrompt()
		if err := a.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if code := a.waitExit(); code != 128+int(syscall.SIGTERM) {
			t.Errorf("exit status %d after SIGTERM, want %d", code, 128+int(syscall.SIGTERM))
		}
		// The last line names the signal, not its description
		// ("terminated by terminated").
		if want := "agent-sim: terminated by SIGTERM (exit status 143)"; !strings.Contains(a.output(), want) {
			t.Errorf("output after SIGTERM lacks %q:\n%q", want, a.output())
		}
	})
}

func TestTrustPromptBlocksPrompt(t *testing.T) {
	t.Parallel()
	a := startAgent(t, Options{TrustPrompt: true})
	a.waitFor("Do you trust the files in this folder?\r\n\r\x1b[2K 1. Yes, proceed\r\n\r\x1b[2K 2. No", 0)
	m := a.mark()
	a.write("x")
	// A negative can only be seen by waiting: nothing may change for a while.
	time.Sleep(200 * time.Millisecond)
	if out := a.output()[m:]; out != "" {
		t.Fatalf("the trust dialog answered a stray key: %q", out)
	}
	a.write("1")
	a.waitPrompt()
	a.typeLine("hello")
	if got := a.waitSubmissions(1); got[0] != "hello" {
		t.Errorf("submitted %q after the dialog, want %q", got, "hello")
	}
}

func TestStartDelayKeepsInput(t *testing.T) {
	t.Parallel()
	const delay = 600 * time.Millisecond
	start := time.Now()
	a := startAgent(t, Options{StartDelay: delay})
	a.waitFor("Starting…", 0)
	// Typed while starting, with a pause before the `\r`: the arrival times
	// count, so this is a submit once the agent gets to it.
	a.write("/exit")
	time.Sleep(pause)
	a.write("\r")
	if code := a.waitExit(); code != 0 {
		t.Errorf("exit status %d, want 0", code)
	}
	if d := time.Since(start); d < delay {
		t.Errorf("exited after %v, before the start delay ended", d)
	}
	out := a.output()
	if p, b := strings.Index(out, "? for shortcuts"), strings.Index(out, "Bye."); p < 0 || b < p {
		t.Errorf("the prompt did not show before the early input was handled:\n%q", out)
	}
}

func TestUnresponsiveAgents(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		opts    Options
		records int // lines recorded before it stops answering
	}{
		{"hang", Options{Hang: true}, 1},
		{"ignore input", Options{IgnoreInput: true}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := startAgent(t, tc.opts)
			a.waitPrompt()
			if tc.records > 0 {
				a.typeLine("first")
				a.waitSubmissions(1)
			}
			m := a.mark()
			a.write("more")
			time.Sleep(pause)
			a.write("\r")
			time.Sleep(200 * time.Millisecond)
			if out := a.output()[m:]; out != "" {
				t.Errorf("answered input: %q", out)
			}
			if got := a.submissions(); len(got) != tc.records {
				t.Errorf("submitted %q, want %d lines", got, tc.records)
			}
			a.stillRunning()
		})
	}
}

func TestFlood(t *testing.T) {
	t.Parallel()
	t.Run("as fast as possible", func(t *testing.T) {
		a := startAgent(t, Options{Flood: 1 << 40})
		a.waitPrompt()
		deadline := time.Now().Add(waitLimit)
		for a.mark() < 1<<20 {
			if time.Now().After(deadline) {
				t.Fatalf("only %d bytes of flood in %v", a.mark(), waitLimit)
			}
			time.Sleep(5 * time.Millisecond)
		}
		// The flood never starves the agent's own work.
		a.typeLine("/exit")
		if code := a.waitExit(); code != 0 {
			t.Errorf("exit status %d, want 0", code)
		}
	})
	t.Run("paced", func(t *testing.T) {
		a := startAgent(t, Options{Flood: 20_000})
		a.waitPrompt()
		m := a.waitFor("[flood 0000001]", 0)
		time.Sleep(500 * time.Millisecond)
		if n := a.mark() - m; n < 1_000 || n > 100_000 {
			t.Errorf("%d bytes in 0.5 s at 20,000 bytes/s", n)
		}
	})
}
