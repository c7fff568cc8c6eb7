package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/shogun-dev/shogun/store"
)

// unmarkedWindows are the paste windows of the typing measurement's roles
// without an input marker (cli: generic with no input_marker), which share
// its unmarked tasks in turn: such a role has only the text leaving the rows
// above the cursor to tell a submit from a newline.
var unmarkedWindows = []time.Duration{0, 200 * time.Millisecond, 400 * time.Millisecond, 600 * time.Millisecond}

// typingRole is one agent-sim role of the typing measurement.
type typingRole struct {
	id     string
	window time.Duration // the agent's paste window; 0 is none
	marker string        // the role's input_marker; "" is none
}

// measureTyping delivers n tasks to agent-sim roles with an input marker
// whose paste windows are drawn at random between 0 and 600 ms, and unmarked
// tasks to roles without one whose windows are unmarkedWindows, while
// submit_delay stays 100 ms: most first submits land inside the window and
// become newlines. It checks the typing promise from the agents' own
// records: every task the history calls delivered was taken by its agent
// before it was marked so, and (nearly) every task is delivered in the
// end, at the price of some extra delay.
func measureTyping(r *report, shogun string, roles, n, unmarked int, seed uint64) error {
	rng := rand.New(rand.NewPCG(seed, 1))
	dir, err := os.MkdirTemp("", "shogun-bench-typing-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	var team []typingRole
	for i := range roles {
		team = append(team, typingRole{id: fmt.Sprintf("paste%d", i), window: time.Duration(rng.IntN(601)) * time.Millisecond, marker: "›"})
	}
	for i, w := range unmarkedWindows {
		team = append(team, typingRole{id: fmt.Sprintf("plain%d", i), window: w})
	}
	var b strings.Builder
	b.WriteString("roles:\n")
	for _, tr := range team {
		window := tr.window.String()
		if tr.window == 0 {
			window = "-1ms" // agent-sim's 0 is its default window; -1ms is none
		}
		fmt.Fprintf(&b, `  - id: %s
    prompt_path: roles/ashigaru.md
    command: {exec: "${SHOGUN_EXE}", args: ["agent-sim", "--work-time", "0s", "--paste-window", %q, "--record", %q]}
    cli: generic
    ready_pattern: "› "
    busy_pattern: "esc to interrupt"
    submit_delay: 100ms
    stop: {keys: "/exit\r", timeout: 5s}
`, tr.id, window, filepath.Join(dir, tr.id+".jsonl"))
		if tr.marker != "" {
			fmt.Fprintf(&b, "    input_marker: %q\n", tr.marker)
		}
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
		if err := dropCommand(ws, i, team[i%roles].id); err != nil {
			return err
		}
	}
	for i := 0; i < unmarked; i++ {
		if err := dropCommand(ws, n+i, team[roles+i%len(unmarkedWindows)].id); err != nil {
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
		return settled >= n+unmarked, fmt.Sprintf("%d of %d tasks settled", settled, n+unmarked), err
	}); err != nil {
		return err
	}
	took := time.Since(began)
	delays := submitDelays(shogun, ws)
	stop()
	stopped = true

	// When each agent started each task, by its own record.
	taken := map[string]time.Time{}
	for _, tr := range team {
		if err := receivedTasks(filepath.Join(dir, tr.id+".jsonl"), taken); err != nil {
			return err
		}
	}
	marked := map[string]bool{}
	for _, tr := range team {
		marked[tr.id] = tr.marker != ""
	}
	var with, without typingFigures
	for _, t := range tasks {
		f := &without
		if marked[t.Role] {
			f = &with
		}
		f.add(t, taken)
	}
	var wins, plain []string
	for _, tr := range team {
		w := fmt.Sprintf("%s→%s", tr.window, delays[tr.id])
		if tr.marker != "" {
			wins = append(wins, w)
		} else {
			plain = append(plain, w)
		}
	}
	r.add("Typing truth under paste windows", fmt.Sprintf(`
%d tasks to %d agent-sim roles with an input marker (`+"`›`"+`) whose paste windows are random in 0–600 ms (seed %d), and
%d tasks to %d roles without one (cli: generic, no input_marker) whose windows are 0, 200, 400 and 600 ms;
submit_delay 100 ms, so most first submits become newlines in the composer. "Really taken" is checked against each agent's
own record of the task files it read: it started the task before the history marked it delivered. %.1f s in all.

| what | with a marker | without a marker | target |
|---|---|---|---|
%s
Paste window → submit delay the role ended with: with a marker %s; without one %s.
`, n, roles, seed, unmarked, len(unmarkedWindows), took.Seconds(), typingRows(with, without, n, unmarked),
		strings.Join(wins, ", "), strings.Join(plain, ", ")))
	if bad := with.claimed - with.truthful + without.claimed - without.truthful; bad > 0 {
		return fmt.Errorf("%d tasks marked delivered had not been taken by their agent", bad)
	}
	return nil
}

// typingFigures sums the typing measurement's tasks of one kind of role.
type typingFigures struct {
	claimed  int             // marked delivered, or done
	truthful int             // of those, taken by the agent before it was marked delivered, at the first attempt
	done     int             // done in the end
	submits  int             // submit keys typed
	tasks    int             // all of them
	extra    []time.Duration // beyond the submit delay, what getting each delivered task through cost
}

func (f *typingFigures) add(t store.Task, taken map[string]time.Time) {
	f.tasks++
	f.submits += t.Submits
	at, ok := taken[t.ID]
	if !t.DeliveredAt.IsZero() {
		f.claimed++
		// Nothing here loses a turn, so a task assigned again (ack_timeout)
		// had an earlier delivery its agent never took.
		if ok && !at.After(t.DeliveredAt) && t.Attempts == 1 {
			f.truthful++
		}
		f.extra = append(f.extra, t.DeliveredAt.Sub(t.AssignedAt)-100*time.Millisecond)
	} else if t.Status == store.StatusDone {
		// Reported before the delivery was confirmed: taken, surely.
		f.claimed++
		if ok {
			f.truthful++
		}
	}
	if t.Status == store.StatusDone {
		f.done++
	}
}

// typingRows are the rows of the typing measurement's table.
func typingRows(with, without typingFigures, n, unmarked int) string {
	pct := func(a, b int) float64 {
		if b == 0 {
			return 0
		}
		return 100 * float64(a) / float64(b)
	}
	spread := func(f typingFigures) string {
		slices.Sort(f.extra)
		return fmt.Sprintf("%.0f ms / %.0f ms", ms(quantile(f.extra, 0.5)), ms(quantile(f.extra, 0.9)))
	}
	return fmt.Sprintf(`| tasks marked delivered that the agent really took | %d of %d (%.1f %%) | %d of %d (%.1f %%) | 100 %% |
| tasks delivered and done in the end | %d of %d (%.1f %%) | %d of %d (%.1f %%) | ≥ 99 %% |
| submit keys per task | %.2f | %.2f | |
| extra delay to delivery, median / p90 | %s | %s | |
`, with.truthful, with.claimed, pct(with.truthful, with.claimed), without.truthful, without.claimed, pct(without.truthful, without.claimed),
		with.done, n, pct(with.done, n), without.done, unmarked, pct(without.done, unmarked),
		float64(with.submits)/float64(max(with.tasks, 1)), float64(without.submits)/float64(max(without.tasks, 1)),
		spread(with), spread(without))
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

// receivedTasks adds to taken when the agent whose record is at path first
// started each task it worked on.
func receivedTasks(path string, taken map[string]time.Time) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	for _, line := range strings.Split(string(b), "\n") {
		var rec struct {
			At     time.Time `json:"at"`
			Kind   string    `json:"kind"`
			TaskID string    `json:"task_id"`
		}
		if json.Unmarshal([]byte(line), &rec) != nil || rec.Kind != "task" {
			continue
		}
		if at, ok := taken[rec.TaskID]; !ok || rec.At.Before(at) {
			taken[rec.TaskID] = rec.At
		}
	}
	return nil
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
