package agentsim

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"golang.org/x/term"
)

// quitConfirm is how soon a second Ctrl-C must follow the first to quit, as in
// Codex and Claude Code, where one stray Ctrl-C never ends a session.
const quitConfirm = time.Second

// previewLen is how much of a submitted line the agent repeats back.
const previewLen = 60

var trustDialog = []string{
	"Do you trust the files in this folder?",
	" 1. Yes, proceed",
	" 2. No",
}

// termSignals are what a supervisor or a closing terminal sends to end a program.
var termSignals = []os.Signal{syscall.SIGTERM, syscall.SIGHUP, os.Interrupt}

// Run runs the simulated agent on the terminal in and out until it is told to
// exit (`/exit`, `/quit`, Ctrl-C twice or Ctrl-D on an empty prompt), ctx is
// done, a termination signal arrives, the terminal goes away, or it crashes as
// opts ask. The terminal is put back as it was before Run returns.
//
// Run returns nil after a clean exit, ErrNotTerminal when in is not a terminal,
// and an *ExitError when the process should exit with a particular status (a
// crash, a signal, a refused trust dialog). Run does not close in or out; a read
// of in still pending when it returns ends when in is closed, so Run is meant to
// be the whole life of the process, as it is under `shogun agent-sim`.
func Run(ctx context.Context, opts Options, in *os.File, out *os.File) error {
	if err := opts.Validate(); err != nil {
		return err
	}
	inFd := int(in.Fd())
	if !term.IsTerminal(inFd) {
		return ErrNotTerminal
	}
	handler, role, err := handlerFor(opts)
	if err != nil {
		return err
	}
	rec, err := openRecorder(opts.RecordPath)
	if err != nil {
		return err
	}
	defer rec.close()

	saved, err := term.MakeRaw(inFd)
	if err != nil {
		return fmt.Errorf("agent-sim: set raw mode: %w", err)
	}
	defer term.Restore(inFd, saved)
	defer enableVT(out)()

	a := &agent{
		opts:     opts,
		role:     role,
		scr:      newScreen(out),
		rec:      rec,
		handler:  handler,
		keys:     keyDecoder{pasteWindow: opts.pasteWindow()},
		results:  make(chan jobResult, 1),
		handoffs: make(map[string]*handoff),
	}
	return a.run(ctx, in)
}

// handlerFor picks the handler opts ask for and names the agent.
func handlerFor(opts Options) (taskHandler, string, error) {
	role := opts.Role
	if role == "" {
		role = os.Getenv("SHOGUN_ROLE")
	}
	if len(opts.Delegate) == 0 {
		if role == "" {
			role = "agent-sim"
		}
		return simulatedWork{workTime: opts.WorkTime, fail: opts.Fail, role: role}, role, nil
	}
	// The commands name the agent as the role to notify; a made-up name
	// would send the reports nowhere and leave the agent waiting for ever.
	if role == "" {
		return nil, "", errors.New("agent-sim: delegating needs the agent's own role (--role or $SHOGUN_ROLE)")
	}
	ws := os.Getenv("SHOGUN_WORKSPACE")
	if ws == "" {
		ws = "."
	}
	ws, err := filepath.Abs(ws)
	if err != nil {
		return nil, "", fmt.Errorf("agent-sim: workspace: %w", err)
	}
	return newDelegator(opts.Delegate, role, ws, opts.WorkTime, opts.Fail), role, nil
}

// phase is where the agent is in its life; a job may run only when ready.
type phase int

const (
	phaseStarting phase = iota // StartDelay: input is kept for later
	phaseTrust                 // the trust dialog waits for an answer
	phaseReady                 // the composer takes input
	phaseHung                  // Hang: nothing is answered any more
)

// agent is the state of one simulated CLI. Everything but the job and flood
// goroutines runs on the goroutine of run, so none of it needs a lock.
type agent struct {
	opts    Options
	role    string
	scr     *screen
	rec     *recorder
	handler taskHandler
	keys    keyDecoder

	phase       phase
	input       []byte    // the composer's text
	hint        string    // replaces the footer until the next key
	quitAt      time.Time // when a Ctrl-C on an empty composer asked to confirm
	dirty       bool      // the pane needs a redraw
	inputClosed bool

	job     *job
	queued  []string // lines submitted while busy, handled in order after it
	results chan jobResult

	// Tasks handed down wait here, idle, for their parts' reports; the agent
	// works on other tasks meanwhile, so each keeps its own state.
	waiting  []*handoff          // not yet complete, oldest first
	handoffs map[string]*handoff // every one by task id, so a redelivery resumes it

	life context.Context // ends the job and the flood when run returns
	wg   sync.WaitGroup

	done    bool
	exitErr error
}

