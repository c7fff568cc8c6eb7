package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/shogun-dev/shogun/store"
)

// searchCase is one search of the measurement, with the filters a person
// would add: words common and rare, a phrase, prefixes, and time windows
// far from the newest tasks (the worst case: most matches are skipped).
type searchCase struct {
	what string
	f    store.TaskFilter
}

func searchCases() []searchCase {
	day := func(s string) time.Time {
		t, err := time.Parse("2006-01-02", s)
		if err != nil {
			panic(err)
		}
		return t
	}
	return []searchCase{
		{"login", store.TaskFilter{Search: "login"}},
		{"the (in nearly every task)", store.TaskFilter{Search: "the"}},
		{`"payment webhook"`, store.TaskFilter{Search: `"payment webhook"`}},
		{"flaky integration test", store.TaskFilter{Search: "flaky integration test"}},
		{`"ticket 4242"`, store.TaskFilter{Search: `"ticket 4242"`}},
		{"timezone (failed reports' details)", store.TaskFilter{Search: "timezone"}},
		{"staging database access", store.TaskFilter{Search: "staging database access"}},
		{"migrat*", store.TaskFilter{Search: "migrat*"}},
		{"zyzzyva (no match)", store.TaskFilter{Search: "zyzzyva"}},
		{"login --role ashigaru3", store.TaskFilter{Search: "login", Role: "ashigaru3"}},
		{"webhook --status failed", store.TaskFilter{Search: "webhook", Status: store.StatusFailed}},
		{"cache --since 2026-09-01 --until 2026-09-08", store.TaskFilter{Search: "cache", Since: day("2026-09-01"), Until: day("2026-09-08")}},
		{`"dark mode" --until 2026-05-15 (oldest weeks)`, store.TaskFilter{Search: `"dark mode"`, Until: day("2026-05-15")}},
		{"re* (a two-letter prefix of very common words)", store.TaskFilter{Search: "re*"}},
		{"--role ashigaru2 --status blocked (no search)", store.TaskFilter{Role: "ashigaru2", Status: store.StatusBlocked}},
	}
}

// measureSearch times `shogun tasks --search` over a history of n tasks:
// the query itself (store.Tasks with the table's limit of 50, in this
// process, after a warm-up), each case many times over, and the whole
// command as a person runs it; and building the index from scratch over
// a history of buildN tasks, as the first open of a history from before
// the index does.
func measureSearch(r *report, h *histories, shogun string, n, buildN int) error {
	ws, err := h.readOnlyWorkspace(shogun, n)
	if err != nil {
		return err
	}
	defer os.RemoveAll(ws)
	db, err := h.historyDB(n)
	if err != nil {
		return err
	}
	st, err := store.Open(db)
	if err != nil {
		return err
	}
	defer st.Close()
	generated := "made by an earlier run (-history-cache)"
	if d, ok := h.took[n]; ok {
		generated = d.Round(time.Second).String()
	}
	cases := searchCases()
	const rounds = 11
	times := make([][]time.Duration, len(cases))
	found := make([]int, len(cases))
	var all []time.Duration
	for round := 0; round <= rounds; round++ {
		for i, c := range cases {
			f := c.f
			f.Limit = 50
			began := time.Now()
			ts, err := st.Tasks(f)
			took := time.Since(began)
			if err != nil {
				return fmt.Errorf("search %s: %w", c.what, err)
			}
			if round == 0 {
				found[i] = len(ts) // the first round warms the cache
				continue
			}
			times[i] = append(times[i], took)
			all = append(all, took)
		}
	}
	var rows strings.Builder
	for i, c := range cases {
		p := percentiles(times[i])
		fmt.Fprintf(&rows, "| `%s` | %d | %s | %s |\n", c.what, found[i], msText(p[50]), msText(p[95]))
	}
	overall := percentiles(all)

	// The command as a person runs it: a new process that loads the
	// configuration, opens the history and prints the table.
	var cli []time.Duration
	for i := 0; i < 11; i++ {
		cmd := exec.Command(shogun, "--quiet", "tasks", "--workspace", ws, "--search", "login page")
		began := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("shogun tasks --search: %v: %s", err, out)
		}
		cli = append(cli, time.Since(began))
	}
	cliP := percentiles(cli)

	if err := st.Close(); err != nil {
		return err
	}
	var size int64
	if fi, err := os.Stat(db); err == nil {
		size = fi.Size()
	}

	// The index from scratch, as Open builds it for an older history, on
	// a copy of its own.
	bws, err := h.workspace(shogun, buildN)
	if err != nil {
		return err
	}
	defer os.RemoveAll(bws)
	bst, err := store.Open(filepath.Join(bws, "data", "shogun.db"))
	if err != nil {
		return err
	}
	began := time.Now()
	if err := bst.RebuildSearchIndex(); err != nil {
		bst.Close()
		return err
	}
	build := time.Since(began)
	if err := bst.Close(); err != nil {
		return err
	}

	r.add("History search", fmt.Sprintf(`
`+"`shogun tasks --search`"+` over %d finished tasks (skills.GenerateHistory, seed 1; the database is %s with its
search index). Each search asks for the newest 50 matches, as the table shows them; %d rounds of every case
after one to warm the cache, in this process (store.Tasks), so the figures are the query itself. Load average at
the end: %s.

| what | measured | target |
|---|---|---|
| search p50, all cases | %s | < 50 ms |
| search p95, all cases | %s | |
| `+"`shogun tasks --search 'login page'`"+`, whole command, p50 | %s | |
| building the index of %d tasks from scratch (what the first open of an older history does) | %s | |
| generating the history of %d tasks, index included (skills.GenerateHistory, once per run) | %s | |

| search | tasks listed | p50 | p95 |
|---|---|---|---|
%s`, n, mib(size), rounds, loadAverage(), msText(overall[50]), msText(overall[95]), msText(cliP[50]), buildN, build.Round(100*time.Millisecond),
		n, generated, rows.String()))
	return nil
}

