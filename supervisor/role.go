package supervisor

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/shogun-dev/shogun/config"
	"github.com/shogun-dev/shogun/ptyhost"
	"github.com/shogun-dev/shogun/rolelog"
)

// Role runs one configured role: it starts the program in a PTY, watches its
// screen for readiness, types its startup prompt, restarts it by policy and
// stops it. Its goroutine is started and ended by the Supervisor.
type Role struct {
	id     string
	cfg    atomic.Pointer[config.Role] // replaced whole by SetConfig
	sup    *Supervisor
	log    zerolog.Logger
	output io.Writer // the role's rotating log file, shared by its runs
	// logIndex remembers when output reached the log (LogIndex); nil in
	// tests that give a role a plain writer.
	logIndex *rolelog.Index

	// reconfigured tells the screen watcher that the patterns changed.
	reconfigured chan struct{}
	// stopReq asks for the program to be stopped and left stopped until
	// a restart request (Stop, Restart).
	stopReq chan struct{}
	// cancel ends the role's goroutine (RemoveRole); done is closed when
	// it has ended and the program's process tree is gone.
	cancel context.CancelCauseFunc
	done   chan struct{}

	mu         sync.Mutex
	state      State
	reason     string // why the role is in its state (setState)
	session    *ptyhost.Session
	generation int // counts program starts; typing checks it did not change
	since      time.Time
	restarts   int
	lastExit   *ptyhost.Exit
	lastError  string
	prompted   bool
	settled    bool          // the startup prompt of this program was typed, or failed, or there is none
	changed    chan struct{} // closed and replaced on every state change

	learnedDelay time.Duration // a longer submit delay the program turned out to need
	lastLine     string        // the most telling line the previous program left (tellingLine)
	limitedUntil time.Time     // while limited: when the usage limit lifts
	held         string        // why no task may be typed until a person looks (Hold); "" when none
	busyAt       time.Time     // when the busy pattern last showed
	// echoAt is when shogun last wrote keys that only edit the composer
	// (a clear, the text before its submit key); zero after a submit key.
	// The echo of those keys is not work (classify).
	echoAt time.Time
	// submitAt is when shogun last typed a submit key: the program's
	// output after it is its answer (watch).
	submitAt time.Time

	// hookQuestions describe the questions its CLI's hook asked that wait
	// for a person (SetHookQuestions); while there are any it is waiting.
	hookQuestions []string
	// waitedUntil is when it last stopped waiting for a person.
	waitedUntil time.Time
	// heldChanged wakes the screen watcher when hookQuestions change.
	heldChanged chan struct{}

	humanInput time.Time   // last time a person typed into the role
	writer     *Attachment // the person typing into the role, if any
	// typing is held by one automatic delivery (Type, SendKeys) from start
	// to end, so that two never mix their keys.
	typing ctxLock
	// keys is held while keys are written into the program, by automatic
	// typing (under typing) and by a person's answer (Answer). Automatic
	// typing lets go of it whenever it waits, for the role to be ready or
	// for a person to answer a dialog, so a person's answer never waits for
	// a delivery that waits for that answer; and since an automatic key
	// goes out only under keys, none interleaves with an answer's keys.
	keys       sync.Mutex
	restartReq chan struct{}

	// wakeReq asks a sleeping role, or one waiting for a slot, to start
	// (Wake); sleepReq asks a running one to sleep to make room for a role
	// that waits for a slot.
	wakeReq, sleepReq chan struct{}
	// asleep: the role sleeps or waits for a slot, so its next start is a
	// wake. resumable: its last program was put to sleep, so its
	// conversation can be resumed (ResumeArgs). Both under mu.
	asleep, resumable bool
	// sessionID is the CLI's own conversation as its hook last told it
	// (session.go), which a wake resumes (under mu). sessionCleared: the
	// role's between_tasks keys ended the last one told, and its CLI has
	// told no new one since.
	sessionID      string
	sessionCleared bool
	// waking: the current program was started by a wake (under mu).
	waking bool
	// sleepWhy says why the role went to sleep (under mu).
	sleepWhy string
	// startAsked: a person asked the role to run (StartNow) and it has not
	// started since; it waits for a slot though it has no work (under mu).
	startAsked bool

	// memory is what the current program's tree held at the last look of
	// the memory watch (under mu; 0 before it).
	memory uint64
	// overMemory asks supervise to restart the program overSession for
	// overWhy: its tree went over memory_max (memory.go). lastOverMemory
	// is the last such restart's reason and time, for the status. Under mu.
	overMemory     chan struct{}
	overSession    *ptyhost.Session
	overWhy        string
	lastOverMemory string
	// backoffWhy is why shogun itself ended the program that the role's
	// backoff restarts (over memory_max); "" after a crash. Under mu.
	backoffWhy string
	// account is the account its program runs on, or last ran on (zero
	// without accounts); moveTo the one a usage limit asked to move to,
	// and moveReq asks for the program to be stopped for that move. Both
	// under mu (accounts.go).
	account config.Account
	moveTo  string
	moveReq chan struct{}
	// resumed: the current program resumed a conversation (under mu).
	resumed bool
}

