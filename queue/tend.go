package queue

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/shogun-dev/shogun/notify"
	"github.com/shogun-dev/shogun/roles"
	"github.com/shogun-dev/shogun/store"
	"github.com/shogun-dev/shogun/supervisor"
	"github.com/shogun-dev/shogun/textsafe"
)

// A delivered task is followed until its report: the agent must show a sign
// of work within ack_timeout (the busy state, output after the delivery, or
// the report), or the delivery counts as lost and the task goes out again;
// and a role that then sits ready and quiet for stall_after is reminded,
// then interrupted and nudged again, and at last its task is marked
// stalled and a person is told.

// maxLost bounds the deliveries counted lost in a row; after that the task
// is left to the stall steps, which end with a person.
const maxLost = 3

// followed is the worker's view of its role's delivered task.
type followed struct {
	id    string
	title string
	from  string
	at    time.Time // when the delivery was confirmed
	acked bool      // a sign of work showed (or the lost deliveries ran out)
	lost  int       // deliveries of this task counted lost in a row
	// step is how far the stall escalation went: 0 none, 1 reminded,
	// 2 interrupted and nudged again; stepAt when the last one was typed.
	step   int
	stepAt time.Time
}

// Escalation steps, as the history's events name them.
const (
	eventLost        = "lost"
	eventReminded    = "reminded"
	eventInterrupted = "interrupted"
	eventStalled     = "stalled"
)

// follow starts following a task just delivered to the role.
func (w *worker) follow(t store.Task, lost int) {
	w.followed = &followed{id: t.ID, title: t.Title, from: t.From, at: w.q.now(), lost: lost}
}

// observe notes what the role's state says, on every wake-up: a sign of
// work for the delivered task, and a usage limit (whose end calls for a
// reminder).
func (w *worker) observe() {
	st := w.a.Status()
	if st.State == supervisor.Limited {
		w.limited = true
	} else if w.limited {
		w.limited = false
		w.remindAfterLimit = true
		// Roles that fall back on this one may hand it their tasks now.
		w.q.kickFallbacksOf(w.a.ID())
	}
	f := w.followed
	if f == nil || f.acked {
		return
	}
	// The busy pattern is work whenever it shows; right after the submit,
	// output alone and the moment of busy it causes are the echo (the
	// composer redrawn), not work.
	settled := f.at.Add(echoSettle)
	if st.State == supervisor.Limited || st.State == supervisor.Waiting || st.BusyAt.After(f.at) || st.LastOutput.After(settled) ||
		(st.State == supervisor.Busy && w.q.now().After(settled)) {
		f.acked = true
	}
}

// echoSettle is how long after a confirmed delivery a program's output is
// still the submit's own echo (the composer redrawn empty, the line moved
// into the transcript); output later than that is a sign of work.
const echoSettle = 300 * time.Millisecond

// nextCheck is when the delivered task needs looking at again, if no
// state change comes first; zero for never.
func (w *worker) nextCheck() time.Time {
	f := w.followed
	if f == nil {
		return time.Time{}
	}
	if !f.acked {
		if w.conf().AckTimeout <= 0 {
			return time.Time{}
		}
		return f.at.Add(w.conf().AckTimeout)
	}
	if w.conf().StallAfter <= 0 {
		return time.Time{}
	}
	return w.quietSince(f).Add(w.conf().StallAfter)
}

// quietSince is when the role last showed anything, was last typed to
// about its task, or last stopped waiting for a person: time spent waiting
// on a person's answer is not the agent's silence.
func (w *worker) quietSince(f *followed) time.Time {
	st := w.a.Status()
	return latest(f.at, f.stepAt, st.LastOutput, st.WaitedUntil)
}

func latest(ts ...time.Time) time.Time {
	var m time.Time
	for _, t := range ts {
		if t.After(m) {
			m = t
		}
	}
	return m
}

