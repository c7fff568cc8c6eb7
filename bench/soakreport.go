package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"
)

// section writes the soak's figures: each supervisor lifetime, the slopes
// across lifetimes, a sample per minute, and the reconciliation.
func (s *soak) section(began time.Time, drained time.Duration, left int, rc reconciliation) string {
	var b strings.Builder
	bySend := 0
	for _, c := range s.sent {
		if c.Via == "send" {
			bySend++
		}
	}
	fmt.Fprintf(&b, `
Measured %s. A team of `+"`agent-sim`"+` roles left running for %s: a karo handing each task to ashigaru1 and
ashigaru3 (`+"`--delegate`"+`), ashigaru1 crashing every 2 min, ashigaru2 raising a permission dialog 20 s after
each start (answered by the soak through the API, as a person would), ashigaru3 slow (20 s a task), ashigaru4
flooding its terminal at 30 KB/s. A command every 2–5 s, by `+"`shogun send`"+` and by files renamed into
runtime/queue/commands/, half to the karo; %d clients on `+"`/v1/events/stream`"+`; `+"`kill -9`"+` of the
supervisor every %s, then `+"`shogun start`"+` again. Then up to %s for open tasks to close (took %s), and
`+"`shogun stop`"+`. The supervisor is sampled every %s (RSS, fds, threads, processes under it; data/ and
runtime/logs/ sizes). `+"`make soak`"+` runs it longer (`+"`-soak-for`"+`). The machine's 1-minute load average
at the samples: %s.

Each lifetime of the supervisor; slopes are least-squares fits over its samples, per hour (each lifetime
starts low and warms up, so its own slope is mostly its warm-up):

| lifetime | ran | samples | RSS MiB | RSS MiB/h | fds | fds/h | threads | threads/h | processes | roles ready after | team processes left 3 s after kill -9 |
|---|---|---|---|---|---|---|---|---|---|---|---|
`, time.Now().UTC().Format("2006-01-02 15:04 UTC"), s.o.For, s.o.Clients, s.o.KillEvery, s.o.Drain, drained.Round(time.Second), s.o.Sample, loadText(s.lives))
	var all []sample
	for i, l := range s.lives {
		all = append(all, l.Samples...)
		ready, orphans := "not seen", "— (stopped)"
		if l.Ready > 0 {
			ready = l.Ready.Round(time.Second).String()
		}
		if i < len(s.lives)-1 {
			orphans = fmt.Sprint(l.Orphans)
		}
		fmt.Fprintf(&b, "| %d | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", i+1, l.Ended.Sub(l.Began).Round(time.Second), len(l.Samples),
			span(l.Samples, rssOf), fit(l.Samples, rssOf), span(l.Samples, fdsOf), fit(l.Samples, fdsOf),
			span(l.Samples, threadsOf), fit(l.Samples, threadsOf), span(l.Samples, treeOf), ready, orphans)
	}
	_, from, to := steadyLevels(s.lives, rssOf)
	fmt.Fprintf(&b, `
Across lifetimes: each lifetime is read at the same age, %s to %s after its start (half to all of the
shortest lifetime), as the median of its samples there; the slope is the least-squares fit of those levels
against the time they were read, per hour. Warm-ups of equal length then compare like with like, and what
a restart does not reset (a growing history read back at start, files held open) still shows. The target
is judged on this slope; one fit over every sample, which counts each lifetime's warm-up as growth, is
given for comparison.

| what | across lifetimes, per hour | each lifetime at %s–%s | one fit over all samples, per hour | range | target |
|---|---|---|---|---|---|
`, from.Round(time.Second), to.Round(time.Second), from.Round(time.Second), to.Round(time.Second))
	for _, row := range []struct {
		what, unit, target string
		f                  func(sample) float64
	}{
		{"supervisor RSS", " MiB", "≤ +5 MB/h", rssOf},
		{"supervisor fds", "", "flat", fdsOf},
		{"supervisor threads", "", "flat", threadsOf},
		{"processes under the supervisor", "", "", treeOf},
		{"data/", " MiB", "", dataOf},
		{"runtime/logs/", " MiB", "(rotated at 20 MiB × 5 a role)", logsOf},
	} {
		levels, _, _ := steadyLevels(s.lives, row.f)
		across, vals := "—", make([]string, len(levels))
		if k, ok := acrossLifetimes(levels); ok {
			across = fmt.Sprintf("%+.1f%s", k, row.unit)
		}
		for i, l := range levels {
			vals[i] = strconv.FormatFloat(l.Value, 'f', 1, 64)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s%s | %s%s | %s |\n", row.what, across, strings.Join(vals, ", "),
			fit(all, row.f), row.unit, span(all, row.f), row.unit, row.target)
	}
	fmt.Fprintf(&b, "\n%s\n", rssVerdict(s.lives))
	fmt.Fprintf(&b, `
One sample a minute (the last of each):

| minute | lifetime | RSS MiB | fds | threads | processes | data/ MiB | runtime/logs/ MiB |
|---|---|---|---|---|---|---|---|
`)
	last := map[int]sample{}
	lifeOf := map[int]int{}
	maxMinute := -1
	for i, l := range s.lives {
		for _, sm := range l.Samples {
			m := int(sm.At.Sub(began) / time.Minute)
			last[m], lifeOf[m] = sm, i+1
			maxMinute = max(maxMinute, m)
		}
	}
	for m := 0; m <= maxMinute; m++ {
		if sm, ok := last[m]; ok {
			fmt.Fprintf(&b, "| %d | %d | %.1f | %d | %d | %d | %.2f | %.2f |\n", m+1, lifeOf[m], sm.RSS, sm.FDs, sm.Threads, sm.Tree, sm.Data, sm.Logs)
		}
	}
	recorded := countRecords(filepath.Join(s.ws, "soak-records"), `"kind":"dialog"`)
	fmt.Fprintf(&b, `
Every command accounted for, from the history (`+"`store`"+`) and the queue folders after the stop:

| what | count | target |
|---|---|---|
| commands sent (by `+"`shogun send`"+` / by file) | %d (%d / %d) | |
| tasks in the history (the soak's and the karo's parts) | %d, %d closed | |
| lost: sent, no task, not refused, not waiting | %d | 0 |
| doubled: one command id, more than one task | %d | 0 |
| refused into runtime/queue/failed/ | %s | |
| still in runtime/queue/commands/ | %d | |
| open at the end (each with why, below) | %d | explained |
| senders told of a closed task ("notified" once / never / more than once) | %d / %d / %d | all once |
| dialogs answered by the soak / answers that failed / answers the agents recorded | %d / %d / %d | equal |
| `+"`shogun send`"+` failures | %d | |
| history events: duplicate (a command seen again, archived) / rejected / lost delivery / notify not confirmed / stalled | %d / %d / %d / %d / %d | |
| `+"`GET /v1/status`"+` at the samples: p50 / p95 / max | %s | |
| event streams opened / events read | %d / %d | |
| team processes left 3 s after `+"`shogun stop`"+` | %d | 0 |
`, len(s.sent), bySend, len(s.sent)-bySend, rc.Tasks, rc.Closed, len(rc.Lost), len(rc.Doubled), refusedText(rc.Refused),
		len(rc.Waiting), len(rc.Open), rc.WakeupsTyped-len(rc.WakeupsDoubled), len(rc.WakeupsMissing), len(rc.WakeupsDoubled),
		s.answers, len(s.answerErr), recorded, len(s.sendFails),
		s.eventKinds["duplicate"], s.eventKinds["rejected"], s.eventKinds["lost"], s.eventKinds["notify-undelivered"], s.eventKinds["stalled"],
		statusFigures(s.statusTook), s.streams.Load(), s.events.Load(), left)
	list(&b, "Lost", rc.Lost)
	list(&b, "Doubled", rc.Doubled)
	list(&b, "Open at the end, and why", groupByWhy(rc.Open))
	list(&b, "Closed, sender never told", rc.WakeupsMissing)
	list(&b, "Sender told more than once", rc.WakeupsDoubled)
	list(&b, "Dialog answers that failed", s.answerErr)
	list(&b, "`shogun send` failures", s.sendFails)
	return b.String()
}

