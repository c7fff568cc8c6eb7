package supervisor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shogun-dev/shogun/ptyhost"
)

// The line that says why a program ended is the lowest that looks like an
// error, not a link or a note under it; without one, the last line.
func TestTellingLine(t *testing.T) {
	screen := func(file string) []string {
		raw, err := os.ReadFile(filepath.Join("testdata", "screens", file))
		if err != nil {
			t.Fatal(err)
		}
		return ptyhost.ReplayScreen(raw, 120, 40).Lines
	}
	cases := []struct {
		name  string
		lines []string
		want  string
	}{
		// Claude Code 2.1.197, a fresh home offline: the error, a hint, a
		// note, and a link last.
		{"claude offline", screen("claude-offline-exit.raw"), "Failed to connect to api.anthropic.com: ENOTFOUND"},
		{"claude as root", screen("claude-root-bypass-exit.raw"), "--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons"},
		{"an errno name", []string{"spawn codex ENOENT", "", "see https://example.com/help"}, "spawn codex ENOENT"},
		{"the lowest error wins", []string{"error: first", "Error: second", "https://example.com"}, "Error: second"},
		{"permission denied", []string{"open /x: permission denied", "  https://example.com"}, "open /x: permission denied"},
		{"no error: the last line", []string{"Welcome", "Goodbye", "", "  "}, "Goodbye"},
		{"no error, a link last: the link", []string{"Welcome", "https://example.com/more"}, "https://example.com/more"},
		{"errno names are upper case", []string{"Not enough said", "enotfound in lower case", "the end"}, "the end"},
		{"nothing", []string{"", " "}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := pickTellingLine(c.lines); got != c.want {
				t.Errorf("telling line of %q = %q, want %q", strings.Join(c.lines, "|"), got, c.want)
			}
		})
	}
}