// tend looks after the role's delivered task while the role is workable:
// a lost delivery goes out again, a reminder follows a usage limit, and a
// quiet role is escalated step by step. It reports whether it typed or
// changed anything.
func (w *worker) tend(ctx context.Context) bool {
	f := w.followed
	if f == nil {
		w.remindAfterLimit = false
		return false
	}
	t, err := w.q.st.Task(f.id)
	if err != nil || t.Status != store.StatusDelivered || t.Role != w.a.ID() {
		// Closed, cancelled, retried, stalled or handed over: nothing
		// more to follow.
		if err != nil {
			w.q.log.Error().Err(err).Str("task_id", f.id).Msg("look up delivered task")
		}
		w.followed = nil
		return false
	}
	now := w.q.now()
	role := w.a.ID()
	if !f.acked {
		if w.conf().AckTimeout <= 0 || now.Before(f.at.Add(w.conf().AckTimeout)) {
			return false
		}
		if f.lost+1 >= maxLost {
			f.acked = true
			w.q.log.Warn().Str("role", role).Str("task_id", f.id).Int("lost", f.lost+1).Msg("no sign of work after several deliveries; waiting for the stall steps")
			return false
		}
		w.q.log.Warn().Str("role", role).Str("task_id", f.id).Dur("ack_timeout", w.conf().AckTimeout).Msg("no sign of work after the delivery: delivering the task again")
		w.q.event(role, eventLost, f.id, fmt.Sprintf("no sign of work within %v of the delivery; delivering it again", w.conf().AckTimeout))
		w.lost = f.lost + 1
		delete(w.delivered, f.id)
		w.followed = nil
		return true // dispatch delivers it again
	}
	if w.remindAfterLimit {
		w.remindAfterLimit = false
		if gen, _ := w.a.Workable(); w.delivered[f.id] != gen {
			// The limit ended with a new program (another account):
			// dispatch delivers it the task again, no reminder needed.
			return false
		}
		w.q.log.Info().Str("role", role).Str("task_id", f.id).Msg("usage limit over: reminding the role of its open task")
		w.typeStep(ctx, f, w.remindText(), eventReminded, "the usage limit is over; reminded of the open task")
		return true
	}
	if w.conf().StallAfter <= 0 || now.Sub(w.quietSince(f)) < w.conf().StallAfter {
		return false
	}
	switch f.step {
	case 0:
		w.q.log.Warn().Str("role", role).Str("task_id", f.id).Dur("stall_after", w.conf().StallAfter).Msg("role quiet with an open task: reminding it")
		w.typeStep(ctx, f, w.remindText(), eventReminded, fmt.Sprintf("ready and quiet for %v without a report; reminded", w.conf().StallAfter))
		f.step = 1
	case 1:
		w.q.log.Warn().Str("role", role).Str("task_id", f.id).Msg("role still quiet after a reminder: interrupting it and nudging again")
		if w.conf().InterruptKeys != "" {
			if err := w.a.SendKeys(ctx, w.conf().InterruptKeys); err != nil && ctx.Err() == nil {
				w.q.log.Warn().Err(err).Str("role", role).Msg("send interrupt keys")
			}
		}
		w.typeStep(ctx, f, w.nudgeText(), eventInterrupted, "still quiet after a reminder; interrupted and nudged again")
		f.step = 2
	default:
		w.stall(f)
	}
	return true
}

// typeStep types one escalation step's text and records it.
func (w *worker) typeStep(ctx context.Context, f *followed, text, kind, msg string) {
	d, err := w.a.Type(ctx, text, supervisor.TypeOptions{})
	if ctx.Err() != nil {
		return
	}
	f.stepAt = w.q.now()
	if err != nil || !d.Confirmed {
		msg += " (not confirmed on screen)"
		w.q.log.Warn().Err(err).Str("role", w.a.ID()).Str("task_id", f.id).Msg(kind + ": typing not confirmed")
	}
	w.q.event(w.a.ID(), kind, f.id, msg)
	w.q.touched()
}

