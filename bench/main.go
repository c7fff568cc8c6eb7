// Command bench is the measurement driver behind `make bench`: it measures
// what DESIGN.md section 12 sets targets for, each against a baseline taken
// in the same run where the design asks for a ratio, and writes the figures
// to docs/benchmarks.md. It is a separate main package so that no measuring
// code sits in the packages it measures. Linux only (it reads /proc).
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

func main() {
	shogun := flag.String("shogun", "bin/shogun", "the shogun binary to measure")
	out := flag.String("out", "docs/benchmarks.md", "where to write the report")
	drainMB := flag.Int("drain-mb", 120, "size of the file `cat` writes to the PTY, in MB")
	idleRoles := flag.Int("idle-roles", 16, "roles in the idle-cost measurement")
	idleFor := flag.Duration("idle-for", 10*time.Second, "how long the idle cost is sampled")
	only := flag.String("only", "", "run only this measurement: drain, idle, latency, ingest, roundtrip, typing, hook, realcli, history, search, prune, console, slots, soak or go; its section replaces the one of the same title in -out, the others are kept")
	consoleIdle := flag.Duration("console-idle-for", 5*time.Second, "how long each idle-tab cost is sampled")
	consoleFloodMB := flag.Int("console-flood-mb", 120, "size of the file the flooding role writes while console tabs watch, in MB")
	asProbe := flag.Bool("probe", false, "run as the latency probe role (internal)")
	samples := flag.Int("latency-samples", 400, "samples in the latency measurement")
	ingestN := flag.Int("ingest-files", 10000, "files in the ingest measurement")
	roundN := flag.Int("roundtrip-tasks", 1000, "tasks in the round-trip measurement")
	searchN := flag.Int("search-tasks", 1000000, "finished tasks in the history search measurement")
	buildN := flag.Int("search-build-tasks", 100000, "finished tasks whose search index is built from scratch in the search measurement")
	pruneN := flag.Int("prune-events", 1000000, "old events in the pruning measurement")
	historyCache := flag.String("history-cache", "", "keep the generated histories in this `DIR` and use those an earlier run left there (default: made afresh, removed at the end)")
	historyN := flag.String("history-tasks", "100000,1000000", "finished tasks of the histories in the history-cost measurement, comma-separated")
	steadyFor := flag.Duration("steady-for", 10*time.Second, "how long the steady work on each history is fed")
	typingN := flag.Int("typing-tasks", 250, "tasks to roles with an input marker in the typing-truth measurement")
	typingPlainN := flag.Int("typing-unmarked-tasks", 40, "tasks to roles without an input marker in the typing-truth measurement")
	hookN := flag.Int("hook-calls", 300, "hook processes per run in the approvals hook measurement")
	realN := flag.Int("realcli-tasks", 20, "tasks per real CLI in the real-CLI measurement")
	var slotsOpts slotsOptions
	flag.IntVar(&slotsOpts.Roles, "slots-roles", 64, "roles configured in the many-roles measurement")
	flag.IntVar(&slotsOpts.Max, "slots-max", 8, "agent.max_running in the many-roles measurement, and the roles of its baseline")
	flag.IntVar(&slotsOpts.Tasks, "slots-tasks", 640, "tasks spread over the roles in the many-roles measurement")
	flag.IntVar(&slotsOpts.Pairs, "slots-pairs", 3, "capped teams and baselines run in turn in the many-roles measurement; each team's median run is reported")
	flag.IntVar(&slotsOpts.Samples, "slots-samples", 20, "commands sent one at a time to time send → delivered in the many-roles measurement")
	flag.DurationVar(&slotsOpts.IdleFor, "slots-idle-for", 10*time.Second, "how long the supervisor is sampled at rest after the many-roles measurement")
	flag.IntVar(&slotsOpts.RealCLISamples, "slots-realcli-samples", 5, "sleeping/awake pairs of sends to real Claude Code and Codex roles in the many-roles measurement (0: none)")
	flag.StringVar(&slotsOpts.Hold, "slots-hold-memory", "300MB", "what each agent-sim holds resident in the many-roles measurement (\"\": nothing)")
	flag.DurationVar(&slotsOpts.WorkTime, "slots-work-time", 100*time.Millisecond, "each agent's work time in the many-roles measurement")
	var soakOpts soakOptions
	flag.DurationVar(&soakOpts.For, "soak-for", 3*time.Minute, "how long the soak sends commands")
	flag.DurationVar(&soakOpts.KillEvery, "soak-kill-every", time.Minute, "how often the soak kills the supervisor with kill -9")
	flag.DurationVar(&soakOpts.Sample, "soak-sample", 10*time.Second, "how often the soak samples the supervisor")
	flag.DurationVar(&soakOpts.Drain, "soak-drain", 90*time.Second, "how long the soak waits for open tasks to close after the last command")
	flag.IntVar(&soakOpts.Clients, "soak-clients", 3, "event-stream clients attached during the soak")
	flag.BoolVar(&soakOpts.Keep, "soak-keep", false, "keep the soak's workspace (its history, logs and the agents' records) and print where")
	flag.Parse()
	if *asProbe {
		if err := probe(); err != nil {
			fatal(err)
		}
		return
	}
	if runtime.GOOS != "linux" {
		fatal(fmt.Errorf("bench reads /proc and runs on Linux only"))
	}
	bin, err := filepath.Abs(*shogun)
	if err != nil {
		fatal(err)
	}
	r := &report{started: time.Now()}
	r.machine()
	h, err := newHistories(*historyCache)
	if err != nil {
		fatal(err)
	}
	defer h.Close()

	want := func(name string) bool { return *only == "" || *only == name }
	if want("drain") {
		fmt.Fprintln(os.Stderr, "bench: PTY drain to the log vs a bare read loop …")
		if err := measureDrain(r, *drainMB); err != nil {
			fatal(fmt.Errorf("drain: %w", err))
		}
	}
	if want("idle") {
		fmt.Fprintf(os.Stderr, "bench: idle cost of %d agent-sim roles over %s …\n", *idleRoles, *idleFor)
		if err := measureIdle(r, bin, *idleRoles, *idleFor); err != nil {
			fatal(fmt.Errorf("idle: %w", err))
		}
	}
	if want("console") {
		fmt.Fprintln(os.Stderr, "bench: web console: idle tabs, 10 tabs on a flooding role …")
		drain := r.drainMBps
		if drain == 0 {
			drain = drainFigure(*out)
		}
		if err := measureConsole(r, bin, *consoleIdle, *consoleFloodMB, drain); err != nil {
			fatal(fmt.Errorf("console: %w", err))
		}
	}
	if want("latency") {
		fmt.Fprintf(os.Stderr, "bench: latency from a command file to the nudge, %d samples …\n", *samples)
		self, err := os.Executable()
		if err != nil {
			fatal(err)
		}
		if err := measureLatency(r, bin, self, *samples, 25*time.Millisecond); err != nil {
			fatal(fmt.Errorf("latency: %w", err))
		}
	}
	if want("ingest") {
		fmt.Fprintf(os.Stderr, "bench: ingest of %d command files …\n", *ingestN)
		if err := measureIngest(r, bin, *ingestN); err != nil {
			fatal(fmt.Errorf("ingest: %w", err))
		}
	}
	if want("roundtrip") {
		fmt.Fprintf(os.Stderr, "bench: round trip of %d tasks over 8 instant agents …\n", *roundN)
		if err := measureRoundTrip(r, bin, 8, *roundN); err != nil {
			fatal(fmt.Errorf("round trip: %w", err))
		}
	}
	if want("typing") {
		fmt.Fprintf(os.Stderr, "bench: %d deliveries under random paste windows, %d to roles without an input marker …\n", *typingN+*typingPlainN, *typingPlainN)
		if err := measureTyping(r, bin, 10, *typingN, *typingPlainN, 8); err != nil {
			fatal(fmt.Errorf("typing: %w", err))
		}
	}
	if want("hook") {
		fmt.Fprintf(os.Stderr, "bench: %d approvals hook decisions, supervisor idle and under load …\n", *hookN)
		if err := measureHook(r, bin, *hookN, 100*time.Millisecond); err != nil {
			fatal(fmt.Errorf("hook: %w", err))
		}
	}
	if want("realcli") {
		fmt.Fprintf(os.Stderr, "bench: %d tasks for each real CLI against the scripted model …\n", *realN)
		if err := measureRealCLIs(r, *realN); err != nil {
			fatal(fmt.Errorf("real CLIs: %w", err))
		}
	}
	if want("history") {
		var sizes []int
		for _, f := range strings.Split(*historyN, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n <= 0 {
				fatal(fmt.Errorf("-history-tasks: %q is not a number of tasks", f))
			}
			sizes = append(sizes, n)
		}
		if err := measureHistory(r, h, bin, sizes, *steadyFor); err != nil {
			fatal(fmt.Errorf("history: %w", err))
		}
	}
	if want("search") {
		fmt.Fprintf(os.Stderr, "bench: history search over %d finished tasks …\n", *searchN)
		if err := measureSearch(r, h, bin, *searchN, *buildN); err != nil {
			fatal(fmt.Errorf("search: %w", err))
		}
	}
	if want("prune") {
		fmt.Fprintf(os.Stderr, "bench: pruning %d old events …\n", *pruneN)
		if err := measurePrune(r, *pruneN); err != nil {
			fatal(fmt.Errorf("prune: %w", err))
		}
	}
	if want("slots") {
		fmt.Fprintf(os.Stderr, "bench: %d roles under max_running %d, %d tasks, vs %d roles without a bound …\n", slotsOpts.Roles, slotsOpts.Max, slotsOpts.Tasks, slotsOpts.Max)
		if err := measureSlots(r, bin, slotsOpts); err != nil {
			fatal(fmt.Errorf("slots: %w", err))
		}
	}
	var soakVerdict error
	if want("soak") {
		fmt.Fprintf(os.Stderr, "bench: soak for %s, kill -9 of the supervisor every %s …\n", soakOpts.For, soakOpts.KillEvery)
		v, err := measureSoak(r, bin, soakOpts)
		if err != nil {
			fatal(fmt.Errorf("soak: %w", err))
		}
		soakVerdict = v
	}
	if want("go") {
		fmt.Fprintln(os.Stderr, "bench: Go benchmarks …")
		if err := goBenchmarks(r); err != nil {
			fatal(fmt.Errorf("go benchmarks: %w", err))
		}
	}
	if err := os.MkdirAll(filepath.Dir(*out), 0o755); err != nil {
		fatal(err)
	}
	text := r.String()
	if *only != "" {
		// One measurement: keep the other sections of the file as they are.
		if old, err := os.ReadFile(*out); err == nil {
			text = r.mergeInto(string(old))
		}
	}
	if err := os.WriteFile(*out, []byte(text), 0o644); err != nil {
		fatal(err)
	}
	fmt.Print(r.String())
	fmt.Fprintf(os.Stderr, "bench: wrote %s\n", *out)
	if soakVerdict != nil {
		fatal(soakVerdict)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "bench:", err)
	os.Exit(1)
}

