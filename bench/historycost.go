package main

import (
	"bytes"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/shogun-dev/shogun/queue"
	"github.com/shogun-dev/shogun/skills"
	"github.com/shogun-dev/shogun/store"
	"github.com/shogun-dev/shogun/workspace"
)

// historyWorkers are the roles of the history measurements: two agent-sim
// workers, named as the generated history's roles are, so that their
// tasks join its groups.
const historyWorkers = `roles:
  - id: ashigaru1
    prompt_path: roles/ashigaru.md
    command: {exec: "${SHOGUN_EXE}", args: ["agent-sim", "--work-time", "200ms"]}
    cli: generic
    ready_pattern: "› "
    busy_pattern: "esc to interrupt"
    submit_delay: 0s
  - id: ashigaru2
    prompt_path: roles/ashigaru.md
    command: {exec: "${SHOGUN_EXE}", args: ["agent-sim", "--work-time", "200ms"]}
    cli: generic
    ready_pattern: "› "
    busy_pattern: "esc to interrupt"
    submit_delay: 0s
`

// historyRun is what one history size measured.
type historyRun struct {
	tasks       int
	generated   time.Duration
	scans       []scanRun // first scan, re-scan with nothing new, then fullRuns of --full
	cpu         float64   // supervisor CPU seconds during the steady work
	hwm         int64     // supervisor peak RSS, KiB
	fed, done   int
	steadyWall  time.Duration
	candidates  string
	firstResult string
}

type scanRun struct {
	took time.Duration
	rss  int64 // KiB
}

// fullRuns is how many times --full runs on each history: the table shows
// their median (and range), since one run was at the mercy of how fast
// the machine happened to be in that minute.
const fullRuns = 3

// fullSummary is the median time of the --full runs, their range, and
// their highest peak RSS.
func (run historyRun) fullSummary() (mid, lo, hi time.Duration, rss int64) {
	var took []time.Duration
	for _, s := range run.scans[2:] {
		took = append(took, s.took)
		rss = max(rss, s.rss)
	}
	return median(took), slices.Min(took), slices.Max(took), rss
}

// measureHistory measures what a long history costs (issue 13): skills
// scans over histories of each size (first scan, re-scan with nothing new,
// --full rebuild), and the supervisor's CPU and peak RSS during the same
// steady work (two agent-sim workers fed one command every 0.4 s for
// steady) on an empty history and on each size. Each history is
// generated once (skills.GenerateHistory, seed 1) and scanned before the
// supervisor starts, as a workspace that has run for a year has been.
func measureHistory(r *report, h *histories, shogun string, sizes []int, steady time.Duration) error {
	var runs []historyRun
	for _, n := range append([]int{0}, sizes...) {
		fmt.Fprintf(os.Stderr, "bench: history of %d finished tasks …\n", n)
		run, err := historyCost(h, shogun, n, steady)
		if err != nil {
			return fmt.Errorf("%d tasks: %w", n, err)
		}
		runs = append(runs, run)
	}
	base := runs[0]
	var b strings.Builder
	fmt.Fprintf(&b, `
Histories made by skills.GenerateHistory (seed 1) in a workspace's database, then %s over them: the first scan
(no mining state yet: everything is mined and written), a re-scan with nothing new, and %s (a rebuild of the
mining state from the history, right after the re-scan: it mines everything again but writes only what differs from the
stored state, here next to nothing; texts whose sources did not change are kept). --full runs %d times: the median, and
the range in brackets.

| finished tasks | generated in | first scan | re-scan | --full | peak RSS (first / re-scan / --full) | target |
|---|---|---|---|---|---|---|
`, "`shogun skills scan`", "`shogun skills scan --full`", fullRuns)
	for _, run := range runs[1:] {
		target := ""
		if run.tasks >= 1_000_000 {
			target = "--full < 10 s, < 256 MiB; re-scan < 1 s"
		} else if run.tasks >= 100_000 {
			target = "first < 5 s"
		}
		med, lo, hi, fullRSS := run.fullSummary()
		fmt.Fprintf(&b, "| %d | %.1f s | %.2f s | %.2f s | %.2f s (%.2f–%.2f) | %.0f / %.0f / %.0f MiB | %s |\n", run.tasks,
			run.generated.Seconds(), run.scans[0].took.Seconds(), run.scans[1].took.Seconds(), med.Seconds(), lo.Seconds(), hi.Seconds(),
			kibToMiB(run.scans[0].rss), kibToMiB(run.scans[1].rss), kibToMiB(fullRSS), target)
	}
	for _, run := range runs[1:] {
		fmt.Fprintf(&b, "\n%d tasks: %s\n", run.tasks, run.candidates)
	}
	fmt.Fprintf(&b, `
Steady work on each history: %s with two %s workers (work time 200 ms), fed one generated command (seed 2: work like
the history's) every 0.4 s for %s, alternating between them; the supervisor's CPU from the first command until every task
is done and one more automatic skills scan has had time to run, and its peak RSS (VmHWM, start-up included). The automatic
scan after reports is incremental: it reads what the new reports changed.

| history | tasks done | supervisor CPU | ratio | peak RSS | ratio | target |
|---|---|---|---|---|---|---|
`, "`shogun start`", "`agent-sim`", steady)
	for _, run := range runs {
		name := "empty"
		if run.tasks > 0 {
			name = fmt.Sprintf("%d finished tasks", run.tasks)
		}
		target := "(baseline)"
		if run.tasks > 0 {
			target = "≤ 2× empty"
		}
		fmt.Fprintf(&b, "| %s | %d of %d | %.2f s | %.2f | %.1f MiB | %.2f | %s |\n", name, run.done, run.fed, run.cpu,
			run.cpu/base.cpu, kibToMiB(run.hwm), float64(run.hwm)/float64(base.hwm), target)
	}
	r.add("History cost: skills scans and steady work on a long history", b.String())
	return nil
}

