package display

import "testing"

func TestEscape(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Login form added", "Login form added"},
		{"将軍 ok", "将軍 ok"},
		{"\x1b]0;pwned\a\x1b[2J", `\x1b]0;pwned\x07\x1b[2J`},
		{"two\nlines\tand tab\r", `two\x0alines\x09and tab\x0d`},
		{"csi \u009b2J nel \u0085 ls \u2028 rlo \u202e", `csi \u009b2J nel \u0085 ls \u2028 rlo \u202e`},
		{"bad \xff byte, del \x7f", `bad \xff byte, del \x7f`},
		{`a \x1b b`, `a \x1b b`},
	}
	for _, tt := range tests {
		if got := Escape(tt.in); got != tt.want {
			t.Errorf("Escape(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
