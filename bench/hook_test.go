package main

import (
	"testing"
	"time"
)

func TestHookQuantilesAreNearestRank(t *testing.T) {
	// 1..300 ms, shuffled: the p99 of 300 samples is the 297th, so the
	// three slowest calls are what the target is not held to.
	var ds []time.Duration
	for i := 300; i >= 1; i-- {
		ds = append(ds, time.Duration((i*7)%300+1)*time.Millisecond)
	}
	got := hookQuantiles(ds)
	want := [4]time.Duration{150 * time.Millisecond, 270 * time.Millisecond, 297 * time.Millisecond, 300 * time.Millisecond}
	if got != want {
		t.Errorf("hookQuantiles = %v, want %v", got, want)
	}
	// One slow call in a short run is its p99: a run too short to tell is
	// not reported as fast.
	if q := hookQuantiles([]time.Duration{time.Millisecond, time.Millisecond, time.Second}); q[2] != time.Second {
		t.Errorf("p99 of 3 samples with one slow = %v, want 1s", q[2])
	}
	if q := hookQuantiles(nil); q != [4]time.Duration{} {
		t.Errorf("no samples: %v, want zeros", q)
	}
}
