package textsafe

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestEscapeShowsWhatATerminalWouldObey(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"Login form added", "Login form added"},
		{"ログイン済み · ok", "ログイン済み · ok"},
		{"\x1b]0;pwned\a\x1b[2J", `\x1b]0;pwned\x07\x1b[2J`},
		{"a\r\nb\tc", `a\r\nb\tc`},
		{"csi \u009b31m nel \u0085", `csi \u009b31m nel \u0085`},
		{"line\u2028para\u2029", `line\u2028para\u2029`},
		{"abc\u202edcb", `abc\u202edcb`},
		{"bad \xff byte", `bad \xff byte`},
		{"del \x7f", `del \x7f`},
	} {
		got := Escape(tt.in)
		if got != tt.want {
			t.Errorf("Escape(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if Escape(got) != got {
			t.Errorf("Escape is not idempotent on %q", got)
		}
		if at, r := Find(got, nil); at >= 0 {
			t.Errorf("Escape(%q) still holds %s at %d", tt.in, Describe(r), at)
		}
	}
}

func TestFindAllowsWhatTheCallerAccepts(t *testing.T) {
	lines := func(r rune) bool { return r == '\n' || r == '\t' }
	if at, _ := Find("two\nlines\tand a tab", lines); at != -1 {
		t.Errorf("found a control at %d in text with only line breaks and tabs", at)
	}
	if at, r := Find("two\nlines\x1b[2J", lines); at != 9 || r != 0x1b {
		t.Errorf("Find = %d, %U; want 9, U+001B", at, r)
	}
	if at, r := Find("ok\xc3", nil); at != 2 || r != utf8.RuneError {
		t.Errorf("Find on a cut UTF-8 sequence = %d, %U", at, r)
	}
	if d := Describe(0x202e); !strings.Contains(d, "bidirectional") {
		t.Errorf("Describe(U+202E) = %q", d)
	}
}

func FuzzEscape(f *testing.F) {
	f.Add("\x1b[201~\x03EVIL\r")
	f.Add("\u009b\u2028\u202e\xff")
	f.Fuzz(func(t *testing.T, s string) {
		e := Escape(s)
		if at, r := Find(e, nil); at >= 0 {
			t.Fatalf("Escape(%q) = %q holds %s", s, e, Describe(r))
		}
		if Escape(e) != e {
			t.Fatalf("Escape is not idempotent on %q", e)
		}
		if at, _ := Find(s, nil); at < 0 && e != s {
			t.Fatalf("Escape changed clean text %q to %q", s, e)
		}
	})
}
