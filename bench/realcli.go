package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// realCLILatencies is what tools/realcli's TestRealCLILatency writes: per
// CLI, the milliseconds from `shogun send` to delivery and to the report.
type realCLILatencies map[string]struct {
	Delivered []float64 `json:"delivered_ms"`
	Done      []float64 `json:"done_ms"`
	Submits   int       `json:"submits"`
	Tasks     int       `json:"tasks"`
}

// measureRealCLIs runs the real CLIs (installed from npm into the realcli
// cache) against the scripted model of tools/fakemodel under shogun start,
// n tasks each, and reports send → delivered and send → done. The
// measuring team is the end-to-end test's, so it runs as a Go test.
func measureRealCLIs(r *report, n int) error {
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			r.add("Real CLIs against the scripted model", fmt.Sprintf("\nNot measured: %s is not installed (Debian: apt-get install nodejs npm).\n", tool))
			return nil
		}
	}
	dir, err := os.MkdirTemp("", "shogun-bench-realcli-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "latencies.json")
	began := time.Now()
	cmd := exec.Command("go", "test", "-tags", "realcli", "-count=1", "-timeout", "15m", "-run", "^TestRealCLILatency$", "./tools/realcli")
	cmd.Env = append(os.Environ(), "SHOGUN_REALCLI_BENCH_OUT="+out, fmt.Sprintf("SHOGUN_REALCLI_BENCH_TASKS=%d", n))
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go test ./tools/realcli -run TestRealCLILatency: %w\n%s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		return fmt.Errorf("read the measured latencies: %w", err)
	}
	var lat realCLILatencies
	if err := json.Unmarshal(b, &lat); err != nil {
		return fmt.Errorf("read the measured latencies: %w", err)
	}
	clis := make([]string, 0, len(lat))
	for c := range lat {
		clis = append(clis, c)
	}
	sort.Strings(clis)
	var rows strings.Builder
	for _, c := range clis {
		l := lat[c]
		delivered, done := sortedDurations(l.Delivered), sortedDurations(l.Done)
		fmt.Fprintf(&rows, "| %s | %d | %.2f | %.2f s | %.2f s | %.2f s | %.2f s |\n", c, l.Tasks, float64(l.Submits)/float64(max(l.Tasks, 1)),
			quantile(delivered, 0.5).Seconds(), quantile(delivered, 0.9).Seconds(), quantile(done, 0.5).Seconds(), quantile(done, 0.9).Seconds())
	}
	r.add("Real CLIs against the scripted model", fmt.Sprintf(`
Each pinned CLI (installed from npm, see tools/realcli) runs as a role under shogun start, pointed at the scripted model of
tools/fakemodel on 127.0.0.1, in a throwaway home of its own. It is sent %d tasks one after another (the CLIs side by side),
each once the role is idle again (its turn over and its between_tasks keys, typed right after a report, confirmed),
each read by the CLI's own tool, a file written, and the report written through the routes in turn (write, shell, mv, MCP).
Times run from just before `+"`shogun send`"+` to the delivery the screen confirmed and to the recorded report. %.1f s in all.

| CLI | tasks | submits per task | send → delivered p50 | p90 | send → done p50 | p90 |
|---|---|---|---|---|---|---|
%s
Targets: delivered p50 ≤ 1 s, done p50 ≤ 3 s.
`, n, time.Since(began).Seconds(), rows.String()))
	return nil
}

// sortedDurations turns milliseconds into sorted durations, for quantile.
func sortedDurations(ms []float64) []time.Duration {
	ds := make([]time.Duration, len(ms))
	for i, m := range ms {
		ds[i] = time.Duration(m * float64(time.Millisecond))
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds
}
