package console

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/shogun-dev/shogun/ptyhost"
	"github.com/shogun-dev/shogun/textsafe"
)

// GET /v1/console/previews is a server-sent event stream of the roles'
// screens as text for the team page's small previews: a "screen" event
// (ScreenPreview) for each role when the stream opens and whenever its
// screen has changed, looked at once per previewEvery. A preview is a
// glance, not the terminal: at most one per role per interval, however
// fast the role writes.
const (
	previewEvery        = time.Second
	previewWriteTimeout = 10 * time.Second
)

// ScreenPreview is one role's screen in the previews stream.
type ScreenPreview struct {
	ID string `json:"id"`
	// Lines are the screen's rows as text, control characters shown as
	// textsafe shows them.
	Lines     []string `json:"lines"`
	CursorRow int      `json:"cursor_row"`
	CursorCol int      `json:"cursor_col"`
	// Running is false when the role has no program (stopped, or between
	// restarts); Lines are then empty.
	Running bool `json:"running"`
}

func (c *Console) previews(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	type seen struct {
		sess *ptyhost.Session
		gen  uint64
	}
	last := map[string]seen{}
	tick := time.NewTicker(previewEvery)
	defer tick.Stop()
	for {
		sent := false
		for _, role := range c.opts.Team.Supervisor().Roles() {
			sess := role.Session()
			var gen uint64
			if sess != nil {
				gen = sess.ScreenGeneration()
			}
			if old, ok := last[role.ID()]; ok && old.sess == sess && old.gen == gen {
				continue
			}
			last[role.ID()] = seen{sess, gen}
			p := ScreenPreview{ID: role.ID(), Lines: []string{}}
			if sess != nil {
				scr := sess.Screen()
				p.Running, p.CursorRow, p.CursorCol = true, scr.CursorRow, scr.CursorCol
				for _, l := range scr.Lines {
					p.Lines = append(p.Lines, textsafe.Escape(l))
				}
			}
			b, _ := json.Marshal(p)
			_ = rc.SetWriteDeadline(time.Now().Add(previewWriteTimeout))
			if _, err := fmt.Fprintf(w, "event: screen\ndata: %s\n\n", b); err != nil {
				return
			}
			sent = true
		}
		if sent {
			if rc.Flush() != nil {
				return
			}
		}
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
		}
	}
}
