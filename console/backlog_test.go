package console

import (
	"bytes"
	"testing"
)

// A browser that keeps up gets every byte in order; one that falls behind
// by more than the backlog gets a repaint instead, never a partial stream.
func TestBacklogDropsWholeAndRepaints(t *testing.T) {
	var b backlog
	b.add([]byte("one "))
	b.add([]byte("two"))
	if data, skipped := b.take(); string(data) != "one two" || skipped {
		t.Fatalf("take = %q, %v; want the bytes in order", data, skipped)
	}
	big := bytes.Repeat([]byte("x"), termBacklog/2+1)
	b.add(big)
	b.add(big) // past the limit: everything held is dropped
	b.add([]byte("after"))
	if data, skipped := b.take(); data != nil || !skipped {
		t.Fatalf("after an overflow take = %d bytes, skipped %v; want a repaint", len(data), skipped)
	}
	b.add([]byte("next"))
	if data, skipped := b.take(); string(data) != "next" || skipped {
		t.Fatalf("take = %q, %v; want the new bytes", data, skipped)
	}
}
