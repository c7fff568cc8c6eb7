package agentsim

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/term"
)

// A pane is the live bottom part of the screen, redrawn in place like the
// inline viewport of Codex: whatever is above it is history that only grows.
// The busy indicator lives here, not in history, so that it leaves the screen
// when the work ends and a supervisor watching the screen sees the agent idle.
type pane struct {
	header []string // above the composer: the busy indicator, or a whole dialog
	prompt bool     // whether the composer is shown
	style  string   // how it is drawn: a Composer* constant, "" for plain
	input  string   // the composer's text
	footer string   // hint below the composer
	// placeholder is shown in an empty composer.
	placeholder string
}

// equal reports whether p and q draw the same rows.
func (p pane) equal(q pane) bool {
	return p.prompt == q.prompt && p.style == q.style && p.input == q.input &&
		p.footer == q.footer && p.placeholder == q.placeholder && slices.Equal(p.header, q.header)
}

// screen owns the output. The agent and the flood writer share it, so every
// write takes the lock and leaves the pane drawn with the cursor in it.
type screen struct {
	mu  sync.Mutex
	out *os.File  // the terminal, for its size
	w   io.Writer // where output goes: out, or what translates it (consoleOutput)
	buf []byte

	pane      pane
	drawn     bool
	cursorRow int   // rows between the pane's top and the cursor
	err       error // first write error; the terminal may be gone

	// full: every change clears the screen and paints it all again, from
	// history, the last rows of which are kept here, already cut to the width.
	full     bool
	history  []string
	fullRows int // rows the last full paint drew

	// torn: the pause between the history lines and the pane of one paint
	// (Options.TornPaint).
	torn time.Duration
}

// historyKeep bounds the rows a full-redraw screen remembers: more than any
// terminal shows.
const historyKeep = 500

func newScreen(out *os.File, full bool) *screen { return &screen{out: out, w: out, full: full} }

// size is the terminal's size, or 80x24 when out is not a terminal.
func (s *screen) size() (width, height int) {
	w, h, err := term.GetSize(int(s.out.Fd()))
	if err != nil || w < 10 || h < 3 {
		return 80, 24
	}
	return w, h
}

// setPane redraws the pane as p.
func (s *screen) setPane(p pane) { s.update(p) }

// update adds lines to the history above the pane, then draws the pane as p.
func (s *screen) update(p pane, lines ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.full {
		width, _ := s.size()
		for _, l := range lines {
			for _, part := range strings.Split(l, "\n") {
				s.history = append(s.history, wrap(part, width-1)...)
			}
		}
		s.pane = p
		s.paintLocked()
		s.flushLocked()
		return
	}
	s.eraseLocked()
	// Lines are wrapped here, one column short of the width, as the pane
	// is: a terminal never wraps one itself, so a console that counts
	// columns otherwise (Wine 8's gives a wide character one cell) still
	// puts every row where the terminal does. wrap also keeps the escape
	// sequences of what was typed or pasted from the terminal.
	width, _ := s.size()
	for _, l := range lines {
		for _, part := range strings.Split(l, "\n") {
			for _, row := range wrap(part, width-1) {
				s.buf = append(s.buf, row...)
				s.buf = append(s.buf, "\r\n"...)
			}
		}
	}
	s.pane = p
	if s.torn > 0 && len(lines) > 0 {
		s.flushLocked()
		time.Sleep(s.torn)
	}
	s.drawLocked()
	s.flushLocked()
}

// printRaw adds already formatted text (lines ending in "\r\n") to the history.
func (s *screen) printRaw(text []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.full {
		width, _ := s.size()
		for _, l := range strings.Split(strings.TrimSuffix(string(text), "\r\n"), "\r\n") {
			s.history = append(s.history, wrap(l, width-1)...)
		}
		s.paintLocked()
		s.flushLocked()
		return s.err
	}
	s.eraseLocked()
	s.buf = append(s.buf, text...)
	s.drawLocked()
	s.flushLocked()
	return s.err
}

// showing reports whether the screen shows p already.
func (s *screen) showing(p pane) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return (s.drawn || s.fullRows > 0) && s.pane.equal(p)
}

// control writes a terminal mode sequence, which does not move the cursor.
func (s *screen) control(seq string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf = append(s.buf, seq...)
	s.flushLocked()
}

