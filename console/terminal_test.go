package console

import (
	"testing"
	"time"
)

// The views of a flooding role share a few paints a second: one view gets
// two, ten get one each every 2.5 s, and no view waits past the maximum.
func TestFloodFrameSharesPaintsAmongViews(t *testing.T) {
	for _, c := range []struct {
		views int
		want  time.Duration
	}{
		{0, termFloodFrameMin}, {1, 500 * time.Millisecond}, {2, 500 * time.Millisecond},
		{4, time.Second}, {10, 2500 * time.Millisecond}, {64, termFloodFrameMax},
	} {
		if got := floodFrame(c.views); got != c.want {
			t.Errorf("floodFrame(%d) = %v, want %v", c.views, got, c.want)
		}
	}
}
