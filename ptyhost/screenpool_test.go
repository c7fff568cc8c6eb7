package ptyhost

import (
	"bytes"
	"github.com/shogun-dev/shogun/shoguntest"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"
)

// A screen model lent by the pool to the next program shows that program
// exactly as a new model would, whatever the program before left behind:
// the next role's screen, its patterns and its preview never see the last
// one's.
func TestAPooledScreenShowsTheNextProgramAsANewOneWould(t *testing.T) {
	// The next program: text, colours, a cursor move, a DEC line-drawing
	// candidate ("q" is a line in the graphics set), a wide character.
	next := []byte("\x1b[1;1Hready \x1b[32mok\x1b[0m qqq 将軍\r\n\x1b[5;3H› ")
	leftovers := []struct{ name, out string }{
		{"nothing", ""},
		{"the alternate screen, left (1047)", "\x1b[?1047h\x1b[2J\x1b[10;10Hfull screen\x1b[?1047l"},
		{"a colour left on", "\x1b[31;44;1mred on blue"},
		{"bracketed paste, origin mode and a scroll region", "\x1b[?2004h\x1b[3;8r\x1b[?6hx"},
		{"insert mode and a hidden cursor", "\x1b[4h\x1b[?25lxyz"},
		{"the line-drawing character set", "\x1b(0qqq"},
		{"a default colour set", "\x1b]10;rgb:ff/00/00\x07\x1b]11;rgb:00/00/ff\x07"},
		{"an OSC half written", "\x1b]0;a title that never ends"},
		{"a CSI half written", "\x1b[38;5"},
		{"a UTF-8 character half written", "\xe5\xb0"},
		{"a full screen, scrolled", string(bytes.Repeat([]byte("line\r\n"), 60))},
	}
	fresh := newScreenModel(40, 12, io.Discard)
	fresh.write(next)
	want := struct {
		snap   ScreenSnapshot
		paint  []byte
		styled [][]StyledSpan
		paste  bool
	}{fresh.snapshot(), fresh.paint(), fresh.styledRows(0, 12), fresh.bracketedPaste()}
	fresh.close()

	for _, tc := range leftovers {
		t.Run(tc.name, func(t *testing.T) {
			pool := NewScreenPool(1)
			defer pool.Close()
			// The program before ran in another size.
			before := newPooledScreenModel(pool, 80, 24, io.Discard)
			before.write([]byte(tc.out))
			before.close()
			m := newPooledScreenModel(pool, 40, 12, io.Discard)
			defer m.close()
			if m.core != before.core && !before.core.usedAlt.Load() {
				t.Fatal("the pool made a new model instead of lending the one given back")
			}
			m.write(next)
			if got := m.snapshot(); !reflect.DeepEqual(got, want.snap) {
				t.Errorf("screen:\n%#v\nwant (a new model's):\n%#v", got, want.snap)
			}
			if got := m.paint(); !bytes.Equal(got, want.paint) {
				t.Errorf("paint:\n%q\nwant (a new model's):\n%q", got, want.paint)
			}
			if got := m.styledRows(0, 12); !reflect.DeepEqual(got, want.styled) {
				t.Errorf("styled rows:\n%#v\nwant (a new model's):\n%#v", got, want.styled)
			}
			if got := m.bracketedPaste(); got != want.paste {
				t.Errorf("bracketed paste %v, want %v (a new model's)", got, want.paste)
			}
		})
	}
}

// The answers to a program's terminal queries go to that program: none the
// emulator gave the program before goes to the next one, and the next
// one's go to it alone.
func TestAPooledScreenAnswersOnlyItsOwnProgram(t *testing.T) {
	pool := NewScreenPool(1)
	defer pool.Close()
	var first, second shoguntest.Buffer
	a := newPooledScreenModel(pool, 40, 12, &first)
	a.write([]byte("\x1b[3;5H\x1b[6n")) // where is the cursor?
	waitFor(t, "the first program's answer", 5*time.Second, func() bool { return first.String() != "" })
	// Asked again just before its end: the answer may go, or not, but
	// never to the next program.
	a.write([]byte("\x1b[6n"))
	a.close()
	b := newPooledScreenModel(pool, 40, 12, &second)
	defer b.close()
	b.write([]byte("\x1b[2;2H\x1b[6n"))
	waitFor(t, "the second program's answer", 5*time.Second, func() bool { return second.String() != "" })
	if got := second.String(); got != "\x1b[2;2R" {
		t.Errorf("the second program got %q, want only its own answer %q", got, "\x1b[2;2R")
	}
	if got := first.String(); got != "\x1b[3;5R" && got != "\x1b[3;5R\x1b[3;5R" {
		t.Errorf("the first program got %q, want only its own answers", got)
	}
}

