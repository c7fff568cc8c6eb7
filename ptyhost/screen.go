package ptyhost

import (
	"fmt"
	"image/color"
	"io"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	uv "github.com/charmbracelet/ultraviolet"
	"github.com/charmbracelet/x/vt"
)

// ScreenSnapshot is the visible screen of a role's terminal as text.
type ScreenSnapshot struct {
	// Lines are the rows of the screen, trailing spaces removed.
	Lines []string
	// CursorRow and CursorCol are the 0-based cursor position.
	CursorRow, CursorCol int
	// AltScreen is true while a full-screen program uses the alternate screen.
	AltScreen bool
	// Cols is the screen width.
	Cols int
}

// Text returns the screen as one string, rows joined by newlines, without
// trailing empty rows.
func (s ScreenSnapshot) Text() string {
	end := len(s.Lines)
	for end > 0 && s.Lines[end-1] == "" {
		end--
	}
	return strings.Join(s.Lines[:end], "\n")
}

// maxComposerRows bounds how far above the cursor a composer's first row is
// looked for: a composer taller than this is a screen, not an input box.
const maxComposerRows = 24

// InputArea returns the text of the program's input area, white space
// removed, as a program may wrap or indent typed text differently from how
// it was typed. The input area is the composer: the rows from the nearest row
// at or above the cursor that starts with marker (the prompt mark, after any
// indent and box border) down to the cursor's row, however many lines the
// composer has grown to, without the marker itself (marker may list several
// marks, separated by spaces: any of them starts the row). Text moved above the
// composer on submit (a transcript) is outside it. marked reports whether
// such a row was found.
//
// Without a marker, or when no row above the cursor starts with it, the area
// is the cursor's row and the rows above it that are filled to the right
// edge (a long line wraps onto them); when the cursor's row is blank, as it
// is after a newline in an unmarked composer, the non-blank rows just above
// it belong to the area too.
func (s ScreenSnapshot) InputArea(marker string) (text string, marked bool) {
	if s.CursorRow < 0 || s.CursorRow >= len(s.Lines) {
		return "", false
	}
	var b strings.Builder
	if first, rest, ok := s.markerRow(marker); ok {
		b.WriteString(rest)
		for _, row := range s.Lines[first+1 : s.CursorRow+1] {
			b.WriteString(stripBorder(row))
		}
		return strings.Join(strings.Fields(b.String()), ""), true
	}
	first := s.CursorRow
	for first > 0 && first > s.CursorRow-8 && utf8.RuneCountInString(s.Lines[first-1]) >= s.Cols-2 {
		first--
	}
	if strings.TrimSpace(stripBorder(s.Lines[s.CursorRow])) == "" {
		for first > 0 && first > s.CursorRow-8 && strings.TrimSpace(stripBorder(s.Lines[first-1])) != "" {
			first--
		}
	}
	for _, row := range s.Lines[first : s.CursorRow+1] {
		b.WriteString(stripBorder(row))
	}
	return strings.Join(strings.Fields(b.String()), ""), false
}

// CursorAtMarker reports whether the cursor is on a row that starts with one
// of marker's marks: where every CLI's empty composer keeps it. A paint half
// done (the history written, the composer not yet) leaves the cursor on a
// blank row under the history instead.
func (s ScreenSnapshot) CursorAtMarker(marker string) bool {
	row, _, ok := s.markerRow(marker)
	return ok && row == s.CursorRow
}

// markerRow finds the composer's first row: the nearest row at or above the
// cursor whose text, after indent and box border, starts with one of
// marker's marks. rest is that row after the mark.
func (s ScreenSnapshot) markerRow(marker string) (row int, rest string, ok bool) {
	if marker == "" {
		return 0, "", false
	}
	for i := s.CursorRow; i >= 0 && i > s.CursorRow-maxComposerRows; i-- {
		line := strings.TrimLeft(stripBorder(s.Lines[i]), " ")
		for _, m := range strings.Fields(marker) {
			if strings.HasPrefix(line, m) {
				return i, line[len(m):], true
			}
		}
	}
	return 0, "", false
}

// stripBorder drops the vertical box-drawing borders a composer box puts at
// the ends of its rows, so they never count as typed text.
func stripBorder(row string) string {
	return strings.Trim(row, " │┃║|")
}

// CursorLine returns the row the cursor is on.
func (s ScreenSnapshot) CursorLine() string {
	if s.CursorRow < 0 || s.CursorRow >= len(s.Lines) {
		return ""
	}
	return s.Lines[s.CursorRow]
}

