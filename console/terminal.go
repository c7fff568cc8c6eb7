package console

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/shogun-dev/shogun/ptyhost"
)

// The terminal stream, GET /v1/roles/{id}/terminal (a WebSocket), shows a
// role's terminal in the browser: the screen as it is first, then the
// output live. Read-only unless ?control=1, which attaches as `shogun
// attach` does: one typing client at a time, human input holds automatic
// typing back, and the role takes the browser's size (?cols=&rows=) until
// the stream ends.
//
// Server to browser: binary messages are terminal output; text messages are
// JSON {"type": …}: "hello" {cols, rows, control} first, "paint" before a
// binary message that redraws the whole screen (the browser resets its
// terminal first), "size" {cols, rows} when the role's size changes, "end"
// {reason} last. Browser to server, text JSON: "input" {data} and "resize"
// {cols, rows}, both only with control.
//
// The role never waits for a browser: its output is held per stream up to
// termBacklog and sent at most every termFrame; more output than that within
// a frame is dropped and the browser gets the current screen painted instead,
// and the next frame waits termFloodFrame (frames are dropped; the role's log
// loses nothing).
const (
	// termBacklog bounds the output held for one browser between two
	// messages. A flood passes it within a frame; the browser then gets a
	// paint of the screen, a few KiB, instead: parsing and drawing every
	// byte of a flood would take more CPU in each tab than the role itself
	// has.
	termBacklog = 64 << 10
	// termWriteTimeout is how long a browser may take to accept one message
	// before the stream is closed.
	termWriteTimeout = 10 * time.Second
	// termSizeCheck is how often the role's size is looked at, for
	// watchers to follow the typing person's size.
	termSizeCheck = time.Second
	// termFrame is the least time between two messages of output: what
	// arrives meanwhile goes out as one, at most 40 a second. After a
	// paint that replaced a flood, termFloodFrame: a flood is watched at
	// two frames a second. Each frame costs a browser a redraw of the
	// whole screen; ten tabs on a 2-core machine at more frames than that
	// take CPU the role needs (make bench).
	termFrame      = 25 * time.Millisecond
	termFloodFrame = 500 * time.Millisecond
)

// termMsg is a text message either way.
type termMsg struct {
	Type    string `json:"type"`
	Cols    int    `json:"cols,omitempty"`
	Rows    int    `json:"rows,omitempty"`
	Control bool   `json:"control,omitempty"`
	Data    string `json:"data,omitempty"`
	Reason  string `json:"reason,omitempty"`
}

