package queue

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/shogun-dev/shogun/rolelog"
	"github.com/shogun-dev/shogun/store"
	"github.com/shogun-dev/shogun/supervisor"
	"github.com/shogun-dev/shogun/textsafe"
)

// A role with a fallback (the fallback key) that is at a usage limit with
// no free account hands its open tasks to the fallback role: the task it
// had in flight, with a note saying where it was left, and its queued
// ones, each moved once in a transaction of its own with the event that
// records it (store.HandOver). The loop guard: a role counts as limited
// until the reset of the limit it handed its tasks away for, whatever its
// screen says meanwhile (a restarted CLI shows no limit), and nothing goes
// to a fallback that is limited too; the tasks wait for the first reset.
// So a task moves at most once per limit, never back and forth while both
// roles are limited.

// handOverMin is the shortest limit worth handing tasks over for: a limit
// read late, whose reset is already past or moments away, is waited out.
const handOverMin = 5 * time.Second

// accountMover is an Agent that runs on accounts of its own
// (*supervisor.Role): a limited one with a free account moves to it itself.
type accountMover interface {
	HasFreeAccount() bool
}

// noFreeAccount reports whether role has no account left to work on now,
// given its status: it is limited (or handed its tasks away for a limit
// that has not lifted yet) and none of its accounts is free — a role
// without accounts has none. The one place the hand-over asks.
func (q *Queue) noFreeAccount(role string, st supervisor.Status) bool {
	if a, ok := q.agent(role); ok {
		if m, ok := a.(accountMover); ok && m.HasFreeAccount() {
			return false
		}
	}
	if st.State == supervisor.Limited {
		return true
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.now().Before(q.handedAway[role])
}

var _ accountMover = (*supervisor.Role)(nil)

// fallBack hands the role's open tasks to its fallback role while the role
// is at a usage limit with no free account and the fallback can take
// them. It reports whether it moved any.
func (w *worker) fallBack(ctx context.Context) bool {
	to := w.conf().Fallback
	role := w.a.ID()
	st := w.a.Status()
	if to == "" || st.State != supervisor.Limited || !w.q.noFreeAccount(role, st) {
		return false
	}
	if st.LimitedUntil.Sub(w.q.now()) < handOverMin {
		return false
	}
	inFlight, err := w.q.st.InFlight(role)
	if err != nil {
		w.q.log.Error().Err(err).Str("role", role).Msg("look up task in flight for the fallback")
		return false
	}
	queued, err := w.q.st.NextQueued(role)
	if err != nil {
		w.q.log.Error().Err(err).Str("role", role).Msg("look up queued tasks for the fallback")
		return false
	}
	if inFlight == nil && queued == nil {
		return false
	}
	if why := w.q.cannotTake(to); why != "" {
		if !w.waitNoted.Equal(st.LimitedUntil) {
			w.waitNoted = st.LimitedUntil
			msg := fmt.Sprintf("%s is at its usage limit until %s; its fallback %s %s, so its tasks wait for the first reset",
				role, clock(st.LimitedUntil), to, why)
			w.q.log.Warn().Str("role", role).Str("fallback", to).Msg(msg)
			w.q.event(role, "fallback-waits", "", msg)
		}
		return false
	}
	w.q.mu.Lock()
	if st.LimitedUntil.After(w.q.handedAway[role]) {
		w.q.handedAway[role] = st.LimitedUntil
	}
	w.q.mu.Unlock()
	reason := fmt.Sprintf("%s is at its usage limit until %s with no free account", role, clock(st.LimitedUntil))
	moved := 0
	if inFlight != nil {
		if w.handOver(*inFlight, to, reason, w.whereItWas(ctx, *inFlight, st)) {
			moved++
			// The task is superseded here: its file goes to the archive,
			// so the agent finds no task there after the reset, and a
			// report it still writes is refused as another role's.
			if _, err := moveInto(w.taskPath(), w.q.layout.ArchiveFor("tasks", w.q.now()), role+"-"+inFlight.ID+".yaml"); err != nil {
				w.q.log.Warn().Err(err).Str("role", role).Str("task_id", inFlight.ID).Msg("archive the task file of a task handed over")
			}
			delete(w.delivered, inFlight.ID)
			w.followed, w.lost = nil, 0
		}
	}
	for ; queued != nil && ctx.Err() == nil; moved++ {
		if !w.handOver(*queued, to, reason, "") {
			break
		}
		if queued, err = w.q.st.NextQueued(role); err != nil {
			w.q.log.Error().Err(err).Str("role", role).Msg("look up queued tasks for the fallback")
			break
		}
	}
	if moved > 0 {
		w.q.kick(to)
		w.q.touched()
	}
	return moved > 0
}

// handOver moves one task to the fallback role and says so; it reports
// whether the task moved.
func (w *worker) handOver(t store.Task, to, reason, note string) bool {
	role := w.a.ID()
	_, err := w.q.st.HandOver(store.Handover{TaskID: t.ID, From: role, To: to, Reason: reason, Note: note, RunID: w.q.runID, At: w.q.now()})
	switch {
	case errors.Is(err, store.ErrWrongRole) || errors.Is(err, store.ErrTaskClosed):
		return false // closed or moved meanwhile: nothing to hand over
	case err != nil:
		w.q.log.Error().Err(err).Str("role", role).Str("task_id", t.ID).Msg("hand over a task to the fallback")
		return false
	}
	w.q.log.Info().Str("role", role).Str("task_id", t.ID).Str("fallback", to).Msg("task handed over to the fallback role")
	return true
}

// cannotTake says why role cannot take tasks handed over now, or "" when
// it can: it must run and have a free account.
func (q *Queue) cannotTake(role string) string {
	a, ok := q.agent(role)
	if !ok {
		return "is not running"
	}
	st := a.Status()
	switch {
	case q.noFreeAccount(role, st):
		return "is at its usage limit too"
	case st.State == supervisor.Fatal || st.State == supervisor.Stopped:
		return "is " + string(st.State)
	}
	return ""
}

// kickFallbacksOf wakes the workers of the roles whose fallback is role:
// it can take their tasks now.
func (q *Queue) kickFallbacksOf(role string) {
	cfg := q.config()
	for _, w := range q.allWorkers() {
		if r, ok := cfg.Role(w.a.ID()); ok && r.Fallback == role {
			w.kick()
		}
	}
}

// Limits on the note added to a task handed over while in flight: it
// quotes the role's terminal, which shows whatever the agent printed.
const (
	noteLines    = 8
	noteLineRune = 200
)

// whereItWas is the note added to the body of the task the role had in
// flight: that it is handed over, where the role worked (its worktree's
// branch), and what its last report on the task and the last lines of its
// terminal say was done. Everything quoted is escaped: no control
// character from an agent reaches the task file.
func (w *worker) whereItWas(ctx context.Context, t store.Task, st supervisor.Status) string {
	role := w.a.ID()
	var b strings.Builder
	fmt.Fprintf(&b, "Handed over from %s, which had this task in flight when it reached its usage limit (until %s) with no free account. Carry it on from where %s left it.",
		role, clock(st.LimitedUntil), role)
	if wt := w.conf().Worktree; wt != nil {
		fmt.Fprintf(&b, " %s worked in its own git worktree, on branch %s: its changes are there.", role, wt.Branch)
	}
	if reps, err := w.q.st.ReportsForTask(t.ID); err == nil && len(reps) > 0 {
		last := reps[len(reps)-1]
		fmt.Fprintf(&b, "\nIts last report on this task (%s) said: %s", last.Status, noteLine(last.Summary))
	}
	if lines := w.lastLines(ctx); len(lines) > 0 {
		// Quoted, so that no line of it reads as an instruction of its
		// own (a scripted model's directive, say).
		fmt.Fprintf(&b, "\nThe last lines of %s's terminal:", role)
		for _, l := range lines {
			b.WriteString("\n> " + l)
		}
	}
	return b.String()
}

// lastLines are the last non-blank lines of the role's terminal, as its log
// renders them, escaped and cut.
func (w *worker) lastLines(ctx context.Context) []string {
	var buf bytes.Buffer
	cfg := w.conf()
	err := rolelog.Follow(ctx, w.q.layout.RoleLog(w.a.ID()), &buf, rolelog.Options{Lines: 4 * noteLines, Cols: cfg.Terminal.Cols, Rows: cfg.Terminal.Rows})
	if err != nil {
		w.q.log.Warn().Err(err).Str("role", w.a.ID()).Msg("read the role's log for a task handed over")
		return nil
	}
	var out []string
	for _, l := range strings.Split(buf.String(), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, noteLine(l))
		}
	}
	if len(out) > noteLines {
		out = out[len(out)-noteLines:]
	}
	return out
}

// noteLine is s as one line of the note: control characters escaped
// (a newline among them), at most noteLineRune characters.
func noteLine(s string) string {
	s = textsafe.Escape(s)
	if utf8.RuneCountInString(s) <= noteLineRune {
		return s
	}
	return string([]rune(s)[:noteLineRune-1]) + "…"
}

// clock is a reset time as people read it in a note.
func clock(t time.Time) string {
	if t.IsZero() {
		return "an unknown time"
	}
	return t.Local().Format("15:04:05")
}
