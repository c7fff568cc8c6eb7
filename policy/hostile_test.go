package policy

import (
	"fmt"
	"strings"
	"testing"
)

// Lines made to blow up the reading (brace and glob bombs, find's {}
// repeated, aliases and wrappers nested) are read within the bounds, and
// what could not be read in full is not allowed. (Without the bounds the
// find line alone took most of a minute.)
func TestHostileLinesAreBounded(t *testing.T) {
	place := Place{Dir: t.TempDir(), Workspace: t.TempDir()}
	p := &Policy{Default: Ask, Rules: []Rule{
		{Decision: Allow, Kind: Shell, Paths: []PathCond{mustPath(t, "inside")}, Where: "inside"},
	}}
	for _, c := range []string{
		"cat " + strings.Repeat("{a,b}", 40),
		"cat " + strings.Repeat("{", 5000) + "a,b" + strings.Repeat("}", 5000),
		"cat {1..100000000}",
		"cat /*/*/*/*/*/*/*",
		aliasChain(30),
		aliasChain(1000),
		"find " + strings.Repeat("{} ", 5000) + "-exec cat " + strings.Repeat("{}", 3000) + " \\;",
		"echo $'" + strings.Repeat("\\x4", 10000),
	} {
		if v := p.Decide("r", place, Action{Kind: Shell, Command: c}); v.Decision == Allow && !strings.HasPrefix(c, "echo") && !strings.HasPrefix(c, "cat {{") {
			t.Errorf("%.60q… is allowed (%s)", c, v.Reason)
		}
	}
}

// aliasChain is a git line whose alias a0 names a1 … and the last runs
// cat /etc/x.
func aliasChain(n int) string {
	var b strings.Builder
	b.WriteString("git")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, " -c alias.a%d=a%d", i, i+1)
	}
	fmt.Fprintf(&b, " -c alias.a%d='!cat /etc/x' a0", n)
	return b.String()
}