// measurePrune times the daily pruning of events and log records on a
// history holding a backlog of old events, while another goroutine records
// events as the supervisor does: the longest any batch held the writer,
// and how long the other writer waited.
func measurePrune(r *report, n int) error {
	dir, err := os.MkdirTemp("", "shogun-bench-prune-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	st, err := store.Open(filepath.Join(dir, "shogun.db"))
	if err != nil {
		return err
	}
	defer st.Close()
	old := time.Now().Add(-365 * 24 * time.Hour)
	// The backlog, in batches of 100,000 events a transaction.
	for done := 0; done < n; done += 100000 {
		evs := make([]store.Event, 0, 100000)
		for i := done; i < min(n, done+100000); i++ {
			evs = append(evs, store.Event{At: old.Add(time.Duration(i) * time.Millisecond), Kind: "state", Role: "ashigaru1",
				Message: "ready: the screen shows the prompt again after the last output"})
		}
		if err := st.AddEvents(evs); err != nil {
			return err
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	var (
		wg    sync.WaitGroup
		waits []time.Duration
		werr  error
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			began := time.Now()
			if err := st.AddEvent(store.Event{Kind: "state", Role: "ashigaru2", Message: "busy"}); err != nil {
				werr = err
				return
			}
			waits = append(waits, time.Since(began))
			time.Sleep(5 * time.Millisecond)
		}
	}()
	var holds []time.Duration
	began := time.Now()
	res, err := st.Prune(context.Background(), time.Now().Add(-90*24*time.Hour), store.PruneOptions{
		OnBatch: func(_ int64, hold time.Duration) { holds = append(holds, hold) },
	})
	took := time.Since(began)
	cancel()
	wg.Wait()
	if err != nil {
		return err
	}
	if werr != nil {
		return werr
	}
	w, hp := percentiles(waits), percentiles(holds)
	r.add("Pruning old events", fmt.Sprintf(`
store.Prune (what the supervisor runs daily for data.retain) over %d events older than the cutoff, while another
goroutine records an event every 5 ms, as the supervisor does. Load average at the end: %s (a batch takes about a
millisecond of CPU; the longest ones are the machine's other work).

| what | measured | target |
|---|---|---|
| events removed | %d in %d batches, %s | |
| a batch held the writer, p50 / p95 | %s / %s | |
| longest a batch held the writer | %s | < 50 ms |
| an event recorded meanwhile, p50 / max | %s / %s | |
`, n, loadAverage(), res.Events, res.Batches, took.Round(10*time.Millisecond), msText(hp[50]), msText(hp[95]), msText(res.MaxHold),
		msText(w[50]), msText(w[100])))
	return nil
}

// loadAverage is the one-minute load average, for reading tail latencies.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	if f := strings.Fields(string(b)); len(f) > 0 {
		return f[0]
	}
	return "unknown"
}

// percentiles are the 50th, 95th and 100th percentiles of ds.
func percentiles(ds []time.Duration) map[int]time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	out := map[int]time.Duration{}
	for _, p := range []int{50, 95, 100} {
		if len(s) == 0 {
			continue
		}
		i := min(len(s)-1, (len(s)*p)/100)
		if p == 100 {
			i = len(s) - 1
		}
		out[p] = s[i]
	}
	return out
}

// msText formats a duration in milliseconds.
func msText(d time.Duration) string { return fmt.Sprintf("%.2f ms", ms(d)) }

// mib formats a size in bytes.
func mib(n int64) string { return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20)) }
