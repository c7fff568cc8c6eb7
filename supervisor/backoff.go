package supervisor

import (
	"math/rand/v2"
	"time"
)

// RestartBackoff computes restart delays: exponential from Base, capped at Max, with
// ±20 % jitter so that roles crashing together do not restart in lock step.
type RestartBackoff struct {
	Base, Max time.Duration
	// Jitter returns a value in [0, 1); nil means math/rand.
	Jitter func() float64
}

// Delay returns the wait before restart number n (1 for the first restart).
func (b RestartBackoff) Delay(n int) time.Duration {
	if n < 1 {
		n = 1
	}
	d := b.Base
	for i := 1; i < n && d < b.Max; i++ {
		d *= 2
	}
	d = min(d, b.Max)
	j := rand.Float64
	if b.Jitter != nil {
		j = b.Jitter
	}
	return time.Duration(float64(d) * (0.8 + 0.4*j()))
}

// restartWindow counts restarts inside a sliding window; more than max of
// them makes a role fatal.
type restartWindow struct {
	window time.Duration
	times  []time.Time
}

// add records a restart at now and returns how many fall inside the window.
func (w *restartWindow) add(now time.Time) int {
	keep := w.times[:0]
	for _, t := range w.times {
		if now.Sub(t) < w.window {
			keep = append(keep, t)
		}
	}
	w.times = append(keep, now)
	return len(w.times)
}
