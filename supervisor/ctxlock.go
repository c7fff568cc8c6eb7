package supervisor

import (
	"context"
	"sync"
)

// ctxLock is a mutex whose waiters give up when their context ends: a
// delivery waiting behind another (or behind a role being put to sleep)
// must not outlive the program it was for. The zero value is unlocked.
type ctxLock struct {
	mu   sync.Mutex
	held bool
	free chan struct{} // closed at the next unlock, for the waiters
}

// lock takes the lock, or returns ctx's error once ctx ends first.
func (l *ctxLock) lock(ctx context.Context) error {
	for {
		l.mu.Lock()
		if !l.held {
			l.held = true
			l.mu.Unlock()
			return nil
		}
		if l.free == nil {
			l.free = make(chan struct{})
		}
		free := l.free
		l.mu.Unlock()
		select {
		case <-free:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// tryLock takes the lock if it is free.
func (l *ctxLock) tryLock() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held {
		return false
	}
	l.held = true
	return true
}

// unlock lets go of the lock and wakes its waiters.
func (l *ctxLock) unlock() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.held = false
	if l.free != nil {
		close(l.free)
		l.free = nil
	}
}
