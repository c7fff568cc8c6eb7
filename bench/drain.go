package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"syscall"
	"time"

	"github.com/creack/pty"
	"gopkg.in/natefinch/lumberjack.v2"

	"github.com/shogun-dev/shogun/ptyhost"
)

// measureDrain times `cat FILE` in a PTY two ways, alternating, three times
// each: a bare creack/pty read loop that discards the output, and a ptyhost
// session writing the output to a size-rotated role log (20 MiB × 5, as a
// role's log) plus scrollback and screen model, five times each. The ratio of the medians is
// the figure the design sets a target for (≥ 0.9).
func measureDrain(r *report, mb int) error {
	const runs = 5
	dir, err := os.MkdirTemp("", "shogun-bench-drain-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	src := filepath.Join(dir, "input.txt")
	if err := writeText(src, mb<<20); err != nil {
		return err
	}
	size := int64(mb << 20)
	var bare, host []time.Duration
	for i := 0; i < runs; i++ {
		d, n, err := bareLoop(src)
		if err != nil {
			return fmt.Errorf("bare loop: %w", err)
		}
		if n < size {
			return fmt.Errorf("bare loop read %d of %d bytes", n, size)
		}
		bare = append(bare, d)
		d, n, err = sessionToLog(src, filepath.Join(dir, fmt.Sprintf("role%d.log", i)))
		if err != nil {
			return fmt.Errorf("session: %w", err)
		}
		if n < size {
			return fmt.Errorf("session logged %d of %d bytes", n, size)
		}
		host = append(host, d)
	}
	mbps := func(d time.Duration) float64 { return float64(size) / (1 << 20) / d.Seconds() }
	b, h := median(bare), median(host)
	r.drainMBps = mbps(h)
	r.add("PTY output drained to the log", fmt.Sprintf(`
A role running `+"`cat`"+` of a %d MiB text file. Bare loop: creack/pty, 64 KiB reads, output discarded.
shogun: ptyhost.Session writing a 20 MiB × 5 rotated log, scrollback and screen model. Median of 5 runs each, alternating.

| reader | MiB/s (median) | runs (s) |
|---|---|---|
| bare read loop | %.0f | %s |
| shogun session → log | %.0f | %s |

**Ratio: %.2f** (target ≥ 0.9).
`, mb, mbps(b), secs(bare), mbps(h), secs(host), mbps(h)/mbps(b)))
	return nil
}

func writeText(path string, size int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	line := []byte("the quick brown fox jumps over the lazy dog 0123456789 ABCDEFGHIJKLMNOPQRSTUVWXYZ\n")
	buf := make([]byte, 0, 1<<20)
	for len(buf)+len(line) <= cap(buf) {
		buf = append(buf, line...)
	}
	for written := 0; written < size; {
		n := min(len(buf), size-written)
		if _, err := f.Write(buf[:n]); err != nil {
			f.Close()
			return err
		}
		written += n
	}
	return f.Close()
}

func bareLoop(src string) (time.Duration, int64, error) {
	cmd := exec.Command("cat", src)
	began := time.Now()
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: 120, Rows: 40})
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	var n int64
	for {
		k, err := f.Read(buf)
		n += int64(k)
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, syscall.EIO) {
				break
			}
			return 0, n, err
		}
	}
	took := time.Since(began)
	_ = cmd.Wait()
	return took, n, nil
}

func sessionToLog(src, logPath string) (time.Duration, int64, error) {
	lj := &lumberjack.Logger{Filename: logPath, MaxSize: 20, MaxBackups: 5}
	defer lj.Close()
	counted := &countingWriter{w: lj}
	began := time.Now()
	s, err := ptyhost.Open(ptyhost.Options{
		Command: ptyhost.Command{Path: "cat", Args: []string{src}, Env: os.Environ(), Cols: 120, Rows: 40},
		Log:     counted,
	})
	if err != nil {
		return 0, 0, err
	}
	if _, err := s.Wait(); err != nil {
		return 0, 0, err
	}
	<-s.OutputDone()
	if err := s.Close(); err != nil { // returns once the log has every byte
		return 0, 0, err
	}
	return time.Since(began), counted.n, nil
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func secs(ds []time.Duration) string {
	out := ""
	for i, d := range ds {
		if i > 0 {
			out += ", "
		}
		out += fmt.Sprintf("%.2f", d.Seconds())
	}
	return out
}
