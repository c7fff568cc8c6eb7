//go:build race

package skills

// raceEnabled: the race detector slows the store's work several times, so
// the largest tests take smaller histories.
const raceEnabled = true
