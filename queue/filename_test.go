package queue

import (
	"os"
	"path/filepath"
	"testing"
)

// Every archived or rejected file's path is checked to stay in its folder,
// whatever the name holds.
func TestInFolderRefusesNamesThatLeaveTheFolder(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"", ".", "..", "../roles.yaml", "a/b.yaml", `a\b.yaml`, "ashigaru1-../../../../config/roles.yaml", "bad\xff.yaml"} {
		if p, err := inFolder(dir, name); err == nil {
			t.Errorf("inFolder accepted %q as %s", name, p)
		}
		if _, err := moveInto(filepath.Join(dir, "x"), dir, name); err == nil {
			t.Errorf("moveInto accepted %q", name)
		}
	}
	if p, err := inFolder(dir, "ashigaru1-t-20261122-0001.yaml"); err != nil || filepath.Dir(p) != dir {
		t.Errorf("inFolder refused a plain name: %s, %v", p, err)
	}
}

// moveInto never replaces a file: a taken name gets -2, -3 before its
// extension.
func TestMoveIntoKeepsWhatIsThere(t *testing.T) {
	src, dst := t.TempDir(), t.TempDir()
	for i, content := range []string{"first", "second", "third"} {
		p := filepath.Join(src, "t.yaml")
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := moveInto(p, dst, "ashigaru1-t-1.yaml")
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"ashigaru1-t-1.yaml", "ashigaru1-t-1-2.yaml", "ashigaru1-t-1-3.yaml"}[i]
		if got != filepath.Join(dst, want) {
			t.Errorf("move %d went to %s, want %s", i, got, want)
		}
	}
	for name, want := range map[string]string{"ashigaru1-t-1.yaml": "first", "ashigaru1-t-1-2.yaml": "second", "ashigaru1-t-1-3.yaml": "third"} {
		if b, _ := os.ReadFile(filepath.Join(dst, name)); string(b) != want {
			t.Errorf("%s = %q, want %q", name, b, want)
		}
	}
}