// A job is the task being worked on.
type job struct {
	t       *task
	started time.Time
	cancel  context.CancelFunc
}

type jobResult struct {
	job     *job
	rep     report
	handoff *handoff // instead of rep: the work was handed down
	err     error
}

func (a *agent) run(ctx context.Context, in *os.File) error {
	life, cancel := context.WithCancel(ctx)
	a.life = life

	var sigC chan os.Signal
	if a.opts.IgnoreTerm {
		signal.Ignore(termSignals...)
	} else {
		sigC = make(chan os.Signal, 1)
		signal.Notify(sigC, termSignals...)
		defer signal.Stop(sigC)
	}

	q := newInputQueue()
	go q.read(in)
	defer func() {
		// Interrupt the pending read where the platform allows it, so the
		// reader does not outlive Run; elsewhere it ends when in is closed.
		if in.SetReadDeadline(time.Now()) == nil {
			<-q.done
			in.SetReadDeadline(time.Time{})
		}
	}()

	a.scr.control("\x1b[?2004h")
	var crash <-chan time.Time
	if a.opts.CrashAfter > 0 {
		t := time.NewTimer(a.opts.CrashAfter)
		defer t.Stop()
		crash = t.C
	}
	var started <-chan time.Time
	if a.opts.StartDelay > 0 {
		a.phase = phaseStarting
		a.draw()
		t := time.NewTimer(a.opts.StartDelay)
		defer t.Stop()
		started = t.C
	} else {
		a.begin()
	}
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	escTimer := time.NewTimer(escWait)
	escTimer.Stop()
	defer escTimer.Stop()
	var escC <-chan time.Time

	for !a.done {
		select {
		case <-ctx.Done():
			a.stop(fmt.Errorf("agent-sim: %w", context.Cause(ctx)))
		case <-crash:
			a.stop(&ExitError{Code: a.opts.exitCode(), Reason: fmt.Sprintf("simulated crash after %v", a.opts.CrashAfter)})
		case sig := <-sigC:
			code := 1
			if s, ok := sig.(syscall.Signal); ok {
				code = 128 + int(s)
			}
			a.stop(&ExitError{Code: code, Reason: "terminated by " + sig.String()})
		case <-started:
			started = nil
			a.begin()
			a.drain(q)
		case <-q.ready:
			a.drain(q)
		case <-escC:
			escC = nil
			a.keys.flush(time.Now(), a.handleKey)
		case r := <-a.results:
			a.finish(r)
		case <-tick.C:
			if a.job != nil {
				a.dirty = true // the elapsed time in the busy indicator
			}
		}
		if a.done {
			break
		}
		if until, ok := a.keys.pendingEsc(); ok && escC == nil {
			escTimer.Reset(time.Until(until))
			escC = escTimer.C
		}
		if a.dirty {
			a.draw()
		}
	}

	cancel()
	a.wg.Wait()
	a.scr.leave()
	a.scr.control("\x1b[?2004l")
	return a.exitErr
}

// begin ends the start-up: the trust dialog if asked for, else the prompt.
func (a *agent) begin() {
	if a.opts.TrustPrompt {
		a.phase = phaseTrust
		a.draw()
		return
	}
	a.ready()
}

// ready shows the banner and the prompt, and starts the flood if asked for.
func (a *agent) ready() {
	a.phase = phaseReady
	dir, _ := os.Getwd()
	a.say("✻ agent-sim · a simulated AI coding CLI",
		fmt.Sprintf("  role: %s · directory: %s", a.role, dir),
		"")
	if a.opts.Flood > 0 {
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			flood(a.life, a.scr, a.opts.Flood)
		}()
	}
}

// drain handles the input read so far, unless the agent is still starting.
func (a *agent) drain(q *inputQueue) {
	if a.phase == phaseStarting {
		return
	}
	chunks, err := q.take()
	for _, c := range chunks {
		if a.done || a.phase == phaseHung || a.opts.IgnoreInput {
			continue
		}
		a.keys.feed(c.data, c.at, a.handleKey)
	}
	if err != nil && !a.inputClosed {
		a.inputClosed = true
		// A TUI whose terminal is gone exits, unless it is the stubborn kind
		// the supervisor must kill.
		if !a.opts.IgnoreTerm && !a.done {
			a.stop(nil)
		}
	}
}

