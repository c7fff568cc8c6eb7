package ptyhost

import "sync"

// Scrollback keeps the last Size bytes of a role's output in memory, so a
// person attaching or a `shogun screen` call can see what came before.
type Scrollback struct {
	mu   sync.Mutex
	buf  []byte
	next int  // where the next byte goes
	full bool // buf has wrapped at least once
}

// NewScrollback returns a ring holding at most size bytes (at least 1).
func NewScrollback(size int) *Scrollback {
	return &Scrollback{buf: make([]byte, max(size, 1))}
}

// Write appends p, overwriting the oldest bytes. It never fails.
func (r *Scrollback) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := len(p)
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
	if !r.full {
		return append([]byte(nil), r.buf[:r.next]...)
	}
	out := make([]byte, 0, len(r.buf))
	out = append(out, r.buf[r.next:]...)
	return append(out, r.buf[:r.next]...)
}