// report collects sections of docs/benchmarks.md.
type report struct {
	started  time.Time
	sections []string
	header   string
	// drainMBps is the drain figure of this run (shogun session → log),
	// which the console's flood measurement is held to.
	drainMBps float64
}

func (r *report) machine() {
	gov, _ := exec.Command("go", "version").Output()
	cpu := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "model name") {
				_, v, _ := strings.Cut(l, ":")
				cpu = strings.TrimSpace(v)
				break
			}
		}
	}
	r.header = fmt.Sprintf("Measured %s on %d cores (%s), %s.",
		r.started.UTC().Format("2006-01-02 15:04 UTC"), runtime.NumCPU(), cpu, strings.TrimSpace(string(gov)))
}

func (r *report) add(title, body string) {
	r.sections = append(r.sections, "## "+title+"\n\n"+strings.TrimSpace(body)+"\n")
}

// mergeInto returns old (a report this program wrote) with each of r's
// sections in place of the one of the same title, or added at the end.
func (r *report) mergeInto(old string) string {
	head, rest, _ := strings.Cut(old, "\n## ")
	var sections []string
	if rest != "" {
		for _, s := range strings.Split("## "+rest, "\n## ") {
			if !strings.HasPrefix(s, "## ") {
				s = "## " + s
			}
			sections = append(sections, strings.TrimRight(s, "\n")+"\n")
		}
	}
	for _, n := range r.sections {
		title, _, _ := strings.Cut(n, "\n")
		replaced := false
		for i, s := range sections {
			if t, _, _ := strings.Cut(s, "\n"); t == title {
				sections[i], replaced = n, true
			}
		}
		if !replaced {
			sections = append(sections, n)
		}
	}
	return strings.TrimRight(head, "\n") + "\n\n" + strings.Join(sections, "\n")
}

func (r *report) String() string {
	return "# Benchmarks\n\nWritten by `make bench` (bench/main.go); do not edit by hand. " + r.header +
		"\nEach section names its target. Ratios compare with a baseline measured in the same run.\n\n" +
		strings.Join(r.sections, "\n")
}
