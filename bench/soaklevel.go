package main

import (
	"sort"
	"time"
)

// level is one lifetime's steady value of a figure: the median of its
// samples inside the common age window, at the mean time of those samples
// (hours since the soak's first lifetime began).
type level struct {
	Hours, Value float64
}

// steadyLevels reads every lifetime at the same age: from half to all of
// the age of the shortest lifetime's last sample. A supervisor warms up
// after each start (caches, buffers, the team's screens filling), so a fit
// over all samples of the soak slopes upward with every restart even when
// nothing leaks; the levels at equal ages do not, and a leak that survives
// restarts (data read back at start, a growing history) still shows in
// them. A lifetime with no sample in the window is read at the sample
// nearest the window's end; one with no samples is left out.
func steadyLevels(lives []*lifetime, f func(sample) float64) (levels []level, from, to time.Duration) {
	to = -1
	for _, l := range lives {
		if n := len(l.Samples); n > 0 {
			if age := l.Samples[n-1].At.Sub(l.Began); to < 0 || age < to {
				to = age
			}
		}
	}
	if to < 0 {
		return nil, 0, 0
	}
	from = to / 2
	origin := lives[0].Began
	for _, l := range lives {
		var in []sample
		nearest := -1
		for i, s := range l.Samples {
			age := s.At.Sub(l.Began)
			if age >= from && age <= to {
				in = append(in, s)
			}
			if nearest < 0 || absDur(age-to) < absDur(l.Samples[nearest].At.Sub(l.Began)-to) {
				nearest = i
			}
		}
		if nearest < 0 {
			continue
		}
		if len(in) == 0 {
			in = l.Samples[nearest : nearest+1]
		}
		vs := make([]float64, len(in))
		var hours float64
		for i, s := range in {
			vs[i] = f(s)
			hours += s.At.Sub(origin).Hours()
		}
		levels = append(levels, level{Hours: hours / float64(len(in)), Value: medianOf(vs)})
	}
	return levels, from, to
}

// acrossLifetimes is the least-squares slope of the lifetimes' steady
// levels against time, per hour; false with fewer than two lifetimes.
func acrossLifetimes(levels []level) (float64, bool) {
	xs, ys := make([]float64, len(levels)), make([]float64, len(levels))
	for i, l := range levels {
		xs[i], ys[i] = l.Hours, l.Value
	}
	return slope(xs, ys)
}

func medianOf(vs []float64) float64 {
	s := append([]float64(nil), vs...)
	sort.Float64s(s)
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}
