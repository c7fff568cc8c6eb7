package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/shogun-dev/shogun/control"
	"github.com/shogun-dev/shogun/internal/yamlstrict"
	"github.com/shogun-dev/shogun/ptyhost"
	"github.com/shogun-dev/shogun/textsafe"
)

func attachCommand() *cli.Command {
	return &cli.Command{
		Name:      "attach",
		Usage:     "make this terminal the role's terminal (detach with Ctrl-])",
		ArgsUsage: "ROLE",
		Description: "Paints the role's current screen, then shows its output live and types what you\n" +
			"type. While you are attached the role's terminal takes your size, and automatic typing\n" +
			"(nudges, notify lines) waits until you have not typed for 5 seconds. Several people may\n" +
			"attach at once; one of them types, the others use --read-only.",
		Flags: []cli.Flag{
			workspaceFlag,
			&cli.BoolFlag{Name: "read-only", Usage: "watch without typing"},
			&cli.StringFlag{Name: "detach-key", Usage: "the key that detaches: ctrl-] or ctrl-a … ctrl-z", Value: "ctrl-]"},
		},
		Action: func(c *cli.Context) error {
			role, err := roleArg(c)
			if err != nil {
				return err
			}
			detach, err := parseDetachKey(c.String("detach-key"))
			if err != nil {
				return err
			}
			cl, err := client(c)
			if err != nil {
				return err
			}
			// A role that is not there is named with the ones that are,
			// as send does.
			st, err := cl.Status()
			if err != nil {
				return err
			}
			if err := knownRole(st.Roles, role); err != nil {
				return err
			}
			in, out := int(os.Stdin.Fd()), int(os.Stdout.Fd())
			if !term.IsTerminal(in) || !term.IsTerminal(out) {
				return errors.New("attach needs a terminal on stdin and stdout; use `shogun screen ROLE` or `shogun logs ROLE -f` otherwise")
			}
			cols, rows, err := term.GetSize(out)
			if err != nil {
				return fmt.Errorf("terminal size: %w", err)
			}
			stream, err := cl.Attach(role, c.Bool("read-only"), cols, rows)
			if err != nil {
				return err
			}
			defer stream.Conn.Close()
			fmt.Fprintf(c.App.ErrWriter, "shogun: attached to %s%s; %s detaches\n", role,
				map[bool]string{true: " (read-only)"}[c.Bool("read-only")], keyName(c.String("detach-key")))
			old, err := term.MakeRaw(in)
			if err != nil {
				return fmt.Errorf("raw mode: %w", err)
			}
			// Where the program's screen ends, asked of the supervisor as the
			// person leaves: the goodbye goes on the row after it.
			var below int
			atEnd := func() {
				below = -1
				if sc, err := cl.Screen(role); err == nil {
					below = lastUsedRow(sc.Lines, sc.CursorRow)
				}
			}
			msg, alt := runAttach(stream, os.Stdin, os.Stdout, detach, c.Bool("read-only"), func() (int, int, error) { return term.GetSize(out) }, atEnd)
			_, _ = io.WriteString(os.Stdout, leaveTerminal(alt, below))
			_ = term.Restore(in, old)
			fmt.Fprintf(c.App.ErrWriter, "shogun: %s\n", msg)
			return nil
		},
	}
}

// keyName writes a detach key as people do: "ctrl-]" is "Ctrl-]".
func keyName(s string) string {
	if k, ok := strings.CutPrefix(s, "ctrl-"); ok {
		return "Ctrl-" + k
	}
	return s
}

// parseDetachKey turns "ctrl-]" or "ctrl-x" into the byte the terminal sends.
func parseDetachKey(s string) (byte, error) {
	switch {
	case s == "ctrl-]":
		return 0x1d, nil
	case len(s) == 6 && s[:5] == "ctrl-" && s[5] >= 'a' && s[5] <= 'z':
		return s[5] - 'a' + 1, nil
	}
	return 0, fmt.Errorf("--detach-key %q: use ctrl-] or ctrl-a … ctrl-z", s)
}

