package console

import (
	"bytes"
	"testing"
)

// A browser that keeps up gets every byte in order; one that falls behind
// by more than the backlog gets a repaint instead, never a partial stream.
func TestBacklogDropsWholeAndRepaints(t *testing.T) {
	b := &backlog{wake: make(chan struct{}, 1)}
	b.add([]byte("one "))
	b.add([]byte("two"))
	data, skipped, ended := b.take()
	if string(data) != "one two" || skipped || ended {
		t.Fatalf("take = %q, %v, %v; want the bytes in order", data, skipped, ended)
	}
	big := bytes.Repeat([]byte("x"), termBacklog/2+1)
	b.add(big)
	b.add(big) // past the limit: everything held is dropped
	b.add([]byte("after"))
	data, skipped, _ = b.take()
	if data != nil || !skipped {
		t.Fatalf("after an overflow take = %d bytes, skipped %v; want a repaint", len(data), skipped)
	}
	b.add([]byte("next"))
	b.finish()
	data, skipped, ended = b.take()
	if string(data) != "next" || skipped || !ended {
		t.Fatalf("take = %q, %v, %v; want the new bytes and the end", data, skipped, ended)
	}
	select {
	case <-b.wake:
	default:
		t.Error("adding output did not wake the writer")
	}
}