// stall gives up on the task: it becomes stalled (still holding the role),
// the sender is told, and so is a person.
func (w *worker) stall(f *followed) {
	role := w.a.ID()
	w.followed = nil
	if _, err := w.q.st.MarkStalled(f.id, w.q.now()); err != nil {
		w.q.log.Error().Err(err).Str("task_id", f.id).Msg("mark task stalled")
		return
	}
	msg := fmt.Sprintf("task %s for %s is stalled: no report after a reminder and an interrupt; attach to %s, then `shogun retry %s` or `shogun cancel %s`", f.id, role, role, f.id, f.id)
	w.q.log.Error().Str("role", role).Str("task_id", f.id).Msg("task stalled; a person is needed")
	w.q.event(role, eventStalled, f.id, msg)
	w.q.notify(notify.Event{Kind: notify.KindStalled, Role: role, TaskID: f.id, Title: textsafe.Escape(f.title), Message: msg})
	if f.from != "" {
		w.q.tellSender(f.from, f.id, fmt.Sprintf("Task %s for %s (%s) is stalled: no report after a reminder and an interrupt. A person has been told.", f.id, role, typedTitle(f.title)))
	}
	w.q.touched()
}

// remindText is the role's remind template with its values filled in.
func (w *worker) remindText() string {
	cfg := w.conf()
	return roles.Expand(cfg.Remind, cfg.TemplateVars(w.q.layout))
}

// betweenTasks types the role's between_tasks keys before its next task
// (dispatch calls it when the role has had a task since they were last
// typed): as text to submit by the typing rules, or as keys when they hold
// control characters.
func (w *worker) betweenTasks(ctx context.Context) {
	w.fresh = false
	// The conversation ends here: a CLI that tells its new one only at its
	// next tool call (Codex after /new) would otherwise be woken into the
	// conversation of the task before, not the fresh one between_tasks
	// asks for.
	w.a.ForgetSession()
	var err error
	if supervisor.CheckTypable(w.conf().BetweenTasks) == nil {
		var d supervisor.Delivery
		d, err = w.a.Type(ctx, w.conf().BetweenTasks, supervisor.TypeOptions{})
		if err == nil && !d.Confirmed {
			err = supervisor.ErrUndelivered
		}
	} else {
		err = w.a.SendKeys(ctx, w.conf().BetweenTasks)
	}
	if ctx.Err() != nil {
		return
	}
	if err != nil && !errors.Is(err, supervisor.ErrUndelivered) {
		w.q.log.Warn().Err(err).Str("role", w.a.ID()).Msg("between_tasks keys")
		return
	}
	w.q.event(w.a.ID(), "between-tasks", "", "between_tasks keys typed before the next task")
}

// MaxTypedTitle is the most characters of a task's title typed into an
// agent (a notify line, a cancelled, blocked or stalled task's line): a
// title is any one line its sender wrote, 100 kB included, and the whole of
// it stays in the task file and the history.
const MaxTypedTitle = 200

// typedTitle is title as it is typed into an agent: control characters
// escaped, and cut to MaxTypedTitle characters, the last an ellipsis.
func typedTitle(title string) string {
	s := textsafe.Escape(title)
	if utf8.RuneCountInString(s) <= MaxTypedTitle {
		return s
	}
	r := []rune(s)
	return string(r[:MaxTypedTitle-1]) + "…"
}

// tellSender queues a line for the role that sent a task's command.
func (q *Queue) tellSender(from, taskID, text string) {
	if w, ok := q.worker(from); ok {
		w.addNote(note{taskID: taskID, text: text})
		return
	}
	q.event(from, "notify-skipped", taskID, "sender is not running")
}

// notify sends a notification through Options.Notify, if set.
func (q *Queue) notify(e notify.Event) {
	if q.notifyFn == nil {
		return
	}
	if e.At.IsZero() {
		e.At = q.now()
	}
	q.notifyFn(e)
}
