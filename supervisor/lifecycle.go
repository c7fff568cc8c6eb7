package supervisor

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/shogun-dev/shogun/ptyhost"
	"github.com/shogun-dev/shogun/roles"
)

// A role's program's life: started, watched, stopped, restarted or put to
// sleep, and its process tree reaped.

// run is the role's life: start, watch, restart, until ctx ends.
func (r *Role) run(ctx context.Context) {
	window := &restartWindow{window: r.conf().Restart.Window}
	failures := 0
	// afresh forgets the restarts counted so far: a person restarted the
	// role, or it slept or moved on purpose.
	afresh := func() {
		failures = 0
		window = &restartWindow{window: r.conf().Restart.Window}
	}
	// down leaves the role in state s until a restart request; false when
	// ctx ends first.
	down := func(s State, why string) bool {
		r.setState(s, why)
		return r.waitRestart(ctx)
	}
	for {
		if ctx.Err() != nil {
			r.setState(Stopped, stopReason(ctx))
			return
		}
		if ok, alive := r.admit(ctx); !alive {
			return
		} else if !ok {
			continue
		}
		started := time.Now()
		exit, err, asked := r.runOnce(ctx)
		if sl := r.sup.slots; sl != nil {
			if (asked == askedRestart || asked == askedMove) && ctx.Err() == nil {
				// Started again at once, it keeps its slot: given to a
				// role that waits, it would leave this one waiting for
				// the slot it just had (a person's restart said
				// "restarting", and it waited).
				sl.declined(r)
			} else {
				sl.release(r)
			}
		}
		if asked == askedMove {
			// Started again at once on the account limitMet chose, its
			// conversation resumed.
			r.mu.Lock()
			r.resumable = true
			r.mu.Unlock()
			afresh()
			continue
		}
		if asked == askedSleep {
			r.mu.Lock()
			// Put to sleep at a dialog before its startup prompt, it has
			// no conversation of its own to resume: it starts afresh.
			r.asleep, r.resumable = true, r.settled
			r.mu.Unlock()
			r.setState(Sleeping, r.sleepReason())
			r.typing.unlock() // held since trySleep
			afresh()
			if !r.sleepUntilWork(ctx) {
				return
			}
			continue
		}
		if ctx.Err() != nil {
			r.setState(Stopped, stopReason(ctx))
			return
		}
		reason := exit.String()
		if err != nil {
			reason = err.Error()
		}
		r.mu.Lock()
		resumed, session := r.resumed, r.sessionID
		r.mu.Unlock()
		if resumed && asked == askedNothing {
			// resumable is false now: resuming may be what ended it.
			r.log.Warn().Str("session", session).Str("exit", reason).Msg("the program that resumed its conversation ended by itself; its next start begins afresh, with its startup prompt, and leaves that conversation")
		}
		overMemory := ""
		if asked == askedMemory {
			overMemory = r.overMemoryReason()
			reason = overMemory + "; restarting it"
			r.sup.emit(Event{Time: time.Now(), Role: r.id, Kind: EventMemory, Message: overMemory})
		}
		r.setState(Exited, reason)
		if asked == askedStop {
			if !down(Stopped, "stopped on request; `shogun restart "+r.id+"` starts it again") {
				return
			}
			afresh()
			continue
		}
		if asked == askedRestart {
			afresh()
			r.log.Info().Msg("restarting on request")
			continue
		}
		if errors.Is(err, errNoSandbox) {
			// Not restarted: the system will not grow a sandbox.
			if !down(Fatal, err.Error()) {
				return
			}
			continue
		}
		if errors.Is(err, errCannotStart) && ptyhost.ProgramNotFound(err) {
			// Not restarted: see MissingPrograms.
			r.mu.Lock()
			r.lastError = missingReason(err, *r.conf())
			why := r.lastError
			r.mu.Unlock()
			if !down(Fatal, why) {
				return
			}
			afresh()
			continue
		}
		if asked != askedMemory && !r.shouldRestart(exit, err) {
			if !down(Stopped, "not restarted (policy "+r.conf().Restart.Policy+")") {
				return
			}
			continue
		}
		if time.Since(started) >= r.sup.stableAfter {
			failures = 0
		}
		failures++
		// n counts this exit too: the restarts made inside the window
		// are the ones before it.
		if n := window.add(time.Now()); n > r.conf().Restart.MaxRestarts {
			r.mu.Lock()
			line := r.lastLine
			if overMemory != "" {
				// Its last output says nothing of why it was stopped.
				err, line = errors.New(overMemory), ""
			}
			r.lastError = fatalReason(n-1, r.conf().Restart.Window, exit, err, line)
			why := r.lastError
			r.mu.Unlock()
			if !down(Fatal, why) {
				return
			}
			afresh()
			continue
		}
		delay := r.sup.backoff.Delay(failures)
		r.mu.Lock()
		r.restarts++
		r.backoffWhy = overMemory
		r.mu.Unlock()
		backoffWhy := fmt.Sprintf("restart %d in %s", failures, delay.Round(time.Millisecond))
		if overMemory != "" {
			backoffWhy = overMemory + "; " + backoffWhy
		}
		r.setState(Backoff, backoffWhy)
		select {
		case <-time.After(delay):
		case <-r.restartReq:
		case <-r.stopReq:
			if !down(Stopped, "stopped on request; `shogun restart "+r.id+"` starts it again") {
				return
			}
			afresh()
		case <-ctx.Done():
			r.setState(Stopped, stopReason(ctx))
			return
		}
	}
}

