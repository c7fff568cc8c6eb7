package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/shogun-dev/shogun/ptyhost"
	"github.com/shogun-dev/shogun/queue"
	"github.com/shogun-dev/shogun/roles"
	"github.com/shogun-dev/shogun/tools/fakemodel"
	"github.com/shogun-dev/shogun/workspace"
)

// The states a fixture can expect: the supervisor's names for them.
const (
	stateReady     = "ready"
	stateBusy      = "busy"
	stateAttention = "attention"
	stateStarting  = "starting"
	stateLimited   = "limited"
)

// Screen is one fixture in supervisor/testdata/screens/index.yaml: a raw
// capture of a CLI's PTY output and the state a role showing it is in.
type Screen struct {
	// File is the capture, next to the index.
	File string `yaml:"file"`
	// CLI and Version say which program printed it.
	CLI     string `yaml:"cli"`
	Version string `yaml:"version"`
	// Cols and Rows are the terminal size it was recorded at.
	Cols int `yaml:"cols"`
	Rows int `yaml:"rows"`
	// State is what a role showing this screen is: ready, busy, attention,
	// starting (not ready yet: nothing may be typed) or limited (a usage
	// limit: nothing is typed until its reset, then the role goes on).
	State string `yaml:"state"`
	// Shows says what is on screen, for a person.
	Shows string `yaml:"shows"`
}

// Index is the whole index file.
type Index struct {
	Screens []Screen `yaml:"screens"`
}

// A scenario is one run of a CLI from a prepared home, with the steps that
// type into it and capture its screens.
type scenario struct {
	cli   string
	name  string
	setup Setup
	args  []string
	env   []string
	git   bool // the project is a git repository (Codex asks about trust only there)
	root  bool // only as root (the check it shows is about root)
	// task, when set, is the body of a task file written into the project
	// for the CLI (runtime/queue/tasks/<cli>.yaml): the CLI then talks to a
	// scripted model (tools/fakemodel, started for the scenario on
	// 127.0.0.1, Setup.Model), whose directives in the body ("fakemodel:
	// run …") it carries out once a nudge step tells it to.
	task  string
	steps []step
}

// A step types, waits, or captures a fixture.
type step struct {
	send     string         // type this (one write)
	nudge    bool           // type the preset's nudge for the task, then its submit key as a write of its own
	pause    time.Duration  // sleep this long
	wait     *regexp.Regexp // wait for this on screen
	capture  string         // save a fixture <cli>-<capture>.raw once want shows
	state    string         // the fixture's expected state
	want     *regexp.Regexp // the screen the fixture is cut at
	earliest bool           // cut at the first frame showing want, not after drawing settles
	shows    string         // Screen.Shows
	within   time.Duration  // how long want or wait may take (default 60 s)
}

func capture(name, state, want, shows string) step {
	return step{capture: name, state: state, want: regexp.MustCompile(want), shows: shows}
}

func send(text string) step            { return step{send: text} }
func nudge() step                      { return step{nudge: true} }
func pause(d time.Duration) step       { return step{pause: d} }
func waitFor(re string) step           { return step{wait: regexp.MustCompile(re)} }
func (s step) first() step             { s.earliest = true; return s }
func (s step) in(d time.Duration) step { s.within = d; return s }

// line is the text typed in the session scenarios. It is harmless if a CLI
// ever did reach a model.
const line = "Say hello"

