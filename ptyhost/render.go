package ptyhost

import (
	"io"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// TextRenderer turns a program's terminal output, as a role's log keeps it,
// into the lines of text a person watching its terminal saw. The output
// goes through the screen model's terminal emulator, so cursor moves, carriage
// returns that overwrite, erases and redraws give the text they drew: the
// blanks a program makes by moving the cursor (ESC[1C) are spaces, a
// progress bar redrawn after \r is its last state, and escape sequences
// leave no trace.
//
// Output is a stream and a row of the screen may change until it leaves
// it, so a row is written:
//   - when it scrolls out of the top of the screen, as it is then;
//   - on Flush (the end of the input, or a pause in it): every row of the
//     current screen, from the top to the last one with text, that was not
//     written before with the text it has now (a row that has been emptied
//     since is not written again);
//   - when the program leaves the alternate screen: the rows of that screen,
//     as on Flush, before they vanish.
//
// A row written by Flush is remembered, so it is not written again when it
// later scrolls out unchanged. A full-screen program that redraws in place
// (on the alternate screen, or by moving the cursor home) thus adds only
// its changed rows, once per Flush, and nothing in between. Clearing the
// screen (ED 2, ED 3, a reset) writes nothing: what was cleared was either
// written already or is being redrawn, as when Claude Code redraws its whole
// conversation. Rows the program's own autowrap broke are written as the
// separate rows they were on the screen.
//
// A TextRenderer is not safe for concurrent use. Close it when done.
type TextRenderer struct {
	w      io.Writer
	m      *screenModel
	out    []byte // lines not yet written to w
	err    error
	closed bool
	// shown holds, for each row of the main (0) and alternate (1) screen,
	// the text last written for it.
	shown [2][]shownRow
}

type shownRow struct {
	text string
	ok   bool // the row was written with text
}

// renderChunk is the most output the emulator takes between two looks at
// the rows that scrolled out; at most a screenful can scroll per byte.
const renderChunk = 4096

// NewTextRenderer returns a renderer for a terminal of the given size that
// writes lines, each ended by "\n", to w.
func NewTextRenderer(w io.Writer, cols, rows int) *TextRenderer {
	cols, rows = max(cols, 1), max(rows, 1)
	m := newScreenModel(cols, rows, io.Discard)
	m.emu.SetScrollbackSize(renderChunk * rows)
	r := &TextRenderer{w: w, m: m}
	r.shown[0] = make([]shownRow, rows)
	r.shown[1] = make([]shownRow, rows)
	e := m.emu
	// Handlers registered later run first; returning false passes the
	// sequence on to the emulator's own handler.
	e.RegisterCsiHandler('J', func(params ansi.Params) bool {
		if n, _, _ := params.Param(0, 0); n == 2 || n == 3 {
			r.harvest()
			clear(r.shown[r.screen()])
		}
		return false
	})
	e.RegisterEscHandler('c', func() bool { // RIS, a full reset
		r.harvest()
		clear(r.shown[0])
		clear(r.shown[1])
		return false
	})
	e.RegisterCsiHandler(ansi.Command('?', 0, 'l'), func(params ansi.Params) bool {
		if e.IsAltScreen() && leavesAltScreen(params) {
			r.harvest()
			r.writeScreen()
			clear(r.shown[1])
		}
		return false
	})
	return r
}

// Write takes in output. Lines that scrolled out of the screen are written
// before it returns.
func (r *TextRenderer) Write(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	for rest := p; len(rest) > 0; {
		n := min(len(rest), renderChunk)
		r.m.write(rest[:n])
		r.harvest()
		rest = rest[n:]
	}
	r.send()
	return len(p), r.err
}

// Flush writes the rows of the current screen that were not written yet
// with their current text.
func (r *TextRenderer) Flush() error {
	if r.err != nil {
		return r.err
	}
	r.m.mu.Lock()
	r.harvest()
	r.writeScreen()
	r.m.mu.Unlock()
	r.send()
	return r.err
}

// Close flushes and releases the emulator. Closing again does nothing.
func (r *TextRenderer) Close() error {
	if r.closed {
		return r.err
	}
	r.closed = true
	err := r.Flush()
	r.m.close()
	return err
}

// RenderText writes the text of a program's terminal output, read from src
// to its end, to w, for a terminal of the given size (see TextRenderer).
func RenderText(src io.Reader, w io.Writer, cols, rows int) error {
	r := NewTextRenderer(w, cols, rows)
	if _, err := io.Copy(r, src); err != nil {
		_ = r.Close()
		return err
	}
	return r.Close()
}

// screen is 1 while the program is on the alternate screen, else 0.
func (r *TextRenderer) screen() int {
	if r.m.emu.IsAltScreen() {
		return 1
	}
	return 0
}

// harvest writes the rows that scrolled out of the main screen since the
// last look, less those a Flush wrote with the same text. Rows scroll out
// from the top, so the record of what was written moves up with them.
func (r *TextRenderer) harvest() {
	sb := r.m.emu.Scrollback()
	if sb == nil || sb.Len() == 0 {
		return
	}
	shown := r.shown[0]
	for _, line := range sb.Lines() {
		text := strings.TrimRight(line.String(), " ")
		top := shown[0]
		copy(shown, shown[1:])
		shown[len(shown)-1] = shownRow{}
		if top.ok && top.text == text {
			continue
		}
		r.line(text)
	}
	sb.Clear()
}

// writeScreen writes the current screen's rows, from the top to the last
// with text, that were not written before with the text they have now.
func (r *TextRenderer) writeScreen() {
	rows := strings.Split(r.m.emu.String(), "\n")
	last := len(rows) - 1
	for last >= 0 && rows[last] == "" {
		last--
	}
	shown := r.shown[r.screen()]
	for i := 0; i <= last && i < len(shown); i++ {
		text := rows[i]
		if shown[i].ok && (shown[i].text == text || text == "") {
			continue
		}
		r.line(text)
		shown[i] = shownRow{text: text, ok: true}
	}
}

func (r *TextRenderer) line(text string) {
	r.out = append(r.out, text...)
	r.out = append(r.out, '\n')
}

// send writes the lines gathered so far to w.
func (r *TextRenderer) send() {
	if len(r.out) == 0 || r.err != nil {
		return
	}
	_, r.err = r.w.Write(r.out)
	r.out = r.out[:0]
}

// leavesAltScreen reports whether a DECRST (CSI ? … l) switches back from
// the alternate screen.
func leavesAltScreen(params ansi.Params) bool {
	for i := range params {
		if n, _, ok := params.Param(i, 0); ok && (n == 47 || n == 1047 || n == 1049) {
			return true
		}
	}
	return false
}
