package control

import (
	"testing"
	"time"
)

// A client that does not read never holds up the one who publishes: its
// buffer fills, the rest is dropped and counted, and other clients get
// everything.
func TestPublishNeverWaitsForAClient(t *testing.T) {
	h := &eventHub{clients: map[*eventClient]struct{}{}}
	stuck := &eventClient{ch: make(chan sseEvent, eventBuffer)}
	reader := &eventClient{ch: make(chan sseEvent, eventBuffer)}
	h.clients[stuck], h.clients[reader] = struct{}{}, struct{}{}
	got := make(chan int)
	go func() {
		n := 0
		for range reader.ch {
			n++
			if n == 3*eventBuffer {
				break
			}
		}
		got <- n
	}()
	done := make(chan struct{})
	go func() {
		e := sseEvent{kind: "task", data: []byte(`{}`)}
		for i := 0; i < 3*eventBuffer; i++ {
			for len(reader.ch) > eventBuffer/2 {
				time.Sleep(time.Millisecond) // let the reader keep up
			}
			h.publish(e)
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("publishing waited for a client that does not read")
	}
	if n := len(stuck.ch); n != eventBuffer {
		t.Errorf("the stuck client holds %d events, want its buffer's %d", n, eventBuffer)
	}
	if d := stuck.dropped.Load(); d != 2*eventBuffer {
		t.Errorf("dropped %d, want %d", d, 2*eventBuffer)
	}
	select {
	case n := <-got:
		if n != 3*eventBuffer {
			t.Errorf("the reading client got %d events", n)
		}
	case <-time.After(30 * time.Second):
		t.Errorf("the reading client lost events: %d dropped", reader.dropped.Load())
	}
}