// leave moves the cursor below the pane, so that whatever the terminal shows
// next (a shell prompt, the CLI's error line) starts on a line of its own.
func (s *screen) leave() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.full {
		if s.fullRows > 0 {
			s.buf = fmt.Appendf(s.buf, "\x1b[%d;1H\r\n", s.fullRows)
			s.fullRows = 0
		}
		s.flushLocked()
		return
	}
	if s.drawn {
		width, height := s.size()
		rows, _, _ := layout(s.pane, width, height)
		if down := len(rows) - 1 - s.cursorRow; down > 0 {
			s.buf = fmt.Appendf(s.buf, "\x1b[%dB", down)
		}
		s.buf = append(s.buf, "\r\n"...)
		s.drawn = false
	}
	s.flushLocked()
}

func (s *screen) eraseLocked() {
	if !s.drawn {
		return
	}
	if s.cursorRow > 0 {
		s.buf = fmt.Appendf(s.buf, "\x1b[%dA", s.cursorRow)
	}
	s.buf = append(s.buf, "\r\x1b[J"...)
	s.drawn = false
}

func (s *screen) drawLocked() {
	width, height := s.size()
	rows, row, col := layout(s.pane, width, height)
	if len(rows) == 0 {
		return
	}
	for i, r := range rows {
		if i > 0 {
			s.buf = append(s.buf, "\r\n"...)
		}
		s.buf = append(s.buf, "\r\x1b[2K"...)
		s.buf = append(s.buf, r...)
	}
	if up := len(rows) - 1 - row; up > 0 {
		s.buf = fmt.Appendf(s.buf, "\x1b[%dA\x1b[%dG", up, col+1)
	}
	s.cursorRow = row
	s.drawn = true
}

// paintLocked clears the screen and paints the last rows of history with the
// pane below them, then puts the cursor where the pane wants it.
func (s *screen) paintLocked() {
	if len(s.history) > historyKeep {
		s.history = append(s.history[:0], s.history[len(s.history)-historyKeep:]...)
	}
	width, height := s.size()
	rows, row, col := layout(s.pane, width, height)
	hist := s.history[max(0, len(s.history)-max(height-len(rows), 0)):]
	s.buf = append(s.buf, "\x1b[H\x1b[2J"...)
	for i, r := range hist {
		if i > 0 {
			s.buf = append(s.buf, "\r\n"...)
		}
		s.buf = append(s.buf, r...)
	}
	if s.torn > 0 && len(hist) > 0 {
		// The cursor under the history, no pane yet.
		s.buf = append(s.buf, "\r\n"...)
		s.flushLocked()
		time.Sleep(s.torn)
		s.buf = fmt.Appendf(s.buf, "\x1b[%d;1H", len(hist))
	}
	for i, r := range rows {
		if i > 0 || len(hist) > 0 {
			s.buf = append(s.buf, "\r\n"...)
		}
		s.buf = append(s.buf, r...)
	}
	s.fullRows = len(hist) + len(rows)
	if len(rows) > 0 {
		s.buf = fmt.Appendf(s.buf, "\x1b[%d;%dH", len(hist)+row+1, col+1)
	}
}

func (s *screen) flushLocked() {
	if len(s.buf) == 0 {
		return
	}
	if _, err := s.w.Write(s.buf); err != nil && s.err == nil {
		s.err = err
	}
	s.buf = s.buf[:0]
}

