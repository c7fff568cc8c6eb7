package main

import (
	"math"
	"strings"
	"testing"
	"time"
)

// lives builds lifetimes of the given lengths back to back, sampled every
// 30 s, with RSS from rss(hours since the soak began, age in the lifetime).
func lives(lengths []time.Duration, rss func(h float64, age time.Duration) float64) []*lifetime {
	at := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	origin := at
	var out []*lifetime
	for _, n := range lengths {
		l := &lifetime{Began: at, Ended: at.Add(n)}
		for age := 30 * time.Second; age <= n; age += 30 * time.Second {
			t := at.Add(age)
			l.Samples = append(l.Samples, sample{At: t, RSS: rss(t.Sub(origin).Hours(), age), FDs: 42, Threads: 15})
		}
		out = append(out, l)
		at = at.Add(n + 5*time.Second) // the restart
	}
	return out
}

// warmUp is the soak's supervisor after a start: 70 MiB, rising to 79 MiB
// over its first minutes.
func warmUp(age time.Duration) float64 {
	return 70 + 9*(1-math.Exp(-age.Minutes()/2))
}

func TestAcrossLifetimesTellsAWarmUpFromALeak(t *testing.T) {
	ten, five := 10*time.Minute, 5*time.Minute
	for _, c := range []struct {
		name    string
		lengths []time.Duration
		rss     func(h float64, age time.Duration) float64
		want    float64 // MiB/h across lifetimes, ±1
	}{
		{"flat lifetimes with warm-ups", []time.Duration{ten, ten, ten, ten},
			func(h float64, age time.Duration) float64 { return warmUp(age) }, 0},
		{"flat, the last lifetime cut short in its warm-up", []time.Duration{ten, ten, ten, five},
			func(h float64, age time.Duration) float64 { return warmUp(age) }, 0},
		{"flat, each lifetime starting a little apart", []time.Duration{five, five, five},
			func(h float64, age time.Duration) float64 {
				return warmUp(age) + []float64{0.1, 1.0, 0.2}[int(h*60/5.1)]
			}, 0},
		{"a leak of 6 MiB/h that survives restarts", []time.Duration{ten, ten, ten, ten},
			func(h float64, age time.Duration) float64 { return warmUp(age) + 6*h }, 6},
		{"a leak of 12 MiB/h under a cut-short lifetime", []time.Duration{ten, ten, ten, five},
			func(h float64, age time.Duration) float64 { return warmUp(age) + 12*h }, 12},
		{"growth within each lifetime that a restart resets", []time.Duration{ten, ten, ten},
			func(h float64, age time.Duration) float64 { return 70 + 20*age.Hours() }, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			ls := lives(c.lengths, c.rss)
			levels, from, to := steadyLevels(ls, rssOf)
			if len(levels) != len(c.lengths) {
				t.Fatalf("%d levels for %d lifetimes", len(levels), len(c.lengths))
			}
			shortest := c.lengths[0]
			for _, n := range c.lengths {
				shortest = min(shortest, n)
			}
			if to != shortest || from != shortest/2 {
				t.Errorf("window %s–%s, want half to all of the shortest lifetime (%s)", from, to, shortest)
			}
			got, ok := acrossLifetimes(levels)
			if !ok || math.Abs(got-c.want) > 1 {
				t.Errorf("across lifetimes %+.2f MiB/h (%v), want %+.1f; levels %v", got, ok, c.want, levels)
			}
		})
	}
}

func TestAcrossLifetimesNeedsTwoLifetimes(t *testing.T) {
	one := lives([]time.Duration{10 * time.Minute}, func(float64, time.Duration) float64 { return 70 })
	if k, ok := acrossLifetimes(mustLevels(t, one)); ok {
		t.Errorf("one lifetime gave a slope across lifetimes: %v", k)
	}
	if levels, _, _ := steadyLevels([]*lifetime{{}, {}}, rssOf); len(levels) != 0 {
		t.Errorf("lifetimes without samples gave levels %v", levels)
	}
}

func mustLevels(t *testing.T, ls []*lifetime) []level {
	t.Helper()
	levels, _, _ := steadyLevels(ls, rssOf)
	return levels
}

// The section states the across-lifetimes slope of the steady levels, not
// the one fit that counts every warm-up as growth.
func TestSoakSectionJudgesRSSOnTheSteadyLevels(t *testing.T) {
	s := &soak{o: soakOptions{For: 30 * time.Minute, KillEvery: 10 * time.Minute, Sample: 30 * time.Second},
		lives: lives([]time.Duration{10 * time.Minute, 10 * time.Minute, 10 * time.Minute},
			func(h float64, age time.Duration) float64 { return warmUp(age) })}
	got := s.section(s.lives[0].Began, time.Minute, 0, reconciliation{})
	var row string
	for _, l := range strings.Split(got, "\n") {
		if strings.HasPrefix(l, "| supervisor RSS |") {
			row = l
		}
	}
	if !strings.HasPrefix(row, "| supervisor RSS | +0.0 MiB | 78.") || !strings.Contains(got, "each lifetime at 5m0s–10m0s") {
		t.Fatalf("RSS across lifetimes:\n%s\nin:\n%s", row, got)
	}
}

// The verdict is in MB (10^6 bytes) an hour, as the target is: 4.6 MiB/h
// is 4.8 MB/h and within it, 6 MiB/h is 6.3 MB/h and over it.
func TestRSSVerdictIsJudgedAcrossLifetimes(t *testing.T) {
	for _, c := range []struct {
		leak float64 // MiB/h
		want string
	}{
		{0, "RSS across lifetimes: +0.0 MB/h, within the target of ≤ +5 MB/h."},
		{4.6, "RSS across lifetimes: +4.8 MB/h, within the target of ≤ +5 MB/h."},
		{6, "RSS across lifetimes: +6.3 MB/h, **over the target of ≤ +5 MB/h**."},
	} {
		ls := lives([]time.Duration{10 * time.Minute, 10 * time.Minute, 10 * time.Minute},
			func(h float64, age time.Duration) float64 { return warmUp(age) + c.leak*h })
		if got := rssVerdict(ls); got != c.want {
			t.Errorf("leak %.1f MiB/h: %q, want %q", c.leak, got, c.want)
		}
	}
}
