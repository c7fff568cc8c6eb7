//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd

package agentsim

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/vt"
	"golang.org/x/sys/unix"
)

// The terminal startAgent gives the agent.
const termCols, termRows = 100, 30

// termScreen is what a terminal shows after the agent's output: its rows,
// trailing blanks removed, and the cursor, both 0-based.
type termScreen struct {
	rows     []string
	row, col int
}

// find returns the first row containing s, or -1.
func (s termScreen) find(sub string) int {
	for i, r := range s.rows {
		if strings.Contains(r, sub) {
			return i
		}
	}
	return -1
}

func (s termScreen) contains(sub string) bool { return s.find(sub) >= 0 }

// String shows the screen for a failure message, the cursor marked.
func (s termScreen) String() string {
	var b strings.Builder
	for i, r := range s.rows {
		mark := "  "
		if i == s.row {
			mark = "=>"
		}
		fmt.Fprintf(&b, "%s%2d|%s\n", mark, i, r)
	}
	fmt.Fprintf(&b, "cursor at row %d, column %d", s.row, s.col)
	return b.String()
}

// screen replays everything the agent wrote through a VT emulator of its
// terminal's size: what a person, or the supervisor's screen model, sees.
func (a *ptyAgent) screen() termScreen {
	emu := vt.NewEmulator(termCols, termRows)
	defer emu.Close()
	emu.Write([]byte(a.output()))
	rows := strings.Split(emu.String(), "\n")
	for len(rows) < termRows {
		rows = append(rows, "")
	}
	for i, r := range rows {
		rows[i] = strings.TrimRight(r, " ")
	}
	pos := emu.CursorPosition()
	return termScreen{rows: rows, row: pos.Y, col: pos.X}
}

