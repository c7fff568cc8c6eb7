package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/shogun-dev/shogun/control"
	"github.com/shogun-dev/shogun/ptyhost"
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
			in, out := int(os.Stdin.Fd()), int(os.Stdout.Fd())
			if !term.IsTerminal(in) || !term.IsTerminal(out) {
				return errors.New("attach needs a terminal on stdin and stdout; use `shogun screen ROLE` or `shogun logs ROLE -f` otherwise")
			}
			cols, rows, err := term.GetSize(out)
			if err != nil {
				return fmt.Errorf("terminal size: %w", err)
			}
			cl, err := client(c)
			if err != nil {
				return err
			}
			stream, err := cl.Attach(role, c.Bool("read-only"), cols, rows)
			if err != nil {
				return err
			}
			defer stream.Conn.Close()
			old, err := term.MakeRaw(in)
			if err != nil {
				return fmt.Errorf("raw mode: %w", err)
			}
			msg := runAttach(stream, os.Stdin, os.Stdout, detach, c.Bool("read-only"), func() (int, int, error) { return term.GetSize(out) })
			_ = term.Restore(in, old)
			fmt.Fprintf(c.App.ErrWriter, "\r\nshogun: %s\n", msg)
			return nil
		},
	}
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
// to the role until the person detaches or the stream ends, and says why.
func runAttach(s *control.Stream, stdin io.Reader, stdout io.Writer, detach byte, readOnly bool, size func() (int, int, error)) string {
	ended := make(chan string, 2)
	go func() {
		for {
			kind, p, err := control.ReadFrame(s.R)
			if err != nil {
				ended <- "the supervisor closed the connection"
				return
			}
			switch kind {
			case control.FrameOutput:
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
			return msg
		case <-winch:
		case <-tick.C:
		}
		if cols, rows, err := size(); err == nil && (cols != lastC || rows != lastR) {
			lastC, lastR = cols, rows
			_ = control.WriteFrame(s.Conn, control.FrameResize, control.ResizePayload(cols, rows))
		}
	}
}