// screenModel is a VT emulator fed with a role's output. It answers the
// terminal queries TUIs send at start-up (cursor position, status, device
// attributes, OSC 10/11 colours) by writing the answer to reply, as a real
// terminal would, while no person's terminal is attached to answer them.
// A model taken from a ScreenPool goes back to it at close, and keeps the
// screen it showed last (frozen) for those who still ask.
type screenModel struct {
	mu     sync.Mutex
	core   *vtCore
	emu    *vt.Emulator // core's; nil once frozen
	pool   *ScreenPool
	frozen *frozenScreen
	filter stringFilter // what of the output the emulator sees

	// seen is how many bytes of the output the model has taken in or
	// skipped (under mu): where in the output a paint stands.
	seen int64

	// last is the screen as snapshot last rendered it, valid until the
	// emulator takes in output or is resized (under mu). Typing polls the
	// screen every few milliseconds while it waits for an echo or a
	// submit, and most polls find it unchanged: rendering every cell of
	// it again was a sixth of the supervisor's CPU (docs/benchmarks.md,
	// many roles, few slots).
	last      ScreenSnapshot
	lastValid bool
}

// frozenScreen is what a pooled model's screen showed when its session
// closed. Its rows keep their text, not their colours.
type frozenScreen struct {
	snap  ScreenSnapshot
	paint []byte
	rows  int
}

func newScreenModel(cols, rows int, reply io.Writer) *screenModel {
	return newPooledScreenModel(nil, cols, rows, reply)
}

// newPooledScreenModel takes its emulator from pool (nil: a new one).
func newPooledScreenModel(pool *ScreenPool, cols, rows int, reply io.Writer) *screenModel {
	core := pool.get(cols, rows)
	core.setReply(reply)
	return &screenModel{core: core, emu: core.emu, pool: pool}
}

func (s *screenModel) write(p []byte) { s.writeAfter(0, p) }

// writeAfter takes in p, which follows skipped bytes of output the model
// never saw (dropped while it lagged).
func (s *screenModel) writeAfter(skipped int64, p []byte) {
	s.mu.Lock()
	if s.frozen != nil {
		s.mu.Unlock()
		return
	}
	s.filter.write(s.emu, p)
	s.seen += skipped + int64(len(p))
	s.lastValid = false
	s.mu.Unlock()
}

func (s *screenModel) resize(cols, rows int) {
	s.mu.Lock()
	if s.frozen == nil {
		s.emu.Resize(cols, rows)
		s.lastValid = false
	}
	s.mu.Unlock()
}

func (s *screenModel) snapshot() ScreenSnapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.frozen != nil {
		snap := s.frozen.snap
		snap.Lines = slices.Clone(snap.Lines)
		return snap
	}
	if !s.lastValid {
		s.last, s.lastValid = s.snapshotLocked(), true
	}
	// Each caller gets its own rows, as from a fresh render.
	snap := s.last
	snap.Lines = slices.Clone(snap.Lines)
	return snap
}

func (s *screenModel) snapshotLocked() ScreenSnapshot {
	pos := s.emu.CursorPosition()
	lines := strings.Split(s.emu.String(), "\n")
	// Rows come with trailing blanks trimmed, but the blanks a program wrote
	// before the cursor are part of what a person sees: an empty prompt
	// "› " must still read "› ", so patterns can match it.
	if pos.Y >= 0 && pos.Y < len(lines) {
		if n := utf8.RuneCountInString(lines[pos.Y]); n < pos.X {
			lines[pos.Y] += strings.Repeat(" ", pos.X-n)
		}
	}
	return ScreenSnapshot{Lines: lines, CursorRow: pos.Y, CursorCol: pos.X, AltScreen: s.emu.IsAltScreen(), Cols: s.emu.Width()}
}

// paint renders the screen with styles, for a terminal to draw: clear,
// home, the rows, then the cursor where the program left it. A program on
// the alternate screen is painted on the terminal's alternate screen too, so
// the terminal leaves it, and gets its own screen back, when the program
// or the person does.
func (s *screenModel) paint() []byte {
	p, _ := s.paintAt()
	return p
}

// paintAt is paint, and how many bytes of output the painted screen has
// taken in.
func (s *screenModel) paintAt() ([]byte, int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.frozen != nil {
		return slices.Clone(s.frozen.paint), s.seen
	}
	return s.paintLocked(), s.seen
}

func (s *screenModel) paintLocked() []byte {
	rows := strings.Split(s.emu.Render(), "\n")
	var b strings.Builder
	if s.emu.IsAltScreen() {
		b.WriteString("\x1b[?1049h")
	}
	b.WriteString("\x1b[0m\x1b[2J\x1b[H")
	for i, r := range rows {
		if i > 0 {
			b.WriteString("\r\n")
		}
		b.WriteString(r)
	}
	pos := s.emu.CursorPosition()
	fmt.Fprintf(&b, "\x1b[0m\x1b[%d;%dH", pos.Y+1, pos.X+1)
	return []byte(b.String())
}