// rssVerdict says whether the supervisor's RSS across lifetimes met the
// issue's target of at most +5 MB (10^6 bytes) an hour.
func rssVerdict(lives []*lifetime) string {
	levels, _, _ := steadyLevels(lives, rssOf)
	k, ok := acrossLifetimes(levels)
	if !ok {
		return "RSS across lifetimes: fewer than two lifetimes, no slope."
	}
	mb := k * (1 << 20) / 1e6
	if mb <= 5 {
		return fmt.Sprintf("RSS across lifetimes: %+.1f MB/h, within the target of ≤ +5 MB/h.", mb)
	}
	return fmt.Sprintf("RSS across lifetimes: %+.1f MB/h, **over the target of ≤ +5 MB/h**.", mb)
}

// loadText is the lowest, median and highest load average at the samples.
func loadText(lives []*lifetime) string {
	var ls []float64
	for _, l := range lives {
		for _, s := range l.Samples {
			if s.Load > 0 {
				ls = append(ls, s.Load)
			}
		}
	}
	if len(ls) == 0 {
		return "not known"
	}
	sort.Float64s(ls)
	return fmt.Sprintf("%.1f to %.1f, median %.1f (on %d cores)", ls[0], ls[len(ls)-1], medianOf(ls), runtime.NumCPU())
}

