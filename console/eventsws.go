package console

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/coder/websocket"
)

// eventsOverWebSocket serves a server-sent event stream over a WebSocket
// when the browser asks for one (an Upgrade request), and as it is
// otherwise. A browser opens at most six HTTP/1.1 connections to one host,
// and an event stream holds one as long as its page is open: three team
// pages (events and previews each) would leave every other request of the
// console waiting. WebSockets do not count against that limit.
//
// Each event goes as one text message, {"event": NAME, "data": DATA}, DATA
// being the event's JSON (or its text as a JSON string); comments
// (keep-alives) are not sent. An answer other than 200 (too many streams)
// closes the WebSocket with "try again later" and the answer's text.
func eventsOverWebSocket(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !isUpgrade(r) {
			next.ServeHTTP(w, r)
			return
		}
		conn, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer conn.CloseNow()
		// The page sends nothing; a close or a broken connection ends the
		// request's context, and with it the stream.
		ctx := conn.CloseRead(r.Context())
		ew := &eventWriter{ctx: ctx, header: http.Header{}, code: http.StatusOK}
		ew.sendFn = func(msg []byte) error {
			wctx, cancel := context.WithTimeout(ctx, termWriteTimeout)
			defer cancel()
			return conn.Write(wctx, websocket.MessageText, msg)
		}
		next.ServeHTTP(ew, r.WithContext(ctx))
		if ew.code != http.StatusOK {
			reason := strings.TrimSpace(ew.body.String())
			var e struct{ Error string }
			if json.Unmarshal(ew.body.Bytes(), &e) == nil && e.Error != "" {
				reason = e.Error
			}
			_ = conn.Close(websocket.StatusTryAgainLater, truncateReason(reason))
			return
		}
		_ = conn.Close(websocket.StatusNormalClosure, "")
	})
}

// truncateReason fits a close reason in the 123 bytes a close frame holds,
// on a UTF-8 boundary.
func truncateReason(s string) string {
	if len(s) <= 123 {
		return s
	}
	s = s[:123]
	for len(s) > 0 && s[len(s)-1]&0xC0 == 0x80 {
		s = s[:len(s)-1]
	}
	if len(s) > 0 && s[len(s)-1] >= 0xC0 {
		s = s[:len(s)-1]
	}
	return s
}

// eventWriter is the ResponseWriter an event stream writes to: it reads
// the text/event-stream format line by line and sends each event as a
// message.
type eventWriter struct {
	ctx    context.Context
	sendFn func(msg []byte) error // sends one message
	header http.Header
	code   int
	body   bytes.Buffer // an answer other than 200

	line  []byte // a line not yet ended
	event string
	data  []byte
	inEvt bool // data lines were read since the last event
}

func (w *eventWriter) Header() http.Header { return w.header }

func (w *eventWriter) WriteHeader(code int) { w.code = code }

// SetWriteDeadline and FlushError are what http.ResponseController asks
// of a stream: each message here has its own time limit, and is sent
// when its event ends.
func (w *eventWriter) SetWriteDeadline(time.Time) error { return nil }
func (w *eventWriter) FlushError() error                { return context.Cause(w.ctx) }
func (w *eventWriter) Flush()                           {}

func (w *eventWriter) Write(p []byte) (int, error) {
	if w.code != http.StatusOK {
		return w.body.Write(p)
	}
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			w.line = append(w.line, p...)
			break
		}
		w.line = append(w.line, p[:i]...)
		p = p[i+1:]
		if err := w.takeLine(bytes.TrimSuffix(w.line, []byte("\r"))); err != nil {
			return 0, err
		}
		w.line = w.line[:0]
	}
	return n, nil
}

// takeLine reads one line of the event stream (see the HTML standard's
// "event stream interpretation", of which the servers here use event,
// data and comments).
func (w *eventWriter) takeLine(l []byte) error {
	switch {
	case len(l) == 0:
		if !w.inEvt {
			return nil
		}
		err := w.send()
		w.event, w.data, w.inEvt = "", w.data[:0], false
		return err
	case l[0] == ':':
		return nil
	}
	field, value, _ := bytes.Cut(l, []byte(":"))
	value = bytes.TrimPrefix(value, []byte(" "))
	switch string(field) {
	case "event":
		w.event = string(value)
	case "data":
		if w.inEvt {
			w.data = append(w.data, '\n')
		}
		w.data = append(w.data, value...)
		w.inEvt = true
	}
	return nil
}

func (w *eventWriter) send() error {
	name := w.event
	if name == "" {
		name = "message"
	}
	data := json.RawMessage(w.data)
	if !json.Valid(data) {
		b, _ := json.Marshal(string(w.data))
		data = b
	}
	msg, err := json.Marshal(struct {
		Event string          `json:"event"`
		Data  json.RawMessage `json:"data"`
	}{name, data})
	if err != nil {
		return err
	}
	return w.sendFn(msg)
}
