package queue

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/shogun-dev/shogun/atomicfile"
	"github.com/shogun-dev/shogun/config"
	"github.com/shogun-dev/shogun/notify"
	"github.com/shogun-dev/shogun/roles"
	"github.com/shogun-dev/shogun/store"
	"github.com/shogun-dev/shogun/supervisor"
	"github.com/shogun-dev/shogun/textsafe"
)

// worker hands one role its work: at most one task in flight, the next one
// when the report has closed it, and notify lines about reports on commands
// the role sent. Everything it types goes through the supervisor's typing
// procedure, and only while the role is workable.
type worker struct {
	q    *Queue
	a    Agent
	wake chan struct{}
	// cancel and done end and await the worker's goroutine (Queue.Run,
	// Queue.RemoveAgent).
	cancel context.CancelFunc
	done   chan struct{}
	// cached is the role's configuration as of the queue's configuration
	// cachedOf; read it through conf. (There is no cfg field: code that
	// read one reads conf() now.)
	cached   config.Role
	cachedOf *config.Config

	mu    sync.Mutex
	notes []note
	// handed is the task last delivered and the program run it went to,
	// for Queue.Work, which other goroutines call (delivered is the
	// worker goroutine's own).
	handed handedTask

	// delivered maps a task to the program run it was last nudged in. A
	// task in flight whose program was replaced since is delivered again.
	delivered map[string]int
	// deliveredOn maps a task in flight to the account its role ran on
	// when it was last nudged: delivered again on another one, the nudge
	// says the task continues after an account change.
	deliveredOn map[string]string

	// failures counts task-file writes that failed in a row; retryAt is
	// when to try again (zero: no retry pending).
	failures int
	retryAt  time.Time

	// followed is the delivered task watched for a sign of work and for a
	// stall (tend.go); lost counts its deliveries lost in a row, carried to
	// the next delivery of the same task.
	followed *followed
	lost     int
	// limited: the role was seen limited; remindAfterLimit: the limit is
	// over and the open task is to be reminded.
	limited, remindAfterLimit bool
	// waitNoted is the reset of the limit for which the history was told
	// that the fallback cannot take the role's tasks (fallback.go).
	waitNoted time.Time
	// fresh: the role has had a task, so between_tasks is typed before the
	// next one.
	fresh bool
	// cancelled are tasks cancelled by a person whose task file is to be
	// archived.
	cancelled []string
}

// handedTask is a task delivered to one run of the role's program.
type handedTask struct {
	taskID string
	gen    int
}

// note is a notify line waiting to be typed.
type note struct {
	taskID string
	text   string
	// whileOpen: typed only while task taskID is still open (it speaks of
	// that task to the role working on it).
	whileOpen bool
	// wakeup: the line is the task's wake-up for this role, recorded in
	// the history, which is told once it is typed (store.WakeupTyped).
	wakeup bool
}

func newWorker(q *Queue, a Agent) *worker {
	return &worker{q: q, a: a, wake: make(chan struct{}, 1), delivered: map[string]int{}, deliveredOn: map[string]string{}}
}

// conf is the role's configuration in effect: a live reload changes its
// templates and timings while the worker runs. It is looked up again only
// when the queue's configuration changed; only the worker's goroutine
// calls it.
func (w *worker) conf() *config.Role {
	if c := w.q.config(); c != w.cachedOf {
		r, ok := c.Role(w.a.ID())
		if !ok {
			r = config.Role{ID: w.a.ID()}
		}
		w.cachedOf, w.cached = c, r
	}
	return &w.cached
}

func (w *worker) kick() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// addNote queues a line to type. A task's wake-up already waiting is not
// queued twice: the history's pending wake-ups are loaded when the worker
// starts, and a report read before that queued its own.
func (w *worker) addNote(n note) {
	w.mu.Lock()
	if n.wakeup && slices.ContainsFunc(w.notes, func(o note) bool { return o.wakeup && o.taskID == n.taskID }) {
		w.mu.Unlock()
		return
	}
	w.notes = append(w.notes, n)
	w.mu.Unlock()
	w.kick()
}

func (w *worker) popNote() (note, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.notes) == 0 {
		return note{}, false
	}
	n := w.notes[0]
	w.notes = w.notes[1:]
	return n, true
}

