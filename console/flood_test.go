//go:build !windows

package console_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/shogun-dev/shogun/console/consoletest"
)

// watchTerminal opens a read-only view of role's terminal, as the
// console's page does, closed when the test ends.
func watchTerminal(ctx context.Context, t *testing.T, ws *consoletest.Workspace, role string) *websocket.Conn {
	t.Helper()
	conn, _, err := websocket.Dial(ctx, strings.Replace(ws.Base, "http", "ws", 1)+"/v1/roles/"+role+"/terminal", &websocket.DialOptions{
		HTTPHeader: http.Header{"Authorization": {"Bearer " + ws.Token}, "Origin": {ws.Base}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.CloseNow() })
	conn.SetReadLimit(16 << 20)
	return conn
}

// A terminal view follows a role that floods its terminal to the end: it
// gets paints of the screen instead of every byte, is never cut off, and
// shows the last screen; the role's log keeps every byte.
func TestTerminalFollowsAFloodToItsEnd(t *testing.T) {
	gate := filepath.Join(t.TempDir(), "gate")
	const lines = 200000
	script := fmt.Sprintf(`echo waiting; while [ ! -e %s ]; do sleep 0.02; done; seq 1 %d; echo FLOOD-DONE; exec sleep 100000`, gate, lines)
	// No startup prompt: its echo could land among the flood's first lines
	// (make test once found "\r\n1\r\n" missing from the log under load).
	ws := consoletest.Start(t, bin, fmt.Sprintf(`  - id: flood
    prompt_path: roles/ashigaru.md
    command: {exec: /bin/sh, args: ["-c", %q]}
    stop: {keys: "", timeout: 2s}
    startup_prompt: ""
`, script))
	ws.WaitState(t, "flood", "ready")

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	conn := watchTerminal(ctx, t, ws, "flood")
	// The flood begins once the view has its first screen: begun before
	// the view took its place at the feed, it could be over before the
	// view saw any of it (make test once got 1 paint and 338 bytes).
	var raw, paints int
	for painted := false; !painted; {
		typ, p, err := conn.Read(ctx)
		if err != nil {
			t.Fatalf("the view's first screen: %v", err)
		}
		var m struct{ Type string }
		if typ == websocket.MessageText && json.Unmarshal(p, &m) == nil && m.Type == "paint" {
			paints++
		}
		painted = typ == websocket.MessageBinary
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var last string
	for !strings.Contains(last, "FLOOD-DONE") {
		typ, p, err := conn.Read(ctx)
		if err != nil {
			b, _ := os.ReadFile(filepath.Join(ws.Dir, "runtime", "logs", "flood.log"))
			t.Logf("log: %d bytes, tail %q; view's last %q", len(b), b[max(0, len(b)-200):], last)
			t.Fatalf("the view ended before the flood did (%d paints, %d bytes of output): %v", paints, raw, err)
		}
		if typ == websocket.MessageText {
			var m struct{ Type, Reason string }
			if json.Unmarshal(p, &m) == nil && m.Type == "end" {
				t.Fatalf("the view was cut off during the flood: %s", m.Reason)
			}
			if m.Type == "paint" {
				paints++
			}
			continue
		}
		raw += len(p)
		last = string(p)
	}
	if paints < 2 { // the first screen, and at least one instead of the flood
		t.Errorf("the view got %d paints and %d bytes of a flood of %d lines; want the flood painted over", paints, raw, lines)
	}
	logged, err := os.ReadFile(filepath.Join(ws.Dir, "runtime", "logs", "flood.log"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"\r\n1\r\n", fmt.Sprintf("\r\n%d\r\n", lines/2), "\r\nFLOOD-DONE"} {
		if !strings.Contains(string(logged), want) {
			t.Errorf("the role's log lacks %q: bytes were lost", want)
		}
	}
}

// A large write that no flood follows waits a frame (to see whether one
// does) and then reaches the view whole, as output: nothing else need
// arrive to send it.
func TestTerminalSendsALargeWriteThatNoFloodFollows(t *testing.T) {
	gate := filepath.Join(t.TempDir(), "gate")
	// 24 KiB in one write, between termBurst and termBacklog; then quiet.
	script := fmt.Sprintf(`echo waiting; while [ ! -e %s ]; do sleep 0.02; done; `+
		`awk 'BEGIN { s = ""; for (i = 0; i < 300; i++) s = s sprintf("block line %%04d %%s\n", i, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"); printf "%%sBLOCK-END\n", s }'; exec sleep 100000`, gate)
	ws := consoletest.Start(t, bin, fmt.Sprintf(`  - id: burst
    prompt_path: roles/ashigaru.md
    command: {exec: /bin/sh, args: ["-c", %q]}
    stop: {keys: "", timeout: 2s}
    startup_prompt: ""
`, script))
	ws.WaitState(t, "burst", "ready")

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn := watchTerminal(ctx, t, ws, "burst")
	// The first screen is painted before the block is written.
	painted := false
	for !painted {
		typ, _, err := conn.Read(ctx)
		if err != nil {
			t.Fatalf("no first screen: %v", err)
		}
		painted = typ == websocket.MessageBinary
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	paintNext := false
	for !strings.Contains(out.String(), "BLOCK-END") {
		typ, p, err := conn.Read(ctx)
		if err != nil {
			t.Fatalf("the block never reached the view whole (%d bytes of output did): %v", out.Len(), err)
		}
		if typ == websocket.MessageText {
			var m struct{ Type string }
			_ = json.Unmarshal(p, &m)
			paintNext = m.Type == "paint"
			continue
		}
		if paintNext {
			t.Fatalf("the block was painted over instead of sent (%d bytes of output before)", out.Len())
		}
		out.Write(p)
	}
	for i := 0; i < 300; i++ {
		if want := fmt.Sprintf("block line %04d ", i); !strings.Contains(out.String(), want) {
			t.Fatalf("the view lacks %q: output was lost", want)
		}
	}
}
