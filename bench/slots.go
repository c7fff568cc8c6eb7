package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/shogun-dev/shogun/control"
	"github.com/shogun-dev/shogun/store"
)

// slotsOptions size the many-roles measurement (issue 35): Roles agent-sim
// roles under agent.max_running Max share Tasks tasks; the baseline is Max
// roles without a bound doing the same tasks. Samples commands are then
// sent one at a time to time send → delivered.
type slotsOptions struct {
	Roles, Max, Tasks, Samples int
	// Pairs is how many times the capped team and its baseline run, in
	// turn: one run's CPU varies by a quarter on a shared machine (the
	// kernel's file creation and the host's scheduling), so each team's
	// median run is reported, with every pair's ratio.
	Pairs    int
	WorkTime time.Duration
	// IdleFor is how long the supervisor is sampled at rest afterwards.
	IdleFor time.Duration
	// Hold is what each agent-sim holds resident from its start
	// (--hold-memory; "" for nothing): a CLI's size, so that the trees'
	// memory shows what max_running bounds.
	Hold string
	// RealCLISamples: sleeping/awake pairs of sends to real Claude Code
	// and Codex roles (wakeRealCLIs); 0 skips them.
	RealCLISamples int
}

// slotsRun is what one team did.
type slotsRun struct {
	roles, max, tasks int
	took              time.Duration
	cpu               float64 // the supervisor's own CPU seconds over the tasks
	sysCPU            float64 // the part of cpu spent in the kernel
	hwm               int64   // its peak RSS, KiB
	idleCPU           float64 // its CPU at rest afterwards, % of a core
	idleRSS           int64   // its RSS at rest, KiB
	peakLive          int     // most agent programs alive at once
	peakTrees         int64   // most RSS of all role trees at once, KiB
	peakTree          int64   // most RSS of one role's tree, KiB
	peakAll           int64   // most RSS of the trees and shogun at once, KiB
	done              int     // tasks done, of tasks+samples
	all               int     // tasks in the history
	oneReport         int     // tasks closed by exactly one report
	workedOnce        int     // tasks an agent started on exactly once
	doubled           []string
	wakes             int             // starts that resumed a conversation
	deliver           []time.Duration // send → delivered, one per sample
	asleep            int             // samples whose role slept when sent
}

