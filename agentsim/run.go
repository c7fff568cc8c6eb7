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

// limitLine is what an agent out of quota (Options.LimitScreen) shows
// without LimitReset.
const limitLine = "■ You've hit your usage limit · resets 3:45pm"

// limitLine is the usage-limit line, naming the reset time (to the second,
// as a clock) when the limit lifts (Options.LimitReset).
func (a *agent) limitLine() string {
	if a.limitUntil.IsZero() {
		return limitLine
	}
	return "■ You've hit your usage limit · resets " + a.limitUntil.Format("15:04:05")
}

// termSignals are what a supervisor or a closing terminal sends to end a program.
var termSignals = []os.Signal{syscall.SIGTERM, syscall.SIGHUP, os.Interrupt}

// signalName is sig as people write it, "SIGTERM": its String is the
// C library's description ("terminated"), which read "terminated by
// terminated" in the last line.
func signalName(sig os.Signal) string {
	switch sig {
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGHUP:
		return "SIGHUP"
	case os.Interrupt:
		return "SIGINT"
	}
	return sig.String()
}

// Run runs the simulated agent on the terminal in and out until it is told to
// exit (`/exit`, `/quit`, Ctrl-C twice or Ctrl-D on an empty prompt), ctx is
// done, a termination signal arrives, the terminal goes away, or it crashes as
// opts ask. The terminal is put back as it was before Run returns.
//
// Run returns nil after a clean exit, ErrNotTerminal when in is not a terminal,
// and an *ExitError when the process should exit with a particular status (a
// crash, a signal, a refused trust dialog). Run does not close in or out; a read
// of in still pending when it returns ends when in is closed, so Run is meant to
// be the whole life of the process, as it is under `shogun agent-sim`. On
// Windows a missing standard handle (nil, or null: Wine gives a pseudo
// console's child none) is replaced by the console's CONIN$ or CONOUT$.
func Run(ctx context.Context, opts Options, in *os.File, out *os.File) error {
	if err := opts.Validate(); err != nil {
		return err
	}
	in, out = consoleFiles(in, out)
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
	if opts.Resumed {
		if err := rec.resumed(); err != nil {
			return err
		}
	}

	saved, err := term.MakeRaw(inFd)
	if err != nil {
		return fmt.Errorf("agent-sim: set raw mode: %w", err)
	}
	defer term.Restore(inFd, saved)
	w, restore := consoleOutput(out)
	defer restore()

	dir, _ := os.Getwd()
	a := &agent{
		opts:     opts,
		role:     role,
		dir:      dir,
		scr:      &screen{out: out, w: w, full: opts.Redraw == RedrawFull, torn: opts.TornPaint},
		rec:      rec,
		handler:  handler,
		keys:     keyDecoder{pasteWindow: opts.pasteWindow()},
		results:  make(chan jobResult, 1),
		handoffs: make(map[string]*handoff),
	}
	if opts.HoldFromTask == 0 {
		a.holdMemory()
	}
	return a.run(ctx, in)
}

// holdMemory takes HoldMemory and writes to every page of it, so that the
// kernel gives it real pages: memory only reserved is not resident.
func (a *agent) holdMemory() {
	if a.opts.HoldMemory == 0 || a.held != nil {
		return
	}
	a.held = make([]byte, a.opts.HoldMemory)
	for i := 0; i < len(a.held); i += 4096 {
		a.held[i] = 1
	}
}

