package main

import (
	"bytes"
	"testing"
)

// A diff on a terminal shows an agent's escape sequences as text, and
// keeps the tabs and line ends (CRLF too) that files are made of.
func TestDiffOnATerminalEscapesControlCharacters(t *testing.T) {
	var out bytes.Buffer
	w := &escapingWriter{w: &out}
	for _, chunk := range []string{"+\tcode\x1b]0;pwn", "ed\a\r\n", "-old\u202e\n", "+no end \u009b2J \xff"} {
		if _, err := w.Write([]byte(chunk)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	want := "+\tcode\\x1b]0;pwned\\x07\r\n-old\\u202e\n+no end \\u009b2J \\xff"
	if out.String() != want {
		t.Errorf("escaped diff %q, want %q", out.String(), want)
	}
}
