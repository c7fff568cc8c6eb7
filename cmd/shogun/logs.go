package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/urfave/cli/v2"
)

func logsCommand() *cli.Command {
	return &cli.Command{
		Name:      "logs",
		Usage:     "print a role's log (runtime/logs/ROLE.log), ANSI stripped unless --raw",
		ArgsUsage: "ROLE",
		Flags: []cli.Flag{
			workspaceFlag,
			&cli.BoolFlag{Name: "follow", Aliases: []string{"f"}, Usage: "keep printing new output, across log rotations, until Ctrl-C"},
			&cli.BoolFlag{Name: "raw", Usage: "print the bytes as the program wrote them"},
			&cli.IntFlag{Name: "lines", Aliases: []string{"n"}, Usage: "start with the last N lines (0: all)", Value: 100},
		},
		Action: func(c *cli.Context) error {
			role, err := roleArg(c)
			if err != nil {
				return err
			}
			ws, err := workspaceDir(c)
			if err != nil {
				return err
			}
			path := filepath.Join(ws, "runtime", "logs", role+".log")
			ctx, stop := signalContext(context.Background())
			defer stop()
			return followLog(ctx, path, c.App.Writer, c.Int("lines"), c.Bool("raw"), c.Bool("follow"))
		},
	}
}

// followLog prints the end of a log and, with follow, what is appended to
// it. A rotation (the file renamed away and a new one created, or the file
// cut short) is noticed: the rest of the old file is printed, then the new
// one from its start.
func followLog(ctx context.Context, path string, w io.Writer, lines int, raw, follow bool) error {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("no log at %s (is the role id right, and has it run?)", path)
		}
		return err
	}
	defer func() { f.Close() }()
	out := &lineFilter{w: w, raw: raw}
	if err := printTail(f, out, lines); err != nil {
		return err
	}
	if !follow {
		return out.flush()
	}
	buf := make([]byte, 32<<10)
	for {
		n, err := f.Read(buf)
		if n > 0 {
			if err := out.write(buf[:n]); err != nil {
				return err
			}
			continue
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		// At the end: has the log been rotated under us?
		if cur, err := os.Stat(path); err == nil {
			old, serr := f.Stat()
			pos, _ := f.Seek(0, io.SeekCurrent)
			if serr == nil && (!os.SameFile(cur, old) || cur.Size() < pos) {
				if nf, err := os.Open(path); err == nil {
					f.Close()
					f = nf
					continue
				}
			}
		}
		select {
		case <-ctx.Done():
			return out.flush()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// printTail prints the last n lines of f (all when n <= 0) and leaves f at its end.
func printTail(f *os.File, out *lineFilter, n int) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	start := int64(0)
	if n > 0 {
		// Look back far enough for n lines of ordinary length.
		back := min(fi.Size(), int64(n)*1024+4096)
		start = fi.Size() - back
		b := make([]byte, back)
		if _, err := f.ReadAt(b, start); err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		idx := len(b)
		for i := 0; i < n && idx > 0; i++ {
			idx = bytes.LastIndexByte(b[:idx-1], '\n') + 1
			if idx == 0 {
				break
			}
		}
		if idx > 0 || start > 0 {
			start += int64(idx)
		}
	}
	if _, err := f.Seek(start, io.SeekStart); err != nil {
		return err
	}
	_, err = io.Copy(writerOf(out.write), bufio.NewReader(f))
	return err
}

type writerOf func([]byte) error

func (w writerOf) Write(p []byte) (int, error) { return len(p), w(p) }

// lineFilter strips terminal escape sequences from complete lines.
type lineFilter struct {
	w       io.Writer
	raw     bool
	pending []byte
}

func (l *lineFilter) write(p []byte) error {
	if l.raw {
		_, err := l.w.Write(p)
		return err
	}
	l.pending = append(l.pending, p...)
	i := bytes.LastIndexByte(l.pending, '\n')
	if i < 0 {
		return nil
	}
	_, err := io.WriteString(l.w, ansi.Strip(string(l.pending[:i+1])))
	l.pending = append(l.pending[:0], l.pending[i+1:]...)
	return err
}

func (l *lineFilter) flush() error {
	if l.raw || len(l.pending) == 0 {
		return nil
	}
	_, err := io.WriteString(l.w, ansi.Strip(string(l.pending))+"\n")
	l.pending = l.pending[:0]
	return err
}
