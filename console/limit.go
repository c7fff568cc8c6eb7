package console

import (
	"context"
	"io"
	"net"
	"net/http"
	"runtime"
	"sync"
	"time"
)

// Anyone who can reach the port can connect without a token, and every
// connection costs the supervisor a file descriptor that its roles, its
// queue and its control socket need. So a connection is bounded in time
// until it has shown the token, and the connections are bounded in number:
//
//   - a request's header must arrive within headerTimeout;
//   - a request that is refused (no token, a foreign Host) is answered at
//     once, its body never read, and its connection closed;
//   - an authenticated request's body must arrive within bodyTimeout (the
//     event and terminal streams have no body and no read deadline: a
//     whole-request ReadTimeout would end them);
//   - at most maxConns connections are held (connLimit).
const (
	headerTimeout  = 5 * time.Second
	bodyTimeout    = 10 * time.Second
	idleTimeout    = 60 * time.Second
	maxHeaderBytes = 64 << 10
	// maxConns bounds the HTTP connections held at once. A browser opens
	// at most six to a host; WebSockets leave the count once upgraded
	// (they are authenticated, and bounded by their own limits). The more
	// there are, the longer a new connection has to send its header while
	// a flood comes in (make bench: 10,000 connections at once).
	maxConns = 256
)

// connLimit keeps at most max HTTP connections, as the control socket's
// does (control/limit.go), with one difference: a connection serving an
// authenticated request (trust) is never closed to make room. When a new connection arrives at the limit, the
// oldest one that is not serving an authenticated request is closed: one
// that has sent nothing yet, one idle between requests, or one whose
// request has not shown the token. A real client sends its request as soon
// as it connects, so a flood of connections that linger costs only the
// flood. When every connection serves an authenticated request, the new
// one is closed. The accepting goroutine yields after each connection it
// took at the limit, so that the connections it accepted get to read their
// header before the next ones push them out: without that, a flood of a few
// thousand a second left a real request 10 ms to be read, and it often
// lost.
type connLimit struct {
	max   int
	mu    sync.Mutex
	conns map[net.Conn]*connSeen
}

type connSeen struct {
	state   http.ConnState
	since   time.Time
	trusted bool // its current request has passed the guard
}

func newConnLimit(max int) *connLimit {
	return &connLimit{max: max, conns: map[net.Conn]*connSeen{}}
}

// track is the http.Server's ConnState hook. It runs on the accepting
// goroutine for StateNew, before the connection is served.
func (l *connLimit) track(c net.Conn, st http.ConnState) {
	full := false
	defer func() {
		if full {
			runtime.Gosched()
		}
	}()
	l.mu.Lock()
	defer l.mu.Unlock()
	switch st {
	case http.StateNew:
		for len(l.conns) >= l.max {
			full = true
			victim := l.evictable()
			if victim == nil {
				_ = c.Close()
				return
			}
			delete(l.conns, victim)
			_ = victim.Close()
		}
		l.conns[c] = &connSeen{state: st, since: time.Now()}
	case http.StateActive, http.StateIdle:
		if s, ok := l.conns[c]; ok {
			// Each request shows the token anew (trust).
			s.state, s.since, s.trusted = st, time.Now(), false
		}
	case http.StateHijacked, http.StateClosed:
		delete(l.conns, c)
	}
}

// evictable is the connection to close first: the one that has waited
// longest without serving an authenticated request, or nil.
func (l *connLimit) evictable() net.Conn {
	var victim net.Conn
	var since time.Time
	for c, s := range l.conns {
		if s.state == http.StateActive && s.trusted {
			continue
		}
		if victim == nil || s.since.Before(since) {
			victim, since = c, s.since
		}
	}
	return victim
}

// trust marks the connection of r as serving an authenticated request.
func (l *connLimit) trust(r *http.Request) {
	c, ok := r.Context().Value(connKey{}).(net.Conn)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if s, ok := l.conns[c]; ok {
		s.trusted = true
	}
}

// held is how many connections are held.
func (l *connLimit) held() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.conns)
}

type connKey struct{}

// connContext is the http.Server's ConnContext hook: it lets trust find
// a request's connection.
func connContext(ctx context.Context, c net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, c)
}

// limitBody gives an authenticated request's body bodyTimeout to arrive.
// The deadline is lifted once the body has been read: the server then
// watches the connection for a hang-up, and a deadline would end a long
// answer (a POST that types into a role waits for it).
func limitBody(w http.ResponseWriter, r *http.Request) {
	if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
		return
	}
	rc := http.NewResponseController(w)
	if rc.SetReadDeadline(time.Now().Add(bodyTimeout)) != nil {
		return
	}
	r.Body = &deadlineBody{ReadCloser: r.Body, rc: rc}
}

// deadlineBody lifts the read deadline when its body ends.
type deadlineBody struct {
	io.ReadCloser
	rc   *http.ResponseController
	done bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && !b.done {
		b.done = true
		_ = b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}