// scenarios are what `make fixtures` records. Patterns here only cut the
// recordings; what the presets make of them is supervisor/screens_test.go.
var scenarios = []scenario{
	// Claude Code 2.1.197.
	{cli: "claude", name: "claude-fresh", steps: []step{
		capture("offline-exit", stateStarting, `Unable to connect to Anthropic services`,
			"a fresh home offline: the connection check fails and Claude Code exits 1"),
	}},
	{cli: "claude", name: "claude-trust", setup: Setup{Onboarded: true}, steps: []step{
		capture("trust", stateAttention, `Yes, I trust this folder`,
			"the folder trust dialog (Quick safety check), selection cursor ❯ on 1. Yes"),
	}},
	{cli: "claude", name: "claude-api-key", setup: Setup{Onboarded: true, Trusted: true}, steps: []step{
		capture("api-key", stateAttention, `Do you want to use this API key\?`,
			"the question whether to use ANTHROPIC_API_KEY, cursor ❯ on 2. No (recommended)"),
	}},
	{cli: "claude", name: "claude-not-logged-in", setup: Setup{Onboarded: true, Trusted: true, NoKey: true}, steps: []step{
		capture("not-logged-in", stateAttention, `Not logged in`,
			"onboarded and trusted, no API key and no sign-in: the composer over Not logged in · Run /login"),
	}},
	{cli: "claude", name: "claude-bypass", setup: Ready, args: []string{"--dangerously-skip-permissions"},
		env: []string{"IS_SANDBOX=1"}, steps: []step{
			capture("bypass-permissions", stateAttention, `Yes, I accept`,
				"the Bypass Permissions mode warning (--dangerously-skip-permissions), cursor ❯ on 1. No, exit"),
		}},
	{cli: "claude", name: "claude-root", setup: Ready, root: true, args: []string{"--dangerously-skip-permissions"}, steps: []step{
		capture("root-bypass-exit", stateStarting, `cannot be used with root`,
			"--dangerously-skip-permissions as root: one error line, exit 1"),
	}},
	{cli: "claude", name: "claude-session", setup: Ready, steps: []step{
		capture("ready", stateReady, `\? for shortcuts`, "the empty composer ❯ between two rules, ? for shortcuts"),
		// Claude Code puts a no-break space after its prompt mark.
		send(line), waitFor(`(?m)^❯\x{a0}` + line),
		capture("typed", stateReady, `(?m)^❯\x{a0}`+line, "text typed into the composer, not submitted"),
		send("\r"),
		capture("busy", stateBusy, `esc to interrupt`, "a submitted line: retrying the unreachable API, esc to interrupt").first(),
		capture("failed", stateReady, `(?s)Unable to connect to API.*\? for shortcuts`,
			"the request given up after its retries: the error, and the composer back").in(6 * time.Minute),
	}},
	{cli: "claude", name: "claude-permission", setup: Ready, task: askPython, steps: []step{
		waitFor(claudeModelUp), nudge(),
		capture("permission", stateAttention, `Do you want to proceed\?`,
			"a task's shell command the settings do not allow (python3): Bash command … Do you want to proceed? ❯ 1. Yes"),
	}},
	{cli: "claude", name: "claude-limit", setup: Ready, task: limitTask, steps: []step{
		waitFor(claudeModelUp), nudge(),
		capture("limit", stateLimited, `Request rejected \(429\)`,
			"the model's usage-limit error (HTTP 429): API Error: Request rejected (429) · You've hit your usage limit … resets HH:MM:SS"),
	}},
	{cli: "claude", name: "claude-task-busy", setup: Ready, task: slowTask, steps: []step{
		waitFor(claudeModelUp), nudge(),
		capture("task-busy", stateBusy, `(?s)Read(?:ing)? 1 file.*esc to interrupt`, "a task under way: the task file read, the model's next answer slow (esc to interrupt)"),
	}},

	// Codex 0.169.0.
	{cli: "codex", name: "codex-fresh", steps: []step{
		capture("sign-in", stateAttention, `Sign in with ChatGPT`, "a fresh CODEX_HOME: the sign-in choice"),
	}},
	{cli: "codex", name: "codex-trust", setup: Setup{Onboarded: true}, git: true, steps: []step{
		capture("composer-before-trust", stateStarting, `\? for shortcuts`,
			"the composer as first drawn, a moment before the trust dialog replaces it").first(),
		capture("trust", stateAttention, `Trust this folder\?`,
			"the folder access dialog of a git repository, cursor › on 1. Trust and continue"),
	}},
	{cli: "codex", name: "codex-early-submit", setup: Ready, steps: []step{
		waitFor(`\? for shortcuts`), send(line), pause(400 * time.Millisecond), send("\r"),
		capture("waiting-for-startup", stateStarting, `Waiting for startup`,
			"a line submitted while the session starts: it stays in the composer, Waiting for startup"),
	}},
	{cli: "codex", name: "codex-session", setup: Ready, steps: []step{
		capture("startup-composer", stateStarting, `\? for shortcuts`,
			"the composer as first drawn, while the session still starts").first(),
		capture("ready", stateReady, codexSessionUp, "the composer once the session is up"),
		send(line), waitFor(`(?m)^› ` + line),
		capture("typed", stateReady, `(?m)^› `+line, "text typed into the composer, not submitted"),
		send("\r"),
		capture("busy", stateBusy, `esc to interrupt`, "a submitted line: Working, then reconnecting, esc to interrupt").first(),
		// Offline, Codex goes on "Reconnecting... waiting for network"
		// for minutes: no screen after a failed request is recorded.
	}},
	{cli: "codex", name: "codex-permission", setup: Ready, task: "Touch a file, asking first.\nfakemodel: ask touch x\n", steps: []step{
		waitFor(codexSessionUp), nudge(),
		capture("permission", stateAttention, `Would you like to run the following command\?`,
			"a task's command that asks to leave the sandbox: Would you like to run the following command? › 1. Yes, proceed (y)"),
	}},
	{cli: "codex", name: "codex-new-worktree", setup: Ready, git: true, steps: []step{
		waitFor(codexSessionUp), send("/new"), pause(400 * time.Millisecond), send("\r"),
		capture("new-worktree", stateAttention, `Where should the new conversation run\?`,
			"/new in a git repository: Where should the new conversation run? › 1. Use current Git worktree 2. Create new Git worktree"),
	}},
	{cli: "codex", name: "codex-permission-long", setup: Ready, task: askLong, steps: []step{
		waitFor(codexSessionUp), nudge(),
		capture("permission-long", stateAttention, `Would you like to run the following command\?`,
			"a long command that asks to leave the sandbox: the prompt, Reason and the command's many rows above › 1. Yes, proceed (y)"),
	}},
	{cli: "codex", name: "codex-limit", setup: Ready, task: limitTask, steps: []step{
		waitFor(codexSessionUp), nudge(),
		capture("limit", stateLimited, `hit your usage limit`,
			"the model's usage_limit_reached error: ■ You’ve hit your usage limit. Upgrade to Pro … or try again at H:MM AM"),
	}},
	{cli: "codex", name: "codex-task-busy", setup: Ready, task: slowTask, steps: []step{
		waitFor(codexSessionUp), nudge(),
		capture("task-busy", stateBusy, `(?s)Read codex\.yaml.*esc to interrupt`, "a task under way: the task file read, the model's next answer slow (Working, esc to interrupt)"),
	}},

	// Gemini CLI 0.61.0.
	{cli: "gemini", name: "gemini-fresh", steps: []step{
		capture("trust", stateAttention, `Do you trust the files in this folder\?`, "a fresh home: the folder trust dialog, ● on 1. Trust folder"),
	}},
	{cli: "gemini", name: "gemini-auth", setup: Setup{Trusted: true}, steps: []step{
		capture("auth", stateAttention, `How would you like to authenticate`, "a trusted folder, no auth chosen: the auth choice"),
	}},
	{cli: "gemini", name: "gemini-session", setup: Ready, steps: []step{
		capture("ready", stateReady, `Type your message`, "the empty composer, with API-key auth and a dummy key"),
		send(line), waitFor(`(?m)^ > ` + line),
		capture("typed", stateReady, `(?m)^ > `+line, "text typed into the composer, not submitted"),
		send("\r"),
		capture("busy", stateBusy, `esc to cancel`, "a submitted line: Thinking... (esc to cancel)").first(),
		// Offline, Gemini CLI goes on "Thinking..." for minutes, redrawing
		// the screen at 20 KB/s: no screen after a failed request is kept.
	}},
	{cli: "gemini", name: "gemini-permission", setup: Ready, task: askPython, steps: []step{
		waitFor(geminiUp), nudge(),
		capture("permission", stateAttention, `Allow execution of`,
			"a task's shell command the policy does not allow (python3): Allow execution of [Shell]? ● 1. Allow once"),
	}},
	{cli: "gemini", name: "gemini-limit", setup: Ready, task: limitTask, steps: []step{
		waitFor(geminiUp), nudge(),
		capture("limit", stateAttention, `Usage limit reached`,
			"the model's daily quota error (429 RESOURCE_EXHAUSTED): the dialog Usage limit reached for all Pro models … "+
				"● 1. Keep trying 2. Stop, no reset time; it waits for a choice after the limit lifts"),
	}},
	{cli: "gemini", name: "gemini-task-busy", setup: Ready, task: slowTask, steps: []step{
		waitFor(geminiUp), nudge(),
		capture("task-busy", stateBusy, `(?s)ReadFile.*esc to cancel`, "a task under way: the task file read, the model's next answer slow (esc to cancel)"),
	}},

	// Copilot CLI 1.0.102.
	{cli: "copilot", name: "copilot-fresh", steps: []step{
		capture("trust", stateAttention, `Confirm folder trust`, "a fresh home: the folder trust dialog, cursor ❯ on 1. Yes"),
	}},
	{cli: "copilot", name: "copilot-sign-in", setup: Setup{Trusted: true}, steps: []step{
		capture("sign-in", stateAttention, `Please use /login`, "a trusted folder, not signed in: the composer under a sign-in message"),
	}},
	{cli: "copilot", name: "copilot-session", setup: Ready, steps: []step{
		capture("ready", stateReady, `\? help`, "the empty composer ❯ between two rules (offline mode, own provider)"),
		send(line), waitFor(`(?m)^❯ ` + line),
		capture("typed", stateReady, `(?m)^❯ `+line, "text typed into the composer, not submitted"),
		send("\r"),
		capture("busy", stateBusy, `Working`, "a submitted line: ● Working in the footer, retries").first(),
		capture("failed", stateReady, `(?s)Could not connect.*\? help`, "the request given up: the error, and the composer back").in(6 * time.Minute),
	}},
	{cli: "copilot", name: "copilot-permission", setup: Ready, task: askPython, steps: []step{
		waitFor(`\? help`), nudge(),
		capture("permission", stateAttention, `Do you want to run this command\?`,
			"a task's shell command the flags do not allow (python3): Do you want to run this command? ❯ 1. Yes"),
	}},
	{cli: "copilot", name: "copilot-task-busy", setup: Ready, task: slowTask, steps: []step{
		waitFor(`\? help`), nudge(),
		capture("task-busy", stateBusy, `(?s)Read copilot\.yaml.*Working`, "a task under way: the task file read, the model's next answer slow (● Working)"),
	}},
	// No copilot-limit: Copilot CLI 1.0.102 shows no usage-limit message
	// (it waits out retry-after under "Working"; tools/fakemodel/README.md).
}

