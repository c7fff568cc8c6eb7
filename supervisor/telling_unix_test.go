//go:build !windows

package supervisor

import (
	"os"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/ptyhost"
)

// A finished program's telling line is read from the screen its session
// already drew, not from a second emulator replaying its output: both give
// the same line, for a program that draws like a TUI (colours, a cleared
// screen, a line overwritten in place, a status line under the error) and
// for one that floods its terminal faster than the screen model follows.
func TestTellingLineIsTheLastScreens(t *testing.T) {
	for _, c := range []struct{ name, script, want string }{
		{"a TUI's last screen", `printf '\033[2J\033[H\033[1;31mstarting…\033[0m\r\n'; printf 'loading\r\033[Kconnecting\r\n'; ` +
			`printf '\033[32m✓\033[0m config read\r\n'; printf 'Error: cannot reach the API (ECONNREFUSED)\r\n\r\n  press any key\r\n'; exit 3`,
			"Error: cannot reach the API (ECONNREFUSED)"},
		{"a flood, then the error", `head -c 3000000 /dev/zero | tr '\0' 'x'; printf '\r\nfatal: out of disk\r\nbye\r\n'; exit 1`,
			"fatal: out of disk"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd := ptyhost.Command{Path: "/bin/sh", Args: []string{"-c", c.script}, Env: []string{"TERM=xterm-256color", "PATH=" + os.Getenv("PATH")}, Cols: 100, Rows: 30}
			sess, err := ptyhost.Open(ptyhost.Options{Command: cmd})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := sess.Wait(); err != nil {
				t.Fatal(err)
			}
			select {
			case <-sess.OutputDone():
			case <-time.After(10 * time.Second):
				t.Fatal("output did not end after the program exited")
			}
			_ = sess.Close()
			out := sess.Scrollback()
			replayed := pickTellingLine(ptyhost.ReplayScreen(out[max(0, len(out)-16<<10):], cmd.Cols, cmd.Rows).Lines)
			if got := tellingLine(sess, cmd.Cols, cmd.Rows); got != c.want || got != replayed {
				t.Errorf("telling line %q (whole screen %v), replayed %q; want %q", got, sess.ScreenWhole(), replayed, c.want)
			}
		})
	}
}
