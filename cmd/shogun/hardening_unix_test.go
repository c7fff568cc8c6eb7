//go:build !windows

package main

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/control"
	"github.com/shogun-dev/shogun/shoguntest"
)

// streamEnd reads an attach stream until it ends and returns the reason the
// supervisor gave (its FrameEnd), or "" when the connection just closed.
func streamEnd(t *testing.T, s *control.Stream) string {
	t.Helper()
	_ = s.Conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	for {
		kind, p, err := control.ReadFrame(s.R)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatal("the attach stream neither ended nor said why within 20 s")
		}
		if err != nil {
			return ""
		}
		if kind == control.FrameEnd {
			return string(p)
		}
	}
}

// An attached client that asks for an absurd terminal size is refused and
// told why; the supervisor, whose screen model would have allocated a
// billion cells, keeps running and the role keeps its size.
func TestAttachResizeOutOfRangeIsRefused(t *testing.T) {
	sizer := shEntry("sizer", `trap 'stty size' WINCH; stty size; while :; do sleep 0.05; done`, "    terminal: {cols: 120, rows: 40}\n")
	ws := teamWorkspace(t, sizer)
	cmd, _ := startBackground(t, ws)
	waitStatus(t, ws, "ready", func(s control.StatusReply) bool { return stateOf(s, "sizer") == "ready" })
	cl := control.NewClient(ws)

	for _, size := range [][2]int{{1001, 40}, {32767, 32767}} {
		s, err := cl.Attach("sizer", false, 100, 30)
		if err != nil {
			t.Fatal(err)
		}
		if err := control.WriteFrame(s.Conn, control.FrameResize, control.ResizePayload(size[0], size[1])); err != nil {
			t.Fatal(err)
		}
		end := streamEnd(t, s)
		s.Conn.Close()
		if !strings.Contains(end, "refused your terminal size") || !strings.Contains(end, "20 to 1000 columns and 5 to 500 rows") {
			t.Fatalf("a %dx%d resize frame ended the stream with %q, want a refusal naming the bounds", size[0], size[1], end)
		}
	}
	if !alive(cmd.Process.Pid) {
		t.Fatal("the supervisor died")
	}
	st := waitStatus(t, ws, "the role still running", func(s control.StatusReply) bool { return stateOf(s, "sizer") == "ready" })
	if st.Pid != cmd.Process.Pid {
		t.Errorf("status answered by pid %d, want the same supervisor %d", st.Pid, cmd.Process.Pid)
	}
	// The role never saw the refused sizes and has its own size back.
	logPath := filepath.Join(ws, "runtime", "logs", "sizer.log")
	shoguntest.WaitFor(t, "the configured size back", 10*time.Second, func() bool {
		b, _ := os.ReadFile(logPath)
		s := string(b)
		return strings.Count(s, "40 120") >= 2 && !strings.Contains(s, "32767") && !strings.Contains(s, "1001")
	})
	// An attach that asks for such a size up front is refused the same way.
	if _, err := cl.Attach("sizer", false, 32767, 32767); err == nil || !strings.Contains(err.Error(), "out of range") {
		t.Errorf("attach at 32767x32767: %v, want an out-of-range refusal", err)
	}
}

// A frame that breaks the protocol ends the stream with a message that says
// so, not with "the role's program exited"; the role keeps running.
func TestBrokenAttachFrameSaysTheStreamBroke(t *testing.T) {
	ws := teamWorkspace(t, simEntry("ashigaru1"))
	startBackground(t, ws)
	waitStatus(t, ws, "ready", func(s control.StatusReply) bool { return stateOf(s, "ashigaru1") == "ready" })
	s, err := control.NewClient(ws).Attach("ashigaru1", false, 100, 30)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Conn.Close()
	var h [5]byte
	h[0] = control.FrameInput
	binary.BigEndian.PutUint32(h[1:], 1<<30) // a gigabyte: over the frame limit
	if _, err := s.Conn.Write(h[:]); err != nil {
		t.Fatal(err)
	}
	end := streamEnd(t, s)
	if !strings.Contains(end, "the attach stream broke") || strings.Contains(end, "exited") {
		t.Errorf("a broken frame ended the stream with %q, want it to say the stream broke", end)
	}
	waitStatus(t, ws, "the role still ready", func(s control.StatusReply) bool { return stateOf(s, "ashigaru1") == "ready" })
}