// Status is a snapshot of a role for status output.
type Status struct {
	ID         string
	Name       string
	State      State
	Pid        int
	Since      time.Time // when State was entered
	Started    time.Time // when the current program started (zero if none)
	Restarts   int
	LastOutput time.Time
	LastExit   string
	LastError  string
	// LastLine is the most telling line the previous program left on its
	// screen when it exited (an error line over a link or a note, see
	// tellingLine): why a program that cannot start keeps exiting.
	LastLine string
	Prompted bool // the startup prompt of the current program was delivered
	// Reason says why the role is in State, as its state event did ("not
	// ready within 2m0s of its start …", "screen asks for a person").
	Reason string
	// SubmitDelay is the pause between text and submit in effect: the
	// configured one, or longer once a submit became a newline.
	SubmitDelay time.Duration
	// LimitedUntil is when a limited role's usage limit lifts (zero when
	// it is not limited).
	LimitedUntil time.Time
	// BusyAt is when the busy pattern last showed on the screen: a sign of
	// work, unlike a moment of output, which may be an echo.
	BusyAt time.Time
	// Questions describe what a waiting role's agent asked through its
	// CLI's hook, one line each (agent's text: escape before printing).
	Questions []string
	// WaitedUntil is when the role last stopped waiting for a person
	// (left waiting or attention): time spent waiting does not count as
	// the agent being quiet.
	WaitedUntil time.Time
	// Held says why no new task is typed into the role until a person
	// looks (see Hold); "" when it is not held.
	Held string
	// Memory is what the running program's whole process tree held at the
	// supervisor's last look, in bytes (0: no program, or not measured
	// yet, or not measurable on this OS).
	Memory uint64
	// MemoryMax is the role's memory_max (0: no bound).
	MemoryMax config.ByteSize
	// OverMemory is the reason and time of the role's last restart for
	// going over memory_max ("memory 2.3 GB over memory_max 2 GB at
	// 14:02:05"); "" when it has had none.
	OverMemory string
	// Account is the key of the account its program runs on, or last ran
	// on (config.Account.Key); "" for a role without accounts.
	Account string
	// BackoffReason, while the role is in backoff, is why shogun ended
	// the program it is about to restart ("memory 2.3 GB over memory_max
	// 2 GB"): the state alone reads as a crash. "" otherwise.
	BackoffReason string
}

func newRole(sup *Supervisor, cfg config.Role, output io.Writer) *Role {
	r := &Role{
		id:           cfg.ID,
		sup:          sup,
		log:          sup.log.With().Str("role", cfg.ID).Logger(),
		output:       output,
		state:        Stopped,
		since:        time.Now(),
		changed:      make(chan struct{}),
		restartReq:   make(chan struct{}, 1),
		wakeReq:      make(chan struct{}, 1),
		sleepReq:     make(chan struct{}, 1),
		moveReq:      make(chan struct{}, 1),
		stopReq:      make(chan struct{}, 1),
		reconfigured: make(chan struct{}, 1),
		heldChanged:  make(chan struct{}, 1),
		overMemory:   make(chan struct{}, 1),
		done:         make(chan struct{}),
	}
	r.cfg.Store(&cfg)
	return r
}

// ID is the role's id.
func (r *Role) ID() string { return r.id }

// LogIndex says where the role's log stood when, since the supervisor
// started: what the console shows of a task's time. Nil when the role
// writes no log of its own.
func (r *Role) LogIndex() *rolelog.Index { return r.logIndex }

// Config is the role's resolved configuration.
func (r *Role) Config() config.Role { return *r.conf() }

// conf is the configuration in effect; callers keep the pointer for one
// decision, so that a SetConfig in between cannot mix two configurations.
func (r *Role) conf() *config.Role { return r.cfg.Load() }

// SetConfig gives the role a new configuration of the same id. Patterns,
// delays, templates, the restart and stop rules take effect at once; the
// command, its environment and working folder and the terminal size at
// the program's next start (Restart starts it now).
func (r *Role) SetConfig(cfg config.Role) error {
	if cfg.ID != r.id {
		return fmt.Errorf("set configuration of role %s: the configuration is role %s's", r.id, cfg.ID)
	}
	r.cfg.Store(&cfg)
	select {
	case r.reconfigured <- struct{}{}:
	default:
	}
	r.notify()
	return nil
}

// Stop stops the role's program and keeps it stopped, whatever the restart
// policy says, until Restart starts it again. A role already stopped (or
// fatal) stays as it is.
func (r *Role) Stop() {
	select {
	case r.stopReq <- struct{}{}:
	default: // a stop is already pending
	}
}

