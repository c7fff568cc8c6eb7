package agentsim

import (
	"context"
	"fmt"
	"time"
)

// floodBatch bounds one write, so the agent's own output is never held back
// for long behind the flood.
const floodBatch = 64 << 10

var floodWords = []string{
	"compiling", "module", "shogun", "karo", "ashigaru", "queue", "report",
	"analysing", "src/login.tsx", "tests", "passed", "refactor", "diff",
	"+42", "-17", "warning:", "lint", "ok", "render", "token", "cache",
}

// flood writes about rate bytes per second of varied printable lines to s until
// ctx is done or the terminal is gone.
func flood(ctx context.Context, s *screen, rate int) {
	start := time.Now()
	var written float64
	var seq int
	var buf []byte
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for ctx.Err() == nil {
		want := float64(rate)*time.Since(start).Seconds() - written
		if want < 1 {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			continue
		}
		buf = buf[:0]
		for float64(len(buf)) < want && len(buf) < floodBatch {
			seq++
			buf = fmt.Appendf(buf, "[flood %07d]", seq)
			for i := range 2 + seq%9 {
				buf = append(buf, ' ')
				buf = append(buf, floodWords[(seq*7+i*3)%len(floodWords)]...)
			}
			buf = append(buf, "\r\n"...)
		}
		if err := s.printRaw(buf); err != nil {
			return
		}
		written += float64(len(buf))
	}
}
