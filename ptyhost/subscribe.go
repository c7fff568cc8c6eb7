package ptyhost

import "sync"

// Subscription receives a copy of everything the program writes from the
// moment it was taken: what a person attached to the role sees. A
// subscriber that falls behind by more than its buffer is dropped (C is
// closed and Dropped reports true) rather than ever slowing the reader.
type Subscription struct {
	// C delivers output chunks; it is closed when the subscription ends.
	C <-chan []byte

	c       chan []byte
	s       *Session
	once    sync.Once
	dropped bool
}

// Subscribe starts a subscription buffering up to buf chunks.
func (s *Session) Subscribe(buf int) *Subscription {
	c := make(chan []byte, max(buf, 1))
	sub := &Subscription{C: c, c: c, s: s}
	s.subMu.Lock()
	if s.subs == nil {
		s.subs = map[*Subscription]bool{}
	}
	if s.subsClosed {
		close(c)
	} else {
		s.subs[sub] = true
	}
	s.subMu.Unlock()
	return sub
}

// Close ends the subscription.
func (sub *Subscription) Close() {
	sub.s.subMu.Lock()
	defer sub.s.subMu.Unlock()
	sub.end(false)
}

// Dropped reports whether the subscription was ended for falling behind.
func (sub *Subscription) Dropped() bool {
	sub.s.subMu.Lock()
	defer sub.s.subMu.Unlock()
	return sub.dropped
}

// end closes the channel once; the caller holds subMu.
func (sub *Subscription) end(dropped bool) {
	sub.once.Do(func() {
		sub.dropped = dropped
		delete(sub.s.subs, sub)
		close(sub.c)
	})
}

// Feed receives the program's output like a Subscription, for a viewer
// that repaints the screen rather than keep up with a flood (the web
// console's terminal). Output waits in the feed up to a limit in bytes;
// past it the feed drops what it holds and asks for a paint instead.
// Publishing never waits and the feed is never ended for falling behind;
// a flood costs its viewer one wake-up per Take, not one per chunk.
//
// The feed knows where each chunk lies in the output, and a paint says
// where the screen it shows stands (Session.PaintAt): the screen model
// lags behind the output under a flood, so a paint may show less than the
// feed dropped, and then another is needed once the model has caught up;
// output the paint already shows is not sent again.
type Feed struct {
	// Ready receives a value when output or the end waits to be taken.
	Ready <-chan struct{}

	ready  chan struct{}
	s      *Session
	limit  int
	chunks []feedChunk
	size   int
	// paint says a paint must reach output offset need to stand for what
	// the feed did not hold: what came before the feed began, and what it
	// dropped.
	paint bool
	need  int64
	ended bool
}

type feedChunk struct {
	p   []byte // shared, never written to
	end int64  // the output offset just past p
}

// Feed starts a feed holding up to limit bytes of output between two
// Takes. Its first Take asks for a paint of the screen.
func (s *Session) Feed(limit int) *Feed {
	ready := make(chan struct{}, 1)
	f := &Feed{Ready: ready, ready: ready, s: s, limit: limit}
	s.subMu.Lock()
	defer s.subMu.Unlock()
	// The output so far is the screen's to show.
	f.paint, f.need = true, s.outBytes.Load()
	ready <- struct{}{}
	if s.subsClosed {
		f.ended = true
		return f
	}
	if s.feeds == nil {
		s.feeds = map[*Feed]bool{}
	}
	s.feeds[f] = true
	return f
}

// Take returns the output held since the last Take, in order (each chunk
// a copy of its own); or, while the feed holds less than the output since
// the last paint, paint: the caller paints the screen and says so with
// Painted. ended says the program's output has ended.
func (f *Feed) Take() (chunks [][]byte, paint, ended bool) {
	f.s.subMu.Lock()
	defer f.s.subMu.Unlock()
	if f.paint {
		return nil, true, f.ended
	}
	for _, c := range f.chunks {
		chunks = append(chunks, c.p)
	}
	f.chunks, f.size = nil, 0
	return chunks, false, f.ended
}

// Held is how many bytes of output the feed holds.
func (f *Feed) Held() int {
	f.s.subMu.Lock()
	defer f.s.subMu.Unlock()
	return f.size
}

// Painted tells the feed the viewer painted a screen standing at output
// offset at (Session.PaintAt): the output up to there is shown and not
// held any more. It reports whether a later paint is still needed: the
// screen stood before what the feed dropped.
func (f *Feed) Painted(at int64) (again bool) {
	f.s.subMu.Lock()
	defer f.s.subMu.Unlock()
	if at >= f.need {
		f.paint = false
	}
	i := 0
	for i < len(f.chunks) && f.chunks[i].end <= at {
		f.size -= len(f.chunks[i].p)
		i++
	}
	f.chunks = f.chunks[i:]
	if len(f.chunks) > 0 {
		c := &f.chunks[0]
		if start := c.end - int64(len(c.p)); start < at {
			f.size -= int(at - start)
			c.p = c.p[at-start:]
		}
	}
	return f.paint
}

// Close ends the feed.
func (f *Feed) Close() {
	f.s.subMu.Lock()
	defer f.s.subMu.Unlock()
	delete(f.s.feeds, f)
}

// add holds p, which ends at output offset end, or drops what is held
// when p would pass the limit; the caller holds subMu.
func (f *Feed) add(p func() []byte, n int, end int64) {
	if f.size+n > f.limit {
		f.chunks, f.size = nil, 0
		f.paint, f.need = true, end
	} else {
		f.chunks = append(f.chunks, feedChunk{p: p(), end: end})
		f.size += n
	}
	select {
	case f.ready <- struct{}{}:
	default:
	}
}

// publish hands a copy of p to every subscriber and feed without waiting.
func (s *Session) publish(p []byte, end int64) {
	s.subMu.Lock()
	defer s.subMu.Unlock()
	if len(s.subs) == 0 && len(s.feeds) == 0 {
		return
	}
	// One copy, made only if someone keeps it: a feed that overflows
	// keeps nothing.
	var cp []byte
	copied := func() []byte {
		if cp == nil {
			cp = append([]byte(nil), p...)
		}
		return cp
	}
	for sub := range s.subs {
		select {
		case sub.c <- copied():
		default:
			sub.end(true)
		}
	}
	for f := range s.feeds {
		f.add(copied, len(p), end)
	}
}

// closeSubscriptions ends every subscription and feed when the output has
// ended.
func (s *Session) closeSubscriptions() {
	s.subMu.Lock()
	defer s.subMu.Unlock()
	s.subsClosed = true
	for sub := range s.subs {
		sub.end(false)
	}
	for f := range s.feeds {
		f.ended = true
		select {
		case f.ready <- struct{}{}:
		default:
		}
	}
	s.feeds = nil
}