// stopReason says why the role's goroutine ends: the cause given to its
// context (a role removed from the configuration), or the supervisor
// stopping.
func stopReason(ctx context.Context) string {
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
		return cause.Error()
	}
	return "supervisor stopping"
}

// waitRestart waits, in a stopped or fatal state, for a restart request. It
// reports false when the supervisor stops instead. A stop request meanwhile
// has nothing to stop.
func (r *Role) waitRestart(ctx context.Context) bool {
	for {
		select {
		case <-r.restartReq:
			r.log.Info().Msg("starting again on request")
			return true
		case <-r.stopReq:
		case <-ctx.Done():
			r.setState(Stopped, stopReason(ctx))
			return false
		}
	}
}

// Why runOnce stopped a program that had not exited by itself.
const (
	askedNothing = iota
	askedRestart // Restart: start it again at once
	askedStop    // Stop: leave it stopped
	askedSleep   // idle, or making room: sleep until work comes
	askedMemory  // over memory_max: start it again, as after a crash
	askedMove    // a usage limit: start it again on another account
)

func (r *Role) shouldRestart(exit ptyhost.Exit, err error) bool {
	switch r.conf().Restart.Policy {
	case roles.RestartNever:
		return false
	case roles.RestartAlways:
		return true
	default:
		return err != nil || !exit.Success()
	}
}