// measureSlots runs the capped team and its baseline and writes the section.
func measureSlots(r *report, shogun string, o slotsOptions) error {
	var cappedRuns, baseRuns []slotsRun
	var pairs []string
	for i := range max(o.Pairs, 1) {
		var capped, base slotsRun
		// Each team goes first in turn: what one run leaves the machine
		// (the file system's recently freed inodes, the page cache) must
		// not favour the same team each time.
		for _, cappedTurn := range [][]bool{{true, false}, {false, true}}[i%2] {
			if cappedTurn {
				c, err := runSlots(shogun, o.Roles, o.Max, o)
				if err != nil {
					return fmt.Errorf("%d roles under max_running %d: %w", o.Roles, o.Max, err)
				}
				capped = c
				continue
			}
			b, err := runSlots(shogun, o.Max, 0, o)
			if err != nil {
				return fmt.Errorf("%d roles without a bound: %w", o.Max, err)
			}
			base = b
		}
		cappedRuns, baseRuns = append(cappedRuns, capped), append(baseRuns, base)
		pairs = append(pairs, fmt.Sprintf("%.2f×", capped.cpu/max(base.cpu, 0.01)))
		fmt.Fprintf(os.Stderr, "bench: many roles, pair %d: CPU %.2f s vs %.2f s\n", i+1, capped.cpu, base.cpu)
	}
	capped, base := medianRun(cappedRuns), medianRun(baseRuns)
	rssRatio := float64(medianHWM(cappedRuns)) / float64(max(medianHWM(baseRuns), 1))
	row := func(x slotsRun) string {
		bound := "none"
		if x.max > 0 {
			bound = strconv.Itoa(x.max)
		}
		return fmt.Sprintf("| %d | %s | %d of %d | %d | %d | %d | %d | %.1f s | %.2f s (%.2f s) | %.1f MiB |",
			x.roles, bound, x.done, x.all, x.oneReport, x.workedOnce, x.peakLive, x.wakes, x.took.Seconds(), x.cpu, x.sysCPU, float64(x.hwm)/1024)
	}
	lat := func(x slotsRun) string {
		d := slices.Sorted(slices.Values(x.deliver))
		return fmt.Sprintf("%s / %s (%d sends, %d to a sleeping role)", secsText(quantile(d, 0.5)), secsText(quantile(d, 0.9)), len(x.deliver), x.asleep)
	}
	var notes []string
	for _, x := range []slotsRun{capped, base} {
		if len(x.doubled) > 0 {
			notes = append(notes, fmt.Sprintf("Worked on more than once (%d roles): %s.", x.roles, strings.Join(x.doubled, ", ")))
		}
	}
	r.add("Many roles, few slots", fmt.Sprintf(`
%d `+"`agent-sim`"+` roles (work time %s, `+"`idle_after: 1s`"+`, resume args) under `+"`agent.max_running: %d`"+`, and as the
baseline %d roles without a bound and without `+"`idle_after`"+`: %d commands dropped at once, spread evenly over the roles,
then %d commands sent one at a time (each waits for the last to be done) to time send → delivered (the
confirmed nudge). Each team runs %d times, in turn with the other, and the rows below are each team's run of
median CPU (the RSS ratio compares the median peaks). Live programs are the supervisor's agent-sim children, sampled every 20 ms. The supervisor's
CPU is its own, over the %d tasks; RSS its peak (VmHWM). `+"`go run ./bench -only slots -slots-roles 16 -slots-max 4 -slots-tasks 64 -slots-pairs 1`"+`
is a quick run. Each agent-sim holds %s resident from its start (`+"`--hold-memory`"+`); the trees' RSS is that of
all the supervisor's descendants, sampled with the live programs. Read the CPU and RSS ratios with the wall times:
the capped team starts every role beyond `+"`max_running`"+` at least once (a start, its screen model and its
startup prompt are work the baseline does %d times, not %d).

Where the ratios come from (profiled with `+"`SHOGUN_BENCH_PROFILE=DIR`"+` in the bench's environment, which makes
the supervisor write `+"`cpu-PID.pprof`"+` and `+"`heap-PID.pprof`"+` there; read them with `+"`go tool pprof -top`"+`): a
sleeping role costs nothing per tick (its goroutines wait on channels; it has no program, screen model or timer):
at rest both teams cost 0.1–0.2 %% of a core, the resolution of the measure. What is left grows with starts: the
capped team starts programs %d times (%d fresh, %d woken), the baseline %d. One start and sleep, alone (one role,
15 tasks 4 s apart, with `+"`idle_after: 1s`"+` or without), costs the supervisor about 5 ms of CPU (9 ms before
snapshots were kept), with or without the 300 MB held. Cut so far, with the share of the capped team's CPU each
took: status.yaml's query per role (half of 27 %%), a ticker in each role waiting for a slot (the scheduler,
8 %%), a second emulator replaying each ended program's screen (3 %%), the whole scrollback taken at each start,
every configured role's folder resolved at each task's close (2 %%), every process on the machine read at each
exit (2 %%), every role marshalled at each rewrite of status.yaml (4 %%), the 4 MB parser buffer of a new screen
model at each start (the RSS peak; models are now pooled), the SQL of each read parsed anew (a tenth of all;
reads are prepared now), the syncs of the pid ledger and the status views at each start and exit (they mean
nothing after a reboot), the whole screen rendered again at each 5 ms poll of typing while it had not changed
(a sixth; a snapshot is now kept until the screen takes in output), and two whole tasks read at each look for a
sleeping role's work (now four columns). The rest was no one function: the capped team's profile had the
baseline's shape, each part somewhat more, and the Go runtime's own threads more still. Traced (`+"`runtime/trace`"+`,
and `+"`perf`"+` on the system calls), both teams woke their goroutines about as often (56,073 against 45,275 times),
but the capped team's woke an idle process 2.3 times as often (71,423 idle spells of its two Ps against
31,002): each such wake costs the runtime a burst of system calls (its monitor thread, sysmon, polls every
20 µs for a millisecond after it; 2.4 times as many `+"`epoll_pwait`"+`, twice as many `+"`nanosleep`"+` and `+"`futex`"+` per
task). Most were timers that found nothing to do: the hold before each key looked every millisecond for the
output to be quiet (4,000 of 7,432 wake-ups from idle, against 922 of 3,050), and typing's watches of the
echo and the screen looked every 5 ms, and the log and screen consumers rested on a timer after each write.
The hold now rests until the output could first be quiet, the watches wait for the screen to change, and the
consumers rest only when output comes within their interval. What is left is more starts (a fresh program's
startup prompt and first paint) and the machine: the capped team's 300 MB programs, started every 0.7 s, slow
the supervisor's system calls (a probe creating, renaming and removing 100 files a second cost 4 ms of CPU per
round alone, 12.8 ms beside the baseline and 20.1 ms beside the capped team). And one run is
not a measure here: on this shared 2-core machine the same team's CPU varied from 5.0 to 6.4 s (the baseline) and
from 6.5 to 9.7 s (the capped team) between identical runs this week, which is why each team runs several times
and the medians are compared.

| roles | max_running | tasks done | closed by one report | worked on once | peak live programs | wakes (resumed) | wall | shogun CPU (in the kernel) | shogun RSS peak |
|---|---|---|---|---|---|---|---|---|---|
%s
%s

| what | measured | target |
|---|---|---|
| every task done once | %d of %d done, %d worked on once | all, once |
| peak live programs | %d | ≤ %d |
| peak RSS of all role trees and shogun, %d roles | %.0f MiB (trees %.0f MiB) | ≤ %.0f MiB: %d × %.0f MiB (the largest tree) + shogun's peak %.0f MiB |
| shogun CPU, %d roles vs %d | %.2f× (the medians; each pair: %s) | ≤ 1.2× |
| shogun RSS peak, %d roles vs %d | %.2f× | ≤ 1.2× |
| shogun at rest afterwards (%s), %d roles vs %d | CPU %.2f %% vs %.2f %% of a core; RSS %.1f vs %.1f MiB | |
| send → delivered p50 / p90, sleeping role | %s | |
| send → delivered p50 / p90, awake role | %s | |
%s
%s
`, o.Roles, o.WorkTime, o.Max, o.Max, o.Tasks, o.Samples, max(o.Pairs, 1), o.Tasks, orText(o.Hold, "nothing"), o.Max, o.Roles,
		o.Roles+capped.wakes, o.Roles, capped.wakes, o.Max,
		row(capped), row(base),
		capped.done, capped.all, capped.workedOnce, capped.peakLive, o.Max,
		o.Roles, kibToMiB(capped.peakAll), kibToMiB(capped.peakTrees), kibToMiB(int64(o.Max)*capped.peakTree+capped.hwm), o.Max, kibToMiB(capped.peakTree), kibToMiB(capped.hwm),
		o.Roles, o.Max, capped.cpu/max(base.cpu, 0.01), strings.Join(pairs, ", "), o.Roles, o.Max, rssRatio,
		o.IdleFor, o.Roles, o.Max, capped.idleCPU, base.idleCPU, float64(capped.idleRSS)/1024, float64(base.idleRSS)/1024,
		lat(capped), lat(base), wakeRealCLIs(o.RealCLISamples), strings.Join(notes, "\n")))
	return nil
}