func rssOf(s sample) float64     { return s.RSS }
func fdsOf(s sample) float64     { return float64(s.FDs) }
func threadsOf(s sample) float64 { return float64(s.Threads) }
func treeOf(s sample) float64    { return float64(s.Tree) }
func dataOf(s sample) float64    { return s.Data }
func logsOf(s sample) float64    { return s.Logs }

// fit is the slope of f over the samples, per hour, signed.
func fit(ss []sample, f func(sample) float64) string {
	if len(ss) == 0 {
		return "—"
	}
	xs, ys := make([]float64, len(ss)), make([]float64, len(ss))
	for i, s := range ss {
		xs[i], ys[i] = s.At.Sub(ss[0].At).Hours(), f(s)
	}
	k, ok := slope(xs, ys)
	if !ok {
		return "—"
	}
	return fmt.Sprintf("%+.1f", k)
}

// span is the smallest and largest value of f over the samples.
func span(ss []sample, f func(sample) float64) string {
	if len(ss) == 0 {
		return "—"
	}
	lo, hi := f(ss[0]), f(ss[0])
	for _, s := range ss {
		lo, hi = min(lo, f(s)), max(hi, f(s))
	}
	if lo == float64(int64(lo)) && hi == float64(int64(hi)) {
		return fmt.Sprintf("%.0f–%.0f", lo, hi)
	}
	return fmt.Sprintf("%.1f–%.1f", lo, hi)
}

// statusFigures is p50 / p95 / max of ds in milliseconds.
func statusFigures(ds []time.Duration) string {
	if len(ds) == 0 {
		return "—"
	}
	p := percentiles(ds)
	return fmt.Sprintf("%.0f / %.0f / %.0f ms", ms(p[50]), ms(p[95]), ms(p[100]))
}

func refusedText(by map[string]int) string {
	if len(by) == 0 {
		return "0"
	}
	var parts []string
	for why, n := range by {
		parts = append(parts, fmt.Sprintf("%d (%s)", n, why))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

// groupByWhy folds lines "ID rest" with the same rest into one, so that a
// queue stuck behind one task reads as one line.
func groupByWhy(lines []string) []string {
	var order []string
	ids := map[string][]string{}
	for _, l := range lines {
		id, rest, _ := strings.Cut(l, " ")
		if ids[rest] == nil {
			order = append(order, rest)
		}
		ids[rest] = append(ids[rest], id)
	}
	out := make([]string, 0, len(order))
	for _, rest := range order {
		switch n := len(ids[rest]); {
		case n == 1:
			out = append(out, ids[rest][0]+" "+rest)
		case n <= 3:
			out = append(out, strings.Join(ids[rest], ", ")+" "+rest)
		default:
			out = append(out, fmt.Sprintf("%s, %s … %s (%d tasks) %s", ids[rest][0], ids[rest][1], ids[rest][n-1], n, rest))
		}
	}
	return out
}

// list adds a titled list of at most 20 lines, saying how many more there are.
func list(b *strings.Builder, title string, lines []string) {
	if len(lines) == 0 {
		return
	}
	fmt.Fprintf(b, "\n%s (%d):\n\n", title, len(lines))
	for i, l := range lines {
		if i == 20 {
			fmt.Fprintf(b, "- … and %d more\n", len(lines)-20)
			break
		}
		fmt.Fprintf(b, "- %s\n", strings.ReplaceAll(l, "|", "\\|"))
	}
}

// countRecords counts the lines holding want in the agents' record files.
func countRecords(dir, want string) int {
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	n := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err == nil {
			n += strings.Count(string(b), want)
		}
	}
	return n
}