// Task bodies of the scenarios with a scripted model (tools/fakemodel).
const (
	// askPython runs a command no CLI's settings allow (realcli setup
	// allows cat, mv and echo), so each asks for permission; Codex asks
	// only for a command that wants out of its sandbox ("ask").
	askPython = "Run the check.\nfakemodel: run python3 -c \"print(1)\"\n"
	// limitTask is answered with the API's usage-limit error (HTTP 429)
	// after the task file is read, for an hour: long enough to be recorded.
	limitTask = "Wait out the limit, then report.\nfakemodel: limit 1h\nfakemodel: report done via write done after the limit\n"
	// slowTask's answer after the task file is read pauses for a minute:
	// the CLI is at work on a task.
	slowTask = "Take your time.\nfakemodel: slow 1m\nfakemodel: run echo checked\n"
)

// Patterns that only cut recordings (see scenarios).
const (
	// Codex's session is up when the footer gains "← for agents" (and the
	// model line appears above it).
	codexSessionUp = `← for agents · \? for shortcuts`
	// Gemini CLI is up once its banner is drawn above the composer: under
	// load it draws the composer first, and a line typed then keeps its
	// submit as a new line.
	geminiUp = `(?s)Tips for getting started.*Type your message`
	// Claude Code with the scripted model's settings (acceptEdits) has the
	// mode in its footer instead of "? for shortcuts".
	claudeModelUp = `accept edits on`
)

