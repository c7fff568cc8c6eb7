package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/term"

	"github.com/shogun-dev/shogun/store"
	"github.com/shogun-dev/shogun/workspace"
)

// benchWorkspace makes a workspace whose roles.yaml is roles.
func benchWorkspace(shogun, roles string) (string, error) {
	ws, err := os.MkdirTemp("", "shogun-bench-")
	if err != nil {
		return "", err
	}
	if out, err := exec.Command(shogun, "init", ws).CombinedOutput(); err != nil {
		return "", fmt.Errorf("init: %v: %s", err, out)
	}
	return ws, os.WriteFile(filepath.Join(ws, "config", "roles.yaml"), []byte(roles), 0o644)
}

// supervise starts `shogun start` on ws and returns it once the lock shows
// it runs; stop ends it with SIGTERM.
func supervise(shogun, ws string) (cmd *exec.Cmd, stop func(), err error) {
	cmd = exec.Command(shogun, "--quiet", "start", "--workspace", ws)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	stop = func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	}
	lock := workspace.New(ws).Lock()
	for i := 0; i < 200; i++ {
		if _, err := os.Stat(lock); err == nil {
			return cmd, stop, nil
		}
		time.Sleep(25 * time.Millisecond)
	}
	stop()
	return nil, nil, errors.New("supervisor did not start")
}

// dropCommand writes a command file as a careful writer does: a hidden
// temporary file renamed into the queue.
func dropCommand(ws string, i int, to string) error {
	dir := workspace.New(ws).Commands()
	name := fmt.Sprintf("b%05d.yaml", i)
	tmp := filepath.Join(dir, "."+name+".tmp")
	body := fmt.Sprintf("id: bench-%05d\nto: %s\ntitle: bench job %d\nbody: measure me\n", i, to, i)
	if err := os.WriteFile(tmp, []byte(body), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, name))
}

// waitFor polls check every so often until it says done, an error, or
// limit has passed since began; progress says how far it got, for the error.
func waitFor(began time.Time, limit, every time.Duration, check func() (done bool, progress string, err error)) error {
	for {
		done, progress, err := check()
		switch {
		case err != nil:
			return err
		case done:
			return nil
		case time.Since(began) > limit:
			return fmt.Errorf("only %s after %s", progress, limit)
		}
		time.Sleep(every)
	}
}

// countTasks returns how many tasks the history has, and how many are done.
func countTasks(ws string) (all, done int, err error) {
	db := filepath.Join(ws, "data", "shogun.db")
	if _, err := os.Stat(db); err != nil {
		return 0, 0, nil
	}
	st, err := store.Open(db)
	if err != nil {
		return 0, 0, err
	}
	defer st.Close()
	counts, err := st.Counts()
	if err != nil {
		return 0, 0, err
	}
	for k, n := range counts {
		all += n
		if k == store.StatusDone {
			done += n
		}
	}
	return all, done, nil
}

// measureIngest drops 10,000 command files at once into a running
// supervisor whose role never becomes ready, and times until every one is
// recorded as a queued task.
func measureIngest(r *report, shogun string, n int) error {
	ws, err := benchWorkspace(shogun, `roles:
  - id: sink
    prompt_path: roles/ashigaru.md
    command: {exec: /bin/sh, args: ["-c", "exec sleep 100000"]}
    ready_pattern: "never shown"
    ready_quiet: 1000h
`)
	if err != nil {
		return err
	}
	defer os.RemoveAll(ws)
	cmd, stop, err := supervise(shogun, ws)
	if err != nil {
		return err
	}
	defer stop()
	time.Sleep(500 * time.Millisecond)
	began := time.Now()
	for i := 0; i < n; i++ {
		if err := dropCommand(ws, i, "sink"); err != nil {
			return err
		}
	}
	dropped := time.Since(began)
	if err := waitFor(began, 5*time.Minute, 20*time.Millisecond, func() (bool, string, error) {
		all, _, err := countTasks(ws)
		return all >= n, fmt.Sprintf("%d of %d commands recorded", all, n), err
	}); err != nil {
		return err
	}
	took := time.Since(began)
	all, _, _ := countTasks(ws)
	_, hwm, _ := memory(cmd.Process.Pid)
	archived, _ := filepath.Glob(filepath.Join(workspace.New(ws).Archive(), "*", "commands", "*"))
	r.add("Ingest", fmt.Sprintf(`
%d command files written (temporary file + rename) as fast as one process can (%.2f s), into a running
supervisor; timed until every one is claimed, validated, recorded in SQLite and queued.

| what | measured | target |
|---|---|---|
| files per second | %.0f | ≥ 2,000 |
| tasks recorded | %d of %d (none lost or doubled) | all, once |
| files already archived when the last was recorded | %d | (the rest follow) |
| supervisor peak RSS | %.1f MiB | |
`, n, dropped.Seconds(), float64(n)/took.Seconds(), all, n, len(archived), float64(hwm)/1024))
	return nil
}