// A closed session's screen still shows what its program left, for the
// role's last line and a preview asked late, however the emulator is used
// after.
func TestAClosedPooledScreenKeepsItsLastScreen(t *testing.T) {
	pool := NewScreenPool(1)
	defer pool.Close()
	a := newPooledScreenModel(pool, 40, 12, io.Discard)
	a.write([]byte("Error: out of tokens\r\n$ "))
	wantSnap, wantPaint := a.snapshot(), a.paint()
	a.close()
	b := newPooledScreenModel(pool, 40, 12, io.Discard)
	defer b.close()
	b.write([]byte("another role's secret"))
	if got := a.snapshot(); !reflect.DeepEqual(got, wantSnap) {
		t.Errorf("closed screen:\n%#v\nwant what it showed at close:\n%#v", got, wantSnap)
	}
	if got := a.paint(); !bytes.Equal(got, wantPaint) {
		t.Errorf("closed paint %q, want what it showed at close %q", got, wantPaint)
	}
	rows := a.styledRows(0, 3)
	if len(rows) != 3 || len(rows[0]) != 1 || rows[0][0].Text != "Error: out of tokens" {
		t.Errorf("closed preview rows %#v, want its first row's text", rows)
	}
	if cols, rowsN := a.size(); cols != 40 || rowsN != 12 {
		t.Errorf("closed size %dx%d, want 40x12", cols, rowsN)
	}
	a.write([]byte("more")) // output after the end is not taken in
	if got := a.snapshot(); !reflect.DeepEqual(got, wantSnap) {
		t.Errorf("a write after close changed the closed screen: %#v", got)
	}
}

// The pool keeps no more idle models than asked, and a closed pool ends
// those given back.
func TestScreenPoolKeepsWhatItIsAskedTo(t *testing.T) {
	pool := NewScreenPool(1)
	a := newPooledScreenModel(pool, 10, 3, io.Discard)
	b := newPooledScreenModel(pool, 10, 3, io.Discard)
	a.close()
	b.close()
	pool.mu.Lock()
	idle := len(pool.idle)
	pool.mu.Unlock()
	if idle != 1 {
		t.Errorf("%d idle models kept, want 1", idle)
	}
	pool.Close()
	c := newPooledScreenModel(pool, 10, 3, io.Discard)
	c.close()
	pool.mu.Lock()
	idle = len(pool.idle)
	pool.mu.Unlock()
	if idle != 0 {
		t.Errorf("a closed pool kept %d models", idle)
	}
}

// A model whose program showed the alternate screen is not kept: vt keeps
// that screen's scrollback, up to 10,000 rows of the program's text, and
// lets no one clear it. The next program gets a new model.
func TestAModelThatShowedTheAlternateScreenIsNotKept(t *testing.T) {
	for _, enter := range []string{"\x1b[?1049h", "\x1b[?1047h"} {
		pool := NewScreenPool(1)
		a := newPooledScreenModel(pool, 40, 12, io.Discard)
		a.write([]byte(enter + string(bytes.Repeat([]byte("A's secret line\r\n"), 200))))
		a.close()
		b := newPooledScreenModel(pool, 40, 12, io.Discard)
		if b.core == a.core {
			t.Errorf("after %q the pool lent the model, its alternate screen's scrollback and all, to the next program", enter)
		}
		b.close()
		pool.Close()
	}
}

// The marker the pool sends through the answer pipe when a model is given
// back never reaches the next program, however soon that one starts (a
// NUL typed into a CLI at start is Ctrl+Space). Before the fix, 257 of 300
// next programs were sent it.
func TestTheNextProgramGetsNoByteOfThePool(t *testing.T) {
	for i := range 300 {
		pool := NewScreenPool(1)
		a := newPooledScreenModel(pool, 40, 12, io.Discard)
		a.write([]byte("bye"))
		a.close()
		var got shoguntest.Buffer
		b := newPooledScreenModel(pool, 40, 12, &got)
		b.write([]byte("\x1b[5n")) // are you OK?
		waitFor(t, "the answer", 5*time.Second, func() bool { return strings.HasSuffix(got.String(), "\x1b[0n") })
		b.close()
		pool.Close()
		if s := got.String(); s != "\x1b[0n" {
			t.Fatalf("program %d was sent %q, want only its answer %q", i, s, "\x1b[0n")
		}
	}
}