// waitScreen waits until the screen satisfies ok and returns it.
func (a *ptyAgent) waitScreen(what string, ok func(termScreen) bool) termScreen {
	a.t.Helper()
	deadline := time.Now().Add(waitLimit)
	for {
		s := a.screen()
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			a.t.Fatalf("the screen never showed %s:\n%s", what, s)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitRecords waits until the agent recorded n entries and returns them
// without their times.
func (a *ptyAgent) waitRecords(n int) []recordEntry {
	a.t.Helper()
	deadline := time.Now().Add(waitLimit)
	for {
		got := a.records()
		if len(got) >= n || time.Now().After(deadline) {
			if len(got) != n {
				a.t.Fatalf("recorded %+v, want %d entries", got, n)
			}
			return withoutTimes(got)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitRaw waits until the agent has put its terminal in raw mode: typed
// before that, text is echoed by the terminal itself, not the agent.
func (a *ptyAgent) waitRaw() {
	a.t.Helper()
	deadline := time.Now().Add(waitLimit)
	for {
		// On the master side, the terminal's attributes are the slave's.
		tio, err := unix.IoctlGetTermios(int(a.tty.Fd()), ioctlGetTermios)
		if err != nil {
			a.t.Fatalf("read the terminal's attributes: %v", err)
		}
		if tio.Lflag&(unix.ECHO|unix.ICANON) == 0 {
			return
		}
		if time.Now().After(deadline) {
			a.t.Fatalf("the terminal is not in raw mode after %v", waitLimit)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// quiet fails the test if the agent writes anything for d from now.
func (a *ptyAgent) quiet(d time.Duration, why string) {
	a.t.Helper()
	m := a.mark()
	time.Sleep(d)
	if out := a.output()[m:]; out != "" {
		a.t.Fatalf("%s, yet the agent wrote %q", why, out)
	}
}

func TestLongPasteWindowTakesReturnAsNewline(t *testing.T) {
	t.Parallel()
	for _, window := range []time.Duration{400 * time.Millisecond, 600 * time.Millisecond} {
		t.Run(window.String(), func(t *testing.T) {
			t.Parallel()
			a := startAgent(t, Options{PasteWindow: window})
			a.waitPrompt()
			before := a.screen()

			// A `\r` half a window after the text, far beyond the default
			// window: still a newline, inserted into the composer.
			a.write("hello")
			time.Sleep(window / 2)
			a.write("\r")
			s := a.waitScreen("the composer's second line", func(s termScreen) bool {
				return s.row == before.row+1 && s.rows[s.row-1] == "› hello"
			})
			if s.rows[s.row] != "" || s.col != 2 || s.rows[s.row+1] != "  ? for shortcuts" {
				t.Fatalf("after a newline the composer should have an empty second line, the cursor on it at column 2 and the footer below:\n%s", s)
			}
			if got := a.waitRecords(1); !reflect.DeepEqual(got, []recordEntry{{Kind: recordNewline, Line: "hello"}}) {
				t.Fatalf("records %+v, want one newline after %q", got, "hello")
			}

			// More text, then a `\r` after a pause longer than the window
			// submits both lines as one message.
			a.write("world")
			a.waitScreen("the second line typed", func(s termScreen) bool { return s.rows[s.row] == "  world" && s.col == 7 })
			time.Sleep(window + 200*time.Millisecond)
			a.write("\r")
			want := []recordEntry{{Kind: recordNewline, Line: "hello"}, {Kind: recordSubmit, Line: "hello\nworld"}}
			if got := a.waitRecords(2); !reflect.DeepEqual(got, want) {
				t.Errorf("records %+v, want %+v", got, want)
			}
			a.waitScreen("the composer empty again", func(s termScreen) bool {
				return s.rows[s.row] == "›" && s.contains("Understood: hello world")
			})
		})
	}
}

func TestFramedComposerGrowsWithItsText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		style string
		// textCol is the column of the text's first character; textCols how
		// many columns of text fit on a row before it wraps.
		textCol, textCols int
		top, bottom       func(string) bool // the frame's rows above and below the text
		row               func(string) bool // a text row, empty or not
	}{
		{
			style: ComposerBox, textCol: 4, textCols: termCols - 1 - 6,
			top:    func(r string) bool { return r == "╭"+strings.Repeat("─", termCols-3)+"╮" },
			bottom: func(r string) bool { return r == "╰"+strings.Repeat("─", termCols-3)+"╯" },
			row: func(r string) bool {
				return strings.HasPrefix(r, "│ ") && strings.HasSuffix(r, " │") && textWidth(r) == termCols-1
			},
		},
		{
			style: ComposerRules, textCol: 2, textCols: termCols - 1 - 2,
			top:    func(r string) bool { return r == strings.Repeat("─", termCols-1) },
			bottom: func(r string) bool { return r == strings.Repeat("─", termCols-1) },
			row:    func(r string) bool { return !strings.Contains(r, "─") },
		},
	} {
		t.Run(tc.style, func(t *testing.T) {
			t.Parallel()
			a := startAgent(t, Options{Composer: tc.style})
			a.waitPrompt()
			// The composer with n text rows: the prompt marker on the
			// first, the frame around them, the footer under the frame, the
			// cursor on the last text row at col.
			check := func(what string, n, col int) termScreen {
				t.Helper()
				return a.waitScreen(what, func(s termScreen) bool {
					first := s.find("❯")
					if first < 1 || first+n+1 >= len(s.rows) || !tc.top(s.rows[first-1]) || !tc.bottom(s.rows[first+n]) ||
						s.rows[first+n+1] != "  ? for shortcuts" || s.row != first+n-1 || s.col != col {
						return false
					}
					for _, r := range s.rows[first : first+n] {
						if !tc.row(r) {
							return false
						}
					}
					return true
				})
			}
			s := check("an empty composer", 1, tc.textCol)
			first := s.find("❯")

			a.write("first")
			check("one line of text", 1, tc.textCol+5)
			a.write("\n") // Ctrl-J: a newline whatever the timing
			s = check("the composer grown by a row", 2, tc.textCol)
			if s.find("❯") != first || !strings.Contains(s.rows[first], "❯ first") {
				t.Fatalf("the first line moved or lost its marker:\n%s", s)
			}
			a.write("second\n" + strings.Repeat("y", tc.textCols+7))
			s = check("a long third line wrapped inside the frame", 4, tc.textCol+7)
			if !strings.Contains(s.rows[first+1], "  second") || !strings.Contains(s.rows[first+2], "  "+strings.Repeat("y", tc.textCols)) {
				t.Fatalf("the text rows are not the lines typed:\n%s", s)
			}

			time.Sleep(pause)
			a.write("\r")
			if got := a.waitSubmissions(1); got[0] != "first\nsecond\n"+strings.Repeat("y", tc.textCols+7) {
				t.Errorf("submitted %q, want the three lines", got[0])
			}
			s = check("the composer back to one empty row", 1, tc.textCol)
		})
	}
}

func TestEchoNoneShowsNothingYetSubmits(t *testing.T) {
	t.Parallel()
	a := startAgent(t, Options{Echo: EchoNone})
	a.waitPrompt()
	empty := a.screen()
	if empty.rows[empty.row] != "›" || empty.col != 2 {
		t.Fatalf("the empty composer:\n%s", empty)
	}
	m := a.mark()
	a.write("secret text")
	a.write("\n")
	a.write("more")
	a.quiet(300*time.Millisecond, "typing must not be echoed")
	if a.mark() != m {
		t.Fatalf("echoed %q", a.output()[m:])
	}
	time.Sleep(pause)
	a.write("\r")
	if got := a.waitSubmissions(1); got[0] != "secret text\nmore" {
		t.Errorf("submitted %q, want %q", got[0], "secret text\nmore")
	}
	a.waitScreen("the answer above an empty composer", func(s termScreen) bool {
		return s.contains("Understood: secret text more") && s.rows[s.row] == "›" && s.col == 2
	})
}

func TestFullRedrawPaintsTheWholeScreenOnEveryKey(t *testing.T) {
	t.Parallel()
	a := startAgent(t, Options{Redraw: RedrawFull})
	a.waitPrompt()
	m := a.mark()
	a.write("a")
	a.waitFor("› a", m)
	a.write("b")
	end := a.waitFor("? for shortcuts", a.waitFor("› ab", m))
	frames := strings.Split(a.output()[m:end], "\x1b[H\x1b[2J")
	if len(frames) != 3 || frames[0] != "" {
		t.Fatalf("two keys, want two frames each starting with ESC[H ESC[2J; got %q", frames)
	}
	for _, f := range frames[1:] {
		if !strings.HasPrefix(f, "✻ agent-sim") || !strings.Contains(f, "? for shortcuts") {
			t.Errorf("a frame does not paint every row from the banner to the footer: %q", f)
		}
	}
	s := a.screen()
	if !strings.HasPrefix(s.rows[0], "✻ agent-sim") || s.rows[3] != "› ab" || s.rows[4] != "  ? for shortcuts" || s.row != 3 || s.col != 4 {
		t.Fatalf("the screen after two keys:\n%s", s)
	}

	a.write("\x15")
	a.typeLine("hello")
	if got := a.waitSubmissions(1); got[0] != "hello" {
		t.Errorf("submitted %q, want %q", got[0], "hello")
	}
	s = a.waitScreen("the answer", func(s termScreen) bool { return s.contains("Understood: hello") })
	if !strings.HasPrefix(s.rows[0], "✻ agent-sim") || s.rows[s.row] != "›" || s.rows[s.row-1] != "Understood: hello" {
		t.Errorf("the screen after a submit:\n%s", s)
	}
}

func TestTranscriptKeepsTheSubmittedTextAboveTheComposer(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		style, marker, emptyRow string
	}{
		{ComposerPlain, "› ", "›"},
		{ComposerBox, "> ", "│ ❯" + strings.Repeat(" ", termCols-5) + "│"},
	} {
		t.Run(tc.style, func(t *testing.T) {
			t.Parallel()
			a := startAgent(t, Options{Transcript: true, Composer: tc.style})
			a.waitPrompt()
			m := a.mark()
			a.write("\x1b[200~hello there\nsecond line\x1b[201~")
			a.waitFor("second line", m)
			time.Sleep(pause)
			a.write("\r")
			if got := a.waitSubmissions(1); got[0] != "hello there\nsecond line" {
				t.Fatalf("submitted %q", got[0])
			}
			s := a.waitScreen("the answer", func(s termScreen) bool { return s.contains("Understood: hello there second line") })
			at := s.find(tc.marker + "hello there")
			if at < 0 || s.rows[at+1] != "  second line" || s.rows[at+2] != "Understood: hello there second line" {
				t.Fatalf("the transcript does not show the message as sent:\n%s", s)
			}
			if at >= s.row || s.rows[s.row] != tc.emptyRow {
				t.Fatalf("the message should be above an empty composer (%q):\n%s", tc.emptyRow, s)
			}
		})
	}
}

func TestFirstPaintDelayWritesNothing(t *testing.T) {
	t.Parallel()
	const delay = 800 * time.Millisecond
	start := time.Now()
	a := startAgent(t, Options{FirstPaintDelay: delay})
	a.waitRaw()
	// Typed into the silence, with a pause before its `\r`: kept, and a
	// submit once the agent gets to it.
	a.write("/exit")
	time.Sleep(pause)
	a.write("\r")
	time.Sleep(delay / 2)
	if out := a.output(); out != "" && time.Since(start) < delay {
		t.Fatalf("wrote %q before its first paint", out)
	}
	if code := a.waitExit(); code != 0 {
		t.Errorf("exit status %d, want 0", code)
	}
	if d := time.Since(start); d < delay {
		t.Errorf("exited after %v, before the first paint", d)
	}
	out := a.output()
	if !strings.HasPrefix(out, "\x1b[?2004h") || strings.Contains(out, "Starting…") {
		t.Errorf("the first output should switch bracketed paste on, with no Starting…: %q", out)
	}
	if p, b := strings.Index(out, "? for shortcuts"), strings.Index(out, "Bye."); p < 0 || b < p {
		t.Errorf("the prompt did not show before the early input was handled:\n%q", out)
	}
}

// readChoices reads the choices the agent saved in its directory.
func readChoices(t *testing.T, dir string) []Choice {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, ChoicesFile))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var all []Choice
	if err := json.Unmarshal(data, &all); err != nil {
		t.Fatalf("%s: %v", ChoicesFile, err)
	}
	for i, c := range all {
		if _, err := time.Parse(time.RFC3339Nano, c.At); err != nil {
			t.Errorf("choice %+v: time is not RFC 3339: %v", c, err)
		}
		all[i].At = ""
	}
	return all
}

func TestDialogsRecordEveryAnswer(t *testing.T) {
	t.Parallel()
	const (
		trustText  = "Quick safety check: Is this a project you created or one you trust?"
		apiKeyText = "Do you want to use this API key?"
		bypassText = "WARNING: Claude Code running in Bypass Permissions mode"
	)
	type step struct{ see, key string } // wait until the screen shows see, then type key
	for _, tc := range []struct {
		name    string
		dialogs []string
		steps   []step
		want    []Choice
		exits   bool
	}{
		{"trust: Enter trusts", []string{DialogTrust},
			[]step{{"❯ 1. Yes, I trust this folder", "\r"}},
			[]Choice{{Dialog: DialogTrust, Choice: "Yes, I trust this folder"}}, false},
		{"trust: 2 exits", []string{DialogTrust},
			[]step{{"  2. No, exit", "2"}},
			[]Choice{{Dialog: DialogTrust, Choice: "No, exit"}}, true},
		{"trust: Escape cancels", []string{DialogTrust},
			[]step{{trustText, "\x1b"}},
			[]Choice{{Dialog: DialogTrust, Choice: "No, exit"}}, true},
		{"trust: a digit in typed text answers it", []string{DialogTrust},
			[]step{{trustText, "Read tasks/ashigaru1.yaml"}},
			[]Choice{{Dialog: DialogTrust, Choice: "Yes, I trust this folder"}}, false},
		{"bypass: Enter exits", []string{DialogBypass},
			[]step{{"❯ 1. No, exit", "\r"}},
			[]Choice{{Dialog: DialogBypass, Choice: "No, exit"}}, true},
		{"bypass: down and Enter accepts", []string{DialogBypass},
			[]step{{bypassText, "\x1b[B"}, {"❯ 2. Yes, I accept", "\r"}},
			[]Choice{{Dialog: DialogBypass, Choice: "Yes, I accept"}}, false},
		{"api-key: Enter declines the key", []string{DialogAPIKey},
			[]step{{"❯ 2. No (recommended)", "\r"}},
			[]Choice{{Dialog: DialogAPIKey, Choice: "No (recommended)"}}, false},
		{"all three in order", []string{DialogTrust, DialogAPIKey, DialogBypass},
			[]step{{trustText, "1"}, {apiKeyText, "1"}, {bypassText, "2"}},
			[]Choice{{Dialog: DialogTrust, Choice: "Yes, I trust this folder"}, {Dialog: DialogAPIKey, Choice: "Yes"},
				{Dialog: DialogBypass, Choice: "Yes, I accept"}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a := startAgent(t, Options{Dialogs: tc.dialogs})
			for _, st := range tc.steps {
				s := a.waitScreen(fmt.Sprintf("%q", st.see), func(s termScreen) bool { return s.contains(st.see) })
				if s.contains("? for shortcuts") {
					t.Fatalf("the prompt shows with the dialog:\n%s", s)
				}
				a.write(st.key)
			}
			var wantRecords []recordEntry
			for _, c := range tc.want {
				wantRecords = append(wantRecords, recordEntry{Kind: recordDialog, Dialog: c.Dialog, Line: c.Choice})
			}
			if got := a.waitRecords(len(tc.want)); !reflect.DeepEqual(got, wantRecords) {
				t.Errorf("records %+v, want %+v", got, wantRecords)
			}
			if tc.exits {
				if code := a.waitExit(); code != 1 {
					t.Errorf("exit status %d, want 1", code)
				}
			} else {
				a.waitPrompt()
				s := a.screen()
				for _, text := range []string{trustText, apiKeyText, bypassText} {
					if s.contains(text) {
						t.Errorf("a dialog is still on the screen with the prompt:\n%s", s)
					}
				}
			}
			if got := readChoices(t, a.dir); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("%s holds %+v, want %+v", ChoicesFile, got, tc.want)
			}
		})
	}
}

func TestUnansweredDialogWaits(t *testing.T) {
	t.Parallel()
	a := startAgent(t, Options{Dialogs: []string{DialogTrust}})
	a.waitScreen("the trust dialog", func(s termScreen) bool { return s.contains("❯ 1. Yes, I trust this folder") })
	a.write("hello")
	a.quiet(300*time.Millisecond, "letters mean nothing to the dialog")
	if recs := a.records(); len(recs) != 0 {
		t.Errorf("recorded %+v for an unanswered dialog", recs)
	}
	if _, err := os.Stat(filepath.Join(a.dir, ChoicesFile)); !os.IsNotExist(err) {
		t.Errorf("%s exists though nothing answered: %v", ChoicesFile, err)
	}
	a.stillRunning()
}

func TestDialogAfterCoversTheComposerAndKeepsItsText(t *testing.T) {
	t.Parallel()
	const after = time.Second
	a := startAgent(t, Options{DialogAfter: after})
	a.waitPrompt()
	m := a.mark()
	a.write("hello")
	a.waitFor("› hello", m)
	s := a.waitScreen("the permission prompt", func(s termScreen) bool { return s.contains("Do you want to proceed?") })
	if out := a.output(); strings.Index(out, "Do you want to proceed?") < strings.Index(out, "› hello") {
		t.Fatalf("the dialog came before the text was typed; the test needs a longer delay")
	}
	if s.contains("› hello") || s.contains("? for shortcuts") || !s.contains("❯ 1. Yes") {
		t.Fatalf("the dialog should replace the composer:\n%s", s)
	}

	// The `\r` meant to submit answers the dialog instead.
	a.write("\r")
	if got := a.waitRecords(1); !reflect.DeepEqual(got, []recordEntry{{Kind: recordDialog, Dialog: DialogPermission, Line: "Yes"}}) {
		t.Fatalf("records %+v, want the permission dialog answered Yes and no submit", got)
	}
	s = a.waitScreen("the composer back with its text", func(s termScreen) bool {
		return s.rows[s.row] == "› hello" && s.col == 7 && !s.contains("Do you want to proceed?")
	})
	time.Sleep(pause)
	a.write("\r")
	if got := a.waitSubmissions(1); got[0] != "hello" {
		t.Errorf("submitted %q, want %q", got[0], "hello")
	}
	if got := readChoices(t, a.dir); !reflect.DeepEqual(got, []Choice{{Dialog: DialogPermission, Choice: "Yes"}}) {
		t.Errorf("%s holds %+v", ChoicesFile, got)
	}
}

func TestBusyIndicator(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, busyLine, want string
	}{
		{"default", "", "• Working… (esc to interrupt) · 0s"},
		{"custom", "Working ({elapsed} • esc to interrupt)", "Working (0s • esc to interrupt)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a := startAgent(t, Options{WorkTime: time.Hour, BusyLine: tc.busyLine})
			writeFile(t, filepath.Join(a.dir, "t.yaml"), "task_id: t-1\ntitle: T\nbody: B\nreport_to: r.yaml\n")
			a.waitPrompt()
			a.typeLine("t.yaml")
			s := a.waitScreen("the busy line", func(s termScreen) bool { return s.contains(tc.want) })
			if s.rows[s.row] != "›" || s.rows[s.row-1] != tc.want {
				t.Errorf("the busy line should be right above the empty composer:\n%s", s)
			}
			m := a.mark()
			a.write("\x1b")
			a.waitFor("■ Interrupted t-1", m)
			a.waitScreen("the busy line gone", func(s termScreen) bool { return !s.contains("esc to interrupt") })
		})
	}
}

