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
	// paint that replaced a flood, termFloodFrame: a flood is watched at a
	// few frames a second, which costs the browser little and the role
	// nothing.
	termFrame      = 25 * time.Millisecond
	termFloodFrame = 250 * time.Millisecond
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

	b := &backlog{wake: make(chan struct{}, 1)}
	go func() {
		for chunk := range a.Output {
			b.add(chunk)
		}
		b.finish()
	}()
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
	tick := time.NewTicker(termSizeCheck)
	defer tick.Stop()
	pace := time.NewTimer(termFrame)
	defer pace.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-b.wake:
		case <-tick.C:
		}
		if c, r := a.Size(); c != lastC || r != lastR {
			lastC, lastR = c, r
			if !send(termMsg{Type: "size", Cols: c, Rows: r}) {
				return
			}
		}
		data, skipped, ended := b.take()
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
		if ended {
			endStream(ctx, conn, "the role's program exited")
			return
		}
		if skipped || len(data) > 0 {
			pace.Reset(termFrame)
			if skipped {
				pace.Reset(termFloodFrame)
			}
			select {
			case <-ctx.Done():
				return
			case <-pace.C:
			}
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
	mu      sync.Mutex
	chunks  [][]byte
	size    int
	skipped bool
	ended   bool
	wake    chan struct{}
}

func (b *backlog) add(p []byte) {
	b.mu.Lock()
	if b.size+len(p) > termBacklog {
		b.chunks, b.size = nil, 0
		b.skipped = true
	} else if !b.skipped {
		b.chunks = append(b.chunks, p)
		b.size += len(p)
	}
	b.mu.Unlock()
	b.signal()
}

func (b *backlog) finish() {
	b.mu.Lock()
	b.ended = true
	b.mu.Unlock()
	b.signal()
}

func (b *backlog) signal() {
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

// take returns what is held (nothing when the backlog was dropped: the
// caller repaints instead) and whether the output has ended.
func (b *backlog) take() (data []byte, skipped, ended bool) {
	b.mu.Lock()
	chunks := b.chunks
	b.chunks, b.size = nil, 0
	skipped, b.skipped = b.skipped, false
	ended = b.ended
	b.mu.Unlock()
	if skipped {
		return nil, true, ended
	}
	return bytes.Join(chunks, nil), false, ended
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
