package ptyhost

import (
	"bytes"
	"testing"
)

// A viewer that keeps up gets every byte in order; one that falls behind
// by more than its limit is asked to paint, never given a partial stream
// or cut off; a paint that stands before what was dropped (the screen
// model lags under a flood) is followed by another, and output a paint
// already shows is not sent again.
func TestFeedPaintsOverWhatItDropped(t *testing.T) {
	s := &Session{}
	var off int64
	publish := func(p string) {
		off += int64(len(p))
		s.outBytes.Store(off)
		s.publish([]byte(p), off)
	}
	publish("before the feed ")
	f := s.Feed(16)
	ready := func() bool {
		select {
		case <-f.Ready:
			return true
		default:
			return false
		}
	}
	take := func() (string, bool, bool) {
		chunks, paint, ended := f.Take()
		return string(bytes.Join(chunks, nil)), paint, ended
	}

	if !ready() {
		t.Fatal("a new feed did not ask to be taken")
	}
	if got, paint, _ := take(); got != "" || !paint {
		t.Fatalf("first Take = %q, paint %v; want a paint of the screen so far", got, paint)
	}
	if f.Painted(off) {
		t.Fatal("a paint of everything so far was not enough")
	}

	p := []byte("one ")
	off += 4
	s.publish(p, off)
	p[0] = 'X' // the session reuses its read buffer: the feed holds a copy
	publish("two")
	if !ready() {
		t.Fatal("output waits, but Ready gave nothing")
	}
	if got, paint, ended := take(); got != "one two" || paint || ended {
		t.Fatalf("Take = %q, %v, %v; want the bytes in order", got, paint, ended)
	}

	publish(string(bytes.Repeat([]byte("x"), 10)))
	publish(string(bytes.Repeat([]byte("y"), 10))) // past the limit: all dropped
	dropped := off
	publish("after")
	if got, paint, _ := take(); got != "" || !paint {
		t.Fatalf("after an overflow Take = %q, paint %v; want a paint", got, paint)
	}
	if !f.Painted(dropped - 5) {
		t.Error("a paint that stands before the dropped output was taken as enough")
	}
	if got, paint, _ := take(); got != "" || !paint {
		t.Fatalf("after a short paint Take = %q, paint %v; want another paint", got, paint)
	}
	if f.Painted(dropped + 2) { // the screen shows "af" of "after"
		t.Error("a paint past the dropped output still asks for another")
	}
	if got, paint, _ := take(); got != "ter" || paint {
		t.Fatalf("Take = %q, paint %v; want only what the paint does not show", got, paint)
	}

	// A subscription beside it that falls behind is dropped; the feed is not.
	sub := s.Subscribe(1)
	for range 3 {
		publish("z")
	}
	if !sub.Dropped() {
		t.Error("a subscription that fell behind was kept")
	}
	if got, _, ended := take(); got != "zzz" || ended {
		t.Fatalf("Take = %q, ended %v; want zzz, still open", got, ended)
	}

	ready() // what the publishes above left
	s.closeSubscriptions()
	if !ready() {
		t.Error("the output ended, but Ready gave nothing")
	}
	if _, _, ended := take(); !ended {
		t.Error("the output ended, but the feed did not say so")
	}
	if _, paint, ended := s.Feed(16).Take(); !ended || !paint {
		t.Error("a feed begun after the end does not paint the last screen and end")
	}
}
