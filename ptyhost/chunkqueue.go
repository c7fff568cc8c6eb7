package ptyhost

import "sync"

// byteQueue hands output from the PTY reader to one slow consumer without
// ever blocking the reader. It is a ring that grows up to limit bytes; when
// the consumer falls further behind, the oldest bytes are overwritten and
// counted as dropped. A push costs a copy of its own bytes, never more, so a
// stalled log disk or screen model cannot slow the reader down.
type byteQueue struct {
	mu      sync.Mutex
	buf     []byte // ring storage; len(buf) is the current capacity
	start   int    // index of the oldest pending byte
	n       int    // pending bytes
	limit   int
	dropped int64
	closed  bool
	ready   chan struct{} // holds a token while bytes are waiting or closed
	done    chan struct{} // closed by close, so a resting consumer wakes
}

func newByteQueue(limit int) *byteQueue {
	return &byteQueue{limit: max(limit, 1), ready: make(chan struct{}, 1), done: make(chan struct{})}
}

// push appends a copy of p.
func (q *byteQueue) push(p []byte) {
	q.mu.Lock()
	if len(p) >= q.limit {
		q.dropped += int64(q.n + len(p) - q.limit)
		p = p[len(p)-q.limit:]
		q.start, q.n = 0, 0
	}
	q.grow(q.n + len(p))
	if over := q.n + len(p) - len(q.buf); over > 0 {
		q.start = (q.start + over) % len(q.buf)
		q.n -= over
		q.dropped += int64(over)
	}
	end := (q.start + q.n) % len(q.buf)
	c := copy(q.buf[end:], p)
	copy(q.buf, p[c:])
	q.n += len(p)
	q.mu.Unlock()
	q.signal()
}

// grow makes room for need bytes, up to limit, keeping the pending bytes.
func (q *byteQueue) grow(need int) {
	if need <= len(q.buf) || len(q.buf) >= q.limit {
		return
	}
	size := min(q.limit, max(need, 2*len(q.buf), 4096))
	nb := make([]byte, size)
	q.copyOut(nb)
	q.buf, q.start = nb, 0
}

// copyOut copies the pending bytes, oldest first, to dst (len(dst) >= q.n).
func (q *byteQueue) copyOut(dst []byte) {
	if q.n == 0 {
		return
	}
	c := copy(dst[:q.n], q.buf[q.start:min(q.start+q.n, len(q.buf))])
	copy(dst[c:q.n], q.buf)
}

// close lets the consumer finish what is queued and then stop.
func (q *byteQueue) close() {
	q.mu.Lock()
	if !q.closed {
		q.closed = true
		close(q.done)
	}
	q.mu.Unlock()
	q.signal()
}

func (q *byteQueue) signal() {
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// wait waits until bytes are pending or the queue is closed, taking none.
func (q *byteQueue) wait() {
	for {
		q.mu.Lock()
		some := q.n > 0 || q.dropped > 0 || q.closed
		q.mu.Unlock()
		if some {
			return
		}
		<-q.ready
	}
}

// take waits for pending bytes and moves them all into dst (reusing its
// storage), with the number of bytes dropped since the last take. ok is false
// once the queue is closed and empty.
func (q *byteQueue) take(dst []byte) (out []byte, dropped int64, ok bool) {
	for {
		q.mu.Lock()
		if q.n > 0 || q.dropped > 0 {
			if cap(dst) < q.n {
				dst = make([]byte, q.n)
			}
			out = dst[:q.n]
			q.copyOut(out)
			dropped = q.dropped
			q.start, q.n, q.dropped = 0, 0, 0
			if len(q.buf) > 1<<20 {
				q.buf = nil // a flood is over: give the memory back
			}
			q.mu.Unlock()
			return out, dropped, true
		}
		closed := q.closed
		q.mu.Unlock()
		if closed {
			return dst[:0], 0, false
		}
		<-q.ready
	}
}