// layout turns p into screen rows no wider than width-1 columns, so the
// terminal never wraps a line itself and the rows to erase are always known.
// It returns where the cursor belongs: the end of the composer's text, or of
// the last header line when there is no composer.
func layout(p pane, width, height int) (rows []string, cursorRow, cursorCol int) {
	maxCols := width - 1
	for _, h := range p.header {
		rows = append(rows, truncate(h, maxCols))
	}
	if !p.prompt {
		if len(rows) == 0 {
			return nil, 0, 0
		}
		last := len(rows) - 1
		return rows, last, textWidth(rows[last])
	}

	// What the composer's text rows look like inside their frame.
	marker, textCols, frameRows := "› ", maxCols-2, 0
	switch p.style {
	case ComposerBox:
		marker, textCols, frameRows = "❯ ", maxCols-6, 2 // "│ " + marker … " │"
	case ComposerRules:
		marker, frameRows = "❯ ", 2
	}
	var input []string
	lines := strings.Split(p.input, "\n")
	if p.input == "" && p.placeholder != "" {
		// The cursor before it, as the real CLIs draw theirs (dimmed
		// there; the supervisor reads text, not colours).
		input = []string{marker + truncate(p.placeholder, textCols)}
		cursorCol = textWidth(marker)
		lines = nil
	}
	for i, line := range lines {
		prefix := "  "
		if i == 0 {
			prefix = marker
		}
		for j, seg := range wrap(line, textCols) {
			if j > 0 {
				prefix = "  "
			}
			input = append(input, prefix+seg)
		}
	}
	// Keep the pane on the screen: show the end of a long input, as the
	// composer of a real CLI scrolls.
	room := height - 1 - len(rows) - frameRows
	if p.footer != "" {
		room--
	}
	room = max(room, 2)
	if len(input) > room {
		hidden := len(input) - room + 1
		input = append([]string{fmt.Sprintf("%s[… %d more lines]", marker, hidden)}, input[hidden:]...)
	}
	if p.input != "" || p.placeholder == "" {
		cursorCol = textWidth(input[len(input)-1])
	}
	switch p.style {
	case ComposerBox:
		edge := strings.Repeat("─", maxCols-2)
		rows = append(rows, "╭"+edge+"╮")
		for _, r := range input {
			rows = append(rows, "│ "+r+strings.Repeat(" ", max(maxCols-4-textWidth(r), 0))+" │")
		}
		cursorRow = len(rows) - 1
		cursorCol += 2
		rows = append(rows, "╰"+edge+"╯")
	case ComposerRules:
		rule := strings.Repeat("─", maxCols)
		rows = append(rows, rule)
		rows = append(rows, input...)
		cursorRow = len(rows) - 1
		rows = append(rows, rule)
	default:
		rows = append(rows, input...)
		cursorRow = len(rows) - 1
	}
	if p.footer != "" {
		rows = append(rows, truncate(p.footer, maxCols))
	}
	return rows, cursorRow, cursorCol
}

// wrap cuts s into pieces of at most cols columns, with control characters
// made visible, so that pasted escape sequences never reach the terminal.
func wrap(s string, cols int) []string {
	cols = max(cols, 1)
	var out []string
	var b strings.Builder
	w := 0
	for _, r := range s {
		r = printable(r)
		rw := runeWidth(r)
		if w+rw > cols {
			out = append(out, b.String())
			b.Reset()
			w = 0
		}
		b.WriteRune(r)
		w += rw
	}
	return append(out, b.String())
}

// truncate cuts s to at most cols columns.
func truncate(s string, cols int) string {
	var b strings.Builder
	w := 0
	for _, r := range s {
		r = printable(r)
		rw := runeWidth(r)
		if w+rw > cols {
			break
		}
		b.WriteRune(r)
		w += rw
	}
	return b.String()
}

func printable(r rune) rune {
	switch {
	case r == '\t':
		return ' '
	case r == utf8.RuneError, r < 0x20, r >= 0x7f && r < 0xa0:
		return '\uFFFD'
	}
	return r
}

func textWidth(s string) int {
	w := 0
	for _, r := range s {
		w += runeWidth(r)
	}
	return w
}

// runeWidth is the number of columns r takes in a terminal: enough of
// Unicode's East Asian Width to keep Japanese prompts and emoji on their rows.
func runeWidth(r rune) int {
	switch {
	case unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf):
		return 0
	case r >= 0x1100 && r <= 0x115F,
		r >= 0x2E80 && r <= 0xA4CF && r != 0x303F,
		r >= 0xAC00 && r <= 0xD7A3,
		r >= 0xF900 && r <= 0xFAFF,
		r >= 0xFE30 && r <= 0xFE4F,
		r >= 0xFF00 && r <= 0xFF60,
		r >= 0xFFE0 && r <= 0xFFE6,
		r >= 0x1F300 && r <= 0x1F64F,
		r >= 0x1F900 && r <= 0x1F9FF,
		r >= 0x20000 && r <= 0x3FFFD:
		return 2
	}
	return 1
}