// runOnce starts the program and watches it until it exits or ctx ends; on
// ctx end, or a restart request (asked), it stops it. It returns once the
// whole process tree is gone.
func (r *Role) runOnce(ctx context.Context) (exit ptyhost.Exit, waitErr error, asked int) {
	cfg := r.conf()
	r.mu.Lock()
	waking := r.asleep
	resume := r.resumable && len(cfg.ResumeArgs) > 0
	resumeWith, known := resumeArgs(cfg.ResumeArgs, r.sessionID)
	cleared := r.sessionCleared
	r.asleep, r.resumable, r.waking = false, false, waking
	r.mu.Unlock()
	if resume && !known {
		// Never the folder's most recent conversation: with roles
		// sharing a folder that may be another role's.
		if cleared {
			// As between_tasks would have: some CLIs (Codex) tell a new
			// conversation's id only at its first turn.
			r.log.Info().Msg("its between_tasks keys ended its last conversation, and its CLI has not told the new one's id: starting afresh, as between_tasks would")
		} else {
			r.log.Info().Msg("its conversation's id is not known (its hook never told one): starting afresh")
		}
		resume = false
	}
	if !resume {
		// A fresh program holds no conversation yet: the one told of the
		// program before is not its own to resume.
		r.mu.Lock()
		r.sessionID, r.sessionCleared = "", false
		r.mu.Unlock()
	}
	acct, prev := r.takeAccount(cfg)
	moved := acct.Key != prev.Key && prev.Key != ""
	if moved && resume {
		file, ok, err := r.sup.moveConversation(*cfg, prev, acct, r.SessionID())
		switch {
		case err != nil:
			r.log.Warn().Err(err).Msg("the conversation stays on the other account: starting afresh")
		case !ok:
			r.log.Info().Str("account", acct.Key).Msg("the CLI's conversations are not moved between config folders: starting afresh")
		case file != "":
			r.log.Info().Str("path", file).Msg("conversation moved to the account")
		}
		resume = err == nil && ok
	}
	r.mu.Lock()
	r.resumed = resume
	r.mu.Unlock()
	switch {
	case moved && resume:
		r.setState(Waking, "moving to account "+acct.Key+": resuming its conversation ("+strings.Join(resumeWith, " ")+")")
	case moved:
		r.setState(Starting, "moving to account "+acct.Key+": starting "+cfg.Command.Exec+" afresh")
	case resume:
		r.setState(Waking, "waking: resuming its conversation ("+strings.Join(resumeWith, " ")+")")
	case waking:
		r.setState(Waking, "waking: starting "+cfg.Command.Exec)
	default:
		r.setState(Starting, "starting "+cfg.Command.Exec)
	}
	args, env, err := r.sup.roleCommand(withAccount(*cfg, acct), acct)
	if err != nil {
		err = fmt.Errorf("%w: %w", errCannotStart, err)
		r.mu.Lock()
		r.lastError = err.Error()
		r.mu.Unlock()
		r.log.Error().Err(err).Msg("cannot start")
		return ptyhost.Exit{Code: -1}, err, askedNothing
	}
	if resume {
		// Appended last, after whatever else builds the command line
		// (hook arguments go first): `codex … resume --last` is a
		// subcommand after the options.
		args = append(slices.Clone(args), resumeWith...)
	}
	cmd := ptyhost.Command{
		Path: cfg.Command.Exec,
		Args: args,
		Env:  env,
		Dir:  cfg.Command.Cwd,
		Cols: cfg.Terminal.Cols,
		Rows: cfg.Terminal.Rows,
		// Where the OS bounds a tree (a Windows job) it does so from the
		// start; elsewhere the memory watch does (memory.go).
		MemoryMax: uint64(cfg.MemoryMax),
	}
	sess, err := r.sup.spawnRole(*cfg, ptyhost.Options{Command: cmd, Log: r.output, ScrollbackBytes: r.sup.scrollback})
	if err != nil {
		err = fmt.Errorf("%w: %w", errCannotStart, err)
		r.mu.Lock()
		r.lastError = err.Error()
		r.mu.Unlock()
		if !ptyhost.ProgramNotFound(err) { // else the fatal state says it, with the fix
			r.log.Error().Err(err).Msg("cannot start")
		}
		return ptyhost.Exit{Code: -1}, err, askedNothing
	}
	pid := sess.Pid()
	id, _ := ptyhost.Identity(pid)
	if err := r.sup.ledger.Add(LedgerEntry{Role: r.id, Pid: pid, Identity: id, Started: sess.Started()}); err != nil {
		r.log.Warn().Err(err).Msg("pid ledger")
	}
	r.mu.Lock()
	r.session = sess
	r.memory, r.overSession = 0, nil
	r.generation++
	r.prompted = false
	// A resumed conversation has had its startup prompt already.
	r.settled = cfg.StartupPrompt == "" || resume
	r.prompted = resume && cfg.StartupPrompt != ""
	r.lastError = ""
	r.mu.Unlock()
	r.log.Info().Int("pid", pid).Strs("args", cmd.Args).Str("exec", cmd.Path).Msg("started")

	runCtx, cancelRun := context.WithCancel(ctx)
	exited := make(chan struct{})
	go func() {
		exit, waitErr = sess.Wait()
		r.sup.waited(pid)
		close(exited)
	}()
	var watchers sync.WaitGroup
	watchers.Add(1)
	go func() {
		defer watchers.Done()
		r.watch(runCtx, sess)
	}()

	asked = r.supervise(ctx, sess, exited)
	cancelRun()
	watchers.Wait()
	if asked == askedNothing && ctx.Err() == nil && r.refusedOnExit(sess) {
		asked = askedMemory
	}
	r.reapTree(sess, exited)

	last := tellingLine(sess, cmd.Cols, cmd.Rows)
	r.mu.Lock()
	r.session = nil
	r.lastExit = &exit
	r.lastLine = last
	r.mu.Unlock()
	if err := r.sup.ledger.Remove(r.id); err != nil {
		r.log.Warn().Err(err).Msg("pid ledger")
	}
	r.log.Info().Int("pid", pid).Str("exit", exit.String()).Msg("exited")
	return exit, waitErr, asked
}

