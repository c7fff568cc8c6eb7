// Package textsafe says which characters must never reach a terminal or a
// typed prompt unescaped, and escapes them for people to read.
//
// Agents write file names, titles and summaries that shogun later types into
// other agents' terminals and prints for people. A control character there
// is not text but a command to the terminal: ESC starts an escape sequence,
// U+009B (CSI) does the same on terminals that honour C1 controls, a CR or
// U+2028 ends a line, Ctrl-C clears a composer, and the bidirectional
// overrides make text read differently from what it is. The queue refuses
// such values where they come in; every human-facing output escapes what is
// left (an older history, an error message quoting a file).
package textsafe

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// IsControl reports whether r must not appear raw in a typed line or on a
// person's terminal: a C0 control (U+0000–U+001F, tab and line feed
// included), DEL (U+007F), a C1 control (U+0080–U+009F), the Unicode line
// and paragraph separators (U+2028, U+2029), or a bidirectional formatting
// character (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069).
// Callers that allow line breaks or tabs in free text check for those
// before calling it.
func IsControl(r rune) bool {
	switch {
	case r < 0x20, r >= 0x7f && r <= 0x9f:
		return true
	case r == 0x2028, r == 0x2029:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f,
		r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// Find returns the byte offset of the first character of s that IsControl
// refuses and allow does not accept, or of the first byte that is not valid
// UTF-8, with that character (utf8.RuneError for a bad byte); -1 when there
// is none. allow may be nil.
func Find(s string, allow func(rune) bool) (at int, r rune) {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			return i, utf8.RuneError
		}
		if IsControl(r) && (allow == nil || !allow(r)) {
			return i, r
		}
		i += size
	}
	return -1, 0
}

// Describe names a character Find returned, for error messages: "a line
// break (U+000A)", "the escape character (U+001B)", "control character
// U+009B", and "invalid UTF-8" for utf8.RuneError.
func Describe(r rune) string {
	switch r {
	case utf8.RuneError:
		return "invalid UTF-8"
	case '\t':
		return "a tab (U+0009)"
	case '\n':
		return "a line break (U+000A)"
	case '\r':
		return "a carriage return (U+000D)"
	case 0x1b:
		return "the escape character (U+001B)"
	case 0x2028:
		return "a line separator (U+2028)"
	case 0x2029:
		return "a paragraph separator (U+2029)"
	}
	if r >= 0x2000 || r == 0x061c {
		return fmt.Sprintf("bidirectional formatting character %U", r)
	}
	return fmt.Sprintf("control character %U", r)
}

// Escape makes s safe to print on one line of a terminal: every character
// IsControl refuses is written as a Go escape (\n, \t, \r, \x1b, \u009b,
// \u202e) and every byte that is not UTF-8 as \xNN; everything else is
// kept, so plain text reads unchanged. Escaping an escaped string changes
// nothing more.
func Escape(s string) string {
	if at, _ := Find(s, nil); at < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case IsControl(r) && r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, r)
		case IsControl(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}
