package console

import (
	"os"
	"path/filepath"
	"testing"
)

// Two workspaces' consoles on one machine name their cookies apart (a
// browser sends both to either port and must not mix them), and one
// workspace's name is the same however its folder is written.
func TestEachWorkspaceHasItsOwnSessionCookie(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	if cookieName(a) == cookieName(b) {
		t.Errorf("two workspaces share the cookie name %s", cookieName(a))
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(wd, a)
	if err != nil { // another volume (Windows): no relative way to write it
		rel = a
	}
	if cookieName(rel) != cookieName(a) || cookieName(a+string(filepath.Separator)) != cookieName(a) {
		t.Errorf("one workspace, written three ways, has cookies %s, %s and %s", cookieName(a), cookieName(rel), cookieName(a+string(filepath.Separator)))
	}
}
