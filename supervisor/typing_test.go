package supervisor

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCheckTypable(t *testing.T) {
	cases := []struct {
		name string
		text string
		ok   bool
	}{
		{"plain", "Read runtime/queue/tasks/karo.yaml and carry out the task.", true},
		{"Japanese", "runtime/queue/tasks/karo.yaml を読んで作業してください。", true},
		{"newlines", "line one\nline two\r\nline three", true},
		{"end of paste, Ctrl-C and submit in a file name", "zz\r\x1b[201~\x03EVIL\r.yaml", false},
		{"lone carriage return", "half\rline", false},
		{"tab", "a\tb", false},
		{"C1 CSI", "a\u009b2Jb", false},
		{"NEL", "a\u0085b", false},
		{"line separator", "a\u2028b", false},
		{"paragraph separator", "a\u2029b", false},
		{"DEL", "a\x7fb", false},
		{"not UTF-8", "a\xffb", false},
		{"a real replacement character", "a\uFFFDb", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := CheckTypable(c.text)
			if (err == nil) != c.ok || (err != nil && !errors.Is(err, ErrUnsafeText)) {
				t.Errorf("CheckTypable(%q) = %v, want ok=%v", c.text, err, c.ok)
			}
		})
	}
}

// What is typed never carries a key of its own: no control character but
// the newline, and a bracketed paste that only the wrapper ends.
func FuzzPayload(f *testing.F) {
	for _, s := range []string{"hello", "a\nb", "a\r\nb", "zz\r\x1b[201~\x03EVIL\r", "\u009b31m", "x\u2028y", "\xff", "[201~", "\x1b[200~x\x1b[201~"} {
		f.Add(s, true)
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, text string, bracketed bool) {
		payload, err := payloadFor(text, bracketed)
		if err != nil {
			if !errors.Is(err, ErrUnsafeText) {
				t.Fatalf("error %v is not ErrUnsafeText", err)
			}
			return
		}
		body := payload
		if strings.HasPrefix(payload, "\x1b[200~") {
			if !bracketed || !strings.Contains(text, "\n") {
				t.Fatalf("bracketed paste for %q (bracketed=%v)", text, bracketed)
			}
			body = strings.TrimSuffix(strings.TrimPrefix(payload, "\x1b[200~"), "\x1b[201~")
		}
		if !utf8.ValidString(body) {
			t.Fatalf("payload %q is not UTF-8", body)
		}
		for _, r := range body {
			if (r < 0x20 && r != '\n') || r == 0x7f || (r >= 0x80 && r <= 0x9f) || r == '\u2028' || r == '\u2029' {
				t.Fatalf("payload %q of %q carries %U", body, text, r)
			}
		}
	})
}
