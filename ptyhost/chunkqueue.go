package ptyhost

import "sync"

// byteQueue hands output from the PTY reader to one slow consumer without
// ever blocking the reader and without allocating per read. When the consumer
// falls more than limit bytes behind, the oldest bytes are dropped and
// counted: a lagging log disk or screen model loses old output, the child
// never stalls.
type byteQueue struct {
	mu      sync.Mutex
	buf     []byte // pending bytes, oldest first; grows up to limit
	limit   int
	dropped int64
	closed  bool
	ready   chan struct{} // holds a token while bytes are waiting or closed
	done    chan struct{} // closed by close, so a resting consumer wakes
}

func newByteQueue(limit int) *byteQueue {
	return &byteQueue{limit: limit, ready: make(chan struct{}, 1), done: make(chan struct{})}
}

// push appends a copy of p.
func (q *byteQueue) push(p []byte) {
	q.mu.Lock()
	if len(p) >= q.limit {
		q.dropped += int64(len(q.buf) + len(p) - q.limit)
		q.buf = append(q.buf[:0], p[len(p)-q.limit:]...)
	} else {
		if over := len(q.buf) + len(p) - q.limit; over > 0 {
			q.dropped += int64(over)
			q.buf = q.buf[:copy(q.buf, q.buf[over:])]
		}
		q.buf = append(q.buf, p...)
	}
	q.mu.Unlock()
	q.signal()
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

// take waits for pending bytes and moves them all into dst (reusing its
// storage), with the number of bytes dropped since the last take. ok is false
// once the queue is closed and empty.
func (q *byteQueue) take(dst []byte) (out []byte, dropped int64, ok bool) {
	for {
		q.mu.Lock()
		if len(q.buf) > 0 || q.dropped > 0 {
			out = append(dst[:0], q.buf...)
			dropped = q.dropped
			q.dropped = 0
			q.buf = q.buf[:0]
			if cap(q.buf) > 1<<20 {
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
