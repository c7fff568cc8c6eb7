// Package rolelog reads a role's log (runtime/logs/<role>.log, the raw
// output of its terminal, rotated by size) the way people want to see it:
// the bytes as written, or the text a person watching the terminal saw; its
// end, following what is appended across rotations; or the part written
// during a moment, such as a task's time. `shogun logs` and the control
// API's log endpoints share it.
package rolelog

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/shogun-dev/shogun/ptyhost"
)

// Options say how to print a log.
type Options struct {
	// Lines starts with the last lines (0: all).
	Lines int
	// Raw prints the bytes as written, not the rendered text.
	Raw bool
	// Follow goes on printing what is appended until the context ends.
	Follow bool
	// Cols and Rows are the terminal size to render for (the role's; 0:
	// 120×40).
	Cols, Rows int
	// PollInterval is how often a followed log is looked at (default
	// 200 ms); Quiet how long without output before the screen is printed
	// (default 1 s).
	PollInterval, Quiet time.Duration
	// Flush, when set, is called after each piece of output is written
	// while following (an HTTP stream flushes there).
	Flush func()
}

func (o Options) withDefaults() Options {
	if o.PollInterval <= 0 {
		o.PollInterval = 200 * time.Millisecond
	}
	if o.Quiet <= 0 {
		o.Quiet = time.Second
	}
	if o.Cols <= 0 || o.Rows <= 0 {
		o.Cols, o.Rows = DefaultCols, DefaultRows
	}
	if o.Flush == nil {
		o.Flush = func() {}
	}
	return o
}

// DefaultCols and DefaultRows are the terminal size a log is rendered for
// when its role's is not known.
const (
	DefaultCols = 120
	DefaultRows = 40
)

// Follow prints the end of the log at path and, with Follow, what is
// appended to it until ctx ends. A rotation (the file renamed away and a new
// one created, or the file cut short) is noticed: the rest of the old file
// is printed, then the new one from its start, through the same terminal,
// as the output is one stream. A log that does not exist is an error that
// matches fs.ErrNotExist.
func Follow(ctx context.Context, path string, w io.Writer, o Options) error {
	o = o.withDefaults()
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("no log at %s (is the role id right, and has it run?): %w", path, fs.ErrNotExist)
		}
		return fmt.Errorf("open log: %w", err)
	}
	defer func() { f.Close() }()
	var out sink
	if o.Raw {
		out = rawSink{w}
	} else {
		out = newTextSink(w, o.Cols, o.Rows, o.Lines)
	}
	defer out.close()
	if err := printTail(f, out, o.Lines, o.Raw); err != nil {
		return err
	}
	if !o.Follow {
		return out.end()
	}
	if err := out.pause(); err != nil {
		return err
	}
	o.Flush()
	buf := make([]byte, 32<<10)
	lastData, paused := time.Now(), true
	for {
		n, err := f.Read(buf)
		if n > 0 {
			if _, err := out.Write(buf[:n]); err != nil {
				return err
			}
			o.Flush()
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
		if !paused && time.Since(lastData) >= o.Quiet {
			if err := out.pause(); err != nil {
				return err
			}
			o.Flush()
			paused = true
		}
		select {
		case <-ctx.Done():
			return out.end()
		case <-time.After(o.PollInterval):
		}
	}
}

// printTail prints the last n lines of f (all when n <= 0) and leaves f at
// its end. Raw, a line is a newline in the file. Rendered, the bytes of a
// line on the screen are many more (a full-screen program redraws rows many
// times), so it renders from further back and the sink keeps the last n.
func printTail(f *os.File, out sink, n int, raw bool) error {
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

// sink is where a log's bytes go to be printed.
type sink interface {
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