// measureRoundTrip runs 8 instant agents (no work time, no paste-burst
// detection, submit delay 0) through n tasks and times until all are done.
func measureRoundTrip(r *report, shogun string, roles, n int) error {
	var b strings.Builder
	b.WriteString("roles:\n")
	for i := 1; i <= roles; i++ {
		fmt.Fprintf(&b, `  - id: fast%d
    prompt_path: roles/ashigaru.md
    command: {exec: "${SHOGUN_EXE}", args: ["agent-sim", "--work-time", "0s", "--paste-window", "-1ms"]}
    cli: generic
    ready_pattern: "› "
    busy_pattern: "esc to interrupt"
    submit_delay: 0s
    stop: {keys: "/exit\r", timeout: 5s}
`, i)
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
	defer stop()
	time.Sleep(3 * time.Second) // roles ready, startup prompts typed
	began := time.Now()
	for i := 0; i < n; i++ {
		if err := dropCommand(ws, i, fmt.Sprintf("fast%d", i%roles+1)); err != nil {
			return err
		}
	}
	if err := waitFor(began, 10*time.Minute, 50*time.Millisecond, func() (bool, string, error) {
		_, done, err := countTasks(ws)
		return done >= n, fmt.Sprintf("%d of %d tasks done", done, n), err
	}); err != nil {
		return err
	}
	took := time.Since(began)
	r.add("Delivery round trip", fmt.Sprintf(`
%d roles of instant agents (`+"`agent-sim --work-time 0s --paste-window -1ms`"+`, submit delay 0): %d commands dropped at once,
timed until every task is done (task file, typed nudge verified on screen, report, next task).

| what | measured | target |
|---|---|---|
| tasks completed per second | %.0f | ≥ 100 |
| total | %d tasks in %.1f s | |
`, roles, n, float64(n)/took.Seconds(), n, took.Seconds()))
	return nil
}

// measureLatency drops one command at a time into an idle role and times
// from the rename into the queue to the first byte of the nudge text
// reaching the role's PTY, as the role program itself sees it (the probe
// below, run as the role).
func measureLatency(r *report, shogun, self string, samples int, settle time.Duration) error {
	ws, err := benchWorkspace(shogun, fmt.Sprintf(`roles:
  - id: probe
    prompt_path: roles/ashigaru.md
    command: {exec: %q, args: ["-probe"]}
    cli: generic
    ready_pattern: "› "
    startup_prompt: ""
    clear_input: ""
    submit_delay: 0s
    stop: {keys: "", timeout: 2s}
`, self))
	if err != nil {
		return err
	}
	defer os.RemoveAll(ws)
	settings := filepath.Join(ws, "config", "settings.yaml")
	sb, _ := os.ReadFile(settings)
	sb = []byte(strings.Replace(string(sb), "settle: 25ms", "settle: "+settle.String(), 1))
	if err := os.WriteFile(settings, sb, 0o644); err != nil {
		return err
	}
	_, stop, err := supervise(shogun, ws)
	if err != nil {
		return err
	}
	defer stop()
	arrivals := filepath.Join(ws, "probe-arrivals.txt")
	time.Sleep(2 * time.Second)
	var lat []time.Duration
	for i := 0; i < samples; i++ {
		t0 := time.Now()
		if err := dropCommand(ws, i, "probe"); err != nil {
			return err
		}
		var at time.Time
		for {
			ts, err := readArrivals(arrivals)
			if err != nil {
				return err
			}
			if len(ts) > i {
				at = ts[i]
				break
			}
			if time.Since(t0) > 30*time.Second {
				return fmt.Errorf("sample %d: no nudge after 30 s", i)
			}
			time.Sleep(2 * time.Millisecond)
		}
		lat = append(lat, at.Sub(t0))
		// Let the report close the task and the role go idle again.
		for {
			_, done, err := countTasks(ws)
			if err != nil {
				return err
			}
			if done > i {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(150 * time.Millisecond)
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	pct := func(p float64) time.Duration { return lat[int(p*float64(len(lat)-1))] }
	r.add("Latency: command file to nudge", fmt.Sprintf(`
One idle role; a command file renamed into runtime/queue/commands/, timed to the first byte of the nudge text read
by the role's program from its PTY (a probe that records arrival times). %d samples. A renamed file is whole
when it appears, so the settle wait for in-place writers (queue.settle, %s) is not part of it. The submit
delay (0 here; 300 ms for the Codex and Claude presets) comes after the text and is not part of it.

| percentile | latency | target |
|---|---|---|
| p50 | %.1f ms | ≤ 5 ms |
| p90 | %.1f ms | |
| p99 | %.1f ms | ≤ 150 ms |
| max | %.1f ms | |
`, samples, settle, ms(pct(0.5)), ms(pct(0.9)), ms(pct(0.99)), ms(lat[len(lat)-1])))
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func readArrivals(path string) ([]time.Time, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []time.Time
	for _, l := range strings.Fields(string(b)) {
		n, err := strconv.ParseInt(l, 10, 64)
		if err != nil {
			continue
		}
		out = append(out, time.Unix(0, n))
	}
	return out, nil
}

var taskPath = regexp.MustCompile(`\S*tasks/\S+\.yaml`)

// probe is the role program of the latency measurement: a minimal TUI that
// shows a prompt, echoes input, notes when the first byte of each typed line
// arrives, and on a submitted line naming a task file writes its report.
func probe() error {
	fd := int(os.Stdin.Fd())
	old, err := term.MakeRaw(fd)
	if err != nil {
		return err
	}
	defer term.Restore(fd, old)
	ws := os.Getenv("SHOGUN_WORKSPACE")
	arrivals, err := os.OpenFile(filepath.Join(ws, "probe-arrivals.txt"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer arrivals.Close()
	out := bufio.NewWriter(os.Stdout)
	fmt.Fprint(out, "probe\r\n› ")
	out.Flush()
	var line []byte
	buf := make([]byte, 4096)
	for {
		n, err := os.Stdin.Read(buf)
		if err != nil {
			return nil
		}
		now := time.Now()
		for _, c := range buf[:n] {
			switch c {
			case '\r':
				fmt.Fprint(out, "\r\n")
				if m := taskPath.Find(line); m != nil {
					writeProbeReport(ws, string(m))
				}
				line = line[:0]
				fmt.Fprint(out, "› ")
			default:
				if len(line) == 0 {
					fmt.Fprintf(arrivals, "%d\n", now.UnixNano())
				}
				line = append(line, c)
				out.WriteByte(c)
			}
		}
		out.Flush()
	}
}

var taskIDField = regexp.MustCompile(`(?m)^task_id:\s*"?([^"\s]+)`)

func writeProbeReport(ws, task string) {
	b, err := os.ReadFile(filepath.Join(ws, task))
	if err != nil {
		return
	}
	m := taskIDField.FindSubmatch(b)
	if m == nil {
		return
	}
	dir := workspace.New(ws).Reports()
	tmp := filepath.Join(dir, ".probe.tmp")
	_ = os.WriteFile(tmp, []byte(fmt.Sprintf("task_id: %s\nstatus: done\nsummary: probed\n", m[1])), 0o644)
	_ = os.Rename(tmp, filepath.Join(dir, "probe.yaml"))
}
