package control

import (
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// The API's clients are the user's own commands, but anything running as the
// user can connect, agents included, and every connection costs the
// supervisor a file descriptor that the queue may need. So connections are
// bounded in time and in number.
const (
	// headerTimeout bounds reading a request's header; readTimeout the
	// whole request, body included.
	headerTimeout = 5 * time.Second
	readTimeout   = 10 * time.Second
	// writeTimeout bounds writing an answer; POST /v1/roles/{id}/type waits
	// up to 60 s for the role before it answers.
	httpWriteTimeout = 90 * time.Second
	// idleTimeout closes a kept-alive connection that sends nothing more.
	idleTimeout = 10 * time.Second
	// maxHeaderBytes bounds a request's header.
	maxHeaderBytes = 64 << 10
	// maxConns bounds the connections served as HTTP at once, maxAttach the
	// attach streams (which leave HTTP once upgraded).
	maxConns  = 64
	maxAttach = 16
)

// connLimit keeps at most max HTTP connections. When a new one arrives at
// the limit, the oldest connection is closed to make room, preferring one
// that has no request in progress (new and silent, or idle between
// requests). The API's real clients send their request as soon as they
// connect and are answered within milliseconds, so a flood of connections
// that linger costs only the flood: the newest connection, the one of a
// person typing `shogun status`, is served.
type connLimit struct {
	max   int
	mu    sync.Mutex
	conns map[net.Conn]connSeen
}

type connSeen struct {
	state http.ConnState
	since time.Time
}

func newConnLimit(max int) *connLimit {
	return &connLimit{max: max, conns: map[net.Conn]connSeen{}}
}

// track is the http.Server's ConnState hook. It runs on the accepting
// goroutine for StateNew, before the connection is served.
func (l *connLimit) track(c net.Conn, st http.ConnState) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch st {
	case http.StateNew:
		for len(l.conns) >= l.max {
			victim := l.oldest()
			delete(l.conns, victim)
			_ = victim.Close()
		}
		l.conns[c] = connSeen{state: st, since: time.Now()}
	case http.StateActive, http.StateIdle:
		if _, ok := l.conns[c]; ok {
			l.conns[c] = connSeen{state: st, since: time.Now()}
		}
	case http.StateHijacked, http.StateClosed:
		delete(l.conns, c)
	}
}

// oldest is the connection to close first: the one that has waited longest
// without a request in progress, else the one whose request began first.
func (l *connLimit) oldest() net.Conn {
	var victim net.Conn
	var best connSeen
	waiting := func(s connSeen) bool { return s.state == http.StateNew || s.state == http.StateIdle }
	for c, s := range l.conns {
		better := victim == nil ||
			waiting(s) && !waiting(best) ||
			waiting(s) == waiting(best) && s.since.Before(best.since)
		if better {
			victim, best = c, s
		}
	}
	return victim
}

// slots counts attach streams against a limit.
type slots struct {
	n   atomic.Int32
	max int32
}

// take reserves a slot; false means all are taken.
func (s *slots) take() bool {
	if s.n.Add(1) > s.max {
		s.n.Add(-1)
		return false
	}
	return true
}

// give returns a slot.
func (s *slots) give() { s.n.Add(-1) }
