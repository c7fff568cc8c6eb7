package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/shogun-dev/shogun/config"
	"github.com/shogun-dev/shogun/ptyhost"
	"github.com/shogun-dev/shogun/workspace"
)

func logsCommand() *cli.Command {
	return &cli.Command{
		Name:      "logs",
		Usage:     "print a role's log (runtime/logs/ROLE.log) as the text its terminal showed, or the bytes with --raw",
		ArgsUsage: "ROLE",
		Description: "Without --raw the output is played through a terminal of the role's size, so the\n" +
			"text is what a person watching saw: a line is printed once it scrolled off the\n" +
			"screen, and the rows on the screen at the end (with -f: whenever the role has\n" +
			"been quiet for a second) that were not printed as they are now. A full-screen\n" +
			"program that redraws in place adds only the rows it changed.",
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
			opts := logOptions{lines: c.Int("lines"), raw: c.Bool("raw"), follow: c.Bool("follow"), cols: 120, rows: 40}
			// The role's terminal size, when its configuration can be read:
			// a log is read even when the configuration has gone bad.
			if cfg, err := config.Load(ws, nil); err == nil {
				if rc, ok := cfg.Role(role); ok && rc.Terminal.Cols > 0 && rc.Terminal.Rows > 0 {
					opts.cols, opts.rows = rc.Terminal.Cols, rc.Terminal.Rows
				}
			}
			path := workspace.New(ws).RoleLog(role)
			ctx, stop := signalContext(context.Background())
			defer stop()
			return followLog(ctx, path, c.App.Writer, opts)
		},
	}
}

// logOptions say how to print a log.
type logOptions struct {
	lines        int  // start with the last lines (0: all)
	raw          bool // the bytes as written, not rendered
	follow       bool // go on until ctx ends
	cols, rows   int  // the terminal size to render for
	pollInterval time.Duration
	quiet        time.Duration // following, the screen is printed after this long without output
}

// followLog prints the end of a log and, with follow, what is appended to
// it. A rotation (the file renamed away and a new one created, or the file
// cut short) is noticed: the rest of the old file is printed, then the new
// one from its start, through the same terminal, as the output is one stream.
func followLog(ctx context.Context, path string, w io.Writer, o logOptions) error {
	if o.pollInterval <= 0 {
		o.pollInterval = 200 * time.Millisecond
	}
	if o.quiet <= 0 {
		o.quiet = time.Second
	}
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("no log at %s (is the role id right, and has it run?)", path)
		}
		return fmt.Errorf("open log: %w", err)
	}
	defer func() { f.Close() }()
	var out logSink
	if o.raw {
		out = rawSink{w}
	} else {
		out = newTextSink(w, o.cols, o.rows, o.lines)
	}
	defer out.close()
	if err := printTail(f, out, o.lines, o.raw); err != nil {
		return err
	}
	if !o.follow {
		return out.end()
	}
	if err := out.pause(); err != nil {
		return err
	}
	buf := make([]byte, 32<<10)
	lastData, paused := time.Now(), true
	for {
		n, err := f.Read(buf)
		if n > 0 {
			if _, err := out.Write(buf[:n]); err != nil {
				return err
			}
			lastData, paused = time.Now(), false
			continue
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("read log: %w", err)
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
		if !paused && time.Since(lastData) >= o.quiet {
			if err := out.pause(); err != nil {
				return err
			}
			paused = true
		}
		select {
		case <-ctx.Done():
			return out.end()
		case <-time.After(o.pollInterval):
		}
	}
}

// printTail prints the last n lines of f (all when n <= 0) and leaves f at
// its end. Raw, a line is a newline in the file. Rendered, the bytes of a
// line on the screen are many more (a full-screen program redraws rows many
// times), so it renders from further back and the sink keeps the last n.
func printTail(f *os.File, out logSink, n int, raw bool) error {
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("read log: %w", err)
	}
	start := int64(0)
	if n > 0 {
		back := int64(n)*1024 + 4096
		if !raw {
			back = int64(n)*8192 + 64<<10
		}
		back = min(fi.Size(), back)
		start = fi.Size() - back
		b := make([]byte, back)
		if _, err := f.ReadAt(b, start); err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("read log: %w", err)
		}
		idx := len(b)
		if raw {
			for i := 0; i < n && idx > 0; i++ {
				idx = bytes.LastIndexByte(b[:idx-1], '\n') + 1
				if idx == 0 {
					break
				}
			}
		} else {
			idx = 0 // the first whole line of what was read back
			if start > 0 {
				idx = bytes.IndexByte(b, '\n') + 1
			}
		}
		if idx > 0 || start > 0 {
			start += int64(idx)
		}
	}
	if _, err := f.Seek(start, io.SeekStart); err != nil {
		return fmt.Errorf("read log: %w", err)
	}
	if _, err := io.Copy(out, bufio.NewReader(f)); err != nil {
		return fmt.Errorf("print log: %w", err)
	}
	return nil
}

// logSink is where a log's bytes go to be printed.
type logSink interface {
	io.Writer
	// pause says the output has paused: what it drew so far is printed.
	pause() error
	// end says the output is over for this command: the rest is printed.
	end() error
	// close releases the sink.
	close()
}

type rawSink struct{ w io.Writer }

func (s rawSink) Write(p []byte) (int, error) { return s.w.Write(p) }
func (rawSink) pause() error                  { return nil }
func (rawSink) end() error                    { return nil }
func (rawSink) close()                        {}

// textSink renders the log as text. Until the first pause or the end, it
// keeps only the last `keep` lines (all when keep <= 0), which it then prints.
type textSink struct {
	r    *ptyhost.TextRenderer
	tail *tailLines
}

func newTextSink(w io.Writer, cols, rows, keep int) *textSink {
	tail := &tailLines{w: w, keep: keep}
	return &textSink{r: ptyhost.NewTextRenderer(tail, cols, rows), tail: tail}
}

func (s *textSink) Write(p []byte) (int, error) { return s.r.Write(p) }

func (s *textSink) pause() error {
	if err := s.r.Flush(); err != nil {
		return err
	}
	return s.tail.pass()
}

func (s *textSink) end() error {
	if err := s.r.Close(); err != nil {
		return err
	}
	return s.tail.pass()
}

func (s *textSink) close() { _ = s.r.Close() }

// tailLines keeps the last lines written to it until pass, and from then on
// passes them straight to w.
type tailLines struct {
	w       io.Writer
	keep    int
	lines   [][]byte
	passing bool
}

func (l *tailLines) Write(p []byte) (int, error) {
	if l.passing {
		return l.w.Write(p)
	}
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n') + 1
		if i == 0 {
			i = len(p)
		}
		l.lines = append(l.lines, bytes.Clone(p[:i]))
		if l.keep > 0 && len(l.lines) > l.keep {
			l.lines = l.lines[1:]
		}
		p = p[i:]
	}
	return n, nil
}

// pass prints the lines kept and lets the next ones through.
func (l *tailLines) pass() error {
	if l.passing {
		return nil
	}
	l.passing = true
	_, err := l.w.Write(bytes.Join(l.lines, nil))
	l.lines = nil
	return err
}