// Status returns a snapshot of the role.
func (r *Role) Status() Status {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := Status{
		ID: r.id, Name: r.conf().Name, State: r.state, Since: r.since, Reason: r.reason,
		Restarts: r.restarts, LastError: r.lastError, Prompted: r.prompted,
		LastLine: r.lastLine, SubmitDelay: max(r.conf().SubmitDelay, r.learnedDelay), LimitedUntil: r.limitedUntil, BusyAt: r.busyAt,
		Held: r.held, Account: r.account.Key,
		Questions: slices.Clone(r.hookQuestions), WaitedUntil: r.waitedUntil,
		MemoryMax: r.conf().MemoryMax, OverMemory: r.lastOverMemory,
	}
	if r.state == Backoff {
		st.BackoffReason = r.backoffWhy
	}
	if r.lastExit != nil {
		st.LastExit = r.lastExit.String()
	}
	if r.session != nil {
		st.Pid = r.session.Pid()
		st.Started = r.session.Started()
		st.LastOutput = r.session.LastOutput()
		st.Memory = r.memory
	}
	return st
}

// State returns the role's current state.
func (r *Role) State() State {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.state
}

// Session returns the role's current terminal session, or nil when no
// program runs.
func (r *Role) Session() *ptyhost.Session {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.session
}

// Workable reports whether work can be handed to the role now: its program
// is ready and has had its startup prompt. generation identifies the program
// run; it changes when the program is restarted, so a caller that delivered
// something to an earlier generation knows to deliver it again.
func (r *Role) Workable() (generation int, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.generation, r.state == Ready && r.session != nil && r.settled && r.held == ""
}

// Changed returns a channel that is closed at the role's next change of
// state or of startup-prompt progress.
func (r *Role) Changed() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.changed
}

// setLimited records until when the role's usage limit lasts (zero: none).
func (r *Role) setLimited(until time.Time) {
	r.mu.Lock()
	r.limitedUntil = until
	r.mu.Unlock()
}

// SetHookQuestions tells the role which questions its CLI's hook asked
// wait for a person now (one line describing each; none: the answers
// came). While there are any, a running role is waiting: its agent is not
// idle or stalled, it is held by a person.
func (r *Role) SetHookQuestions(questions []string) {
	r.mu.Lock()
	r.hookQuestions = slices.Clone(questions)
	r.mu.Unlock()
	select {
	case r.heldChanged <- struct{}{}:
	default: // a wake-up is already pending
	}
}

// heldByPerson reports whether a hook's question of the role waits.
func (r *Role) heldByPerson() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.hookQuestions) > 0
}

// NoteHumanInput records that a person typed into the role; automatic typing
// waits until the person has been quiet for a while.
func (r *Role) NoteHumanInput(at time.Time) {
	r.mu.Lock()
	r.humanInput = at
	r.mu.Unlock()
	r.notify()
}

// WaitState blocks until the role is in one of the states or ctx ends.
func (r *Role) WaitState(ctx context.Context, states ...State) (State, error) {
	for {
		r.mu.Lock()
		cur, ch := r.state, r.changed
		r.mu.Unlock()
		for _, s := range states {
			if cur == s {
				return cur, nil
			}
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return cur, ctx.Err()
		}
	}
}

func (r *Role) notify() {
	r.mu.Lock()
	close(r.changed)
	r.changed = make(chan struct{})
	r.mu.Unlock()
}

// setState moves the role to s and tells the supervisor's observers.
func (r *Role) setState(s State, reason string) {
	r.mu.Lock()
	old := r.state
	if old == s {
		r.mu.Unlock()
		return
	}
	r.state, r.reason = s, reason
	r.since = time.Now()
	if old == Waiting || old == Attention {
		r.waitedUntil = r.since
	}
	close(r.changed)
	r.changed = make(chan struct{})
	r.mu.Unlock()
	if s == Ready && r.sup.slots != nil {
		r.sup.slots.poke() // it may be idle: room for a role that waits
	}
	// Ready ⇄ busy flips many times per task: keep them out of the info
	// log (and, in team, out of the history) so they cost next to nothing.
	ev := r.log.Info()
	switch {
	case s == Fatal || s == Attention || s == Waiting:
		ev = r.log.Warn()
	case routineFlip(old, s):
		ev = r.log.Debug()
	}
	ev.Str("from", string(old)).Str("state", string(s)).Str("reason", reason).Msg("state " + string(s))
	r.sup.emit(Event{Time: time.Now(), Role: r.id, Kind: EventState, State: s, Message: reason, Routine: routineFlip(old, s)})
}

// routineFlip reports whether a state change is the everyday back and forth
// of a working program between ready and busy.
func routineFlip(from, to State) bool {
	return (from == Ready && to == Busy) || (from == Busy && to == Ready)
}
