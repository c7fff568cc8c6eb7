package agentsim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// The tests start the test binary itself as the agent, with these variables
// saying so and carrying its Options as JSON.
const (
	childEnv   = "AGENTSIM_TEST_CHILD"
	optionsEnv = "AGENTSIM_TEST_OPTIONS"
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		os.Exit(runChild())
	}
	os.Exit(m.Run())
}

// runChild is what `shogun agent-sim` does: run, print the error, exit.
func runChild() int {
	var opts Options
	if err := json.Unmarshal([]byte(os.Getenv(optionsEnv)), &opts); err != nil {
		fmt.Fprintln(os.Stderr, "agent-sim test child:", err)
		return 2
	}
	err := Run(context.Background(), opts, os.Stdin, os.Stdout)
	if err == nil {
		return 0
	}
	fmt.Fprintln(os.Stderr, err)
	var coder interface{ ExitCode() int }
	if errors.As(err, &coder) {
		return coder.ExitCode()
	}
	return 1
}

func TestRefusesWithoutTerminal(t *testing.T) {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), childEnv+"=1", optionsEnv+"={}")
	// Stdin nil is the null device: what a supervisor without a PTY would give.
	out, err := cmd.CombinedOutput()
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) || exitErr.ExitCode() == 0 {
		t.Fatalf("agent without a terminal: err = %v, want a non-zero exit; output %q", err, out)
	}
	if !strings.Contains(string(out), "agent-sim: stdin is not a terminal") {
		t.Errorf("output %q does not say stdin is not a terminal", out)
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts Options
		ok   bool
	}{
		{"zero value", Options{}, true},
		{"all set", Options{PasteWindow: -1, WorkTime: time.Second, StartDelay: time.Second, CrashAfter: time.Second, ExitCode: 3, Flood: 1000}, true},
		{"negative work time", Options{WorkTime: -1}, false},
		{"negative start delay", Options{StartDelay: -1}, false},
		{"negative crash time", Options{CrashAfter: -1}, false},
		{"exit code too big", Options{ExitCode: 256}, false},
		{"negative flood", Options{Flood: -1}, false},
		{"negative turns to drop", Options{DropTurns: -1}, false},
		{"negative reports to skip", Options{SkipReports: -1}, false},
		{"bounce and delegate", Options{Bounce: true, Delegate: []string{"a"}}, false},
		{"bounce", Options{Bounce: true, DropTurns: 1, SkipReports: 2}, true},
		{"every look", Options{Composer: ComposerBox, Echo: EchoNone, Redraw: RedrawFull, Transcript: true, BusyLine: "x", SilentWork: true}, true},
		{"named defaults", Options{Composer: ComposerPlain, Echo: EchoFull, Redraw: RedrawInline}, true},
		{"unknown composer", Options{Composer: "fancy"}, false},
		{"unknown echo", Options{Echo: "some"}, false},
		{"unknown redraw", Options{Redraw: "partial"}, false},
		{"dialogs", Options{Dialogs: []string{DialogTrust, DialogAPIKey, DialogBypass, DialogPermission, DialogFolder}, DialogAfter: time.Second}, true},
		{"unknown dialog", Options{Dialogs: []string{"login"}}, false},
		{"negative dialog delay", Options{DialogAfter: -1}, false},
		{"negative first paint delay", Options{FirstPaintDelay: -1}, false},
	} {
		err := tc.opts.Validate()
		if (err == nil) != tc.ok {
			t.Errorf("%s: Validate() = %v, want ok %v", tc.name, err, tc.ok)
		}
	}
}

// decode feeds the decoder reads at the given offsets from a start time and
// returns the keys in a compact form.
func decode(d *keyDecoder, reads ...any) []string {
	start := time.Unix(1_700_000_000, 0)
	at := start
	var got []string
	emit := func(k key) {
		switch k.kind {
		case keyChar:
			got = append(got, string([]byte{k.b}))
		case keyEnter:
			got = append(got, "ENTER")
		case keyNewline:
			if k.burst {
				got = append(got, "NL(burst)")
			} else {
				got = append(got, "NL")
			}
		case keyPaste:
			got = append(got, "PASTE:"+k.text)
		case keyBackspace:
			got = append(got, "BS")
		case keyClear:
			got = append(got, "CLEAR")
		case keyInterrupt:
			got = append(got, "INT")
		case keyEOF:
			got = append(got, "EOF")
		case keyEsc:
			got = append(got, "ESC")
		case keyUp:
			got = append(got, "UP")
		case keyDown:
			got = append(got, "DOWN")
		}
	}
	for _, r := range reads {
		switch r := r.(type) {
		case time.Duration:
			at = at.Add(r)
			d.flush(at, emit)
		case string:
			d.feed([]byte(r), at, emit)
		}
	}
	return got
}

