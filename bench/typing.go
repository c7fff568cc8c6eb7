package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/shogun-dev/shogun/store"
)

// measureTyping delivers n tasks to agent-sim roles whose paste windows are
// drawn at random between 0 and 600 ms while submit_delay stays 100 ms: most
// first submits land inside the window and become newlines. It checks the
// typing promise from the agents' own records: every task the history calls
// delivered was really received, and (nearly) every task is delivered in the
// end, at the price of some extra delay.
func measureTyping(r *report, shogun string, roles, n int, seed uint64) error {
	rng := rand.New(rand.NewPCG(seed, 1))
	dir, err := os.MkdirTemp("", "shogun-bench-typing-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	windows := make([]time.Duration, roles)
	var b strings.Builder
	b.WriteString("roles:\n")
	for i := range roles {
		windows[i] = time.Duration(rng.IntN(601)) * time.Millisecond
		window := windows[i].String()
		if windows[i] == 0 {
			window = "-1ms" // agent-sim's 0 is its default window; -1ms is none
		}
		fmt.Fprintf(&b, `  - id: paste%d
    prompt_path: roles/ashigaru.md
    command: {exec: "${SHOGUN_EXE}", args: ["agent-sim", "--work-time", "0s", "--paste-window", %q, "--record", %q]}
    cli: generic
    ready_pattern: "› "
    busy_pattern: "esc to interrupt"
    input_marker: "›"
    submit_delay: 100ms
    stop: {keys: "/exit\r", timeout: 5s}
`, i, window, filepath.Join(dir, fmt.Sprintf("paste%d.jsonl", i)))
	}
	ws, err := benchWorkspace(shogun, b.String())
	if err != nil {
		return err
	}
	defer os.RemoveAll(ws)
	_, stop, err := supervise(shogun, ws)
	if err != nil {
		return err
	}
	stopped := false
	defer func() {
		if !stopped {
			stop()
		}
	}()
	time.Sleep(3 * time.Second)
	began := time.Now()
	for i := 0; i < n; i++ {
		if err := dropCommand(ws, i, fmt.Sprintf("paste%d", i%roles)); err != nil {
			return err
		}
	}
	var tasks []store.Task
	if err := waitFor(began, 8*time.Minute, 200*time.Millisecond, func() (bool, string, error) {
		var err error
		tasks, err = allTasks(ws)
		settled := 0
		for _, t := range tasks {
			if t.Status == store.StatusDone || t.Status == store.StatusUndelivered {
				settled++
			}
		}
		return settled >= n, fmt.Sprintf("%d of %d tasks settled", settled, n), err
	}); err != nil {
		return err
	}
	took := time.Since(began)
	delays := submitDelays(shogun, ws)
	stop()
	stopped = true

	received := map[string]bool{}
	for i := range roles {
		ids, err := receivedTasks(filepath.Join(dir, fmt.Sprintf("paste%d.jsonl", i)))
		if err != nil {
			return err
		}
		for _, id := range ids {
			received[id] = true
		}
	}
	var claimed, truthful, done, submits int
	var extra []time.Duration
	for _, t := range tasks {
		if !t.DeliveredAt.IsZero() || t.Status == store.StatusDone {
			claimed++
			if received[t.ID] {
				truthful++
			}
		}
		if t.Status == store.StatusDone {
			done++
		}
		submits += t.Submits
		if !t.DeliveredAt.IsZero() {
			// Beyond the configured submit delay, what getting the task
			// through cost: the extra pauses and submits.
			extra = append(extra, t.DeliveredAt.Sub(t.AssignedAt)-100*time.Millisecond)
		}
	}
	sort.Slice(extra, func(i, j int) bool { return extra[i] < extra[j] })
	pct := func(a, b int) float64 {
		if b == 0 {
			return 0
		}
		return 100 * float64(a) / float64(b)
	}
	var wins []string
	for i, w := range windows {
		wins = append(wins, fmt.Sprintf("%s→%s", w, delays[fmt.Sprintf("paste%d", i)]))
	}
	r.add("Typing truth under paste windows", fmt.Sprintf(`
%d tasks to %d agent-sim roles whose paste windows are random in 0–600 ms (seed %d), submit_delay 100 ms, so most
first submits become newlines in the composer. "Really received" is checked against each agent's own record of the task
files it read. %.1f s in all.

| what | measured | target |
|---|---|---|
| tasks marked delivered that the agent really received | %d of %d (%.1f %%) | 100 %% |
| tasks delivered and done in the end | %d of %d (%.1f %%) | ≥ 99 %% |
| submit keys per task | %.2f | |
| extra delay to delivery, median / p90 | %.0f ms / %.0f ms | |

Paste window → submit delay the role ended with: %s.
`, n, roles, seed, took.Seconds(), truthful, claimed, pct(truthful, claimed), done, n, pct(done, n),
		float64(submits)/float64(max(len(tasks), 1)), ms(quantile(extra, 0.5)), ms(quantile(extra, 0.9)), strings.Join(wins, ", ")))
	if truthful != claimed {
		return fmt.Errorf("%d tasks marked delivered were never received by their agent", claimed-truthful)
	}
	return nil
}

// allTasks reads every task of the workspace's history.
func allTasks(ws string) ([]store.Task, error) {
	db := filepath.Join(ws, "data", "shogun.db")
	if _, err := os.Stat(db); err != nil {
		return nil, nil
	}
	st, err := store.Open(db)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	return st.Tasks(store.TaskFilter{})
}

// receivedTasks lists the task ids an agent-sim record says it worked on.
func receivedTasks(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, line := range strings.Split(string(b), "\n") {
		var rec struct {
			Kind   string `json:"kind"`
			TaskID string `json:"task_id"`
		}
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Kind == "task" {
			ids = append(ids, rec.TaskID)
		}
	}
	return ids, nil
}

// submitDelays asks the running supervisor for each role's submit delay.
func submitDelays(shogun, ws string) map[string]time.Duration {
	out, err := exec.Command(shogun, "status", "--json", "--workspace", ws).Output()
	delays := map[string]time.Duration{}
	if err != nil {
		return delays
	}
	var st struct {
		Roles []struct {
			ID            string `json:"id"`
			SubmitDelayMS int64  `json:"submit_delay_ms"`
		} `json:"roles"`
	}
	if json.Unmarshal(out, &st) == nil {
		for _, r := range st.Roles {
			delays[r.ID] = time.Duration(r.SubmitDelayMS) * time.Millisecond
		}
	}
	return delays
}

// quantile picks the q-quantile of sorted durations.
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[int(q*float64(len(sorted)-1))]
}