// recordAll runs the scenarios (all, or those of the named CLIs, and of
// those the ones whose name matches only when only is set), up to par at a
// time, writes their fixtures into out and rewrites the index there,
// keeping the entries of CLIs not recorded this time (with only, every
// entry not recorded again).
func recordAll(cache, out, traceDir string, names []string, only *regexp.Regexp, par int, log func(string, ...any)) error {
	var todo []scenario
	for _, sc := range scenarios {
		if len(names) > 0 && !contains(names, sc.cli) || only != nil && !only.MatchString(sc.name) {
			continue
		}
		if sc.root && os.Geteuid() != 0 {
			log("%s: skipped (shows what happens as root)", sc.name)
			continue
		}
		todo = append(todo, sc)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	var (
		mu      sync.Mutex
		screens []Screen
		errs    []error
		wg      sync.WaitGroup
		slots   = make(chan struct{}, max(par, 1))
	)
	for _, sc := range todo {
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			start := time.Now()
			got, err := runScenario(sc, cache, out, traceDir, log)
			mu.Lock()
			defer mu.Unlock()
			screens = append(screens, got...)
			if err != nil {
				errs = append(errs, err)
				log("%s: FAILED after %.1fs: %v", sc.name, time.Since(start).Seconds(), err)
				return
			}
			log("%s: %d screens in %.1fs", sc.name, len(got), time.Since(start).Seconds())
		}()
	}
	wg.Wait()
	if err := writeIndex(out, names, only != nil, screens); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// runScenario runs one scenario in a throwaway home and project under
// $TMPDIR/shogun-realcli/<name> (a fixed path, so that a new recording
// differs from the last only where the CLI does).
func runScenario(sc scenario, cache, out, traceDir string, log func(string, ...any)) (screens []Screen, err error) {
	c, ok := lookupCLI(sc.cli)
	if !ok {
		return nil, fmt.Errorf("%s: no such CLI %q", sc.name, sc.cli)
	}
	root := filepath.Join(os.TempDir(), "shogun-realcli", sc.name)
	if err := os.RemoveAll(root); err != nil {
		return nil, err
	}
	defer os.RemoveAll(root)
	home, project := filepath.Join(root, "home"), filepath.Join(root, "project")
	for _, d := range []string{home, project, filepath.Join(root, "tmp")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	if sc.git {
		if b, err := exec.Command("git", "init", "-q", project).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("%s: git init: %w: %s", sc.name, err, b)
		}
	}
	setup, args := sc.setup, append([]string(nil), sc.args...)
	if sc.task != "" {
		model, stop, err := startModel(sc.name, traceDir)
		if err != nil {
			return nil, err
		}
		defer stop()
		setup.Model = model.URL()
		args = append(args, modelArgs(c, setup)...)
		if err := writeTask(c, project, sc.task); err != nil {
			return nil, fmt.Errorf("%s: %w", sc.name, err)
		}
	}
	env, err := prepare(c, setup, cache, home, project)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", sc.name, err)
	}
	marker := newMarker()
	env = append(env, runMarker+"="+marker, "TMPDIR="+filepath.Join(root, "tmp"))
	env = append(env, sc.env...)
	s, err := startSession(sc.name, ptyhost.Command{Path: c.Path(cache), Args: args, Env: env, Dir: project, Cols: cols, Rows: rows})
	if err != nil {
		return nil, err
	}
	defer func() {
		s.close()
		if err := killMarked(marker); err != nil {
			log("%s: leftovers: %v", sc.name, err)
		}
		if traceDir != "" {
			raw, chunks := s.output()
			if f, terr := os.Create(filepath.Join(traceDir, sc.name+".txt")); terr == nil {
				trace(f, raw, chunks)
				f.Close()
			}
		}
	}()
	for _, st := range sc.steps {
		within := st.within
		if within == 0 {
			within = 60 * time.Second
		}
		switch {
		case st.send != "":
			if err := s.send(st.send); err != nil {
				return screens, fmt.Errorf("%s: type %q: %w", sc.name, st.send, err)
			}
		case st.nudge:
			if err := typeNudge(s, c, project); err != nil {
				return screens, fmt.Errorf("%s: nudge: %w", sc.name, err)
			}
		case st.pause > 0:
			time.Sleep(st.pause)
		case st.wait != nil:
			if err := s.waitScreen(st.wait, within); err != nil {
				return screens, err
			}
		case st.capture != "":
			scr, err := captureStep(s, c, st, within, out)
			if err != nil {
				return screens, fmt.Errorf("%s: %s: %w", sc.name, st.capture, err)
			}
			screens = append(screens, scr)
		}
	}
	return screens, nil
}

