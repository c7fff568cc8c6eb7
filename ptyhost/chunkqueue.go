package ptyhost

import "sync"

// chunkQueue hands output chunks from the PTY reader to one slow consumer
// without ever blocking the reader. When the consumer falls more than limit
// bytes behind, the oldest chunks are dropped and counted: a lagging log disk
// or screen model loses old output, the child never stalls.
type chunkQueue struct {
	mu      sync.Mutex
	chunks  [][]byte
	bytes   int
	limit   int
	dropped int64
	closed  bool
	ready   chan struct{} // has a token while chunks are waiting or closed
}

func newChunkQueue(limit int) *chunkQueue {
	return &chunkQueue{limit: limit, ready: make(chan struct{}, 1)}
}

// push queues p (which the caller must not modify afterwards).
func (q *chunkQueue) push(p []byte) {
	q.mu.Lock()
	q.chunks = append(q.chunks, p)
	q.bytes += len(p)
	for q.bytes > q.limit && len(q.chunks) > 1 {
		q.bytes -= len(q.chunks[0])
		q.dropped += int64(len(q.chunks[0]))
		q.chunks[0] = nil
		q.chunks = q.chunks[1:]
	}
	q.mu.Unlock()
	q.signal()
}

// close lets the consumer finish what is queued and then stop.
func (q *chunkQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.signal()
}

func (q *chunkQueue) signal() {
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// take waits for queued chunks and returns them all with the number of bytes
// dropped since the last take. ok is false once the queue is closed and empty.
func (q *chunkQueue) take() (chunks [][]byte, dropped int64, ok bool) {
	for {
		q.mu.Lock()
		if len(q.chunks) > 0 || q.dropped > 0 {
			chunks, dropped = q.chunks, q.dropped
			q.chunks, q.bytes, q.dropped = nil, 0, 0
			q.mu.Unlock()
			return chunks, dropped, true
		}
		closed := q.closed
		q.mu.Unlock()
		if closed {
			return nil, 0, false
		}
		<-q.ready
	}
}
