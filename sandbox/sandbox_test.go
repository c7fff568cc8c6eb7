//go:build !windows

package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// Granting Beneath(root, out) grants root without out: the siblings of
// each place kept out, up to root, and never a link (which would reach
// its target, kept out or not).
func TestBeneathLeavesOutOnlyWhatIsKeptOut(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"src/app", "runtime/state/cli", "runtime/queue/reports", "data"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "README.md"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "runtime", "state"), filepath.Join(root, "state-link")); err != nil {
		t.Fatal(err)
	}
	got := Beneath(root, []string{filepath.Join(root, "runtime", "state"), filepath.Join(root, "data")})
	for i, p := range got {
		got[i], _ = filepath.Rel(root, p)
	}
	slices.Sort(got)
	want := []string{"README.md", "runtime/queue", "src"}
	if !slices.Equal(got, want) {
		t.Errorf("Beneath = %q, want %q", got, want)
	}
	if got := Beneath(filepath.Join(root, "data"), []string{root}); got != nil {
		t.Errorf("Beneath of a place inside what is kept out = %q, want none", got)
	}
}

// Args and ParseArgs agree, and a flag without a path or a relative path
// is refused rather than guessed at.
func TestArgsRoundTrip(t *testing.T) {
	s := Spec{Write: []string{"/w"}, NoWrite: []string{"/w/config"}, Hide: []string{"/w/data", "/h/.ssh"}, Show: []string{"/w/runtime/state/cli"}}
	args := s.Args("/usr/bin/claude", []string{"--settings", "x"})
	got, argv, err := ParseArgs(args[1:])
	if err != nil || !slices.Equal(argv, []string{"/usr/bin/claude", "--settings", "x"}) ||
		!slices.Equal(got.Write, s.Write) || !slices.Equal(got.NoWrite, s.NoWrite) || !slices.Equal(got.Hide, s.Hide) || !slices.Equal(got.Show, s.Show) {
		t.Errorf("ParseArgs(Args) = %+v %q %v", got, argv, err)
	}
	for _, bad := range [][]string{{"--write"}, {"--write", "rel", "--", "x"}, {"--write", "/w"}, {"--bogus", "/x", "--", "y"}, {"--"}} {
		if _, _, err := ParseArgs(bad); err == nil {
			t.Errorf("ParseArgs(%q) accepted", bad)
		}
	}
}

// A temp folder that holds the workspace is split by the grant (its
// entries, not itself, are granted, so it takes no new temp file); one
// beside the workspace is not, nor is the workspace's own folder split by
// a kept place outside it.
func TestSplitsWhenAKeptPlaceLiesInside(t *testing.T) {
	tmp := t.TempDir()
	ws := filepath.Join(tmp, "ws")
	spec := Spec{NoWrite: []string{filepath.Join(ws, "config")}, Hide: []string{filepath.Join(ws, "runtime", "state")}}
	for dir, want := range map[string]bool{
		tmp:                            true,
		ws:                             true,
		filepath.Join(tmp, "other"):    false,
		filepath.Join(ws, "config"):    false,
		filepath.Join(ws, "runtime"):   true,
		filepath.Join(ws, "src", "go"): false,
	} {
		if got := spec.Splits(dir); got != want {
			t.Errorf("Splits(%s) = %v, want %v", dir, got, want)
		}
	}
}
