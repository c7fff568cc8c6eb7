package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// measureIdle runs `shogun start` on a workspace of n agent-sim roles, lets
// them become ready and take their prompts, then samples the supervisor
// process alone (not its children) for d: CPU time over wall time, and RSS.
func measureIdle(r *report, shogun string, n int, d time.Duration) error {
	ws, err := os.MkdirTemp("", "shogun-bench-idle-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(ws)
	if out, err := exec.Command(shogun, "init", "--demo", ws).CombinedOutput(); err != nil {
		return fmt.Errorf("init: %v: %s", err, out)
	}
	var roles strings.Builder
	roles.WriteString("roles:\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&roles, `  - id: idle%d
    name: "idle %d"
    prompt_path: roles/ashigaru.md
    command: {exec: "${SHOGUN_EXE}", args: ["agent-sim"]}
    cli: generic
    ready_pattern: "› "
    busy_pattern: "esc to interrupt"
    submit_delay: 100ms
`, i, i)
	}
	if err := os.WriteFile(filepath.Join(ws, "config", "roles.yaml"), []byte(roles.String()), 0o644); err != nil {
		return err
	}
	cmd := exec.Command(shogun, "--quiet", "start", "--workspace", ws)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	}()
	pid := cmd.Process.Pid
	time.Sleep(8 * time.Second) // start-up, readiness, startup prompts
	cpu0, err := cpuTicks(pid)
	if err != nil {
		return err
	}
	t0 := time.Now()
	time.Sleep(d)
	cpu1, err := cpuTicks(pid)
	if err != nil {
		return err
	}
	wall := time.Since(t0)
	rss, hwm, err := memory(pid)
	if err != nil {
		return err
	}
	const hz = 100 // USER_HZ on Linux
	pct := float64(cpu1-cpu0) / hz / wall.Seconds() * 100
	r.add("Idle cost", fmt.Sprintf(`
`+"`shogun start`"+` with %d idle `+"`agent-sim`"+` roles (ready, startup prompt delivered), sampled for %s after 8 s of start-up.
The supervisor process only; the agents are its children and not counted.

| what | measured | target |
|---|---|---|
| CPU | %.2f %% of one core | < 1 %% |
| RSS now | %.1f MiB | < 64 MiB |
| RSS peak (VmHWM) | %.1f MiB | |
`, n, d, pct, float64(rss)/1024, float64(hwm)/1024))
	return nil
}

// cpuTicks is utime+stime of pid in clock ticks.
func cpuTicks(pid int) (int64, error) {
	user, sys, err := cpuTimes(pid)
	return user + sys, err
}

// cpuTimes is utime and stime of pid in clock ticks: the CPU spent in its
// own code and in the kernel on its behalf.
func cpuTimes(pid int) (user, sys int64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, err
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	user, _ = strconv.ParseInt(f[11], 10, 64)
	sys, _ = strconv.ParseInt(f[12], 10, 64)
	return user, sys, nil
}

// memory returns VmRSS and VmHWM of pid in KiB.
func memory(pid int) (rss, hwm int64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		k, v, _ := strings.Cut(l, ":")
		n, _ := strconv.ParseInt(strings.Fields(v + " 0")[0], 10, 64)
		switch k {
		case "VmRSS":
			rss = n
		case "VmHWM":
			hwm = n
		}
	}
	return rss, hwm, nil
}