func (a *agent) handleKey(k key) {
	if a.done {
		return
	}
	switch a.phase {
	case phaseTrust:
		a.trustKey(k)
	case phaseReady:
		a.composerKey(k)
	}
}

func (a *agent) trustKey(k key) {
	switch {
	case k.kind == keyEnter || k.kind == keyNewline || k.kind == keyChar && k.b == '1':
		// Clear the dialog first: the supervisor leaves its attention state
		// only when the screen stops showing it.
		a.scr.setPane(pane{})
		a.ready()
	case k.kind == keyChar && k.b == '2' || k.kind == keyInterrupt:
		a.scr.update(pane{}, "Not trusted. Bye.")
		a.stop(&ExitError{Code: 1, Reason: "the folder is not trusted"})
	}
}

func (a *agent) composerKey(k key) {
	a.dirty = true
	if k.kind != keyInterrupt {
		a.hint = ""
		a.quitAt = time.Time{}
	}
	switch k.kind {
	case keyChar:
		a.input = append(a.input, k.b)
	case keyNewline:
		a.input = append(a.input, '\n')
	case keyPaste:
		a.input = append(a.input, k.text...)
	case keyBackspace:
		if len(a.input) > 0 {
			_, n := utf8.DecodeLastRune(a.input)
			a.input = a.input[:len(a.input)-n]
		}
	case keyClear:
		a.input = a.input[:0]
	case keyEnter:
		a.submit(k.at)
	case keyEsc:
		if a.job != nil {
			a.job.cancel()
		}
	case keyInterrupt:
		switch {
		case a.job != nil:
			a.job.cancel()
		case len(a.input) > 0:
			a.input = a.input[:0]
		case !a.quitAt.IsZero() && k.at.Sub(a.quitAt) < quitConfirm:
			a.quit()
		default:
			a.quitAt = k.at
			a.hint = "  ctrl + c again to quit"
		}
	case keyEOF:
		if len(a.input) == 0 && a.job == nil {
			a.quit()
		}
	}
}

// submit takes the composer's text as what the user sent.
func (a *agent) submit(at time.Time) {
	line := string(a.input)
	if strings.TrimSpace(line) == "" {
		return // the real CLIs ignore Enter on an empty composer
	}
	a.input = a.input[:0]
	if err := a.rec.submit(at, line); err != nil {
		a.say("✗ agent-sim: record: " + err.Error())
	}
	if a.opts.Hang {
		a.phase = phaseHung
		a.dirty = false
		return
	}
	if a.job != nil {
		a.queued = append(a.queued, line)
		a.say("↳ Queued: " + preview(line))
		return
	}
	a.handleLine(line)
}

// handleLine answers one submitted line as an agent would.
func (a *agent) handleLine(line string) {
	switch strings.TrimSpace(line) {
	case "/exit", "/quit":
		a.quit()
		return
	}
	t, notes := findTask(line)
	for i, n := range notes {
		notes[i] = "⚠ " + n
	}
	if t == nil {
		a.say(append(notes, "Understood: "+preview(line))...)
		a.hear(line)
		return
	}
	a.start(t)
	a.say(append(notes, fmt.Sprintf("• Task %s: %s", t.TaskID, preview(t.Title)))...)
}

// start runs the handler for t on a goroutine of its own, so input (Escape,
// queued lines) is still read while the agent works.
func (a *agent) start(t *task) {
	if err := a.rec.task(t); err != nil {
		a.say("✗ agent-sim: record: " + err.Error())
	}
	ctx, cancel := context.WithCancel(a.life)
	j := &job{t: t, started: time.Now(), cancel: cancel}
	a.job = j
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		rep, h, err := a.handler.handle(ctx, t)
		a.results <- jobResult{job: j, rep: rep, handoff: h, err: err}
	}()
}

// finish reports on a job that ended, then takes the next queued line.
func (a *agent) finish(r jobResult) {
	if r.job != a.job {
		return
	}
	r.job.cancel()
	a.job = nil
	id := r.job.t.TaskID
	switch {
	case errors.Is(r.err, context.Canceled):
		a.say("■ Interrupted " + id)
	case r.err != nil:
		a.say(fmt.Sprintf("✗ %s: %v", id, r.err))
	case r.handoff != nil:
		a.handDown(r.handoff)
	default:
		a.deliver(r.job.t, r.rep)
	}
	for a.job == nil && len(a.queued) > 0 && !a.done {
		line := a.queued[0]
		a.queued = a.queued[1:]
		a.handleLine(line)
	}
}

