package console

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/shogun-dev/shogun/ptyhost"
	"github.com/shogun-dev/shogun/textsafe"
)

// GET /v1/console/previews is a server-sent event stream of the roles'
// screens as text for the team page's small previews: a "screen" event
// (ScreenPreview) for each role when the stream opens and whenever its
// screen has changed, looked at once per previewEvery. A preview is a
// glance, not the terminal: at most one per role per interval, however
// fast the role writes. A preview is the bottom of the screen, in colour
// (Rows); the whole screen's text is there too (Lines).
const (
	previewEvery        = time.Second
	previewWriteTimeout = 10 * time.Second
)

// previewRows is how many rows of a screen the team page's preview shows:
// the bottom ones, where the newest output and the composer are.
const previewRows = 12

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
	// Rows are the last previewRows rows of the screen down to its last
	// one with text or the cursor, whichever is lower, with their colours;
	// First is the index of the first of them in Lines.
	First int             `json:"first"`
	Rows  [][]PreviewSpan `json:"rows"`
}

// PreviewSpan is a run of a row's text in one style: colours as
// "#rrggbb", left out for the terminal's default; b bold, f faint, i
// italic, u underlined, r reverse video.
type PreviewSpan struct {
	Text string `json:"t"`
	FG   string `json:"fg,omitempty"`
	BG   string `json:"bg,omitempty"`
	B    bool   `json:"b,omitempty"`
	F    bool   `json:"f,omitempty"`
	I    bool   `json:"i,omitempty"`
	U    bool   `json:"u,omitempty"`
	R    bool   `json:"r,omitempty"`
}

// preview is a running role's screen as the previews stream sends it.
func preview(id string, sess *ptyhost.Session) ScreenPreview {
	scr := sess.Screen()
	p := ScreenPreview{ID: id, Running: true, CursorRow: scr.CursorRow, CursorCol: scr.CursorCol, Lines: []string{}, Rows: [][]PreviewSpan{}}
	end := scr.CursorRow + 1
	for i, l := range scr.Lines {
		p.Lines = append(p.Lines, textsafe.Escape(l))
		if strings.TrimSpace(l) != "" {
			end = max(end, i+1)
		}
	}
	p.First = max(0, end-previewRows)
	for _, row := range sess.StyledRows(p.First, end) {
		spans := make([]PreviewSpan, 0, len(row))
		for _, s := range row {
			spans = append(spans, PreviewSpan{Text: textsafe.Escape(s.Text), FG: s.FG, BG: s.BG,
				B: s.Bold, F: s.Faint, I: s.Italic, U: s.Underline, R: s.Reverse})
		}
		p.Rows = append(p.Rows, spans)
	}
	return p
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
			p := ScreenPreview{ID: role.ID(), Lines: []string{}, Rows: [][]PreviewSpan{}}
			if sess != nil {
				p = preview(role.ID(), sess)
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
