//go:build !windows

package rolelog

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/shoguntest"
)

// Following: the screen when it starts, lines as they scroll, the screen
// again at each pause, and across a rotation, with nothing printed twice.
func TestFollowRendersAcrossRotation(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "r.log")
	appendTo := func(s string) {
		t.Helper()
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(s); err != nil {
			t.Fatal(err)
		}
	}
	appendTo("old\r\nline\x1b[1C1\r\nline\x1b[1C2\r\n")
	var out shoguntest.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Follow(ctx, path, &out, Options{Lines: 2, Follow: true, Cols: 40, Rows: 4,
			PollInterval: 20 * time.Millisecond, Quiet: 100 * time.Millisecond})
	}()
	shoguntest.WaitFor(t, "the last two lines", 10*time.Second, func() bool { return out.String() == "line 1\nline 2\n" })

	appendTo("line\x1b[1C3\r\nline\x1b[1C4\r\nline\x1b[1C5\r\n 50%")
	shoguntest.WaitFor(t, "the new lines at the pause", 10*time.Second, func() bool { return strings.HasSuffix(out.String(), " 50%\n") })
	if err := os.Rename(path, filepath.Join(dir, "r-1.log")); err != nil {
		t.Fatal(err)
	}
	appendTo("\r100%\r\nline\x1b[1C6\r\n")
	shoguntest.WaitFor(t, "the rotated log's lines", 10*time.Second, func() bool { return strings.HasSuffix(out.String(), "line 6\n") })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	want := "line 1\nline 2\nline 3\nline 4\nline 5\n 50%\n100%\nline 6\n"
	if out.String() != want {
		t.Errorf("followed:\n%s\nwant:\n%s", out.String(), want)
	}
}