// supervise waits for the program to exit, or for a reason to stop it —
// ctx ending, a restart or stop request, or sleep: idle for its
// idle_after, or asked to make room — and stops it then. It returns why it
// stopped the program (askedNothing: it exited by itself, or ctx ended).
func (r *Role) supervise(ctx context.Context, sess *ptyhost.Session, exited <-chan struct{}) int {
	idle := time.NewTimer(time.Hour)
	defer idle.Stop()
	for {
		changed := r.Changed()
		var idleC <-chan time.Time
		if left, ok := r.idleLeft(); ok {
			idle.Reset(left + time.Millisecond)
			idleC = idle.C
		}
		sleep, why := false, ""
		select {
		case <-exited:
			return askedNothing
		case <-ctx.Done():
			r.stop(sess, exited)
			return askedNothing
		case <-r.restartReq:
			r.log.Info().Msg("stopping for a restart")
			r.stop(sess, exited)
			return askedRestart
		case <-r.stopReq:
			r.log.Info().Msg("stopping on request")
			r.stop(sess, exited)
			return askedStop
		case <-r.overMemory:
			if why, ok := r.takeOverMemory(sess); ok {
				// No stop keys: typed into a busy CLI they wait for its
				// turn to end while the tree goes on growing. SIGTERM
				// lets it save and quit at once.
				r.log.Warn().Str("reason", why).Msg("stopping to restart: over memory_max")
				r.terminate(sess, exited, r.conf().Stop.Timeout)
				return askedMemory
			}
		case <-r.moveReq:
			r.log.Info().Msg("stopping to move to another account")
			r.stop(sess, exited)
			return askedMove
		case <-r.sleepReq:
			atDialog := r.State() == Attention
			if sleep = r.trySleep(false); !sleep && r.sup.slots != nil {
				r.sup.slots.declined(r)
			}
			why = "made room for a role with work (a slot of agent.max_running or agent.max_running_per_cli); the next task wakes it"
			if atDialog {
				why = "made room for a role with work (a slot of agent.max_running or agent.max_running_per_cli): its program showed a dialog no one answered, with nothing queued; the next task wakes it, and the dialog shows again"
			}
		case <-idleC:
			sleep = r.trySleep(true)
			why = fmt.Sprintf("idle for idle_after %s with nothing queued; the next task wakes it", r.conf().IdleAfter)
		case <-changed:
		}
		if !idle.Stop() {
			select {
			case <-idle.C:
			default:
			}
		}
		if sleep {
			r.mu.Lock()
			r.sleepWhy = why
			r.mu.Unlock()
			r.log.Info().Msg("stopping to sleep: " + why)
			r.stop(sess, exited)
			return askedSleep
		}
	}
}

// sleepReason says why the role went to sleep.
func (r *Role) sleepReason() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sleepWhy
}

