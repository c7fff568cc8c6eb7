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
// and the next frame waits floodFrame (frames are dropped; the role's log
// loses nothing). After a flood the view ends on the role's last screen.
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
	// paint that replaced a flood, the next waits floodFrame: the views of
	// a flooding role share termFloodPaints paints a second, one view at
	// most two. Each paint costs a browser a redraw of the whole screen;
	// ten tabs each painting twice a second took a 2-core machine's CPU
	// from the role (make bench).
	termFrame = 25 * time.Millisecond
	// termBurst: output of this much or more that arrives after a quiet
	// frame waits one frame before it is sent, to see whether a flood
	// follows; if one does, the view gets a paint instead. A flood's first
	// tens of KiB, parsed by a browser whose terminal code is not yet warm,
	// cost each tab up to 0.2 s of CPU (make bench). A watching view's
	// output always waits that frame, so a flood's first bytes never reach
	// it; the view in control sends a typed key's echo, far smaller, at
	// once.
	termBurst         = 8 << 10
	termFloodPaints   = 4
	termFloodFrameMin = 500 * time.Millisecond
	termFloodFrameMax = 3 * time.Second
)

// floodFrame is how long a view waits after a flood's paint while views
// streams follow the role.
func floodFrame(views int) time.Duration {
	return min(max(time.Duration(views)*time.Second/termFloodPaints, termFloodFrameMin), termFloodFrameMax)
}

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
	if !c.streams.take(id) {
		endStream(ctx, conn, fmt.Sprintf("%d terminal views are open already, the most this console serves; close some tabs", maxStreams))
		return
	}
	defer c.streams.give(id)
	a, err := role.View(!control, cols, rows, termBacklog)
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
	if !send(termMsg{Type: "hello", Cols: lastC, Rows: lastR, Control: control}) {
		return
	}
	sizeTick := time.NewTicker(termSizeCheck)
	defer sizeTick.Stop()
	timer := time.NewTimer(0)
	defer timer.Stop()
	frame := termFrame
	lastSend := time.Time{}
	// again: the last paint stood before what the feed dropped (the screen
	// model lags under a flood); paint again a frame later, output or not.
	again := false
	// flooding: the last message was a flood's paint, or one is due.
	flooding := false
	for {
		var retry <-chan time.Time
		if again {
			retry = time.After(frame)
		}
		select {
		case <-ctx.Done():
			return
		case <-a.Feed.Ready:
		case <-sizeTick.C:
		case <-retry:
		}
		// Send at most once a frame: what arrives meanwhile waits in the
		// feed, or is dropped there and painted over.
		wait := time.Until(lastSend.Add(frame))
		if wait <= 0 && (!control || a.Feed.Held() >= termBurst) {
			wait = termFrame
		}
		if wait > 0 {
			timer.Reset(wait)
			select {
			case <-ctx.Done():
				return
			case <-timer.C:
			}
		}
		if c, r := a.Size(); c != lastC || r != lastR {
			lastC, lastR = c, r
			if !send(termMsg{Type: "size", Cols: c, Rows: r}) {
				return
			}
		}
		chunks, paint, ended := a.Feed.Take()
		// The first paint is the page's first screen; any later one stands
		// for a flood.
		flood := paint && !lastSend.IsZero()
		if flood && !flooding && !ended {
			// A flood began: its first paint waits a flood frame too, so a
			// burst shorter than that costs each view one paint, after it.
			flooding, again = true, true
			lastSend, frame = time.Now(), floodFrame(c.streams.views(id))
			continue
		}
		switch {
		case paint:
			p, at := a.Repaint()
			if !send(termMsg{Type: "paint"}) || !write(websocket.MessageBinary, p) {
				return
			}
			again = a.Feed.Painted(at)
		case len(chunks) > 0:
			if !write(websocket.MessageBinary, bytes.Join(chunks, nil)) {
				return
			}
		}
		if paint || len(chunks) > 0 {
			lastSend = time.Now()
			frame, flooding = termFrame, flood
			if flood {
				frame = floodFrame(c.streams.views(id))
			}
		}
		if ended && !again {
			endStream(ctx, conn, "the role's program exited")
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

// maxStreams bounds the terminal streams one console serves at once.
const maxStreams = 64

// streamSlots counts open streams against maxStreams, and each role's.
type streamSlots struct {
	mu     sync.Mutex
	n      int
	byRole map[string]int
}

func (s *streamSlots) take(role string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n >= maxStreams {
		return false
	}
	s.n++
	if s.byRole == nil {
		s.byRole = map[string]int{}
	}
	s.byRole[role]++
	return true
}

func (s *streamSlots) give(role string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n--
	if s.byRole[role]--; s.byRole[role] <= 0 {
		delete(s.byRole, role)
	}
}

// views is how many streams follow role.
func (s *streamSlots) views(role string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.byRole[role]
}
