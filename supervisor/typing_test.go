package supervisor

import (
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/shogun-dev/shogun/ptyhost"
)

func TestCheckTypable(t *testing.T) {
	cases := []struct {
		name string
		text string
		ok   bool
	}{
		{"plain", "Read runtime/queue/tasks/karo.yaml and carry out the task.", true},
		{"Japanese", "runtime/queue/tasks/karo.yaml を読んで作業してください。", true},
		{"newlines", "line one\nline two\r\nline three", true},
		{"end of paste, Ctrl-C and submit in a file name", "zz\r\x1b[201~\x03EVIL\r.yaml", false},
		{"lone carriage return", "half\rline", false},
		{"tab", "a\tb", false},
		{"C1 CSI", "a\u009b2Jb", false},
		{"NEL", "a\u0085b", false},
		{"line separator", "a\u2028b", false},
		{"paragraph separator", "a\u2029b", false},
		{"DEL", "a\x7fb", false},
		{"not UTF-8", "a\xffb", false},
		{"a real replacement character", "a\uFFFDb", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := CheckTypable(c.text)
			if (err == nil) != c.ok || (err != nil && !errors.Is(err, ErrUnsafeText)) {
				t.Errorf("CheckTypable(%q) = %v, want ok=%v", c.text, err, c.ok)
			}
		})
	}
}

// What is typed never carries a key of its own: no control character but
// the newline, and a bracketed paste that only the wrapper ends.
func FuzzPayload(f *testing.F) {
	for _, s := range []string{"hello", "a\nb", "a\r\nb", "zz\r\x1b[201~\x03EVIL\r", "\u009b31m", "x\u2028y", "\xff", "[201~", "\x1b[200~x\x1b[201~"} {
		f.Add(s, true)
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, text string, bracketed bool) {
		payload, err := payloadFor(text, bracketed)
		if err != nil {
			if !errors.Is(err, ErrUnsafeText) {
				t.Fatalf("error %v is not ErrUnsafeText", err)
			}
			return
		}
		body := payload
		if strings.HasPrefix(payload, "\x1b[200~") {
			if !bracketed || !strings.Contains(text, "\n") {
				t.Fatalf("bracketed paste for %q (bracketed=%v)", text, bracketed)
			}
			body = strings.TrimSuffix(strings.TrimPrefix(payload, "\x1b[200~"), "\x1b[201~")
		}
		if !utf8.ValidString(body) {
			t.Fatalf("payload %q is not UTF-8", body)
		}
		for _, r := range body {
			if (r < 0x20 && r != '\n') || r == 0x7f || (r >= 0x80 && r <= 0x9f) || r == '\u2028' || r == '\u2029' {
				t.Fatalf("payload %q of %q carries %U", body, text, r)
			}
		}
	})
}

// Without an input marker, the text is still in the composer while it is
// the last thing above the cursor, however many blank rows the submits that
// became newlines left under it, and wherever scrolling moved it; text
// followed by anything else has left it.
func TestProbeAreaWithoutMarker(t *testing.T) {
	history := []string{"✻ agent-sim", "  role: agent", ""}
	screen := func(cursor int, rows ...string) ptyhost.ScreenSnapshot {
		return ptyhost.ScreenSnapshot{Lines: rows, CursorRow: cursor, CursorCol: 2, Cols: 80}
	}
	// Before typing: the prompt on row 3, the footer under it.
	start := screen(3, append(history, "› ", "  ? for shortcuts", "", "", "")...)
	typed := "› Read the file notes.txt and say what it holds."
	cases := []struct {
		name string
		scr  ptyhost.ScreenSnapshot
		here bool
	}{
		{"typed", screen(3, append(history, typed, "  ? for shortcuts", "", "", "")...), true},
		{"one newline", screen(4, append(history, typed, "  ", "  ? for shortcuts", "", "")...), true},
		{"three newlines", screen(6, append(history, typed, "", "", "  ", "  ? for shortcuts")...), true},
		{"two newlines, scrolled up two rows", screen(3, "", typed, "", "  ", "  ? for shortcuts"), true},
		{"two newlines, the rows above redrawn", screen(3, "✻ agent-sim", typed, "", "  ", "  ? for shortcuts"), true},
		{"taken: the answer and an empty prompt", screen(4, append(history, "Understood: Read the file notes.txt and say what it holds.", "› ", "  ? for shortcuts", "", "")...), false},
		{"taken: an answer under it, the cursor on a blank row", screen(7, append(history, typed, "", "done.", "", "")...), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := probe{snippet: inputTail(typed), start: start}
			area, _ := p.area(c.scr)
			if p.in(area) != c.here {
				t.Errorf("area = %q; text still there = %v, want %v", area, p.in(area), c.here)
			}
		})
	}
	// The same text sent before, in the history above where this one
	// started, is not this one.
	start = screen(3, "✻ agent-sim", typed, "", "› ", "  ? for shortcuts", "")
	p := probe{snippet: inputTail(typed), start: start}
	if area, _ := p.area(screen(5, "✻ agent-sim", typed, "", "", "", "")); p.in(area) {
		t.Errorf("an older copy above the start row taken for the text: area %q", area)
	}
}

// The hold before a key rests until the program's output could first be
// quiet long enough, and never past it or past the hold's deadline: a key
// is not held back longer than the rule asks, and an idle supervisor is not
// woken every millisecond to find the output still too fresh.
func TestHoldRestsUntilOutputCanBeQuiet(t *testing.T) {
	ms := time.Millisecond
	cases := []struct {
		name          string
		calm, toLimit time.Duration
		want          time.Duration
	}{
		{"output this moment", 0, time.Second, outputQuiet},
		{"output a while ago", 10 * ms, time.Second, outputQuiet - 10*ms},
		{"deadline first", 2 * ms, 3 * ms, 3 * ms},
		{"quiet already: the screen is behind", outputQuiet, time.Second, ms},
		{"past the deadline: the screen as of then", 0, 0, ms},
		{"long past it", 0, -time.Second, ms},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := holdStep(c.calm, c.toLimit); got != c.want {
				t.Errorf("holdStep(calm %v, deadline in %v) = %v, want %v", c.calm, c.toLimit, got, c.want)
			}
		})
	}
}
