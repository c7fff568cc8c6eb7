package ptyhost

import "sync"

// Scrollback keeps the last Size bytes of a role's output in memory, so a
// person attaching or a `shogun screen` call can see what came before.
type Scrollback struct {
	mu   sync.Mutex
	size int
	// buf grows with the output up to size, then is a ring of size bytes:
	// a role started and put to sleep again and again (agent.max_running)
	// would otherwise take size bytes for each start, most of them never
	// written.
	buf  []byte
	next int  // where the next byte goes, once buf is a ring
	full bool // the ring has wrapped at least once
}

// NewScrollback returns a ring holding at most size bytes (at least 1).
func NewScrollback(size int) *Scrollback {
	return &Scrollback{size: max(size, 1)}
}

// Write appends p, overwriting the oldest bytes. It never fails.
func (r *Scrollback) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := len(p)
	if len(r.buf) < r.size {
		if end := len(r.buf) + len(p); end < r.size {
			if end > cap(r.buf) {
				grown := make([]byte, len(r.buf), min(max(2*cap(r.buf), end, 4<<10), r.size))
				copy(grown, r.buf)
				r.buf = grown
			}
			r.buf = append(r.buf, p...)
			return n, nil
		}
		// Full size from here on: a ring.
		r.next = len(r.buf)
		if cap(r.buf) >= r.size {
			r.buf = r.buf[:r.size]
		} else {
			ring := make([]byte, r.size)
			copy(ring, r.buf)
			r.buf = ring
		}
	}
	if len(p) >= len(r.buf) {
		copy(r.buf, p[len(p)-len(r.buf):])
		r.next, r.full = 0, true
		return n, nil
	}
	c := copy(r.buf[r.next:], p)
	if c < len(p) {
		copy(r.buf, p[c:])
		r.full = true
	}
	r.next = (r.next + len(p)) % len(r.buf)
	if r.next == 0 {
		r.full = true
	}
	return n, nil
}

// Bytes returns a copy of the kept output, oldest first.
func (r *Scrollback) Bytes() []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.buf) < r.size {
		return append([]byte(nil), r.buf...)
	}
	if !r.full {
		return append([]byte(nil), r.buf[:r.next]...)
	}
	out := make([]byte, 0, len(r.buf))
	out = append(out, r.buf[r.next:]...)
	return append(out, r.buf[:r.next]...)
}
