package agentsim

import (
	"io"
	"sync"
	"time"
)

// A chunk is what one read returned, stamped when it returned: the paste-burst
// rule is about when bytes arrived, not when the agent got round to them.
type chunk struct {
	data []byte
	at   time.Time
}

// inputQueue holds what the terminal sent until the agent takes it. It is
// unbounded so that reading never stops, even while the agent is starting or
// hung: a real CLI's input sits in its buffers then, not in the terminal's.
type inputQueue struct {
	mu     sync.Mutex
	chunks []chunk
	err    error         // why reading stopped, once it has
	ready  chan struct{} // signalled after a push or an error
	done   chan struct{} // closed when the reader returns
}

func newInputQueue() *inputQueue {
	return &inputQueue{ready: make(chan struct{}, 1), done: make(chan struct{})}
}

// read copies r into q until r fails.
func (q *inputQueue) read(r io.Reader) {
	defer close(q.done)
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		at := time.Now()
		q.mu.Lock()
		if n > 0 {
			q.chunks = append(q.chunks, chunk{data: append([]byte(nil), buf[:n]...), at: at})
		}
		if err != nil {
			q.err = err
		}
		q.mu.Unlock()
		select {
		case q.ready <- struct{}{}:
		default:
		}
		if err != nil {
			return
		}
	}
}

// take returns the chunks read so far, and the read error once they are all taken.
func (q *inputQueue) take() ([]chunk, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	c := q.chunks
	q.chunks = nil
	return c, q.err
}
