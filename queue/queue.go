package queue

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/shogun-dev/shogun/config"
	"github.com/shogun-dev/shogun/notify"
	"github.com/shogun-dev/shogun/store"
	"github.com/shogun-dev/shogun/supervisor"
	"github.com/shogun-dev/shogun/workspace"
)

// Agent is a supervised role as the queue uses it. *supervisor.Role
// implements it; the queue needs no more of the supervisor than this.
type Agent interface {
	ID() string
	// Workable reports whether the role is ready for work, and which run of
	// its program that is.
	Workable() (generation int, ok bool)
	// Changed is closed at the role's next state change.
	Changed() <-chan struct{}
	// Type types text by the typing rules and says whether it was confirmed.
	Type(ctx context.Context, text string, opts supervisor.TypeOptions) (supervisor.Delivery, error)
	// Status is the role's current status.
	Status() supervisor.Status
	// SendKeys sends keys that are not text to submit (an interrupt) by
	// the typing rules.
	SendKeys(ctx context.Context, keys string) error
	// ForgetSession forgets the role's conversation before between_tasks
	// ends it, so a wake before the new one is told starts afresh.
	ForgetSession()
}

var _ Agent = (*supervisor.Role)(nil)

// Options configure a Queue.
type Options struct {
	// Config is the workspace configuration (roles, queue settings).
	Config *config.Config
	// Store is the workspace history; the queue's state lives there.
	Store *store.Store
	// Agents are the running roles, by id. Commands for enabled roles that
	// are not running (start --roles) are queued and wait. AddAgent and
	// RemoveAgent change the set while the queue runs.
	Agents map[string]Agent
	// RunID is the current run, recorded with commands and events.
	RunID string
	// Logger receives the queue's log.
	Logger zerolog.Logger
	// Now returns the current time (default time.Now).
	Now func() time.Time
	// OnReport, when set, is called after a report has closed its task
	// (the skills scan hangs on it). It must not block.
	OnReport func(store.Task)
	// Notify, when set, is given the events a person should hear about
	// (package notify): stalled and undelivered tasks, failed and blocked
	// reports, commands without a from role finished. It must not block;
	// team passes its Notifier's Send.
	Notify func(notify.Event)
	// HeadCommit, when set, names the commit checked out in a role's
	// working directory ("" when there is none); each report records it
	// as it arrives. team runs git for roles that work in a repository.
	HeadCommit func(role string) string
}

// Queue runs a workspace's file protocol: it watches the queue folders,
// claims and records command and report files exactly once, hands each role
// its tasks one at a time with a typed nudge, tells senders about reports,
// and keeps runtime/dashboard.md and runtime/state/status.yaml current.
type Queue struct {
	cfg    atomic.Pointer[config.Config] // replaced whole by SetConfig
	ws     string
	layout workspace.Layout
	st     *store.Store
	runID  string
	log    zerolog.Logger
	now    func() time.Time
	dirs   dirs

	// wmu guards the workers, one per running role, which a live reload
	// adds and removes while the queue runs.
	wmu     sync.Mutex
	workers map[string]*worker
	// runCtx is Run's context once Run has started the workers (nil
	// before); a worker added then starts at once.
	runCtx context.Context
	// configError is why the configuration files were not taken into use
	// (a live reload found errors), for the dashboard; nil when they were.
	configError error

	changed chan struct{} // dashboard refresh requests
	// takenIn is closed once Run has taken in the files that arrived
	// while no supervisor ran, or has ended without (TakenIn).
	takenIn     chan struct{}
	takenInOnce sync.Once
	onReport    func(store.Task)
	notifyFn    func(notify.Event)
	headOf      func(role string) string
	held        *heldReports // reports read but left where their agents wrote them
	mu          sync.Mutex
	recent      []attention         // files rejected and other AddAttention lines of this run, for the dashboard
	blocked     map[string]blockage // what cannot make progress now, and why
	// handedAway is, per role, the reset of the latest limit it handed its
	// tasks to its fallback for (fallback.go); guarded by mu.
	handedAway map[string]time.Time
	budget     budgets // the daily budgets as last checked (budgets.go)

	// statusYAML renders status.yaml (statusyaml.go).
	statusYAML statusYAML
}

// runtimeFileMode is the mode of every file the queue writes under
// runtime/: owner-only, since task files, reports and error records quote
// what agents wrote.
const runtimeFileMode = 0o600

// dirs are the queue folders of a workspace, from its layout.
type dirs struct {
	commands, tasks, reports, archive, failed string
}

func (d dirs) claimed(folder string) string { return filepath.Join(folder, ".claimed") }

// New prepares a queue; nothing happens until Run.
func New(opts Options) (*Queue, error) {
	if opts.Config == nil || opts.Store == nil {
		return nil, errors.New("queue: configuration and store are required")
	}
	ws := opts.Config.Workspace
	l := workspace.New(ws)
	q := &Queue{
		ws:       ws,
		layout:   l,
		st:       opts.Store,
		runID:    opts.RunID,
		log:      opts.Logger,
		now:      opts.Now,
		dirs:     dirs{commands: l.Commands(), tasks: l.Tasks(), reports: l.Reports(), archive: l.Archive(), failed: l.Failed()},
		workers:  map[string]*worker{},
		changed:  make(chan struct{}, 1),
		takenIn:  make(chan struct{}),
		onReport: opts.OnReport,
		notifyFn: opts.Notify,
		headOf:   opts.HeadCommit,
		held:     newHeldReports(),

		handedAway: map[string]time.Time{},
	}
	q.cfg.Store(opts.Config)
	if q.now == nil {
		q.now = time.Now
	}
	for _, d := range []string{
		q.dirs.commands, q.dirs.claimed(q.dirs.commands), q.dirs.tasks, q.dirs.reports, q.dirs.claimed(q.dirs.reports),
		q.dirs.archive,
		q.dirs.failed, l.State(),
	} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("queue: create %s: %w", d, err)
		}
	}
	for id, a := range opts.Agents {
		q.workers[id] = newWorker(q, a)
	}
	return q, nil
}