func (w *worker) run(ctx context.Context) {
	w.q.loadWakeups(w)
	retry := time.NewTimer(time.Hour)
	defer retry.Stop()
	for {
		changed := w.a.Changed()
		progressed := false
		w.observe()
		w.archiveCancelled()
		if w.fallBack(ctx) {
			progressed = true
		}
		if gen, ok := w.a.Workable(); ok {
			if n, has := w.popNote(); has {
				w.typeNote(ctx, n)
				progressed = true
			} else if w.tend(ctx) {
				progressed = true
			} else {
				progressed = w.dispatch(ctx, gen)
			}
		}
		if _, ok := w.a.Workable(); !ok {
			w.wakeIfAsleep()
		}
		if ctx.Err() != nil {
			return
		}
		if progressed {
			continue
		}
		// Timers matter only while the role is workable: a role that
		// becomes workable announces it with a state change, which wakes
		// the loop anyway.
		var retryC <-chan time.Time
		if _, ok := w.a.Workable(); ok {
			next := w.nextCheck()
			if !w.retryAt.IsZero() && (next.IsZero() || w.retryAt.Before(next)) {
				next = w.retryAt
			}
			if !next.IsZero() {
				retry.Reset(max(time.Until(next), time.Millisecond))
				retryC = retry.C
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-w.wake:
		case <-changed:
		case <-retryC:
		}
		if !retry.Stop() {
			select {
			case <-retry.C:
			default:
			}
		}
	}
}

// dispatch delivers the role's task in flight to a program run that has not
// had it, or assigns and delivers the next queued task. It reports whether
// it did anything.
//
// The task file is written before the task is assigned: if the write fails
// (a full disk, a folder that cannot be written), the task stays as it was
// in the store, the queue shows itself blocked, and the write is tried
// again after a growing delay, with no other event needed to wake it.
func (w *worker) dispatch(ctx context.Context, gen int) bool {
	role := w.a.ID()
	w.retryAt = time.Time{} // trying now; a failure sets the next time
	t, err := w.q.st.InFlight(role)
	if err != nil {
		w.q.log.Error().Err(err).Str("role", role).Msg("look up task in flight")
		return false
	}
	redeliver := t != nil
	if t != nil {
		if g, ok := w.delivered[t.ID]; ok && g == gen {
			return false // delivered to this program; its report will close it
		}
	} else {
		clear(w.delivered) // nothing in flight: forget closed tasks
		clear(w.deliveredOn)
		w.followed, w.lost = nil, 0
		if t, err = w.q.st.NextQueued(role); err != nil || t == nil {
			if err != nil {
				w.q.log.Error().Err(err).Str("role", role).Msg("look up next task")
			} else if w.failures > 0 {
				// The task that could not go out was cancelled meanwhile.
				w.failures = 0
				w.q.unblock(w.blockKey())
			}
			if err == nil && w.fresh && w.conf().BetweenTasks != "" {
				// After a report, with nothing queued yet: a fresh context
				// now, so that the next task need not wait for it.
				w.betweenTasks(ctx)
				return true
			}
			return false
		}
		// A budget all spent holds the next task (not one in flight,
		// delivered again above) until it is raised or the day turns;
		// CheckBudgets kicks the worker then.
		hold := w.q.budgetHold(role)
		w.q.noteHold(role, t.ID, hold)
		if hold != "" {
			return false
		}
		if w.switchAccount(t.ID) {
			return false // the program on the next account announces itself
		}
		if w.fresh && w.conf().BetweenTasks != "" {
			// After a report and before the next task: a fresh context.
			w.betweenTasks(ctx)
			return true // the role's state changed meanwhile: look again
		}
	}
	// The last report stays readable until now; the next one is written
	// to a free name.
	w.q.releaseRole(role)
	at := w.q.now().UTC()
	if err := w.writeTaskFile(*t, at); err != nil {
		w.handOutFailed(t.ID, err)
		return false
	}
	task, err := w.q.st.Assign(t.ID, at)
	if errors.Is(err, store.ErrTaskClosed) {
		w.handedOut(t.ID)
		return true // cancelled meanwhile; the next task's file replaces this one
	}
	if err != nil {
		w.handOutFailed(t.ID, fmt.Errorf("record the assignment: %w", err))
		return false
	}
	w.handedOut(t.ID)
	lost := w.lost
	w.lost = 0
	nudge := w.nudgeText()
	account := w.a.Status().Account
	from, had := w.deliveredOn[task.ID]
	moved := redeliver && had && from != "" && from != account
	switch {
	case moved:
		w.q.log.Info().Str("role", role).Str("task_id", task.ID).Str("from", from).Str("account", account).Msg("delivering the task again after an account change")
		w.q.event(role, "redeliver", task.ID, fmt.Sprintf("attempt %d, after an account change (%s → %s)", task.Attempts, from, account))
		nudge = fmt.Sprintf("This task continues after an account change (%s → %s): carry on from where it stopped. %s", from, account, nudge)
	case redeliver && lost > 0:
		w.q.log.Info().Str("role", role).Str("task_id", task.ID).Int("attempt", task.Attempts).Msg("delivering the task again after a lost delivery")
		w.q.event(role, "redeliver", task.ID, fmt.Sprintf("attempt %d, after a lost delivery", task.Attempts))
	case redeliver:
		w.q.log.Info().Str("role", role).Str("task_id", task.ID).Int("attempt", task.Attempts).Msg("delivering the task again to the restarted program")
		w.q.event(role, "redeliver", task.ID, fmt.Sprintf("attempt %d", task.Attempts))
	}
	w.q.touched()
	d, err := w.a.Type(ctx, nudge, supervisor.TypeOptions{})
	if ctx.Err() != nil {
		return false
	}
	if err != nil && !errors.Is(err, supervisor.ErrUndelivered) {
		// The program went away while typing; its next run gets the task.
		w.q.log.Warn().Err(err).Str("role", role).Str("task_id", task.ID).Msg("nudge interrupted")
		return false
	}
	confirmed := err == nil && d.Confirmed
	if _, err := w.q.st.MarkDelivery(task.ID, confirmed, d.Attempts, w.q.now()); err != nil {
		w.q.log.Error().Err(err).Str("task_id", task.ID).Msg("record delivery")
	}
	w.delivered[task.ID] = gen
	w.deliveredOn[task.ID] = account
	w.mu.Lock()
	w.handed = handedTask{taskID: task.ID, gen: gen}
	w.mu.Unlock()
	w.fresh = true
	if confirmed {
		w.q.log.Info().Str("role", role).Str("task_id", task.ID).Int("submits", d.Attempts).Msg("task delivered")
		w.q.event(role, "delivered", task.ID, fmt.Sprintf("nudge confirmed after %d submit(s)", d.Attempts))
		w.follow(task, lost)
	} else {
		w.q.log.Warn().Err(err).Str("role", role).Str("task_id", task.ID).Int("submits", d.Attempts).Msg("nudge not confirmed: task undelivered")
		msg := fmt.Sprintf("nudge not confirmed after %d submit(s)", d.Attempts)
		w.q.event(role, "undelivered", task.ID, msg)
		w.followed = nil
		w.q.notify(notify.Event{Kind: notify.KindUndelivered, Role: role, TaskID: task.ID, Title: textsafe.Escape(task.Title),
			Message: fmt.Sprintf("task %s for %s is undelivered: %s; attach to %s, then `shogun retry %s`", task.ID, role, msg, role, task.ID)})
	}
	w.q.touched()
	return true
}

// blockKey names the role's task file where the dashboard lists what
// blocks the queue.
func (w *worker) blockKey() string { return "task file for " + w.a.ID() }

// handOutFailed schedules another try at handing out a task whose file
// could not be written (or whose assignment could not be recorded), and says
// so once per reason.
func (w *worker) handOutFailed(taskID string, err error) {
	w.failures++
	wait := retryDelay(w.failures)
	w.retryAt = time.Now().Add(wait)
	if w.q.block(w.blockKey(), fmt.Errorf("task %s not handed out: %w", taskID, err)) {
		w.q.log.Error().Err(err).Str("role", w.a.ID()).Str("task_id", taskID).Str("retry_in", wait.String()).
			Msg("hand out task; the task waits and is tried again")
		w.q.event(w.a.ID(), "blocked", taskID, fmt.Sprintf("task not handed out: %v; trying again", err))
	}
}

// handedOut ends a run of failures.
func (w *worker) handedOut(taskID string) {
	if w.failures > 0 {
		w.q.log.Info().Str("role", w.a.ID()).Str("task_id", taskID).Int("tries", w.failures+1).Msg("task handed out after all")
	}
	w.failures, w.retryAt = 0, time.Time{}
	w.q.unblock(w.blockKey())
}

func (w *worker) typeNote(ctx context.Context, n note) {
	if n.whileOpen {
		if t, err := w.q.st.Task(n.taskID); err == nil && store.Closed(t.Status) {
			return // its task is done: nothing left to say
		}
	}
	d, err := w.a.Type(ctx, n.text, supervisor.TypeOptions{})
	switch {
	case ctx.Err() != nil:
	case err == nil && d.Confirmed:
		w.q.event(w.a.ID(), "notified", n.taskID, n.text)
		if n.wakeup {
			if err := w.q.st.WakeupTyped(n.taskID, w.q.now()); err != nil {
				w.q.log.Warn().Err(err).Str("role", w.a.ID()).Str("task_id", n.taskID).Msg("record wake-up typed; it may be typed again after a restart")
			}
		}
	default:
		w.q.log.Warn().Err(err).Str("role", w.a.ID()).Str("task_id", n.taskID).Msg("notify not confirmed")
		w.q.event(w.a.ID(), "notify-undelivered", n.taskID, n.text)
	}
}

// taskPath is the role's task file.
func (w *worker) taskPath() string {
	return w.q.layout.TaskFile(w.a.ID())
}

// nudgeText is the role's nudge with its values filled in.
func (w *worker) nudgeText() string {
	cfg := w.conf()
	return roles.Expand(cfg.Nudge, cfg.TemplateVars(w.q.layout))
}

// writeTaskFile archives the role's previous task file, if it was another
// task's, and writes this one, as assigned at the given time, atomically.
//
// The previous task is named by the history, never by the file: the agent
// can edit its task file, and a task_id of "../../config/roles" there must
// not choose where the file goes. Whatever is at the task file's path, a
// symbolic link or a directory an agent put there included, is moved into
// the archive as it is, never followed.
func (w *worker) writeTaskFile(t store.Task, at time.Time) error {
	path := w.taskPath()
	if _, err := os.Lstat(path); err == nil {
		prev, err := w.q.st.LastAssigned(w.a.ID())
		if err != nil {
			return fmt.Errorf("archive previous task file: %w", err)
		}
		if prev == nil || prev.ID != t.ID {
			name := "unknown"
			if prev != nil && checkID("task_id", prev.ID) == nil {
				name = prev.ID
			}
			if _, err := moveInto(path, w.q.layout.ArchiveFor("tasks", at), w.a.ID()+"-"+name+".yaml"); err != nil {
				return fmt.Errorf("archive previous task file: %w", err)
			}
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("archive previous task file: %w", err)
	}
	b, err := MarshalTask(Task{
		TaskID: t.ID, CommandID: t.CommandID, Role: t.Role, From: t.From, Title: t.Title, Body: t.Body,
		Tags: t.Tags, Priority: t.Priority, AssignedAt: at, Attempt: t.Attempts + 1,
		// As the agent sees it from its cwd: relative in the workspace,
		// absolute from anywhere else (a role's worktree).
		ReportTo: w.conf().TemplateVars(w.q.layout)[roles.VarReportFile],
	})
	if err != nil {
		return err
	}
	if err := atomicfile.Write(path, b, runtimeFileMode); err != nil {
		return fmt.Errorf("write task file: %w", err)
	}
	return nil
}

// accountSwitcher is an Agent that moves to another of its accounts
// between tasks when its account is nearly spent (*supervisor.Role,
// accounts_switch_at).
type accountSwitcher interface {
	SwitchAccountBeforeTask() (why string, moving bool)
}

var _ accountSwitcher = (*supervisor.Role)(nil)

// switchAccount asks the role, between tasks, whether it moves to another
// account before task next is typed, and records why in the history. It
// reports whether the task is to wait for the move.
func (w *worker) switchAccount(next string) bool {
	m, ok := w.a.(accountSwitcher)
	if !ok {
		return false
	}
	why, moving := m.SwitchAccountBeforeTask()
	if why != "" {
		w.q.log.Info().Str("role", w.a.ID()).Str("task_id", next).Msg(why)
		w.q.event(w.a.ID(), "account", next, why)
	}
	return moving
}