// close ends the model's emulator, or, for a pooled one, keeps what its
// screen shows and gives the emulator back to the pool. Nothing is written
// to it any more: its session's output has ended.
func (s *screenModel) close() {
	if s.pool == nil {
		s.core.close()
		return
	}
	s.mu.Lock()
	if s.frozen != nil {
		s.mu.Unlock()
		return
	}
	s.frozen = &frozenScreen{snap: s.snapshotLocked(), paint: s.paintLocked(), rows: s.emu.Height()}
	s.emu = nil
	s.mu.Unlock()
	s.pool.put(s.core)
}

// bracketedPaste reports whether the program asked for bracketed paste.
func (s *screenModel) bracketedPaste() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.frozen == nil && s.core.bracketedPaste.Load()
}

// answerQueries says whether the emulator's answers go to the program.
func (s *screenModel) answerQueries(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.frozen == nil {
		s.core.answer.Store(on)
	}
}

// size is the screen's columns and rows.
func (s *screenModel) size() (cols, rows int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.frozen != nil {
		return s.frozen.snap.Cols, s.frozen.rows
	}
	return s.emu.Width(), s.emu.Height()
}

// ReplayScreen feeds raw terminal output through the same screen model a
// running role has and returns the screen it leaves. Recorded captures of
// real programs are replayed through it, so fixtures are read exactly as a
// live role's screen would be. Queries in raw are answered into nothing.
func ReplayScreen(raw []byte, cols, rows int) ScreenSnapshot {
	s := newScreenModel(cols, rows, io.Discard)
	defer s.close()
	s.write(raw)
	return s.snapshot()
}

// StyledSpan is a run of a screen row's text in one style, for a viewer
// that shows the screen's colours without a terminal emulator of its own.
type StyledSpan struct {
	Text string
	// FG and BG are colours as "#rrggbb"; "" is the terminal's default.
	FG, BG                                  string
	Bold, Faint, Italic, Underline, Reverse bool
}

// StyledRows returns the rows from (0-based) up to to (excluded) of the
// screen as runs of text in one style. Trailing blanks in the default
// background are left out, as Screen leaves them out of its lines.
func (s *Session) StyledRows(from, to int) [][]StyledSpan { return s.screen.styledRows(from, to) }

func (s *screenModel) styledRows(from, to int) [][]StyledSpan {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.frozen != nil {
		return s.frozen.styledRows(from, to)
	}
	w, h := s.emu.Width(), s.emu.Height()
	from, to = max(0, from), min(h, to)
	rows := make([][]StyledSpan, 0, max(0, to-from))
	for y := from; y < to; y++ {
		var row []StyledSpan
		for x := 0; x < w; {
			text, width, sp := " ", 1, StyledSpan{}
			if c := s.emu.CellAt(x, y); c != nil {
				if c.Content != "" {
					text = c.Content
				}
				width = max(1, c.Width)
				sp = spanStyle(c.Style)
			}
			if n := len(row); n > 0 && sameStyle(row[n-1], sp) {
				row[n-1].Text += text
			} else {
				sp.Text = text
				row = append(row, sp)
			}
			x += width
		}
		for n := len(row); n > 0 && row[n-1].BG == "" && !row[n-1].Reverse; n = len(row) {
			if row[n-1].Text = strings.TrimRight(row[n-1].Text, " "); row[n-1].Text != "" {
				break
			}
			row = row[:n-1]
		}
		rows = append(rows, row)
	}
	return rows
}

// styledRows are the frozen screen's rows, as text in the default style.
func (f *frozenScreen) styledRows(from, to int) [][]StyledSpan {
	from, to = max(0, from), min(f.rows, to)
	rows := make([][]StyledSpan, 0, max(0, to-from))
	for y := from; y < to; y++ {
		var row []StyledSpan
		if y < len(f.snap.Lines) {
			if text := strings.TrimRight(f.snap.Lines[y], " "); text != "" {
				row = []StyledSpan{{Text: text}}
			}
		}
		rows = append(rows, row)
	}
	return rows
}

func spanStyle(st uv.Style) StyledSpan {
	return StyledSpan{FG: cssColor(st.Fg), BG: cssColor(st.Bg),
		Bold: st.Attrs&uv.AttrBold != 0, Faint: st.Attrs&uv.AttrFaint != 0, Italic: st.Attrs&uv.AttrItalic != 0,
		Underline: st.Underline != uv.UnderlineNone, Reverse: st.Attrs&uv.AttrReverse != 0}
}

func sameStyle(a, b StyledSpan) bool {
	a.Text, b.Text = "", ""
	return a == b
}

// cssColor is a colour as "#rrggbb", "" for none (the default).
func cssColor(c color.Color) string {
	if c == nil {
		return ""
	}
	r, g, b, _ := c.RGBA()
	return fmt.Sprintf("#%02x%02x%02x", r>>8, g>>8, b>>8)
}
