package queue

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/shogun-dev/shogun/config"
	"github.com/shogun-dev/shogun/roles"
	"github.com/shogun-dev/shogun/store"
	"github.com/shogun-dev/shogun/supervisor"
)

// worker hands one role its work: at most one task in flight, the next one
// when the report has closed it, and notify lines about reports on commands
// the role sent. Everything it types goes through the supervisor's typing
// procedure, and only while the role is workable.
type worker struct {
	q    *Queue
	a    Agent
	cfg  config.Role
	wake chan struct{}

	mu    sync.Mutex
	notes []note

	// delivered maps a task to the program run it was last nudged in. A
	// task in flight whose program was replaced since is delivered again.
	delivered map[string]int
}

// note is a notify line waiting to be typed.
type note struct {
	taskID string
	text   string
}

func newWorker(q *Queue, a Agent) *worker {
	cfg, _ := q.cfg.Role(a.ID())
	return &worker{q: q, a: a, cfg: cfg, wake: make(chan struct{}, 1), delivered: map[string]int{}}
}

func (w *worker) kick() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

func (w *worker) addNote(n note) {
	w.mu.Lock()
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
	for {
		changed := w.a.Changed()
		progressed := false
		if gen, ok := w.a.Workable(); ok {
			if n, has := w.popNote(); has {
				w.typeNote(ctx, n)
				progressed = true
			} else {
				progressed = w.dispatch(ctx, gen)
			}
		}
		if ctx.Err() != nil {
			return
		}
		if progressed {
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-w.wake:
		case <-changed:
		}
	}
}

// dispatch delivers the role's task in flight to a program run that has not
// had it, or assigns and delivers the next queued task. It reports whether
// it did anything.
func (w *worker) dispatch(ctx context.Context, gen int) bool {
	role := w.a.ID()
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
		if t, err = w.q.st.NextQueued(role); err != nil || t == nil {
			if err != nil {
				w.q.log.Error().Err(err).Str("role", role).Msg("look up next task")
			}
			return false
		}
	}
	task, err := w.q.st.Assign(t.ID, w.q.now())
	if err != nil {
		w.q.log.Error().Err(err).Str("role", role).Str("task_id", t.ID).Msg("assign task")
		return false
	}
	if redeliver {
		w.q.log.Info().Str("role", role).Str("task_id", task.ID).Int("attempt", task.Attempts).Msg("delivering the task again to the restarted program")
		w.q.event(role, "redeliver", task.ID, fmt.Sprintf("attempt %d", task.Attempts))
	}
	if err := w.writeTaskFile(task); err != nil {
		w.q.log.Error().Err(err).Str("role", role).Str("task_id", task.ID).Msg("write task file")
		time.AfterFunc(time.Second, w.kick) // try again: the task stays in flight in the store
		return false
	}
	w.q.touched()
	d, err := w.a.Type(ctx, w.nudgeText(), supervisor.TypeOptions{})
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
	if confirmed {
		w.q.log.Info().Str("role", role).Str("task_id", task.ID).Int("submits", d.Attempts).Msg("task delivered")
		w.q.event(role, "delivered", task.ID, fmt.Sprintf("nudge confirmed after %d submit(s)", d.Attempts))
	} else {
		w.q.log.Warn().Err(err).Str("role", role).Str("task_id", task.ID).Int("submits", d.Attempts).Msg("nudge not confirmed: task undelivered")
		w.q.event(role, "undelivered", task.ID, fmt.Sprintf("nudge not confirmed after %d submit(s)", d.Attempts))
	}
	w.q.touched()
	return true
}

func (w *worker) typeNote(ctx context.Context, n note) {
	d, err := w.a.Type(ctx, n.text, supervisor.TypeOptions{})
	switch {
	case ctx.Err() != nil:
	case err == nil && d.Confirmed:
		w.q.event(w.a.ID(), "notified", n.taskID, n.text)
	default:
		w.q.log.Warn().Err(err).Str("role", w.a.ID()).Str("task_id", n.taskID).Msg("notify not confirmed")
		w.q.event(w.a.ID(), "notify-undelivered", n.taskID, n.text)
	}
}

// paths of a role's task and report files, and how the role sees them.
func (w *worker) taskPath() string {
	return filepath.Join(w.q.dirs.tasks, w.a.ID()+".yaml")
}

func (w *worker) reportPath() string {
	return filepath.Join(w.q.dirs.reports, w.a.ID()+".yaml")
}

// rel shows a path relative to the role's working directory, as an agent
// reads it most easily.
func (w *worker) rel(p string) string {
	if r, err := filepath.Rel(w.cfg.Command.Cwd, p); err == nil && !strings.HasPrefix(r, "..") {
		return filepath.ToSlash(r)
	}
	return p
}

func (w *worker) nudgeText() string {
	return roles.Expand(w.cfg.Nudge, map[string]string{
		roles.VarTaskFile:   w.rel(w.taskPath()),
		roles.VarReportFile: w.rel(w.reportPath()),
		roles.VarID:         w.cfg.ID,
		roles.VarName:       w.cfg.Name,
		roles.VarPromptPath: w.cfg.PromptPath,
	})
}

var taskIDLine = regexp.MustCompile(`(?m)^task_id:\s*"?([^"\s]+)`)

// writeTaskFile archives the role's previous task file, if it was another
// task's, and writes this one atomically.
func (w *worker) writeTaskFile(t store.Task) error {
	path := w.taskPath()
	if old, err := os.ReadFile(path); err == nil {
		if m := taskIDLine.FindSubmatch(old); m == nil || string(m[1]) != t.ID {
			prev := "unknown"
			if m != nil {
				prev = string(m[1])
			}
			dst := filepath.Join(w.q.dirs.archive, "tasks", w.a.ID()+"-"+prev+".yaml")
			if err := replaceFile(path, dst); err != nil {
				return fmt.Errorf("archive previous task file: %w", err)
			}
		}
	}
	b, err := MarshalTask(Task{
		TaskID: t.ID, CommandID: t.CommandID, Role: t.Role, From: t.From, Title: t.Title, Body: t.Body,
		Tags: t.Tags, Priority: t.Priority, AssignedAt: t.AssignedAt, Attempt: t.Attempts,
		ReportTo: filepath.ToSlash(filepath.Join(filepath.FromSlash(config.ReportsDir), w.a.ID()+".yaml")),
	})
	if err != nil {
		return err
	}
	return writeAtomic(path, b)
}

// writeAtomic writes b beside path and renames it into place, so a reader
// (an agent, a person) sees the old file or the new one, never a part.
func writeAtomic(path string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(b)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := replaceFile(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}