func TestKeyDecoder(t *testing.T) {
	const window = 50 * time.Millisecond
	for _, tc := range []struct {
		name   string
		window time.Duration
		reads  []any // strings are reads, durations the time between them
		want   []string
	}{
		{"text and CR in one read is a newline", window, []any{"ab\r"}, []string{"a", "b", "NL(burst)"}},
		{"CR after a pause submits", window, []any{"ab", 80 * time.Millisecond, "\r"}, []string{"a", "b", "ENTER"}},
		{"CR just inside the window is a newline", window, []any{"a", 40 * time.Millisecond, "\r"}, []string{"a", "NL(burst)"}},
		{"first CR submits", window, []any{"\r"}, []string{"ENTER"}},
		{"CR right after a submit submits again", window, []any{"\r\r"}, []string{"ENTER", "ENTER"}},
		{"no window: every CR submits", 0, []any{"a\r"}, []string{"a", "ENTER"}},
		{"line feed is a newline", window, []any{"\n"}, []string{"NL"}},
		{"editing keys", window, []any{"\x7f\x08\x15\x03\x04"}, []string{"BS", "BS", "CLEAR", "INT", "EOF"}},
		{"bracketed paste", window, []any{"\x1b[200~one\r\ntwo\rthree\nfour\x1b[201~"}, []string{"PASTE:one\ntwo\nthree\nfour"}},
		{"bracketed paste split across reads", window,
			[]any{"\x1b", time.Millisecond, "[20", time.Millisecond, "0~a\r", time.Millisecond, "b\x1b[2", time.Millisecond, "01~"},
			[]string{"PASTE:a\nb"}},
		{"CR right after a paste is a newline", window, []any{"\x1b[200~x\x1b[201~\r"}, []string{"PASTE:x", "NL(burst)"}},
		{"up and down are keys, other cursor keys are dropped", window, []any{"\x1b[A\x1bOB\x1b[C\x1bODz"}, []string{"UP", "DOWN", "z"}},
		{"a long window", 600 * time.Millisecond, []any{"a", 500 * time.Millisecond, "\r", 700 * time.Millisecond, "\r"}, []string{"a", "NL(burst)", "ENTER"}},
		{"lone escape", window, []any{"\x1b", 40 * time.Millisecond}, []string{"ESC"}},
		{"escape then a late key", window, []any{"\x1b", 40 * time.Millisecond, "x"}, []string{"ESC", "x"}},
		{"UTF-8 passes through", window, []any{"é"}, []string{"\xc3", "\xa9"}},
	} {
		d := keyDecoder{pasteWindow: tc.window}
		if got := decode(&d, tc.reads...); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestLayout(t *testing.T) {
	rows, row, col := layout(pane{prompt: true, input: "hello\nworld", footer: "  ? for shortcuts"}, 40, 20)
	want := []string{"› hello", "  world", "  ? for shortcuts"}
	if !reflect.DeepEqual(rows, want) || row != 1 || col != 7 {
		t.Errorf("two-line composer: rows %q cursor %d,%d; want %q cursor 1,7", rows, row, col, want)
	}

	rows, _, _ = layout(pane{prompt: true, input: strings.Repeat("x", 50)}, 20, 20)
	for _, r := range rows {
		if w := textWidth(r); w > 19 {
			t.Errorf("row %q is %d columns wide, more than the terminal's 20 - 1", r, w)
		}
	}
	if len(rows) != 3 {
		t.Errorf("50 columns of input in a 20-column terminal: %d rows %q, want 3", len(rows), rows)
	}

	rows, row, _ = layout(pane{prompt: true, input: strings.Repeat("line\n", 100) + "last", footer: "f"}, 40, 10)
	if len(rows) > 9 || rows[row] != "  last" || !strings.Contains(rows[0], "more lines") {
		t.Errorf("long input in a 10-row terminal: rows %q cursor row %d", rows, row)
	}

	rows, _, _ = layout(pane{prompt: true, input: "a\x1b[2Jb\tc"}, 40, 10)
	if strings.ContainsRune(rows[0], 0x1b) || strings.ContainsRune(rows[0], '\t') {
		t.Errorf("control characters reached the terminal: %q", rows[0])
	}

	rows, row, col = layout(pane{prompt: true, style: ComposerBox, input: "hi\n" + strings.Repeat("z", 20), footer: "  ? for shortcuts"}, 20, 20)
	want = []string{
		"╭" + strings.Repeat("─", 17) + "╮",
		"│ ❯ hi            │",
		"│   " + strings.Repeat("z", 13) + " │",
		"│   zzzzzzz       │",
		"╰" + strings.Repeat("─", 17) + "╯",
		"  ? for shortcuts",
	}
	if !reflect.DeepEqual(rows, want) || row != 3 || col != 11 {
		t.Errorf("box composer: rows %q cursor %d,%d; want %q cursor 3,11", rows, row, col, want)
	}

	rows, row, col = layout(pane{header: []string{"busy"}, prompt: true, style: ComposerRules, input: "a\nb"}, 20, 20)
	want = []string{"busy", strings.Repeat("─", 19), "❯ a", "  b", strings.Repeat("─", 19)}
	if !reflect.DeepEqual(rows, want) || row != 3 || col != 3 {
		t.Errorf("rules composer: rows %q cursor %d,%d; want %q cursor 3,3", rows, row, col, want)
	}

	rows, row, _ = layout(pane{prompt: true, style: ComposerBox, input: strings.Repeat("line\n", 100) + "last", footer: "f"}, 40, 10)
	if len(rows) > 9 || !strings.Contains(rows[row], "  last") || !strings.Contains(rows[1], "more lines") || rows[len(rows)-1] != "f" {
		t.Errorf("long input in a box in a 10-row terminal: rows %q cursor row %d", rows, row)
	}

	rows, _, _ = layout(pane{prompt: true, input: "日本語"}, 40, 10)
	if w := textWidth(rows[0]); w != 8 {
		t.Errorf("width of %q = %d, want 8", rows[0], w)
	}
}

func TestFindTask(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	writeFile(t, "tasks/a.yaml", "task_id: t-1\ntitle: T\nbody: B\nreport_to: reports/a.yaml\nextra: ignored\n")
	writeFile(t, "notes.yaml", "just: notes\n")

	task, _, notes := findTask("Read notes.yaml, then `tasks/a.yaml`.")
	if task == nil || task.TaskID != "t-1" {
		t.Fatalf("findTask found %+v, want task t-1 (notes %q)", task, notes)
	}
	if want := filepath.Join(dir, "reports", "a.yaml"); task.reportPath != want {
		t.Errorf("report path %q, want %q (relative to the working directory)", task.reportPath, want)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "missing task_id, title, body, report_to") {
		t.Errorf("notes %q, want one saying notes.yaml lacks the task fields", notes)
	}

	if task, _, _ := findTask("Read roles/ashigaru.md and missing.yaml"); task != nil {
		t.Errorf("findTask found %+v in a line without a task file", task)
	}

	// A notification names a report: it is read as one, with no note that
	// it is not a task file (the simulated karo and shogun printed one for
	// every report in the demo).
	writeFile(t, "archive/r.yaml", "task_id: t-3\nstatus: done\nsummary: 'Done: part 1'\n")
	task, reports, notes := findTask("Report from ashigaru1 on 'part 1': read archive/r.yaml")
	if task != nil || len(notes) != 0 || len(reports) != 1 || reports[0].TaskID != "t-3" || reports[0].Status != "done" {
		t.Errorf("a notification's report: task %+v, reports %+v, notes %q; want the report alone", task, reports, notes)
	}
}

func TestSimulatedWorkReport(t *testing.T) {
	tk := &task{TaskID: "t-9", Title: "Add the login form", Body: "b", ReportTo: "r.yaml"}
	path := filepath.Join(t.TempDir(), "reports", "r.yaml")
	for _, fail := range []bool{false, true} {
		rep, h, err := simulatedWork{fail: fail, role: "ashigaru2"}.handle(context.Background(), tk)
		if err != nil || h != nil {
			t.Fatalf("handle: handoff %v, err %v; want a report", h, err)
		}
		if err := writeReport(path, rep); err != nil {
			t.Fatal(err)
		}
		got := readReport(t, path)
		wantStatus := map[bool]string{false: "done", true: "failed"}[fail]
		if got.TaskID != "t-9" || got.Status != wantStatus || !strings.Contains(got.Details, "ashigaru2") {
			t.Errorf("fail=%v: report %+v", fail, got)
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := (simulatedWork{workTime: time.Hour}).handle(ctx, tk); !errors.Is(err, context.Canceled) {
		t.Errorf("interrupted work returned %v, want context.Canceled", err)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// readReport decodes a report strictly, as the supervisor will.
func readReport(t *testing.T, path string) report {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dec := yaml.NewDecoder(f)
	dec.KnownFields(true)
	var r report
	if err := dec.Decode(&r); err != nil {
		t.Fatalf("report %s is not valid YAML: %v", path, err)
	}
	return r
}

func TestHistoryHidesEscapeSequences(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	newScreen(f, false).update(pane{}, "Understood: a\x1b[2Jb\nc")
	got, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	if want := "Understood: a\uFFFD[2Jb\r\nc\r\n"; string(got) != want {
		t.Errorf("history line written as %q, want %q", got, want)
	}
}

func TestDialogKeys(t *testing.T) {
	at := time.Unix(1_700_000_000, 0)
	press := func(d *dialog, keys ...key) int {
		for _, k := range keys {
			k.at = at
			if picked, _ := d.key(k); picked >= 0 {
				return picked
			}
		}
		return -1
	}
	char := func(b byte) key { return key{kind: keyChar, b: b} }
	for _, tc := range []struct {
		name   string
		dialog string
		keys   []key
		want   int
	}{
		{"Enter picks the default", DialogAPIKey, []key{{kind: keyEnter}}, 1},
		{"a newline is Enter too", DialogTrust, []key{{kind: keyNewline, burst: true}}, 0},
		{"a digit picks its option", DialogPermission, []key{char('3')}, 2},
		{"letters and a digit too big mean nothing", DialogTrust, []key{char('x'), char('3'), char('0')}, -1},
		{"up wraps round", DialogTrust, []key{{kind: keyUp}, {kind: keyEnter}}, 1},
		{"down then Enter", DialogPermission, []key{{kind: keyDown}, {kind: keyDown}, {kind: keyEnter}}, 2},
		{"Escape cancels", DialogBypass, []key{{kind: keyDown}, {kind: keyEsc}}, 0},
		{"Ctrl-C cancels", DialogTrust, []key{{kind: keyInterrupt}}, 1},
		{"the folder dialog ignores arrows", DialogFolder, []key{{kind: keyDown}, {kind: keyEnter}}, 0},
		{"the folder dialog ignores Escape", DialogFolder, []key{{kind: keyEsc}}, -1},
	} {
		if got := press(newDialog(tc.dialog), tc.keys...); got != tc.want {
			t.Errorf("%s: picked %d, want %d", tc.name, got, tc.want)
		}
	}

	d := newDialog(DialogTrust)
	d.key(key{kind: keyDown})
	lines := d.lines("/w")
	if !slices.Contains(lines, "   1. Yes, I trust this folder") || !slices.Contains(lines, " ❯ 2. No, exit") || !slices.Contains(lines, " /w") {
		t.Errorf("trust dialog with the second option highlighted: %q", lines)
	}
	if got := newDialog(DialogFolder).lines("/w"); !reflect.DeepEqual(got, []string{"Do you trust the files in this folder?", " 1. Yes, proceed", " 2. No"}) {
		t.Errorf("folder dialog drawn as %q", got)
	}
}

func TestSaveChoiceKeepsAForeignFile(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	for i, c := range []Choice{{At: "1", Dialog: DialogTrust, Choice: "a"}, {At: "2", Dialog: DialogBypass, Choice: "b"}} {
		if err := saveChoice(c); err != nil {
			t.Fatalf("save choice %d: %v", i, err)
		}
	}
	data, err := os.ReadFile(ChoicesFile)
	if err != nil {
		t.Fatal(err)
	}
	var got []Choice
	if err := json.Unmarshal(data, &got); err != nil || len(got) != 2 || got[1].Choice != "b" {
		t.Fatalf("%s holds %s (%v), want both choices", ChoicesFile, data, err)
	}

	foreign := []byte("not: json\n")
	if err := os.WriteFile(ChoicesFile, foreign, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := saveChoice(Choice{Dialog: DialogTrust, Choice: "c"}); err == nil || !strings.Contains(err.Error(), ChoicesFile) {
		t.Errorf("saving over a file that is not a list of choices: err %v, want one naming the file", err)
	}
	if data, _ := os.ReadFile(ChoicesFile); string(data) != string(foreign) {
		t.Errorf("the foreign file was changed to %q", data)
	}
}

// What a Windows console that does not interpret escape sequences (Wine 8's
// pseudo console) is given: the text, and each control sequence as an
// operation, even when a write cuts one in two.
func TestSplitCSI(t *testing.T) {
	var got []string
	text := func(b []byte) { got = append(got, "text "+string(b)) }
	csi := func(p string, f byte) { got = append(got, "csi "+p+string(f)) }
	rest := splitCSI([]byte("\r\x1b[2K› hi\x1b[1A\x1b[3G\x1b[?2004h\x1b7x\x1b[1"), text, csi)
	rest = splitCSI(append(rest, "2;40Hend"...), text, csi)
	want := []string{"text \r", "csi 2K", "text › hi", "csi 1A", "csi 3G", "csi ?2004h", "text x", "csi 12;40H", "text end"}
	if !slices.Equal(got, want) || rest != nil {
		t.Errorf("got %q (rest %q), want %q", got, rest, want)
	}
	for _, c := range []struct {
		params string
		n, def int
		want   int
	}{{"", 0, 1, 1}, {"0", 0, 1, 1}, {"7", 0, 1, 7}, {"12;40", 1, 1, 40}, {"12", 1, 1, 1}, {"?2004", 0, 0, 0}} {
		if got := csiArg(c.params, c.n, c.def); got != c.want {
			t.Errorf("csiArg(%q, %d, %d) = %d, want %d", c.params, c.n, c.def, got, c.want)
		}
	}
}