// runAttach copies the role's output to the terminal and the person's keys
// to the role until the person detaches or the stream ends, and says why,
// and whether the output left the terminal on the alternate screen. No
// output is written after it returns.
//
// atEnd, if not nil, is called when it is over, before the output stops.
func runAttach(s *control.Stream, stdin io.Reader, stdout io.Writer, detach byte, readOnly bool, size func() (int, int, error), atEnd func()) (string, bool) {
	ended := make(chan string, 2)
	outDone := make(chan struct{})
	var alt altScreenTracker
	go func() {
		defer close(outDone)
		for {
			kind, p, err := control.ReadFrame(s.R)
			if err != nil {
				ended <- "the supervisor closed the connection"
				return
			}
			switch kind {
			case control.FrameOutput:
				alt.scan(p)
				_, _ = stdout.Write(p)
			case control.FrameEnd:
				ended <- string(p)
				return
			}
		}
	}()
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := stdin.Read(buf)
			if n > 0 {
				keys := buf[:n]
				if i := bytes.IndexByte(keys, detach); i >= 0 {
					if !readOnly && i > 0 {
						_ = control.WriteFrame(s.Conn, control.FrameInput, keys[:i])
					}
					ended <- "detached"
					return
				}
				if !readOnly {
					if err := control.WriteFrame(s.Conn, control.FrameInput, keys); err != nil {
						ended <- "the supervisor closed the connection"
						return
					}
				}
			}
			if err != nil {
				ended <- "input closed"
				return
			}
		}
	}()
	// Follow the terminal's size: on SIGWINCH where there is one, and by
	// looking now and then everywhere.
	winch := make(chan os.Signal, 1)
	ptyhost.NotifyResize(winch)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	lastC, lastR, _ := size()
	for {
		select {
		case msg := <-ended:
			if atEnd != nil {
				atEnd()
			}
			// Closing the connection ends the output copy; what it had
			// read by then is written first.
			_ = s.Conn.Close()
			<-outDone
			return msg, alt.on
		case <-winch:
		case <-tick.C:
		}
		if cols, rows, err := size(); err == nil && (cols != lastC || rows != lastR) {
			lastC, lastR = cols, rows
			_ = control.WriteFrame(s.Conn, control.FrameResize, control.ResizePayload(cols, rows))
		}
	}
}

// leaveTerminal is what the attached terminal is sent when the person
// leaves, so the shell they come back to works and the next line starts on
// a line of its own: attributes reset, the cursor shown, the input modes the
// program may have turned on (mouse reports, focus events, bracketed paste,
// application keys, the kitty keyboard protocol) off, no scroll region left
// to keep a newline from scrolling, and then either the person's own screen
// back from the alternate screen, or the cursor moved to the row after the
// program's screen: after row `below` (0-based), or after the last row when
// below is negative.
func leaveTerminal(alt bool, below int) string {
	s := "\x1b[0m\x1b[?25h" +
		"\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1006l\x1b[?1004l\x1b[?2004l" +
		"\x1b[?1l\x1b>\x1b[<u\x1b[r"
	switch {
	case alt:
		s += "\x1b[?1049l"
	case below >= 0:
		s += fmt.Sprintf("\x1b[%d;1H", below+1) // CUP stops at the last row
	default:
		s += "\x1b[999;1H"
	}
	return s + "\r\n"
}

// lastUsedRow is the lower of the cursor's row and the last row with text.
func lastUsedRow(lines []string, cursorRow int) int {
	for i := len(lines) - 1; i > cursorRow; i-- {
		if strings.TrimSpace(lines[i]) != "" {
			return i
		}
	}
	return max(cursorRow, 0)
}

// altScreenTracker follows, across writes, whether the output has switched
// the terminal to the alternate screen (CSI ? 1049 h, 1047, 47) and back.
type altScreenTracker struct {
	on     bool
	state  uint8 // 0 text, 1 after ESC, 2 after ESC [, 3 in CSI ? parameters
	params []int
}

func (t *altScreenTracker) scan(p []byte) {
	for _, b := range p {
		switch {
		case b == 0x1b:
			t.state = 1
		case t.state == 1 && b == '[':
			t.state = 2
		case t.state == 2 && b == '?':
			t.state, t.params = 3, append(t.params[:0], 0)
		case t.state == 3 && b >= '0' && b <= '9':
			if i := len(t.params) - 1; t.params[i] < 1e6 {
				t.params[i] = t.params[i]*10 + int(b-'0')
			}
		case t.state == 3 && b == ';' && len(t.params) < 32:
			t.params = append(t.params, 0)
		case t.state == 3 && (b == 'h' || b == 'l'):
			for _, n := range t.params {
				if n == 47 || n == 1047 || n == 1049 {
					t.on = b == 'h'
				}
			}
			t.state = 0
		default:
			t.state = 0
		}
	}
}

// knownRole is nil when role runs in the supervisor, else an error that
// names the roles that do: `unknown role "nosuch" (roles: shogun, karo)`.
func knownRole(roles []control.RoleReply, role string) error {
	ids := make([]string, 0, len(roles))
	for _, r := range roles {
		if r.ID == role {
			return nil
		}
		ids = append(ids, textsafe.Escape(r.ID))
	}
	if s := yamlstrict.SuggestKey(role, ids); s != "" {
		return fmt.Errorf("unknown role %q (did you mean %q? roles: %s)", textsafe.Escape(role), s, strings.Join(ids, ", "))
	}
	return fmt.Errorf("unknown role %q (roles: %s)", textsafe.Escape(role), strings.Join(ids, ", "))
}
