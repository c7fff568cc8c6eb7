package ptyhost

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// tuiFrames is a full-screen program redrawing in place n times: cursor
// home, then every row, with a counter that changes.
func tuiFrames(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "\x1b[H\x1b[1m Dashboard\x1b[0m\x1b[K\r\n tasks done: %d\x1b[K\r\n\x1b[K\r\n > \x1b[K", i)
	}
	return b.String()
}

// render feeds out to a TextRenderer in pieces of size bytes.
func render(t *testing.T, out string, cols, rows, size int) string {
	t.Helper()
	var w bytes.Buffer
	r := NewTextRenderer(&w, cols, rows)
	for p := []byte(out); len(p) > 0; {
		n := min(size, len(p))
		if _, err := r.Write(p[:n]); err != nil {
			t.Fatal(err)
		}
		p = p[n:]
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	return w.String()
}

func TestRenderTextIsWhatThePersonSaw(t *testing.T) {
	var hundred, hundredLines strings.Builder
	for i := 1; i <= 100; i++ {
		fmt.Fprintf(&hundred, "line %d\r\n", i)
		fmt.Fprintf(&hundredLines, "line %d\n", i)
	}
	for _, tc := range []struct {
		name, out, want string
	}{
		{"spaces drawn by moving the cursor",
			"\x1b[31m⎿\x1b[39m\x1b[1CUnable\x1b[1Cto\x1b[1Cconnect\x1b[1Cto\x1b[1CAnthropic\x1b[1Cservices\r\n",
			"⎿ Unable to connect to Anthropic services\n"},
		{"carriage return overwrites", "hello world\rHELLO\r\n", "HELLO world\n"},
		{"progress bar redrawn after \\r",
			"[#         ]  10%\r[#####     ]  50%\r[##########] 100%\r\ndone\r\n",
			"[##########] 100%\ndone\n"},
		{"colours and titles leave no trace",
			"\x1b]0;✳ Claude Code\x07\x1b[1;31merror:\x1b[0m bad input\r\n",
			"error: bad input\n"},
		{"erase to end of line", "abcdef\r\x1b[3C\x1b[K\r\n", "abc\n"},
		{"wide characters", "日本語\x1b[1Cテスト\r\n", "日本語 テスト\n"},
		{"more lines than the screen has rows", hundred.String(), hundredLines.String()},
		{"a TUI redrawing in place gives its last frame once", tuiFrames(50),
			" Dashboard\n tasks done: 50\n\n >\n"},
		{"the alternate screen is written as it is left",
			"before\r\n\x1b[?1049h" + tuiFrames(20) + "\x1b[?1049lafter\r\n",
			" Dashboard\n tasks done: 20\n\n >\nbefore\nafter\n"},
		{"a clear and a redraw of everything is not doubled",
			"> a\r\n> b\r\n\x1b[2J\x1b[3J\x1b[H> a\r\n> b\r\n> c\r\n",
			"> a\n> b\n> c\n"},
		{"cursor positioning", "\x1b[2;5Hworld\x1b[1;1Hhello", "hello\n    world\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, size := range []int{len(tc.out), 1, 5} {
				if got := render(t, tc.out, 80, 10, size); got != tc.want {
					t.Errorf("in pieces of %d:\n%s\nwant:\n%s", size, got, tc.want)
				}
			}
		})
	}
}

// Following a log flushes at each pause; nothing is written twice, and a
// row that changed since is written again as it is now.
func TestTextRendererFlushAtPauses(t *testing.T) {
	var w bytes.Buffer
	r := NewTextRenderer(&w, 40, 6)
	step := func(out, want string) {
		t.Helper()
		w.Reset()
		if _, err := r.Write([]byte(out)); err != nil {
			t.Fatal(err)
		}
		if err := r.Flush(); err != nil {
			t.Fatal(err)
		}
		if w.String() != want {
			t.Errorf("after %q: %q, want %q", out, w.String(), want)
		}
	}
	step("one\r\ntwo\r\n", "one\ntwo\n")
	// one and two scroll out, already written
	step("three\r\nfour\r\nfive\r\nsix\r\nseven\r\n", "three\nfour\nfive\nsix\nseven\n")
	step("", "")
	step(" 50%", " 50%\n")
	step("\r100%\r\n", "100%\n")
	// A TUI draws over the top rows; the row it blanks is not written again.
	step(tuiFrames(3), " Dashboard\n tasks done: 3\n >\n")
	step(tuiFrames(5), " tasks done: 5\n")
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestRenderTextFromReader(t *testing.T) {
	var w bytes.Buffer
	if err := RenderText(strings.NewReader("a\x1b[1Cb\r\n"), &w, 120, 40); err != nil {
		t.Fatal(err)
	}
	if w.String() != "a b\n" {
		t.Errorf("RenderText = %q", w.String())
	}
}
