package queue

import (
	"sort"
	"time"
)

// Transient failures (a full disk, too many open files, a folder that
// cannot be written) are not the fault of the file being handled: the file
// stays where it is, claimed or not, and is tried again with a growing
// delay. While that goes on, the queue is blocked, and the dashboard and
// status file say on what and why.

// block records that key (a file, a role's task file, a folder) cannot
// make progress because of err. It reports whether that is news (key was
// not blocked), so that the caller logs it once, not at every retry; the
// reason shown is always the latest.
func (q *Queue) block(key string, err error) bool {
	reason := err.Error()
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.blocked == nil {
		q.blocked = map[string]blockage{}
	}
	old, had := q.blocked[key]
	if had && old.reason == reason {
		return false
	}
	since := q.now()
	if had {
		since = old.since
	}
	q.blocked[key] = blockage{reason: reason, since: since}
	q.touched()
	return !had
}

// unblock clears key; it reports whether key was blocked, so that the
// caller can log the recovery.
func (q *Queue) unblock(key string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if _, ok := q.blocked[key]; !ok {
		return false
	}
	delete(q.blocked, key)
	q.touched()
	return true
}

// blockages lists what blocks the queue, oldest first, as "key: reason".
func (q *Queue) blockages() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	keys := make([]string, 0, len(q.blocked))
	for k := range q.blocked {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := q.blocked[keys[i]], q.blocked[keys[j]]
		if !a.since.Equal(b.since) {
			return a.since.Before(b.since)
		}
		return keys[i] < keys[j]
	})
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		out = append(out, k+": "+q.blocked[k].reason)
	}
	return out
}

// blockage is why one thing cannot make progress, and since when.
type blockage struct {
	reason string
	since  time.Time
}

// retryDelay is the wait before the tries-th retry (1-based) of something
// that failed for a transient reason: short at first, so a passing problem
// costs little, then doubling up to retryMax so a lasting one costs nothing.
func retryDelay(tries int) time.Duration {
	d := retryBase
	for i := 1; i < tries && d < retryMax; i++ {
		d *= 2
	}
	return min(d, retryMax)
}

const (
	retryBase = 250 * time.Millisecond
	retryMax  = 10 * time.Second
)
