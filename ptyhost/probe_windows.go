package ptyhost

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// probeMarker is what the probe's child prints; a word no console prints
// by itself.
const probeMarker = "shogun-conpty-probe"

// probeWait is how long the probe waits for the marker. A real pseudo
// console delivers it in milliseconds; the rest is room for a slow machine.
const probeWait = 5 * time.Second

// ConPTYOutputWorks reports whether output a program writes to its
// standard output in a pseudo console reaches the console's output pipe
// here, and if not, why. It starts `cmd /c echo` in a pseudo console and
// reads the pipe for a few seconds.
//
// On Windows 10 1809 and later it does. Under Wine 8 it does not, although
// the pseudo console works: start gives the child null standard handles
// (see start), which Windows replaces by the console's and Wine 8 leaves
// null, so cmd's echo goes to no handle. A program that opens CONOUT$ when
// it has no standard output (agent-sim does) reaches the pipe under Wine
// too.
func ConPTYOutputWorks() (bool, string) {
	comspec := os.Getenv("ComSpec")
	if comspec == "" {
		comspec = filepath.Join(os.Getenv("SystemRoot"), "System32", "cmd.exe")
	}
	p, err := Start(Command{Path: comspec, Args: []string{"/c", "echo", probeMarker}, Cols: 80, Rows: 25})
	if err != nil {
		return false, fmt.Sprintf("no pseudo console: %v", err)
	}

	type readResult struct {
		seen bool
		got  int
		err  error
	}
	done := make(chan readResult, 1)
	go func() { // ends when the pipe ends, at the latest at p.Close below
		var out strings.Builder
		buf := make([]byte, 4096)
		for {
			n, err := p.Read(buf)
			out.Write(buf[:n])
			if strings.Contains(out.String(), probeMarker) {
				done <- readResult{seen: true, got: out.Len()}
				return
			}
			if err != nil {
				if errors.Is(err, io.EOF) {
					err = nil
				}
				done <- readResult{got: out.Len(), err: err}
				return
			}
		}
	}()

	var r readResult
	timedOut := false
	select {
	case r = <-done:
	case <-time.After(probeWait):
		timedOut = true
	}
	_ = p.Kill()
	_ = p.Close()
	if timedOut {
		r = <-done
	}
	switch {
	case r.seen:
		return true, ""
	case r.err != nil:
		return false, fmt.Sprintf("reading the pseudo console's output pipe failed: %v", r.err)
	case timedOut:
		return false, fmt.Sprintf("ConPTY output does not reach the pseudo console's output pipe: `cmd /c echo` in a pseudo console delivered %d bytes and no echo in %v (as under Wine 8, which gives a child started with null standard handles none of the console's, so cmd's echo goes to no handle)", r.got, probeWait)
	default:
		return false, fmt.Sprintf("ConPTY output does not reach the pseudo console's output pipe: `cmd /c echo` in a pseudo console ended after %d bytes without its echo (as under Wine 8, which gives a child started with null standard handles none of the console's, so cmd's echo goes to no handle)", r.got)
	}
}
