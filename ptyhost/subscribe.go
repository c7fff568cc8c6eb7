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

// publish hands a copy of p to every subscriber without waiting.
func (s *Session) publish(p []byte) {
	s.subMu.Lock()
	defer s.subMu.Unlock()
	if len(s.subs) == 0 {
		return
	}
	cp := append([]byte(nil), p...)
	for sub := range s.subs {
		select {
		case sub.c <- cp:
		default:
			sub.end(true)
		}
	}
}

// closeSubscriptions ends every subscription when the output has ended.
func (s *Session) closeSubscriptions() {
	s.subMu.Lock()
	defer s.subMu.Unlock()
	s.subsClosed = true
	for sub := range s.subs {
		sub.end(false)
	}
}