// stop asks the program to quit: the stop keys first, SIGTERM to the tree at
// half the stop timeout, SIGKILL at the full timeout. A program whose screen
// asks for a person gets no keys: they would answer its dialog, and CLIs
// save such answers. It goes straight to the signals.
func (r *Role) stop(sess *ptyhost.Session, exited <-chan struct{}) {
	timeout := r.conf().Stop.Timeout
	if keys := r.conf().Stop.Keys; keys != "" && timeout > 0 {
		// The input is cleared first: a delivery the stop cut short (a
		// between_tasks /clear typed, not yet submitted) would otherwise
		// go with the stop keys, as "/clear/exit", to the model.
		if err := r.sendKeys(sess, r.conf().ClearInput+keys); err != nil {
			r.log.Info().Err(err).Msg("stop keys not sent")
		} else {
			select {
			case <-exited:
				return
			case <-time.After(timeout / 2):
			}
			timeout -= timeout / 2
		}
	}
	r.terminate(sess, exited, timeout)
}

// terminate sends SIGTERM to the tree (Windows: closes its console) and
// kills it if it has not exited within timeout.
func (r *Role) terminate(sess *ptyhost.Session, exited <-chan struct{}, timeout time.Duration) {
	r.log.Info().Msg("terminating process tree")
	_ = sess.Terminate()
	select {
	case <-exited:
	case <-time.After(timeout):
		r.log.Warn().Dur("timeout", r.conf().Stop.Timeout).Msg("did not stop in time, killing process tree")
		_ = sess.Kill()
	}
}

// sendKeys types stop keys; a trailing submit key goes as its own write
// after the submit delay, as typing rules require. Each write is checked
// first, like every automatic key: nothing goes into a dialog.
func (r *Role) sendKeys(sess *ptyhost.Session, keys string) error {
	r.mu.Lock()
	gen := r.generation
	r.mu.Unlock()
	return r.sendKeysTo(sess, gen, keys)
}

// sendKeysTo is sendKeys into one program run.
func (r *Role) sendKeysTo(sess *ptyhost.Session, gen int, keys string) error {
	k := keyWriter{r: r, sess: sess, gen: gen}
	sub := r.conf().Submit
	if sub != "" && len(keys) > len(sub) && keys[len(keys)-len(sub):] == sub {
		if err := k.write(keys[:len(keys)-len(sub)]); err != nil {
			return err
		}
		time.Sleep(min(r.submitDelay(), time.Second))
		return k.write(sub)
	}
	return k.write(keys)
}

// errCannotStart wraps the error of a program that could not be started
// at all (not found, not executable): that error, not its output, says why.
var errCannotStart = errors.New("cannot start")

// fatalReason says why a role is given up on, in one line that the status,
// the log, the event and the notification all show: what stopped the
// program (the error that kept it from starting, else the most telling
// line of its last screen, else how it exited), then the restarts made
// inside the window, the count the status shows too.
func fatalReason(restarts int, window time.Duration, exit ptyhost.Exit, err error, line string) string {
	why := exit.String()
	switch {
	case errors.Is(err, errCannotStart):
		why = err.Error()
	case line != "":
		why = "last output: " + line
	case err != nil:
		why = err.Error()
	}
	plural := "s"
	if restarts == 1 {
		plural = ""
	}
	return fmt.Sprintf("%s; given up after %d restart%s within %s", why, restarts, plural, window)
}

// tellingLine is the line of a finished program's screen that best says
// why it ended (see pickTellingLine). sess is closed: its screen model has
// taken in all the output there is, and when none was dropped its screen is
// the last one. Only after a flood is the screen replayed from the end of
// the output, through a second emulator: each costs 5 MB of allocations,
// which a team whose roles sleep and wake (agent.max_running) paid at
// every exit.
func tellingLine(sess *ptyhost.Session, cols, rows int) string {
	if sess.ScreenWhole() {
		return pickTellingLine(sess.Screen().Lines)
	}
	out := sess.Scrollback()
	if len(out) > 16<<10 {
		out = out[len(out)-16<<10:]
	}
	return pickTellingLine(ptyhost.ReplayScreen(out, cols, rows).Lines)
}