// medianRun is the run of median CPU (the higher of the two middle ones
// for an even count).
func medianRun(runs []slotsRun) slotsRun {
	byCPU := slices.SortedFunc(slices.Values(runs), func(a, b slotsRun) int { return cmp.Compare(a.cpu, b.cpu) })
	return byCPU[len(byCPU)/2]
}

// medianHWM is the median of the runs' RSS peaks, KiB.
func medianHWM(runs []slotsRun) int64 {
	hwms := make([]int64, len(runs))
	for i, x := range runs {
		hwms[i] = x.hwm
	}
	slices.Sort(hwms)
	return hwms[len(hwms)/2]
}

func orText(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

func secsText(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }

// runSlots runs one team through the tasks and the samples. max 0: no
// bound and no sleeping.
func runSlots(shogun string, roles, maxRunning int, o slotsOptions) (slotsRun, error) {
	run := slotsRun{roles: roles, max: maxRunning, tasks: o.Tasks}
	recs, err := os.MkdirTemp("", "shogun-bench-slots-rec-")
	if err != nil {
		return run, err
	}
	defer os.RemoveAll(recs)
	ids := make([]string, roles)
	var b strings.Builder
	b.WriteString("roles:\n")
	hold := ""
	if o.Hold != "" {
		hold = fmt.Sprintf(", \"--hold-memory\", %q", o.Hold)
	}
	for i := range ids {
		ids[i] = fmt.Sprintf("r%02d", i+1)
		fmt.Fprintf(&b, `  - id: %s
    prompt_path: roles/ashigaru.md
    command: {exec: "${SHOGUN_EXE}", args: ["agent-sim", "--work-time", %q, "--paste-window", "-1ms", "--record", %q%s]}
    cli: generic
    ready_pattern: "› "
    busy_pattern: "esc to interrupt"
    submit_delay: 0s
    stop: {keys: "/exit\r", timeout: 5s}
`, ids[i], o.WorkTime.String(), filepath.Join(recs, ids[i]+".jsonl"), hold)
		if maxRunning > 0 {
			b.WriteString("    idle_after: 1s\n    resume_args: [\"--resumed\"]\n")
		}
	}
	ws, err := benchWorkspace(shogun, b.String())
	if err != nil {
		return run, err
	}
	defer os.RemoveAll(ws)
	if maxRunning > 0 {
		path := filepath.Join(ws, "config", "settings.yaml")
		settings, err := os.ReadFile(path)
		if err != nil {
			return run, err
		}
		capped := strings.Replace(string(settings), "\nagent:\n", fmt.Sprintf("\nagent:\n  max_running: %d\n", maxRunning), 1)
		if err := os.WriteFile(path, []byte(capped), 0o644); err != nil {
			return run, err
		}
	}
	cmd, stop, err := supervise(shogun, ws)
	if err != nil {
		return run, err
	}
	defer stop()
	pid := cmd.Process.Pid
	time.Sleep(4 * time.Second) // the first roles ready and prompted, the others asleep

	ctx, cancel := context.WithCancel(context.Background())
	var sampler sync.WaitGroup
	sampler.Add(1)
	go func() {
		defer sampler.Done()
		for ctx.Err() == nil {
			t := sampleTrees(pid)
			run.peakLive = max(run.peakLive, t.live)
			run.peakTrees = max(run.peakTrees, t.trees)
			run.peakTree = max(run.peakTree, t.largest)
			run.peakAll = max(run.peakAll, t.trees+t.self)
			select {
			case <-ctx.Done():
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	defer func() { cancel(); sampler.Wait() }()

	user0, sys0, err := cpuTimes(pid)
	if err != nil {
		return run, err
	}
	began := time.Now()
	for i := 0; i < o.Tasks; i++ {
		if err := dropCommand(ws, i, ids[i%roles]); err != nil {
			return run, err
		}
	}
	if err := waitFor(began, 20*time.Minute, 100*time.Millisecond, func() (bool, string, error) {
		_, done, err := countTasks(ws)
		return done >= o.Tasks, fmt.Sprintf("%d of %d tasks done", done, o.Tasks), err
	}); err != nil {
		return run, err
	}
	run.took = time.Since(began)
	user1, sys1, err := cpuTimes(pid)
	if err != nil {
		return run, err
	}
	run.cpu = float64(user1+sys1-user0-sys0) / 100 // USER_HZ
	run.sysCPU = float64(sys1-sys0) / 100

	// Send → delivered: the capped team's roles have gone to sleep after
	// idle_after; each sample goes to the next role.
	if maxRunning > 0 {
		time.Sleep(3 * time.Second)
	}
	st, err := store.Open(filepath.Join(ws, "data", "shogun.db"))
	if err != nil {
		return run, err
	}
	defer st.Close()
	for i := 0; i < o.Samples; i++ {
		role := ids[i%roles]
		if state, err := roleState(shogun, ws, role); err == nil && state == "sleeping" {
			run.asleep++
		}
		sent := time.Now()
		id := o.Tasks + i
		if err := dropCommand(ws, id, role); err != nil {
			return run, err
		}
		var task *store.Task
		if err := waitFor(sent, 2*time.Minute, 5*time.Millisecond, func() (bool, string, error) {
			t, err := st.TaskForCommand(fmt.Sprintf("bench-%05d", id))
			task = t
			return t != nil && store.Closed(t.Status), "the sample not done", err
		}); err != nil {
			return run, err
		}
		if task.DeliveredAt.IsZero() {
			return run, fmt.Errorf("sample %s closed without a recorded delivery", task.ID)
		}
		run.deliver = append(run.deliver, task.DeliveredAt.Sub(sent))
	}
	// At rest: every role idle (the capped team's asleep again).
	time.Sleep(3 * time.Second)
	idle0, err := cpuTicks(pid)
	if err != nil {
		return run, err
	}
	t0 := time.Now()
	time.Sleep(o.IdleFor)
	idle1, err := cpuTicks(pid)
	if err != nil {
		return run, err
	}
	run.idleCPU = float64(idle1-idle0) / 100 / time.Since(t0).Seconds() * 100
	run.idleRSS, run.hwm, _ = memory(pid)
	cancel()
	sampler.Wait()

	tasks, err := st.Tasks(store.TaskFilter{})
	if err != nil {
		return run, err
	}
	worked, wakes, err := agentRecords(recs, ids)
	if err != nil {
		return run, err
	}
	run.wakes = wakes
	run.all = len(tasks)
	for _, t := range tasks {
		if t.Status == store.StatusDone {
			run.done++
		}
		if reps, err := st.ReportsForTask(t.ID); err == nil && len(reps) == 1 {
			run.oneReport++
		}
		switch worked[t.ID] {
		case 1:
			run.workedOnce++
		case 0:
		default:
			run.doubled = append(run.doubled, fmt.Sprintf("%s ×%d", t.ID, worked[t.ID]))
		}
	}
	sort.Strings(run.doubled)
	return run, nil
}

// agentRecords counts, from the agents' records, how often each task was
// started on, and the starts that resumed a conversation.
func agentRecords(dir string, ids []string) (worked map[string]int, wakes int, err error) {
	worked = map[string]int{}
	for _, id := range ids {
		data, err := os.ReadFile(filepath.Join(dir, id+".jsonl"))
		if errors.Is(err, os.ErrNotExist) {
			continue // never started
		}
		if err != nil {
			return nil, 0, err
		}
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			var rc struct {
				Kind   string `json:"kind"`
				TaskID string `json:"task_id"`
				Line   string `json:"line"`
			}
			if line == "" || json.Unmarshal([]byte(line), &rc) != nil {
				continue
			}
			switch {
			case rc.Kind == "task":
				worked[rc.TaskID]++
			case rc.Kind == "start" && rc.Line == "resumed":
				wakes++
			}
		}
	}
	return worked, wakes, nil
}

// roleState asks the running supervisor for a role's state.
func roleState(shogun, ws, role string) (string, error) {
	out, err := exec.Command(shogun, "status", "--json", "--workspace", ws).Output()
	if err != nil {
		return "", err
	}
	var st control.StatusReply
	if err := json.Unmarshal(out, &st); err != nil {
		return "", err
	}
	for _, r := range st.Roles {
		if r.ID == role {
			return r.State, nil
		}
	}
	return "", errors.New("no role " + role)
}

// trees is one look at the supervisor's process trees.
type trees struct {
	live    int   // its children that run agent-sim: the role programs alive
	trees   int64 // RSS of all its descendants, KiB
	largest int64 // RSS of its largest child's tree, KiB
	self    int64 // its own RSS, KiB
}

// sampleTrees reads /proc once: every process's parent and resident size,
// and sums them per tree of the supervisor's children.
func sampleTrees(pid int) trees {
	var t trees
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return t
	}
	type proc struct {
		ppid int
		rss  int64
		sim  bool
	}
	procs := map[int]proc{}
	page := int64(os.Getpagesize() / 1024)
	for _, e := range ents {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		i := strings.LastIndexByte(string(stat), ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(stat[i+1:]))
		if len(f) < 22 || f[0] == "Z" {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		rss, _ := strconv.ParseInt(f[21], 10, 64) // pages
		p := proc{ppid: ppid, rss: rss * page}
		if ppid == pid {
			cmd, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
			p.sim = strings.Contains(string(cmd), "agent-sim")
		}
		procs[n] = p
	}
	t.self = procs[pid].rss
	// rootOf: the supervisor's child whose tree n is in (0: none).
	rootOf := func(n int) int {
		for depth := 0; depth < 64 && n > 1; depth++ {
			p, ok := procs[n]
			if !ok {
				return 0
			}
			if p.ppid == pid {
				return n
			}
			n = p.ppid
		}
		return 0
	}
	per := map[int]int64{}
	for n, p := range procs {
		if r := rootOf(n); r != 0 {
			per[r] += p.rss
			t.trees += p.rss
		}
		if p.ppid == pid && p.sim {
			t.live++
		}
	}
	for _, v := range per {
		t.largest = max(t.largest, v)
	}
	return t
}

// wakeRealCLIs runs tools/realcli's TestRealCLIWakeLatency (Claude Code
// and Codex against the scripted model, idle_after short, resume_args from
// their presets) and says send → delivered for a sleeping role and an
// awake one, as rows of the many-roles section; why not, when it cannot.
func wakeRealCLIs(samples int) string {
	if samples <= 0 {
		return "| real CLIs, sleeping vs awake | not measured (-slots-realcli-samples 0) | |\n"
	}
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Sprintf("| real CLIs, sleeping vs awake | not measured: %s is not installed | |\n", tool)
		}
	}
	dir, err := os.MkdirTemp("", "shogun-bench-wake-")
	if err != nil {
		return fmt.Sprintf("| real CLIs, sleeping vs awake | not measured: %v | |\n", err)
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "wake.json")
	cmd := exec.Command("go", "test", "-tags", "realcli", "-count=1", "-timeout", "20m", "-run", "^TestRealCLIWakeLatency$", "./tools/realcli")
	cmd.Env = append(os.Environ(), "SHOGUN_REALCLI_WAKE_OUT="+out, fmt.Sprintf("SHOGUN_REALCLI_WAKE_SAMPLES=%d", samples))
	if b, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "bench: TestRealCLIWakeLatency: %v\n%s\n", err, b)
		return fmt.Sprintf("| real CLIs, sleeping vs awake | not measured: TestRealCLIWakeLatency failed (%v) | |\n", err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		return fmt.Sprintf("| real CLIs, sleeping vs awake | not measured: %v | |\n", err)
	}
	var lat map[string]struct {
		Asleep []float64 `json:"asleep_ms"`
		Awake  []float64 `json:"awake_ms"`
	}
	if err := json.Unmarshal(b, &lat); err != nil {
		return fmt.Sprintf("| real CLIs, sleeping vs awake | not measured: %v | |\n", err)
	}
	var rows strings.Builder
	for _, c := range slices.Sorted(maps.Keys(lat)) {
		asleep, awake := sortedDurations(lat[c].Asleep), sortedDurations(lat[c].Awake)
		fmt.Fprintf(&rows, "| send → delivered p50 / p90, sleeping %s role | %s / %s (%d sends) | p50 ≤ 5 s |\n", c,
			secsText(quantile(asleep, 0.5)), secsText(quantile(asleep, 0.9)), len(asleep))
		fmt.Fprintf(&rows, "| send → delivered p50 / p90, awake %s role | %s / %s (%d sends) | |\n", c,
			secsText(quantile(awake, 0.5)), secsText(quantile(awake, 0.9)), len(awake))
	}
	return rows.String()
}
