package ptyhost

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// claudeFirstFrame is the start of Claude Code 2.1's first frame as it
// reaches the PTY: modes, the window title with its "✳" (E2 9C B3), the
// welcome box, and the title set again mid-frame as the spinner turns.
const claudeFirstFrame = "\x1b[?2004h\x1b[?1004h\x1b]0;✳ Claude Code\x07\x1b[?25l" +
	"\x1b[38;5;174m╭─── Claude Code \x1b[38;5;246mv2.1.197\x1b[38;5;174m ───────────────────────╮\x1b[39m\r\n" +
	"\x1b]0;✶ Claude Code\x1b\\" +
	"\x1b[38;5;174m│\x1b[39m   Welcome back!   \x1b[38;5;174m│\x1b[39m\r\n" +
	"\x1b[38;5;174m╰───────────────────────────────────────────────╯\x1b[39m\r\n\r\n" +
	"\x1b]2;✳ Claude Code\x9c" +
	"❯ \r\n\x1b[2m  ? for shortcuts\x1b[22m\x1b[1A\r\x1b[2C\x1b[?25h"

// replayChunks is ReplayScreen with the output handed over in pieces of
// the given size, as the PTY reader may.
func replayChunks(raw []byte, cols, rows, size int) ScreenSnapshot {
	s := newScreenModel(cols, rows, io.Discard)
	defer s.close()
	for len(raw) > 0 {
		n := min(size, len(raw))
		s.write(raw[:n])
		raw = raw[n:]
	}
	return s.snapshot()
}

func TestWindowTitlesStayOffTheScreen(t *testing.T) {
	raw := []byte(claudeFirstFrame)
	want := []string{
		"╭─── Claude Code v2.1.197 ───────────────────────╮",
		"│   Welcome back!   │",
		"╰───────────────────────────────────────────────╯",
		"",
		"❯",
		"  ? for shortcuts",
	}
	for _, tc := range []struct {
		name string
		snap func() ScreenSnapshot
	}{
		{"one write", func() ScreenSnapshot { return ReplayScreen(raw, 80, 12) }},
		{"byte by byte", func() ScreenSnapshot { return replayChunks(raw, 80, 12, 1) }},
		{"chunks of 7", func() ScreenSnapshot { return replayChunks(raw, 80, 12, 7) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.snap()
			for i, w := range want {
				if got := strings.TrimRight(s.Lines[i], " "); got != w {
					t.Errorf("row %d = %q, want %q", i+1, got, w)
				}
			}
			if s.CursorRow != 4 || s.CursorCol != 2 {
				t.Errorf("cursor at %d,%d, want 4,2", s.CursorRow, s.CursorCol)
			}
		})
	}
}

// The filter's output is what the emulator sees; it must not depend on
// how the input was cut.
func TestStringFilter(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"title ended by BEL", "a\x1b]0;✳ Title\x07b", "ab"},
		{"title ended by ESC \\", "a\x1b]2;✳ Title\x1b\\b", "ab"},
		{"8-bit OSC and ST", "a\x9d1;✳ icon\x9cb", "ab"},
		{"title of every UTF-8 width", "a\x1b]0;é ✳ 𝄞\x07b", "ab"},
		{"hyperlink and cwd dropped", "\x1b]8;;http://x/✳\x1b\\link\x1b]8;;\x1b\\\x1b]7;file:///tmp\x07", "link"},
		{"colour query kept", "\x1b]11;?\x07", "\x1b]11;?\x07"},
		{"colour query with ST kept", "\x1b]10;?\x1b\\x", "\x1b]10;?\x1b\\x"},
		{"colour reset kept", "\x1b]112\x07", "\x1b]112\x07"},
		{"four-digit OSC dropped", "\x1b]1100;x\x07y", "y"},
		{"OSC without a number dropped", "\x1b];x\x07y", "y"},
		{"kept OSC loses non-ASCII", "\x1b]11;rgb:✳\x07", "\x1b]11;rgb:\x07"},
		{"DCS dropped", "a\x1bP+q544e\x1b\\b", "ab"},
		{"8-bit DCS dropped", "a\x90$qm\x9cb", "ab"},
		{"APC with UTF-8 dropped", "a\x1b_Gé✳\x1b\\b", "ab"},
		{"SOS and PM dropped", "a\x1bXsos\x1b\\\x1b^pm\x1b\\b", "ab"},
		{"other sequences pass", "\x1b[31mx\x1b(B\x1b7\x1b[?1049h", "\x1b[31mx\x1b(B\x1b7\x1b[?1049h"},
		{"string cut short by a CSI", "\x1b]0;t\x1b[1mX", "\x1b[1mX"},
		{"CAN cancels a string", "\x1b]0;t\x18X", "X"},
		{"SUB cancels a string", "\x1bPq\x1aX", "X"},
		{"BEL does not end an APC", "\x1b_a\x07b\x1b\\X", "X"},
		{"lone 0x9C ends a string", "\x1b]0;t\x9cX", "X"},
		{"text with 0x9C in characters passes", "✳ ok ✶\r\n", "✳ ok ✶\r\n"},
		{"two ESCs then a title", "\x1b\x1b]0;t\x07X", "\x1bX"},
		// The emulator takes the two bytes after a 3-byte lead into the
		// character, ESC or not, so they start no string.
		{"ESC inside a broken character", "\xe2\x1b]0;x", "\xe2\x1b]0;x"},
		{"ESC at the very end is held", "ab\x1b", "ab"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, size := range []int{len(tc.in), 1, 2, 3} {
				var f stringFilter
				var out bytes.Buffer
				in := []byte(tc.in)
				for len(in) > 0 {
					n := min(size, len(in))
					f.write(&out, in[:n])
					in = in[n:]
				}
				if out.String() != tc.want {
					t.Errorf("in pieces of %d: %q, want %q", size, out.String(), tc.want)
				}
			}
		})
	}
}

// The model still answers the colour queries TUIs send at start-up, with a
// title around them.
func TestColourQueryAnsweredAfterTitle(t *testing.T) {
	var reply bytes.Buffer // read only after close, which waits for its writer
	s := newScreenModel(80, 24, &reply)
	for _, b := range []byte("\x1b]0;✳ Claude Code\x07\x1b]11;?\x1b\\\x1b]0;✳ x\x07\x1b[6n") {
		s.write([]byte{b})
	}
	s.close()
	got := reply.String()
	if !strings.Contains(got, "\x1b]11;rgb:") || !strings.HasSuffix(got, "\x1b[1;1R") {
		t.Errorf("replies %q, want the background colour and the cursor at 1;1", got)
	}
}

// BenchmarkStringFilter is the filter's cost per byte on Claude-like output
// (box drawing, titles) on top of the emulator's.
func BenchmarkStringFilter(b *testing.B) {
	out := bytes.Repeat([]byte(claudeFirstFrame+string(benchText[:1024])), 16)
	var f stringFilter
	b.SetBytes(int64(len(out)))
	for b.Loop() {
		f.write(io.Discard, out)
	}
}