func TestSilentWorkWritesNothingWhileWorking(t *testing.T) {
	t.Parallel()
	a := startAgent(t, Options{WorkTime: 1500 * time.Millisecond, SilentWork: true})
	writeFile(t, filepath.Join(a.dir, "t.yaml"), "task_id: t-1\ntitle: T\nbody: B\nreport_to: r.yaml\n")
	a.waitPrompt()
	m := a.mark()
	a.typeLine("t.yaml")
	a.waitFor("? for shortcuts", a.waitFor("• Task t-1: T", m))
	a.quiet(800*time.Millisecond, "working silently")
	if s := a.screen(); s.contains("Working…") || s.contains("esc to interrupt") {
		t.Errorf("a busy indicator shows:\n%s", s)
	}
	a.waitFor("✓ Reported t-1", m)
}

func TestLimitScreenStopsWork(t *testing.T) {
	t.Parallel()
	a := startAgent(t, Options{LimitScreen: true})
	writeFile(t, filepath.Join(a.dir, "t.yaml"), "task_id: t-1\ntitle: T\nbody: B\nreport_to: r.yaml\n")
	a.waitPrompt()
	m := a.mark()
	a.typeLine("hello")
	a.waitFor("Understood: hello", m)
	s := a.waitScreen("the limit", func(s termScreen) bool { return s.contains(limitLine) })
	if s.rows[s.row-1] != limitLine {
		t.Errorf("the limit should show right above the composer:\n%s", s)
	}
	a.typeLine("t.yaml")
	a.waitSubmissions(2)
	a.waitScreen("the limit as the answer, and still above the composer", func(s termScreen) bool {
		n := 0
		for _, r := range s.rows {
			if r == limitLine {
				n++
			}
		}
		return n == 2 && s.rows[s.row-1] == limitLine
	})
	time.Sleep(200 * time.Millisecond)
	for _, e := range a.records() {
		if e.Kind == recordTask {
			t.Errorf("worked on a task past the limit: %+v", e)
		}
	}
}
