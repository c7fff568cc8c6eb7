package main

import (
	"bytes"
	"io"
	"os"
	"strings"

	"github.com/clipperhouse/displaywidth"
	"golang.org/x/term"
)

// tableWriter lays out every table the CLI prints. Written like a
// text/tabwriter (cells end with a tab, rows with a newline), it pads each
// column to its widest cell measured in terminal columns, so that wide
// characters (将軍, emoji) and combining marks keep the columns straight.
// Columns are separated by two spaces; the last cell of a row is not padded.
// Nothing is written until Flush.
//
// On a terminal (termTable) it also fits the terminal's width, cutting the
// cells of the columns that may shrink (titles, summaries) with "…", and
// colours the cells of the state column by state, unless NO_COLOR is set.
type tableWriter struct {
	w   io.Writer
	buf bytes.Buffer

	width  int   // columns to fit in; 0: no limit
	shrink []int // the columns that are cut to fit, by index
	drop   []int // the columns left out, in this order, when cutting is not enough
	state  int   // the column coloured by state; -1: none
	color  bool  // colour the state column
}

func newTableWriter(w io.Writer) *tableWriter { return &tableWriter{w: w, state: -1} }

// termTable is a tableWriter that, when w is a terminal, fits its width by
// cutting the columns shrink and colours the column state (see stateColor).
// dropping names the columns it may leave out.
func termTable(w io.Writer, state int, shrink ...int) *tableWriter {
	t := newTableWriter(w)
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		if cols, _, err := term.GetSize(int(f.Fd())); err == nil && cols > 0 {
			t.width = cols
		}
		t.shrink, t.state, t.color = shrink, state, colorful(w)
	}
	return t
}

func (t *tableWriter) Write(p []byte) (int, error) { return t.buf.Write(p) }

// Flush writes the table, column widths set by all the rows written so far.
func (t *tableWriter) Flush() error {
	text := strings.TrimSuffix(t.buf.String(), "\n")
	t.buf.Reset()
	if text == "" {
		return nil
	}
	var rows [][]string
	for _, line := range strings.Split(text, "\n") {
		rows = append(rows, strings.Split(line, "\t"))
	}
	rows = t.fit(rows)
	var widths []int
	for _, cells := range rows {
		for i, c := range cells[:len(cells)-1] {
			if i == len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], displayWidth(c))
		}
	}
	var out strings.Builder
	for r, cells := range rows {
		var line strings.Builder
		for i, c := range cells {
			pad := 0
			if i < len(cells)-1 {
				pad = widths[i] - displayWidth(c) + 2
			}
			if t.color && i == t.state && r > 0 {
				c = stateColor(c)
			}
			line.WriteString(c)
			line.WriteString(strings.Repeat(" ", pad))
		}
		out.WriteString(strings.TrimRight(line.String(), " "))
		out.WriteByte('\n')
	}
	_, err := io.WriteString(t.w, out.String())
	return err
}

// fit makes rows fit t.width: it cuts the cells of the shrinkable columns,
// widest first, down to 16 columns, and when that is not enough
// leaves out the columns t.drop names, in its order. t.state follows its
// column.
func (t *tableWriter) fit(rows [][]string) [][]string {
	if t.width <= 0 || len(t.shrink) == 0 {
		return rows
	}
	n := 0
	for _, cells := range rows {
		n = max(n, len(cells))
	}
	all := make([]int, n)
	for _, cells := range rows {
		for i, c := range cells {
			all[i] = max(all[i], displayWidth(c))
		}
	}
	dropped := map[int]bool{}
	var cut []int
	for k := 0; ; k++ {
		// A title keeps 16 columns while a column can still be left out.
		least := 16
		if k >= len(t.drop) {
			least = 4
		}
		cut = append([]int(nil), all...)
		total := func() int {
			sum := -2
			for i, w := range cut {
				if !dropped[i] {
					sum += w + 2
				}
			}
			return sum
		}
		for total() > t.width {
			widest := -1
			for _, c := range t.shrink {
				if c < n && !dropped[c] && cut[c] > least && (widest < 0 || cut[c] > cut[widest]) {
					widest = c
				}
			}
			if widest < 0 {
				break
			}
			cut[widest]-- // the widest first: the cut columns end up alike
		}
		if total() <= t.width || k >= len(t.drop) {
			break
		}
		dropped[t.drop[k]] = true
	}
	out := make([][]string, 0, len(rows))
	state := t.state
	for _, cells := range rows {
		var kept []string
		for i, c := range cells {
			if dropped[i] {
				continue
			}
			if displayWidth(c) > cut[i] {
				c = displaywidth.TruncateString(c, cut[i], "…")
			}
			kept = append(kept, c)
		}
		out = append(out, kept)
	}
	for i := range t.state {
		if dropped[i] {
			state--
		}
	}
	if dropped[t.state] {
		state = -1
	}
	t.state = state
	return out
}

// stateColor colours a role's or a task's state as the console does:
// red for what failed, yellow for what waits for a person or is held back,
// green for what works or is done.
func stateColor(cell string) string {
	word, _, _ := strings.Cut(cell, " ")
	code := ""
	switch word {
	case "fatal", "crashed", "failed", "undelivered", "stalled", "blocked":
		code = "31" // red
	case "attention", "limited", "backoff", "waiting", "waiting-slot", "waking", "queued", "assigned":
		code = "33" // yellow
	case "ready", "busy", "done", "delivered":
		code = "32" // green
	}
	if code == "" {
		return cell
	}
	return "\x1b[" + code + "m" + cell + "\x1b[0m"
}

// dropping lets a terminal table leave out these columns, in this order,
// when cutting the shrinkable ones does not make it fit.
func (t *tableWriter) dropping(cols ...int) *tableWriter {
	t.drop = cols
	return t
}

// displayWidth is how many terminal columns s takes.
func displayWidth(s string) int { return displaywidth.String(s) }
