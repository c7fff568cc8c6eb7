package main

import "testing"

func TestAltScreenTracker(t *testing.T) {
	for _, tc := range []struct {
		out  string
		want bool
	}{
		{"\x1b[?1049h", true},
		{"\x1b[?1049h text \x1b[?1049l", false},
		{"\x1b[?25;1047h", true},
		{"\x1b[?47h\x1b[?47l\x1b[?1049h", true},
		{"\x1b[1049h", false}, // not private: insert mode and friends
		{"\x1b[?10490h", false},
		{"\x1b[?2004h\x1b[?1h", false},
	} {
		for _, size := range []int{len(tc.out), 1} {
			var a altScreenTracker
			for p := []byte(tc.out); len(p) > 0; {
				n := min(size, len(p))
				a.scan(p[:n])
				p = p[n:]
			}
			if a.on != tc.want {
				t.Errorf("%q in pieces of %d: alternate screen %v, want %v", tc.out, size, a.on, tc.want)
			}
		}
	}
}