func kibToMiB(kib int64) float64 { return float64(kib) / 1024 }

// historyCost makes a workspace with a history of n finished tasks, scans
// it, and measures the steady work on it.
func historyCost(h *histories, shogun string, n int, steady time.Duration) (historyRun, error) {
	run := historyRun{tasks: n}
	ws, err := benchWorkspace(shogun, historyWorkers)
	if err != nil {
		return run, err
	}
	defer os.RemoveAll(ws)
	if n > 0 {
		// The run's shared history (made once, with the search
		// measurement), copied: the scans and the work change it.
		src, err := h.historyDB(n)
		if err != nil {
			return run, err
		}
		run.generated = h.took[n]
		if err := copyFile(src, filepath.Join(ws, "data", "shogun.db")); err != nil {
			return run, err
		}
		scans := [][]string{nil, nil}
		for range fullRuns {
			scans = append(scans, []string{"--full"})
		}
		for _, args := range scans {
			cmd := exec.Command(shogun, append([]string{"--quiet", "skills", "scan", "--workspace", ws}, args...)...)
			took, hwm, out, err := runMeasured(cmd)
			if err != nil {
				return run, fmt.Errorf("scan %v: %v: %s", args, err, out)
			}
			run.scans = append(run.scans, scanRun{took: took, rss: hwm})
			if run.candidates == "" {
				first, _, _ := strings.Cut(string(out), "\n")
				run.candidates = first
			}
		}
	}
	cpu, hwm, fed, done, wall, err := steadyWork(shogun, ws, steady)
	run.cpu, run.hwm, run.fed, run.done, run.steadyWall = cpu, hwm, fed, done, wall
	return run, err
}

// steadyWork starts the supervisor on ws and feeds its two workers one
// command every 0.4 s for d.
func steadyWork(shogun, ws string, d time.Duration) (cpu float64, hwm int64, fed, done int, wall time.Duration, err error) {
	cmd, stop, err := supervise(shogun, ws)
	if err != nil {
		return 0, 0, 0, 0, 0, err
	}
	defer stop()
	time.Sleep(3 * time.Second) // roles ready, startup prompts typed
	db, err := sql.Open("sqlite", "file:"+filepath.Join(ws, "data", "shogun.db")+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		return 0, 0, 0, 0, 0, err
	}
	defer db.Close()
	var maxSeq int64
	if err := db.QueryRow(`SELECT COALESCE(MAX(seq), 0) FROM tasks`).Scan(&maxSeq); err != nil {
		return 0, 0, 0, 0, 0, err
	}
	pid := cmd.Process.Pid
	cpu0, err := cpuTicks(pid)
	if err != nil {
		return 0, 0, 0, 0, 0, err
	}
	began := time.Now()
	work := skills.SyntheticTasks(int(d/(400*time.Millisecond))+1, 2, time.Now())
	tick := time.NewTicker(400 * time.Millisecond)
	for i := 0; time.Since(began) < d && i < len(work); i++ {
		to := fmt.Sprintf("ashigaru%d", i%2+1)
		if err := dropWork(ws, i, to, work[i]); err != nil {
			tick.Stop()
			return 0, 0, 0, 0, 0, err
		}
		fed++
		<-tick.C
	}
	tick.Stop()
	err = waitFor(began, d+2*time.Minute, 200*time.Millisecond, func() (bool, string, error) {
		err := db.QueryRow(`SELECT COUNT(*) FROM tasks WHERE seq > ? AND status IN ('done', 'failed', 'blocked')`, maxSeq).Scan(&done)
		return done >= fed, fmt.Sprintf("%d of %d tasks done", done, fed), err
	})
	if err != nil {
		return 0, 0, 0, 0, 0, err
	}
	// The last reports start one more automatic scan, at most 5 s after
	// the one before.
	time.Sleep(6 * time.Second)
	cpu1, err := cpuTicks(pid)
	if err != nil {
		return 0, 0, 0, 0, 0, err
	}
	_, hwm, err = memory(pid)
	if err != nil {
		return 0, 0, 0, 0, 0, err
	}
	const hz = 100 // USER_HZ on Linux
	return float64(cpu1-cpu0) / hz, hwm, fed, done, time.Since(began), nil
}

// dropWork writes a generated task as a command file, the careful way.
func dropWork(ws string, i int, to string, t store.FinishedTaskRecord) error {
	b, err := yaml.Marshal(queue.Command{ID: fmt.Sprintf("work-%05d", i), To: to, Title: t.Title, Body: t.Body, Tags: t.Tags})
	if err != nil {
		return err
	}
	dir := workspace.New(ws).Commands()
	name := fmt.Sprintf("w%05d.yaml", i)
	tmp := filepath.Join(dir, "."+name+".tmp")
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, name))
}

// runMeasured runs cmd and returns how long it took, its peak RSS in KiB
// (VmHWM, read every few milliseconds while it runs: the rusage of a
// child can count pages of the parent it was cloned from) and its output.
func runMeasured(cmd *exec.Cmd) (time.Duration, int64, []byte, error) {
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	began := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, 0, nil, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var hwm int64
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			return time.Since(began), hwm, out.Bytes(), err
		case <-tick.C:
			if _, h, err := memory(cmd.Process.Pid); err == nil {
				hwm = max(hwm, h)
			}
		}
	}
}
