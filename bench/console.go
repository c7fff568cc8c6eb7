package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/target"

	"github.com/chromedp/chromedp"
)

// chromium is Debian's browser, which the console measurements drive.
const chromium = "/usr/bin/chromium"

// floodRuns is how many times the flood is measured each way.
const floodRuns = 3

// measureConsole measures what the web console costs the supervisor:
//
//   - an idle tab: the supervisor's CPU with 4 idle roles, without a tab,
//     then with one team page open, then with one terminal page open;
//   - ten tabs on a flooding role: how fast a role's `cat` of a large file
//     reaches its log with no tab open and with ten terminal tabs following
//     it, against each other and against the drain figure;
//   - a flood of stalled connections from someone without the token
//     (measureConnectionFlood): the supervisor's file descriptors and how
//     fast `shogun status` and the console answer meanwhile.
func measureConsole(r *report, shogun string, idleFor time.Duration, floodMB int, drainMBps float64) error {
	if _, err := os.Stat(chromium); err != nil {
		r.add("Web console", "Not measured: Chromium is not installed ("+chromium+"; apt-get install chromium).")
		return nil
	}
	dir, err := os.MkdirTemp("", "shogun-bench-console-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	src := filepath.Join(dir, "flood.txt")
	if err := writeText(src, floodMB<<20); err != nil {
		return err
	}
	gate := filepath.Join(dir, "go")
	var roles strings.Builder
	roles.WriteString("roles:\n")
	for i := 1; i <= 4; i++ {
		fmt.Fprintf(&roles, `  - id: idle%d
    prompt_path: roles/ashigaru.md
    command: {exec: "${SHOGUN_EXE}", args: ["agent-sim"]}
    cli: generic
    ready_pattern: "› "
    busy_pattern: "esc to interrupt"
`, i)
	}
	// The flooding role waits for the gate, writes the file once, and then
	// sits; a new gate name runs it again after a restart.
	fmt.Fprintf(&roles, `  - id: flood
    prompt_path: roles/ashigaru.md
    command: {exec: /bin/sh, args: ["-c", %q]}
    stop: {keys: "", timeout: 2s}
`, fmt.Sprintf(`echo flood ready; while [ ! -e %s ]; do sleep 0.02; done; rm -f %s; cat %s; echo; echo flood over; exec sleep 100000`, gate, gate, src))
	ws := filepath.Join(dir, "ws")
	if out, err := exec.Command(shogun, "init", ws).CombinedOutput(); err != nil {
		return fmt.Errorf("init: %v: %s", err, out)
	}
	if err := os.WriteFile(filepath.Join(ws, "config", "roles.yaml"), []byte(roles.String()), 0o644); err != nil {
		return err
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	settings := filepath.Join(ws, "config", "settings.yaml")
	b, err := os.ReadFile(settings)
	if err != nil {
		return err
	}
	s := regexp.MustCompile(`(?m)^  port: \d+$`).ReplaceAllString(string(b), fmt.Sprintf("  port: %d", port))
	s = regexp.MustCompile(`(?m)^  host: .*$`).ReplaceAllString(s, `  host: "127.0.0.1"`)
	// One log file holds every flood of the measurement (never rotated), so
	// its size says how much arrived.
	s = regexp.MustCompile(`(?m)^  max_size_mb: \d+$`).ReplaceAllString(s, fmt.Sprintf("  max_size_mb: %d", (2*floodRuns+1)*floodMB+10))
	if err := os.WriteFile(settings, []byte(s), 0o644); err != nil {
		return err
	}
	var out lockedBuffer
	cmd := exec.Command(shogun, "--quiet", "start", "--workspace", ws)
	cmd.Stdout, cmd.Stderr = &out, os.Stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	}()
	pid := cmd.Process.Pid
	base := ""
	re := regexp.MustCompile(`web console: (http://[^/\s]+)`)
	for deadline := time.Now().Add(30 * time.Second); base == ""; {
		if m := re.FindStringSubmatch(out.String()); m != nil {
			base = m[1]
		} else if time.Now().After(deadline) {
			return fmt.Errorf("the console did not start: %s", out.String())
		} else {
			time.Sleep(50 * time.Millisecond)
		}
	}
	// login opens a login link, as `shogun ui` does (each works once),
	// and waits for the console's page it goes on to.
	login := func() chromedp.Action {
		return chromedp.ActionFunc(func(ctx context.Context) error {
			link, err := exec.Command(shogun, "ui", "--no-open", "--workspace", ws).Output()
			if err != nil {
				return fmt.Errorf("shogun ui --no-open: %w", err)
			}
			return chromedp.Run(ctx, chromedp.Navigate(strings.TrimSpace(string(link))), chromedp.WaitReady("#page"))
		})
	}
	time.Sleep(8 * time.Second) // start-up, readiness, startup prompts

	cpu := func() (float64, error) {
		c0, err := cpuTicks(pid)
		if err != nil {
			return 0, err
		}
		t0 := time.Now()
		time.Sleep(idleFor)
		c1, err := cpuTicks(pid)
		if err != nil {
			return 0, err
		}
		const hz = 100 // USER_HZ on Linux
		return float64(c1-c0) / hz / time.Since(t0).Seconds() * 100, nil
	}
	none, err := cpu()
	if err != nil {
		return err
	}
	browser, closeBrowser, err := newBrowser(dir)
	if err != nil {
		return err
	}
	defer closeBrowser()
	tab, closeTab := browser, closeBrowser // the browser's own tab: in the foreground, it draws
	if err := runFor(tab, 3*time.Minute, login(), route("#/team"),
		waitTrue(`document.querySelectorAll('.role .preview').length === 5`)); err != nil {
		closeTab()
		return fmt.Errorf("team page: %w", err)
	}
	time.Sleep(2 * time.Second)
	team, err := cpu()
	if err != nil {
		closeTab()
		return err
	}
	if err := runFor(tab, 3*time.Minute, route("#/terminal/idle1"),
		waitTrue(`(document.querySelector('#terminal') || {dataset: {}}).dataset.mode === 'watch'`)); err != nil {
		closeTab()
		return fmt.Errorf("terminal page: %w", err)
	}
	time.Sleep(2 * time.Second)
	term, err := cpu()
	closeTab()
	if err != nil {
		return err
	}

	logPath := filepath.Join(ws, "runtime", "logs", "flood.log")
	// The terminal turns each "\n" into "\r\n": that is what the log holds.
	lines, err := countLines(src)
	if err != nil {
		return err
	}
	logged := int64(floodMB<<20) + lines
	// The supervisor's CPU during each flood, in seconds: what the tabs
	// cost it, apart from what the browsers take from the machine.
	var cpuAlone, cpuWatched, cpuBrowsers []time.Duration
	var idleBrowsers []float64 // cores
	var lastCPU, lastBrowsers time.Duration
	floodOnce := func() (time.Duration, error) {
		c0, err := cpuTicks(pid)
		if err != nil {
			return 0, err
		}
		b0 := browsersTicks(dir)
		defer func() {
			if c1, err := cpuTicks(pid); err == nil {
				lastCPU = time.Duration(c1-c0) * 10 * time.Millisecond // USER_HZ 100
			}
			lastBrowsers = time.Duration(browsersTicks(dir)-b0) * 10 * time.Millisecond
		}()
		start, err := fileSize(logPath)
		if err != nil {
			return 0, err
		}
		want := start + logged
		t0 := time.Now()
		if err := os.WriteFile(gate, nil, 0o644); err != nil {
			return 0, err
		}
		for {
			n, err := fileSize(logPath)
			if err != nil {
				return 0, err
			}
			if n >= want {
				return time.Since(t0), nil
			}
			if time.Since(t0) > 5*time.Minute {
				return 0, fmt.Errorf("the flood reached the log with %d of %d bytes in 5 min", n-start, want-start)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	restartFlood := func() error {
		if out, err := exec.Command(shogun, "restart", "flood", "--workspace", ws).CombinedOutput(); err != nil {
			return fmt.Errorf("restart flood: %v: %s", err, out)
		}
		time.Sleep(2 * time.Second)
		return nil
	}
	const runs = floodRuns
	// The drain figure again, measured alongside (as the drain section
	// measures it, on the same file): this machine's speed drifts by a
	// fifth from one minute to the next, more than the tabs cost.
	var alone, watched, drained []time.Duration
	for i := 0; i < runs; i++ {
		d, err := floodOnce()
		if err != nil {
			return err
		}
		alone = append(alone, d)
		cpuAlone = append(cpuAlone, lastCPU)
		if err := restartFlood(); err != nil {
			return err
		}
		d, n, err := sessionToLog(src, filepath.Join(dir, fmt.Sprintf("drain%d.log", i)))
		if err != nil {
			return fmt.Errorf("drain alongside: %w", err)
		}
		if n < int64(floodMB<<20) {
			return fmt.Errorf("drain alongside: logged %d of %d bytes", n, floodMB<<20)
		}
		drained = append(drained, d)
		// One browser with ten tabs, as a person would open them. Headless
		// tabs all draw; that each of the ten followed the role to its end
		// is checked after the flood.
		browser, closeBrowser, err := newBrowser(filepath.Join(dir, fmt.Sprintf("tabs%d", i)))
		if err != nil {
			return err
		}
		tabs := []context.Context{browser}
		for len(tabs) < 10 {
			// A window of its own: a background tab would not draw.
			id, err := target.CreateTarget("about:blank").WithNewWindow(true).
				Do(cdp.WithExecutor(browser, chromedp.FromContext(browser).Browser))
			if err != nil {
				closeBrowser()
				return fmt.Errorf("open tab %d: %w", len(tabs)+1, err)
			}
			t, _ := chromedp.NewContext(browser, chromedp.WithTargetID(id))
			// Attached here, not under runFor's time limit: the first Run
			// ties the tab's life to its context.
			if err := chromedp.Run(t); err != nil {
				closeBrowser()
				return fmt.Errorf("open tab %d: %w", len(tabs)+1, err)
			}
			tabs = append(tabs, t)
		}
		for j, t := range tabs {
			if err := runFor(t, 3*time.Minute, login(), route("#/terminal/flood"),
				waitTrue(`(document.querySelector('#terminal .xterm-rows') || {textContent: ''}).textContent.includes('flood ready')`)); err != nil {
				closeBrowser()
				return fmt.Errorf("terminal tab %d: %w", j+1, err)
			}
		}
		// What the browser costs while the role is quiet, for comparison.
		b0, t0 := browsersTicks(dir), time.Now()
		time.Sleep(3 * time.Second)
		idleBrowsers = append(idleBrowsers, float64(browsersTicks(dir)-b0)/100/time.Since(t0).Seconds())
		d, err = floodOnce()
		if err == nil {
			for j, t := range tabs {
				if err = runFor(t, time.Minute, waitTrue(`document.querySelector('#terminal .xterm-rows').textContent.includes('flood over')`)); err != nil {
					// What the tab's terminal holds, to tell a view that
					// never got the end from one that did not draw it.
					var info string
					_ = runFor(t, 10*time.Second, chromedp.Evaluate(`(() => {
						const b = document.querySelector('#terminal').terminal.buffer.active;
						const rows = [];
						for (let i = Math.max(0, b.length - 3); i < b.length; i++) rows.push(b.getLine(i).translateToString(true));
						return document.querySelector('#term-mode').textContent + '; last rows: ' + rows.join(' | ');
					})()`, &info))
					err = fmt.Errorf("terminal tab %d did not show the end of the flood (%s): %w", j+1, info, err)
					break
				}
			}
		}
		closeBrowser()
		if err != nil {
			return err
		}
		watched = append(watched, d)
		cpuWatched = append(cpuWatched, lastCPU)
		cpuBrowsers = append(cpuBrowsers, lastBrowsers)
		if err := restartFlood(); err != nil {
			return err
		}
	}
	flood, err := measureConnectionFlood(shogun, ws, base, pid)
	if err != nil {
		return fmt.Errorf("connection flood: %w", err)
	}
	mbps := func(d time.Duration) float64 { return float64(floodMB) / d.Seconds() }
	a, w, dr := mbps(median(alone)), mbps(median(watched)), mbps(median(drained))
	drainLine := fmt.Sprintf("**%.2f× the drain figure measured alongside** (shogun session → log as above, on the same file, "+
		"between the runs: %.0f MiB/s, runs %s s; target ≥ 0.9)", w/dr, dr, secs(drained))
	if drainMBps > 0 {
		drainLine += fmt.Sprintf("; %.2f× the drain section's figure (%.0f MiB/s, measured minutes before)", w/drainMBps, drainMBps)
	}
	r.add("Web console", fmt.Sprintf(`
`+"`shogun start`"+` with 4 idle `+"`agent-sim`"+` roles and a flooding role, the console on, headless Chromium (Debian) as the browser.
CPU of the supervisor process only, each sampled for %s; the browser is not counted.

| what | supervisor CPU | cost of the tab | target |
|---|---|---|---|
| no tab open | %.2f %% of one core | | |
| one idle team page (events + previews) | %.2f %% | %+.2f %% | < 0.5 %% |
| one idle terminal page | %.2f %% | %+.2f %% | < 0.5 %% |

A role's `+"`cat`"+` of a %d MiB file into its log (one file, not rotated), with no tab open and with 10 terminal
tabs of one browser following that role live (each tab then shows the role's last screen, or the run fails). Median of %d
runs each, alternating.

| while | MiB/s to the log (median) | runs (s) | supervisor CPU per run (s) | browser's CPU per run (s) |
|---|---|---|---|---|
| no tab | %.0f | %s | %s | |
| 10 terminal tabs | %.0f | %s | %s | %s |

With 10 tabs: **%.2f× without** and %s. The browser with its ten tabs, on the same machine, takes %s of a core
while the role is quiet (each run), and the figures above while it floods.
`, idleFor, none, team, team-none, term, term-none, floodMB, runs, a, secs(alone), secs(cpuAlone), w, secs(watched), secs(cpuWatched), secs(cpuBrowsers), w/a, drainLine, cores(idleBrowsers))+flood.report())
	return nil
}

// newBrowser starts headless Chromium with a fresh profile in dir.
func newBrowser(dir string) (context.Context, func(), error) {
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck, chromedp.UserDataDir(filepath.Join(dir, "chromium")),
		chromedp.WindowSize(1280, 900),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		// Background tabs are not throttled: every tab follows the role.
		chromedp.Flag("disable-background-timer-throttling", true),
		chromedp.Flag("disable-renderer-backgrounding", true),
		chromedp.Flag("disable-backgrounding-occluded-windows", true),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	if err := chromedp.Run(ctx); err != nil {
		cancel()
		cancelAlloc()
		return nil, nil, fmt.Errorf("start %s: %w", chromium, err)
	}
	return ctx, func() { cancel(); cancelAlloc() }, nil
}

// route sets the console page's hash, as a click on a link does.
func route(hash string) chromedp.Action {
	return chromedp.Evaluate(fmt.Sprintf("location.hash = %q", hash), nil)
}

// runFor runs actions with a time limit: a browser that hangs fails the
// measurement instead of stalling it.
func runFor(ctx context.Context, d time.Duration, actions ...chromedp.Action) error {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	return chromedp.Run(ctx, actions...)
}

// waitTrue polls a JavaScript expression until it is true, for up to two minutes.
func waitTrue(expr string) chromedp.Action {
	return chromedp.ActionFunc(func(ctx context.Context) error {
		deadline := time.Now().Add(2 * time.Minute)
		for {
			var ok bool
			if err := chromedp.Evaluate(expr, &ok).Do(ctx); err != nil {
				return err
			}
			if ok {
				return nil
			}
			if time.Now().After(deadline) {
				var body string
				_ = chromedp.Evaluate(`document.body.innerText.slice(-2000)`, &body).Do(ctx)
				return fmt.Errorf("timed out waiting for %s; the page shows:\n%s", expr, body)
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
}

func fileSize(path string) (int64, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

func cores(v []float64) string {
	var parts []string
	for _, x := range v {
		parts = append(parts, fmt.Sprintf("%.2f", x))
	}
	return strings.Join(parts, ", ")
}

// browsersTicks is the CPU time, in clock ticks, of the Chromium processes
// whose profile is under dir: what the tabs take from the machine.
func browsersTicks(dir string) int64 {
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	var sum int64
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil || !bytes.Contains(b, []byte("--user-data-dir="+dir)) {
			continue
		}
		pid, err := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		if err != nil {
			continue
		}
		if t, err := cpuTicks(pid); err == nil {
			sum += t
		}
	}
	return sum
}

func countLines(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return int64(bytes.Count(b, []byte{'\n'})), nil
}

// drainFigure reads the "shogun session → log" MiB/s of an earlier report.
func drainFigure(path string) float64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	m := regexp.MustCompile(`\| shogun session → log \| (\d+(?:\.\d+)?) \|`).FindSubmatch(b)
	if m == nil {
		return 0
	}
	v, _ := strconv.ParseFloat(string(m[1]), 64)
	return v
}

// lockedBuffer collects a process's output for several goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// freePort is a TCP port of 127.0.0.1 that was free a moment ago.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
