package main

import (
	"bytes"
	"io"
	"strings"

	"github.com/clipperhouse/displaywidth"
)

// tableWriter lays out every table the CLI prints. Written like a
// text/tabwriter (cells end with a tab, rows with a newline), it pads each
// column to its widest cell measured in terminal columns, so that wide
// characters (将軍, emoji) and combining marks keep the columns straight.
// Columns are separated by two spaces; the last cell of a row is not padded.
// Nothing is written until Flush.
type tableWriter struct {
	w   io.Writer
	buf bytes.Buffer
}

func newTableWriter(w io.Writer) *tableWriter { return &tableWriter{w: w} }

func (t *tableWriter) Write(p []byte) (int, error) { return t.buf.Write(p) }

// Flush writes the table, column widths set by all the rows written so far.
func (t *tableWriter) Flush() error {
	text := strings.TrimSuffix(t.buf.String(), "\n")
	t.buf.Reset()
	if text == "" {
		return nil
	}
	var rows [][]string
	var widths []int
	for _, line := range strings.Split(text, "\n") {
		cells := strings.Split(line, "\t")
		for i, c := range cells[:len(cells)-1] {
			if i == len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], displayWidth(c))
		}
		rows = append(rows, cells)
	}
	var out strings.Builder
	for _, cells := range rows {
		var line strings.Builder
		for i, c := range cells {
			line.WriteString(c)
			if i < len(cells)-1 {
				line.WriteString(strings.Repeat(" ", widths[i]-displayWidth(c)+2))
			}
		}
		out.WriteString(strings.TrimRight(line.String(), " "))
		out.WriteByte('\n')
	}
	_, err := io.WriteString(t.w, out.String())
	return err
}

// displayWidth is how many terminal columns s takes.
func displayWidth(s string) int { return displaywidth.String(s) }