// deliver writes the report on t where t asks for it.
func (a *agent) deliver(t *task, rep report) {
	if err := writeReport(t.reportPath, rep); err != nil {
		a.say(fmt.Sprintf("✗ %s: write report: %v", t.TaskID, err))
		return
	}
	if err := a.rec.report(t.TaskID, t.reportPath); err != nil {
		a.say("✗ agent-sim: record: " + err.Error())
	}
	a.say(fmt.Sprintf("✓ Reported %s (%s)", t.TaskID, rep.Status))
}

// handDown takes a task whose parts a handler handed to other roles, and waits
// for their reports. A task delivered again resumes its first handoff: the
// reports already heard still count, and once all are in it is reported again
// at once, as a plain agent would redo it, rather than waiting for reports
// that will not come twice.
func (a *agent) handDown(h *handoff) {
	lines := make([]string, 0, len(h.parts)+1)
	for _, p := range h.parts {
		if p.written {
			lines = append(lines, fmt.Sprintf("→ Handed %q to %s", p.title, p.role))
		} else {
			lines = append(lines, fmt.Sprintf("→ Already handed %q to %s", p.title, p.role))
		}
	}
	if first := a.handoffs[h.t.TaskID]; first != nil {
		first.t = h.t // this delivery's report_to
		h = first
	} else {
		a.handoffs[h.t.TaskID] = h
		a.waiting = append(a.waiting, h)
	}
	if h.complete() {
		a.say(lines...)
		a.complete(h)
		return
	}
	a.say(append(lines, fmt.Sprintf("◦ Waiting for reports on %s from %s", h.t.TaskID, strings.Join(h.waitingFor(), ", ")))...)
}

// hear gives a submitted line to the handoff it is a notification for. A line
// naming a part's title goes to that part; one that only names a role goes to
// the oldest task still waiting for that role, as the supervisor dispatches a
// role's work in order. Duplicates and unrelated lines change nothing.
func (a *agent) hear(line string) {
	var (
		to       *handoff
		at, best int
	)
	for _, h := range a.waiting {
		if i, strength := h.match(line); strength > best {
			to, at, best = h, i, strength
		}
	}
	if to == nil || to.parts[at].reported {
		return
	}
	p := &to.parts[at]
	p.reported = true
	a.say(fmt.Sprintf("✓ %s reported %q", p.role, p.title))
	if to.complete() {
		a.complete(to)
	}
}

// complete reports a handoff whose parts are all in.
func (a *agent) complete(h *handoff) {
	for i, w := range a.waiting {
		if w == h {
			a.waiting = append(a.waiting[:i], a.waiting[i+1:]...)
			break
		}
	}
	a.deliver(h.t, h.report())
}

// quit is the clean exit.
func (a *agent) quit() {
	a.scr.update(pane{}, "Bye.")
	a.stop(nil)
}

func (a *agent) stop(err error) {
	a.done = true
	a.exitErr = err
}

// say adds lines to the history and redraws the pane as it is now.
func (a *agent) say(lines ...string) {
	a.scr.update(a.view(), lines...)
	a.dirty = false
}

func (a *agent) draw() {
	if a.phase != phaseHung {
		a.scr.setPane(a.view())
	}
	a.dirty = false
}

// view is the pane for the agent's current state.
func (a *agent) view() pane {
	switch a.phase {
	case phaseStarting:
		return pane{header: []string{"Starting…"}}
	case phaseTrust:
		return pane{header: trustDialog}
	case phaseReady:
		p := pane{prompt: true, input: string(a.input), footer: "  ? for shortcuts"}
		if n := a.missingReports(); n > 0 {
			p.footer += fmt.Sprintf(" · waiting for %d %s", n, plural(n, "report", "reports"))
		}
		if a.hint != "" {
			p.footer = a.hint
		}
		if a.job != nil {
			secs := int(time.Since(a.job.started).Seconds())
			p.header = []string{fmt.Sprintf("• Working… (esc to interrupt) · %ds", secs)}
		}
		return p
	}
	return pane{}
}

// missingReports counts the reports handed-down tasks still wait for.
func (a *agent) missingReports() int {
	n := 0
	for _, h := range a.waiting {
		n += len(h.waitingFor())
	}
	return n
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// preview is the start of a line, on one line, for repeating it back.
func preview(s string) string {
	s = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ", "\t", " ").Replace(s)
	if utf8.RuneCountInString(s) <= previewLen {
		return s
	}
	return string([]rune(s)[:previewLen]) + "…"
}