func (c *Console) terminal(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	role, ok := c.opts.Team.Supervisor().Role(id)
	if !ok {
		refuse(w, r, http.StatusNotFound, fmt.Sprintf("no role %q is running in this supervisor", id))
		return
	}
	q := r.URL.Query()
	control := q.Get("control") == "1"
	cols, _ := strconv.Atoi(q.Get("cols"))
	rows, _ := strconv.Atoi(q.Get("rows"))
	if control && cols != 0 && ptyhost.CheckSize(cols, rows) != nil {
		refuse(w, r, http.StatusBadRequest, fmt.Sprintf("a terminal of %dx%d: shogun takes %d to %d columns and %d to %d rows",
			cols, rows, ptyhost.MinCols, ptyhost.MaxCols, ptyhost.MinRows, ptyhost.MaxRows))
		return
	}
	// The guard has checked Origin against the console's own addresses;
	// the library checks it against Host once more.
	conn, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	defer conn.CloseNow()
	conn.SetReadLimit(1 << 20)
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	if !c.streams.take() {
		endStream(ctx, conn, fmt.Sprintf("%d terminal views are open already, the most this console serves; close some tabs", maxStreams))
		return
	}
	defer c.streams.give()
	a, err := role.Attach(!control, cols, rows)
	if err != nil {
		endStream(ctx, conn, err.Error())
		return
	}
	defer a.Close()
	c.opts.Log.Info().Str("role", id).Bool("control", control).Str("from", r.RemoteAddr).Msg("a browser opened the role's terminal")

	go func() {
		defer cancel()
		for {
			_, data, err := conn.Read(ctx)
			if err != nil {
				return
			}
			var m termMsg
			if json.Unmarshal(data, &m) != nil || !control {
				continue
			}
			switch m.Type {
			case "input":
				if err := a.Input([]byte(m.Data)); err != nil {
					return
				}
			case "resize":
				if err := a.Resize(m.Cols, m.Rows); err != nil {
					c.opts.Log.Debug().Err(err).Str("role", id).Msg("refused a browser's terminal size")
				}
			}
		}
	}()

	write := func(typ websocket.MessageType, p []byte) bool {
		wctx, wcancel := context.WithTimeout(ctx, termWriteTimeout)
		defer wcancel()
		return conn.Write(wctx, typ, p) == nil
	}
	send := func(m termMsg) bool {
		p, _ := json.Marshal(m)
		return write(websocket.MessageText, p)
	}
	lastC, lastR := a.Size()
	if !send(termMsg{Type: "hello", Cols: lastC, Rows: lastR, Control: control}) ||
		!send(termMsg{Type: "paint"}) || !write(websocket.MessageBinary, a.Paint) {
		return
	}
	// The output is gathered here, not by a goroutine of its own: woken by
	// the first chunk after a quiet spell, the loop then takes what the
	// subscription holds once a frame, so a flood costs a wake-up per frame
	// rather than one per chunk read from the PTY.
	var b backlog
	sizeTick := time.NewTicker(termSizeCheck)
	defer sizeTick.Stop()
	timer := time.NewTimer(0)
	defer timer.Stop()
	sleep := func(d time.Duration) bool {
		timer.Reset(d)
		select {
		case <-ctx.Done():
			return false
		case <-timer.C:
			return true
		}
	}
	ended := false
	gather := func() { // takes what the subscription holds, without waiting
		for !ended {
			select {
			case p, ok := <-a.Output:
				if !ok {
					ended = true
					return
				}
				b.add(p)
			default:
				return
			}
		}
	}
	frame := termFrame
	lastSend := time.Time{}
	for {
		select {
		case <-ctx.Done():
			return
		case p, ok := <-a.Output:
			if !ok {
				ended = true
			} else {
				b.add(p)
			}
		case <-sizeTick.C:
		}
		// Send at most once a frame; in between, keep taking the output so
		// the subscription never overflows.
		for due := lastSend.Add(frame); !ended && time.Now().Before(due); {
			if !sleep(min(termFrame, time.Until(due))) {
				return
			}
			gather()
		}
		gather()
		if c, r := a.Size(); c != lastC || r != lastR {
			lastC, lastR = c, r
			if !send(termMsg{Type: "size", Cols: c, Rows: r}) {
				return
			}
		}
		data, skipped := b.take()
		switch {
		case skipped:
			if !send(termMsg{Type: "paint"}) || !write(websocket.MessageBinary, a.Repaint()) {
				return
			}
		case len(data) > 0:
			if !write(websocket.MessageBinary, data) {
				return
			}
		}
		if skipped || len(data) > 0 {
			lastSend = time.Now()
			frame = termFrame
			if skipped {
				frame = termFloodFrame
			}
		}
		if ended {
			if a.Dropped() {
				endStream(ctx, conn, "this view fell behind the role's output")
			} else {
				endStream(ctx, conn, "the role's program exited")
			}
			return
		}
	}
}

// endStream tells the browser why the stream ends and closes it.
func endStream(ctx context.Context, conn *websocket.Conn, reason string) {
	p, _ := json.Marshal(termMsg{Type: "end", Reason: reason})
	wctx, cancel := context.WithTimeout(ctx, termWriteTimeout)
	defer cancel()
	_ = conn.Write(wctx, websocket.MessageText, p)
	_ = conn.Close(websocket.StatusNormalClosure, "")
}

// backlog holds a role's output for one browser, up to termBacklog bytes;
// past that it drops what it holds and remembers to repaint. It keeps the
// chunks the session published (each a copy of its own, never written to
// again) rather than copying them: under a flood most are dropped unread.
type backlog struct {
	chunks  [][]byte
	size    int
	skipped bool
}

func (b *backlog) add(p []byte) {
	if b.size+len(p) > termBacklog {
		b.chunks, b.size = nil, 0
		b.skipped = true
	} else if !b.skipped {
		b.chunks = append(b.chunks, p)
		b.size += len(p)
	}
}

// take returns what is held, or skipped when it was dropped: the caller
// repaints instead.
func (b *backlog) take() (data []byte, skipped bool) {
	chunks := b.chunks
	skipped = b.skipped
	b.chunks, b.size, b.skipped = nil, 0, false
	if skipped {
		return nil, true
	}
	return bytes.Join(chunks, nil), false
}

// maxStreams bounds the terminal streams one console serves at once.
const maxStreams = 64

// streamSlots counts open streams against maxStreams.
type streamSlots struct {
	mu sync.Mutex
	n  int
}

func (s *streamSlots) take() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n >= maxStreams {
		return false
	}
	s.n++
	return true
}

func (s *streamSlots) give() {
	s.mu.Lock()
	s.n--
	s.mu.Unlock()
}