// errorWords make a line look like an error: words programs use for one,
// and errno names (ENOENT, ENOTFOUND, ECONNREFUSED …).
var errorWords = regexp.MustCompile(`(?i:\b(?:errors?|fail(?:ed|ure|s)?|unable|cannot|can't|could ?not|couldn't|not found|no such|denied|refused|invalid|fatal|panic|exception|unauthori[sz]ed|forbidden)\b)` +
	`|\bE(?:NO[A-Z]+|ACCES|PERM|CONN[A-Z]+|ADDRINUSE|TIMEDOUT|HOSTUNREACH|NETUNREACH|PIPE)\b`)

// pickTellingLine picks, from the lines of a screen, the lowest one that
// looks like an error: a program that gives up usually says why and then
// adds a hint or a link ("Failed to connect to api.anthropic.com:
// ENOTFOUND" above "https://anthropic.com/supported-countries"). Without
// one it is the last non-blank line. Lines come back trimmed.
func pickTellingLine(lines []string) string {
	last := ""
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if l == "" {
			continue
		}
		if last == "" {
			last = l
		}
		if errorWords.MatchString(l) {
			return l
		}
	}
	return last
}

// killFor bounds how long reapTree goes on killing a process group that
// will not empty.
const killFor = 10 * time.Second

// reapTree makes sure nothing of the program is left: once the child has
// exited, the rest of its process group is terminated, then killed, and the
// terminal is released once the group is empty (or after killFor of kills).
func (r *Role) reapTree(sess *ptyhost.Session, exited <-chan struct{}) {
	<-exited
	// Give the output a moment to drain after the child's exit.
	select {
	case <-sess.OutputDone():
	case <-time.After(200 * time.Millisecond):
	}
	if sess.TreeAlive() {
		_ = sess.Terminate()
		deadline := time.Now().Add(r.sup.treeGrace)
		for sess.TreeAlive() && time.Now().Before(deadline) {
			r.sup.reapAdopted()
			time.Sleep(20 * time.Millisecond)
		}
	}
	giveUp := time.Now().Add(killFor)
	for i := 0; sess.TreeAlive(); i++ {
		if time.Now().After(giveUp) {
			// What SIGKILL has not ended in killFor it will not: a zombie
			// whose parent, outside the group, never reaps it (an agent
			// can make one). Waiting on would hang the role's restart,
			// its slot and shogun stop for ever.
			r.log.Error().Int("pgid", sess.Pid()).Dur("after", killFor).Msg("the process group still holds processes SIGKILL does not end (a zombie its parent outside the group never reaps): going on without them")
			break
		}
		if i%50 == 0 {
			_ = sess.Kill()
			if i > 0 {
				r.log.Warn().Int("pid", sess.Pid()).Msg("process group still not empty")
			}
		}
		r.sup.reapAdopted()
		time.Sleep(20 * time.Millisecond)
	}
	if err := sess.Close(); err != nil {
		r.log.Debug().Err(err).Msg("close terminal")
	}
}

func (r *Role) typeStartupPrompt(ctx context.Context) {
	text := roles.Expand(r.conf().StartupPrompt, r.conf().TemplateVars(r.sup.layout))
	res, err := r.Type(ctx, text, TypeOptions{})
	r.mu.Lock()
	r.settled = true
	r.mu.Unlock()
	r.notify()
	if err != nil {
		if ctx.Err() == nil {
			r.log.Warn().Err(err).Int("attempts", res.Attempts).Msg("startup prompt not delivered")
			r.sup.emit(Event{Time: time.Now(), Role: r.id, Kind: EventUndelivered, Message: "startup prompt: " + err.Error()})
		}
		return
	}
	r.mu.Lock()
	r.prompted = true
	r.mu.Unlock()
	r.log.Info().Int("attempts", res.Attempts).Msg("startup prompt delivered")
	r.sup.emit(Event{Time: time.Now(), Role: r.id, Kind: EventPrompted, Message: "startup prompt delivered"})
}

var errRestarted = errors.New("the role's program was replaced while typing")