// handlerFor picks the handler opts ask for and names the agent.
func handlerFor(opts Options) (taskHandler, string, error) {
	role := opts.Role
	if role == "" {
		role = os.Getenv("SHOGUN_ROLE")
	}
	if len(opts.Delegate) == 0 && !opts.Bounce {
		if role == "" {
			role = "agent-sim"
		}
		return simulatedWork{workTime: opts.WorkTime, fail: opts.Fail, role: role, commit: opts.CommitWork, trespass: opts.Trespass}, role, nil
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
	d := newDelegator(opts.Delegate, role, ws, opts.WorkTime, opts.Fail)
	if opts.Bounce {
		return bouncer{d: d, work: simulatedWork{workTime: opts.WorkTime, fail: opts.Fail, role: role, commit: opts.CommitWork, trespass: opts.Trespass}}, role, nil
	}
	return d, role, nil
}

// phase is where the agent is in its life; a job may run only when ready.
type phase int

const (
	phaseSilent   phase = iota // FirstPaintDelay: no output, input is kept for later
	phaseStarting              // StartDelay: input is kept for later
	phaseDialog                // a dialog before the prompt waits for an answer
	phaseReady                 // the composer takes input (unless a dialog covers it)
	phaseHung                  // Hang: nothing is answered any more
)

// agent is the state of one simulated CLI. Everything but the job and flood
// goroutines runs on the goroutine of run, so none of it needs a lock.
type agent struct {
	// deafUntil: keys that arrive before it are dropped (DeafAfterCommand).
	deafUntil time.Time
	opts      Options
	role      string
	dir       string // the working directory, as the banner and dialogs show it
	scr       *screen
	rec       *recorder
	handler   taskHandler
	keys      keyDecoder

	phase       phase
	input       []byte    // the composer's text
	hint        string    // replaces the footer until the next key
	quitAt      time.Time // when a Ctrl-C on an empty composer asked to confirm
	dirty       bool      // the pane needs a redraw
	inputClosed bool
	pasteOn     bool      // bracketed paste was switched on, so it is switched off at the end
	limited     bool      // LimitScreen: the quota is spent
	limitUntil  time.Time // LimitReset: when the quota comes back
	quotaBack   bool      // the limit has lifted and does not come again
	dropped     int       // DropTurns: task lines lost so far
	skipped     int       // SkipReports: reports not written so far
	tasks       int       // tasks started in this run (HoldFromTask)
	held        []byte    // HoldMemory, once taken

	// dialog is the one shown, over the composer when the phase is ready;
	// dialogsLeft are to come after it.
	dialog      *dialog
	dialogsLeft []string
	startTimer  *time.Timer // StartDelay
	laterTimer  *time.Timer // DialogAfter, from the prompt's first showing

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

	defer func() {
		for _, t := range []*time.Timer{a.startTimer, a.laterTimer} {
			if t != nil {
				t.Stop()
			}
		}
	}()
	var crash <-chan time.Time
	if a.opts.CrashAfter > 0 {
		t := time.NewTimer(a.opts.CrashAfter)
		defer t.Stop()
		crash = t.C
	}
	var painted, started <-chan time.Time
	if a.opts.FirstPaintDelay > 0 {
		a.phase = phaseSilent
		t := time.NewTimer(a.opts.FirstPaintDelay)
		defer t.Stop()
		painted = t.C
	} else {
		started = a.paint()
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
			a.stop(&ExitError{Code: code, Reason: "terminated by " + signalName(sig)})
		case <-painted:
			painted = nil
			started = a.paint()
			a.drain(q)
		case <-started:
			started = nil
			a.begin()
			a.drain(q)
		case <-a.later():
			a.laterTimer = nil
			if a.phase == phaseReady {
				a.dialogsLeft = a.opts.laterDialogs()
				a.nextDialog()
			}
		case <-q.ready:
			a.drain(q)
		case <-escC:
			escC = nil
			a.keys.flush(time.Now(), a.handleKey)
		case r := <-a.results:
			a.finish(r)
		case <-tick.C:
			if a.job != nil && !a.opts.SilentWork {
				a.dirty = true // the elapsed time in the busy indicator
			}
			if a.limited && !a.limitUntil.IsZero() && !time.Now().Before(a.limitUntil) {
				// The quota is back, for good: the agent works again.
				a.limited, a.limitUntil, a.quotaBack = false, time.Time{}, true
				a.say("✓ Your usage limit has reset.")
				a.dirty = true
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
	if a.pasteOn {
		a.scr.control("\x1b[?2004l")
	}
	return a.exitErr
}

// paint is the agent's first output: bracketed paste on, then `Starting…`
// for the start delay, whose end it returns, or the first screen.
func (a *agent) paint() (started <-chan time.Time) {
	a.scr.control("\x1b[?2004h")
	a.pasteOn = true
	if a.opts.StartDelay > 0 {
		a.phase = phaseStarting
		a.draw()
		a.startTimer = time.NewTimer(a.opts.StartDelay)
		return a.startTimer.C
	}
	a.begin()
	return nil
}

// later is when the dialogs of DialogAfter are due, nil when none are.
func (a *agent) later() <-chan time.Time {
	if a.laterTimer == nil {
		return nil
	}
	return a.laterTimer.C
}

// begin ends the start-up: the dialogs asked for, then the prompt.
func (a *agent) begin() {
	a.dialogsLeft = a.opts.startDialogs()
	a.nextDialog()
}

// nextDialog shows the next dialog due, or goes back to the composer (or on
// to it, at start-up) when none is left.
func (a *agent) nextDialog() {
	if len(a.dialogsLeft) > 0 {
		a.dialog = newDialog(a.dialogsLeft[0])
		a.dialogsLeft = a.dialogsLeft[1:]
		if a.phase != phaseReady {
			a.phase = phaseDialog
		}
		a.draw()
		return
	}
	a.dialog = nil
	if a.phase == phaseReady {
		a.draw()
		return
	}
	if a.phase == phaseDialog {
		// Clear the dialog first: the supervisor leaves its attention state
		// only when the screen stops showing it.
		a.scr.setPane(pane{})
	}
	a.ready()
}

// ready shows the banner and the prompt, and starts the flood if asked for.
func (a *agent) ready() {
	a.phase = phaseReady
	a.say("✻ agent-sim · a simulated AI coding CLI",
		fmt.Sprintf("  role: %s · directory: %s", a.role, a.dir),
		"")
	if a.opts.DialogAfter > 0 {
		a.laterTimer = time.NewTimer(a.opts.DialogAfter)
	}
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
	if a.phase == phaseSilent || a.phase == phaseStarting {
		return
	}
	chunks, err := q.take()
	for _, c := range chunks {
		if a.done || a.phase == phaseHung || a.opts.IgnoreInput || c.at.Before(a.deafUntil) {
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
	switch {
	case a.dialog != nil:
		a.dialogKey(k)
	case a.phase == phaseReady:
		a.composerKey(k)
	}
}

// dialogKey gives k to the dialog shown; an answer is recorded and saved
// before anything else happens, so even one that ends the agent is on file.
func (a *agent) dialogKey(k key) {
	d := a.dialog
	picked, redraw := d.key(k)
	if picked < 0 {
		if redraw {
			a.draw()
		}
		return
	}
	opt := d.spec.options[picked]
	var failed []string
	if err := a.rec.dialog(k.at, d.name, opt.label); err != nil {
		failed = append(failed, "✗ agent-sim: record: "+err.Error())
	}
	if err := saveChoice(choiceAt(k.at, d.name, opt.label)); err != nil {
		failed = append(failed, "✗ agent-sim: "+err.Error())
	}
	if opt.exit {
		farewell, reason := opt.farewell, opt.reason
		if farewell == "" {
			farewell = "Bye."
		}
		if reason == "" {
			reason = fmt.Sprintf("the %s dialog was answered %q", d.name, opt.label)
		}
		a.dialog = nil
		a.scr.update(pane{}, append(failed, farewell)...)
		a.stop(&ExitError{Code: 1, Reason: reason})
		return
	}
	if len(failed) > 0 {
		a.say(failed...)
	}
	a.nextDialog()
}

func (a *agent) composerKey(k key) {
	if k.kind == keyUp || k.kind == keyDown {
		return // no history to recall; the composer stays as it is
	}
	a.dirty = true
	if k.kind != keyInterrupt {
		a.hint = ""
		a.quitAt = time.Time{}
	}
	switch k.kind {
	case keyChar:
		a.input = append(a.input, k.b)
	case keyNewline:
		if k.burst {
			if err := a.rec.newline(k.at, string(a.input)); err != nil {
				a.say("✗ agent-sim: record: " + err.Error())
			}
		}
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
	if strings.HasPrefix(line, "/") && a.opts.DeafAfterCommand > 0 {
		a.deafUntil = at.Add(a.opts.DeafAfterCommand)
	}
	if err := a.rec.submit(at, line); err != nil {
		a.say("✗ agent-sim: record: " + err.Error())
	}
	if a.opts.Transcript {
		a.say(a.transcript(line)...)
	}
	if a.opts.Hang {
		a.phase = phaseHung
		a.dirty = false
		return
	}
	if a.limited {
		a.say(a.limitLine())
		return
	}
	if a.dropped < a.opts.DropTurns {
		if t, _, _ := findTask(line); t != nil {
			a.dropped++
			a.dirty = true // the emptied composer, and nothing else
			return
		}
	}
	if a.job != nil {
		a.queued = append(a.queued, line)
		a.say("↳ Queued: " + preview(line))
		return
	}
	a.handleLine(line)
	if a.opts.LimitScreen && !a.limited && !a.quotaBack {
		// Out of quota from now on; the line that spent it is still answered.
		a.limited = true
		if a.opts.LimitReset > 0 {
			// Whole seconds, so the time on the screen is the real one.
			a.limitUntil = time.Now().Add(a.opts.LimitReset).Truncate(time.Second).Add(time.Second)
		}
		a.dirty = true
	}
}

// transcript is line as the history shows a user's message: every line of
// it, the first after the marker of the composer's style.
func (a *agent) transcript(line string) []string {
	marker := "> "
	if a.opts.Composer == "" || a.opts.Composer == ComposerPlain {
		marker = "› "
	}
	lines := strings.Split(line, "\n")
	for i, l := range lines {
		if i == 0 {
			lines[i] = marker + l
		} else {
			lines[i] = "  " + l
		}
	}
	return lines
}

// handleLine answers one submitted line as an agent would.
func (a *agent) handleLine(line string) {
	switch strings.TrimSpace(line) {
	case "/exit", "/quit":
		a.quit()
		return
	}
	t, reports, notes := findTask(line)
	for i, n := range notes {
		notes[i] = "⚠ " + n
	}
	if t == nil {
		lines := append(notes, "Understood: "+preview(line))
		for _, r := range reports {
			lines = append(lines, fmt.Sprintf("◦ Read the report on %s: %s", r.TaskID, preview(r.Status+" · "+r.Summary)))
		}
		a.say(lines...)
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
	a.tasks++
	if a.tasks == a.opts.HoldFromTask {
		a.holdMemory()
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
	if a.skipped < a.opts.SkipReports {
		a.skipped++
		a.say(fmt.Sprintf("• Turn ended; no report written for %s", t.TaskID))
		return
	}
	if err := writeReport(t.reportPath, rep); err != nil {
		a.say(fmt.Sprintf("✗ %s: write report: %v", t.TaskID, err))
		return
	}
	if err := a.rec.report(t.TaskID, t.reportPath); err != nil {
		a.say("✗ agent-sim: record: " + err.Error())
	}
	if a.opts.CheckReport > 0 {
		time.Sleep(a.opts.CheckReport)
		if _, err := os.Stat(t.reportPath); err != nil {
			if err := a.rec.gone(t.TaskID, t.reportPath); err != nil {
				a.say("✗ agent-sim: record: " + err.Error())
			}
			a.say(fmt.Sprintf("✗ %s: report file gone: %v", t.TaskID, err))
			return
		}
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
	a.dirty = false
	if a.phase == phaseHung {
		return
	}
	v := a.view()
	// An agent that echoes nothing writes nothing when a key changes
	// nothing on its screen.
	if a.opts.Echo == EchoNone && a.scr.showing(v) {
		return
	}
	a.scr.setPane(v)
}

// view is the pane for the agent's current state.
func (a *agent) view() pane {
	if a.dialog != nil {
		return pane{header: a.dialog.lines(a.dir)}
	}
	switch a.phase {
	case phaseStarting:
		return pane{header: []string{"Starting…"}}
	case phaseReady:
		p := pane{prompt: true, style: a.opts.Composer, input: string(a.input), footer: "  ? for shortcuts", placeholder: a.opts.Placeholder}
		if a.opts.Echo == EchoNone {
			p.input = ""
		}
		if n := a.missingReports(); n > 0 {
			p.footer += fmt.Sprintf(" · waiting for %d %s", n, plural(n, "report", "reports"))
		}
		if a.hint != "" {
			p.footer = a.hint
		}
		switch {
		case a.job != nil && !a.opts.SilentWork:
			p.header = []string{a.busyLine()}
		case a.job == nil && a.limited:
			p.header = []string{a.limitLine()}
		}
		return p
	}
	return pane{}
}

// busyLine is the busy indicator, with the seconds worked so far.
func (a *agent) busyLine() string {
	elapsed := fmt.Sprintf("%ds", int(time.Since(a.job.started).Seconds()))
	if a.opts.BusyLine != "" {
		return strings.ReplaceAll(a.opts.BusyLine, "{elapsed}", elapsed)
	}
	return "• Working… (esc to interrupt) · " + elapsed
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