// startModel starts a scripted model on a free port of 127.0.0.1 for the
// scenario; with a trace folder its request log goes to <name>-model.log
// there. stop ends it.
func startModel(name, traceDir string) (m *fakemodel.Server, stop func(), err error) {
	m = &fakemodel.Server{}
	var log *os.File
	if traceDir != "" {
		if log, err = os.Create(filepath.Join(traceDir, name+"-model.log")); err != nil {
			return nil, nil, err
		}
		m.Log = log
	}
	if err := m.Start(context.Background()); err != nil {
		if log != nil {
			log.Close()
		}
		return nil, nil, fmt.Errorf("%s: start the scripted model: %w", name, err)
	}
	return m, func() {
		_ = m.Close()
		if log != nil {
			log.Close()
		}
	}, nil
}

// writeTask writes the CLI's task file into the project, as the queue
// writes it for a role named like the CLI, with body.
func writeTask(c CLI, project, body string) error {
	l := workspace.New(project)
	b, err := queue.MarshalTask(queue.Task{
		TaskID: "t-fixture-" + c.Name, CommandID: "c-fixture-" + c.Name, Role: c.Name,
		Title: "Fixture task", Body: body, AssignedAt: time.Now().UTC().Truncate(time.Second),
		ReportTo: workspace.RelTo(project, l.ReportFile(c.Name)),
	})
	if err != nil {
		return fmt.Errorf("write task file: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(l.TaskFile(c.Name)), 0o755); err != nil {
		return fmt.Errorf("write task file: %w", err)
	}
	return os.WriteFile(l.TaskFile(c.Name), b, 0o644)
}

// typeNudge types the CLI's preset nudge for its task file and sends the
// preset's submit key as a write of its own, as the supervisor does, once
// the echo of the text has settled and the submit delay has passed: a
// CLI slowed down by others recording beside it takes a submit that comes
// too soon for part of a paste (Gemini CLI then keeps the text, and a new
// line, in its composer).
func typeNudge(s *session, c CLI, project string) error {
	p, ok := roles.LookupPreset(c.Name)
	if !ok {
		return fmt.Errorf("no preset %q", c.Name)
	}
	l := workspace.New(project)
	text := roles.Expand(p.Nudge, map[string]string{
		roles.VarTaskFile:   workspace.RelTo(project, l.TaskFile(c.Name)),
		roles.VarReportFile: workspace.RelTo(project, l.ReportFile(c.Name)),
	})
	s.settle(time.Second, 5*time.Second)
	if err := s.send(text); err != nil {
		return err
	}
	time.Sleep(p.SubmitDelay)
	s.settle(time.Second, 5*time.Second)
	return s.send(p.Submit)
}

// captureStep waits for the step's screen, lets the program finish drawing
// it (unless the first frame is wanted), and saves the output up to there.
func captureStep(s *session, c CLI, st step, within time.Duration, out string) (Screen, error) {
	if err := s.waitScreen(st.want, within); err != nil {
		return Screen{}, err
	}
	if !st.earliest {
		s.settle(700*time.Millisecond, 3*time.Second)
	}
	raw, chunks := s.output()
	b, err := cut(raw, chunks, st.want, st.earliest)
	if err != nil {
		return Screen{}, fmt.Errorf("%w; live screen:\n%s", err, s.screen())
	}
	name := c.Name + "-" + st.capture + ".raw"
	if err := os.WriteFile(filepath.Join(out, name), b, 0o644); err != nil {
		return Screen{}, err
	}
	return Screen{File: name, CLI: c.Name, Version: c.Version, Cols: cols, Rows: rows, State: st.state, Shows: st.shows}, nil
}

func newMarker() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// writeIndex rewrites index.yaml with the new screens, keeping the old
// entries of CLIs that were not recorded this time, or, for a partial
// recording, every old entry whose file was not recorded again.
func writeIndex(out string, names []string, partial bool, screens []Screen) error {
	path := filepath.Join(out, "index.yaml")
	var old Index
	if b, err := os.ReadFile(path); err == nil {
		if err := yaml.Unmarshal(b, &old); err != nil {
			return fmt.Errorf("read %s: %w", path, err)
		}
	}
	recorded := map[string]bool{}
	for _, s := range screens {
		recorded[s.File] = true
	}
	for _, s := range old.Screens {
		if partial && !recorded[s.File] || len(names) > 0 && !contains(names, s.CLI) {
			screens = append(screens, s)
		}
	}
	sort.Slice(screens, func(i, j int) bool { return screens[i].File < screens[j].File })
	b, err := yaml.Marshal(Index{Screens: screens})
	if err != nil {
		return err
	}
	head := "# Raw PTY captures of the real CLIs, written by `make fixtures` (tools/realcli).\n" +
		"# supervisor/screens_test.go replays each and checks the state its preset derives.\n" +
		"# Do not edit by hand: record again.\n"
	return os.WriteFile(path, append([]byte(head), b...), 0o644)
}

// askLong asks to run a command long enough to wrap over many rows (120
// file names): Codex's prompt is then far above its options.
var askLong = func() string {
	var b strings.Builder
	b.WriteString("Touch files, asking first.\nfakemodel: ask touch")
	for i := range 120 {
		fmt.Fprintf(&b, " build/output-file-%03d.txt", i)
	}
	return b.String() + "\n"
}()
