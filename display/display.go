// Package display prepares text that came from agents or their files for a
// person's terminal. Report summaries, titles, role names and error messages
// can hold escape sequences that would retitle the window, clear the screen
// or hide text; Escape makes every such character visible instead.
package display

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Escape returns s with every character that a terminal would act on rather
// than show written as a visible escape: C0 controls (newlines and tabs
// included, so a table cell stays one line) and DEL as \xNN, C1 controls,
// line and paragraph separators and the bidirectional overrides that can
// reorder what a person reads as \uNNNN, and bytes that are not UTF-8 as
// \xNN. A backslash stays a backslash. It is for text shown to a person;
// JSON output is escaped by its encoder already.
func Escape(s string) string {
	if !needsEscape(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case hidden(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

func needsEscape(s string) bool {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || r < 0x20 || r == 0x7f || hidden(r) {
			return true
		}
		i += size
	}
	return false
}

// hidden reports a character outside C0 that changes what a terminal shows
// instead of being shown: C1 controls (U+0080–U+009F, a CSI among them),
// the line and paragraph separators, and the bidirectional embeddings,
// overrides and isolates.
func hidden(r rune) bool {
	return r >= 0x80 && r <= 0x9f ||
		r == 0x2028 || r == 0x2029 ||
		r >= 0x202a && r <= 0x202e ||
		r >= 0x2066 && r <= 0x2069
}