// config is the configuration in effect.
func (q *Queue) config() *config.Config { return q.cfg.Load() }

// limits bound the command and report files (queue.max_file_bytes).
func (q *Queue) limits() Limits {
	return Limits{MaxBytes: q.config().Settings.Queue.MaxFileBytes}
}

// SetConfig takes a new configuration into use: the roles commands may
// name, the queue settings, each role's templates and timings. The set of
// roles that get work changes with AddAgent and RemoveAgent.
func (q *Queue) SetConfig(cfg *config.Config) {
	q.cfg.Store(cfg)
	q.CheckBudgets() // a budget raised lets its roles work at once
	for _, w := range q.allWorkers() {
		w.kick()
	}
	q.touched()
}

// SetConfigError records why the configuration files as they are now were
// not taken into use, for the dashboard and status (nil: they were).
func (q *Queue) SetConfigError(err error) {
	q.mu.Lock()
	q.configError = err
	q.mu.Unlock()
	q.touched()
}

// worker returns the worker of a running role.
func (q *Queue) worker(role string) (*worker, bool) {
	q.wmu.Lock()
	defer q.wmu.Unlock()
	w, ok := q.workers[role]
	return w, ok
}

func (q *Queue) allWorkers() []*worker {
	q.wmu.Lock()
	defer q.wmu.Unlock()
	out := make([]*worker, 0, len(q.workers))
	for _, w := range q.workers {
		out = append(out, w)
	}
	return out
}

// agent returns a running role.
func (q *Queue) agent(role string) (Agent, bool) {
	if w, ok := q.worker(role); ok {
		return w.a, true
	}
	return nil, false
}

// AddAgent starts handing work to a role that runs now: its queued tasks,
// and its task in flight again, to its new program.
func (q *Queue) AddAgent(a Agent) error {
	q.wmu.Lock()
	if _, ok := q.workers[a.ID()]; ok {
		q.wmu.Unlock()
		return fmt.Errorf("queue: role %s already gets work", a.ID())
	}
	w := newWorker(q, a)
	q.workers[a.ID()] = w
	if q.runCtx != nil {
		q.startLocked(w)
	}
	q.wmu.Unlock()
	// Roles that fall back on this one may hand it their tasks now.
	q.kickFallbacksOf(a.ID())
	q.touched()
	return nil
}

// RemoveAgent stops handing work to a role, before its program is
// stopped: its worker ends (a nudge being typed is given up) and the
// role's tasks stay as they are until ReleaseTasks. Notes waiting to be
// typed into the role are dropped.
func (q *Queue) RemoveAgent(role string) {
	q.wmu.Lock()
	w, ok := q.workers[role]
	delete(q.workers, role)
	q.wmu.Unlock()
	if ok && w.cancel != nil {
		w.cancel()
		<-w.done
	}
	q.touched()
}

// startLocked runs w under Run's context; q.wmu is held.
func (q *Queue) startLocked(w *worker) {
	ctx, cancel := context.WithCancel(q.runCtx)
	w.cancel, w.done = cancel, make(chan struct{})
	go func() {
		defer close(w.done)
		defer cancel()
		w.run(ctx)
	}()
}

// Run processes the queue until ctx ends: first whatever a crash left
// claimed, then every file already waiting, then new files as they come.
func (q *Queue) Run(ctx context.Context) error {
	defer q.takenInOnce.Do(func() { close(q.takenIn) })
	retry, err := q.recover()
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	run := func(f func(context.Context)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(ctx)
		}()
	}
	in := newIntake(q)
	in.watch()
	in.keepTrying(retry)
	// Files that arrived while no supervisor ran go first, before any role
	// is given work: a report waiting there closes its task, which is then
	// not delivered again to the restarted role.
	in.initial(ctx)
	q.takenInOnce.Do(func() { close(q.takenIn) })
	run(in.run)
	// A role already over its budget today gets no task from the start.
	q.CheckBudgets()
	q.wmu.Lock()
	q.runCtx = ctx
	for _, w := range q.workers {
		q.startLocked(w)
	}
	q.wmu.Unlock()
	run(q.keepDashboard)
	run(q.keepBudgets)
	wg.Wait()
	// Every worker's context has ended with ctx: wait for them.
	for _, w := range q.allWorkers() {
		<-w.done
	}
	q.writeDashboard() // the final state, roles stopped
	return nil
}

// TakenIn is closed once Run has taken in the commands and reports that
// arrived while no supervisor ran, so that Work knows the tasks they made
// (the supervisor gives its slots at start by it), or once Run has ended
// without.
func (q *Queue) TakenIn() <-chan struct{} { return q.takenIn }

// touched asks for the dashboard and status file to be rewritten.
func (q *Queue) touched() {
	select {
	case q.changed <- struct{}{}:
	default:
	}
}

// kick wakes a role's worker: it has new work, or its task was closed.
func (q *Queue) kick(role string) {
	if w, ok := q.worker(role); ok {
		w.kick()
	}
	q.touched()
}

func (q *Queue) event(role, kind, taskID, msg string) {
	if err := q.st.AddEvent(store.Event{At: q.now(), RunID: q.runID, Role: role, Kind: kind, TaskID: taskID, Message: msg}); err != nil {
		q.log.Warn().Err(err).Str("kind", kind).Msg("record event")
	}
}
