package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/shogun-dev/shogun/store"
)

// Building the search index shows a line at the start and one at the end
// when stderr is not a terminal, a bar redrawn in place when it is, and
// nothing with --quiet.
func TestIndexProgress(t *testing.T) {
	steps := []store.Progress{{Done: 2000, Total: 10000}, {Done: 6000, Total: 10000}, {Done: 10000, Total: 10000}}
	for _, tc := range []struct {
		name             string
		wanted, terminal bool
		want             []string
	}{
		{"log", true, false, []string{"shogun: building the search index of 10000 tasks", "shogun: building the search index: done, 10000 tasks in "}},
		{"terminal", true, true, []string{"\rshogun: building the search index [######", " 20% 2000/10000 tasks", " 60% 6000/10000 tasks", "100% 10000/10000 tasks\n", "done, 10000 tasks"}},
		{"quiet", false, true, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			p := newIndexProgress(&b, tc.wanted)
			p.terminal = tc.terminal
			for _, s := range steps {
				s.Step = "building the search index"
				p.update(s)
			}
			for _, w := range tc.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("output %q lacks %q", b.String(), w)
				}
			}
			if tc.want == nil && b.Len() > 0 {
				t.Errorf("output %q, want none", b.String())
			}
			if !tc.terminal && strings.Count(b.String(), "\n") != 2 {
				t.Errorf("not a terminal: %q, want two lines", b.String())
			}
		})
	}
}
