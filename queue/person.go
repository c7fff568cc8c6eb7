package queue

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/shogun-dev/shogun/store"
	"github.com/shogun-dev/shogun/textsafe"
)

// ErrBadReason means a cancel's reason is not one line of plain text.
var ErrBadReason = errors.New("reason must be one line without control characters, at most 500 bytes")

// maxReason bounds a cancel's reason, which is typed into the sender.
const maxReason = 500

// Cancel closes a queued or open task as cancelled on a person's word: the
// reason is recorded as its summary, its task file is archived, its role is
// free for its next task, and the role that sent it is told. A report that
// comes later for it is recorded and archived, not applied. A closed task
// gives store.ErrTaskClosed.
func (q *Queue) Cancel(taskID, reason string) (store.Task, error) {
	reason = strings.TrimSpace(reason)
	if len(reason) > maxReason || checkLine("reason", reason) != nil {
		return store.Task{}, fmt.Errorf("cancel %s: %w", taskID, ErrBadReason)
	}
	if reason == "" {
		reason = "cancelled by a person"
	}
	t, err := q.st.Cancel(taskID, reason, q.now())
	if err != nil {
		return store.Task{}, err
	}
	q.log.Info().Str("role", t.Role).Str("task_id", t.ID).Str("reason", reason).Msg("task cancelled")
	q.event(t.Role, "cancelled", t.ID, reason)
	if w, ok := q.worker(t.Role); ok {
		w.mu.Lock()
		w.cancelled = append(w.cancelled, t.ID)
		w.mu.Unlock()
	}
	if t.From != "" {
		q.tellSender(t.From, t.ID, fmt.Sprintf("Task %s for %s (%s) was cancelled: %s", t.ID, t.Role, typedTitle(t.Title), textsafe.Escape(reason)))
	}
	q.kick(t.Role)
	return t, nil
}

// Retry delivers a stalled, undelivered or failed task again: it goes back
// to its role's queue in its old place, and out as soon as the role is
// free. Any other task gives store.ErrNotRetryable.
func (q *Queue) Retry(taskID string) (store.Task, error) {
	t, err := q.st.Retry(taskID, q.now())
	if err != nil {
		return store.Task{}, err
	}
	q.log.Info().Str("role", t.Role).Str("task_id", t.ID).Msg("task queued again by a person")
	q.event(t.Role, "retry", t.ID, "queued again by a person")
	q.kick(t.Role)
	return t, nil
}

// archiveCancelled moves the task file of a task cancelled meanwhile into
// the archive, so the agent no longer finds it; the file is named by the
// history, as in writeTaskFile.
func (w *worker) archiveCancelled() {
	w.mu.Lock()
	ids := w.cancelled
	w.cancelled = nil
	w.mu.Unlock()
	for _, id := range ids {
		if w.followed != nil && w.followed.id == id {
			w.followed = nil
		}
		prev, err := w.q.st.LastAssigned(w.a.ID())
		if err != nil || prev == nil || prev.ID != id || checkID("task_id", id) != nil {
			continue // never handed out, or another task's file is there now
		}
		if _, err := os.Lstat(w.taskPath()); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if _, err := moveInto(w.taskPath(), w.q.layout.ArchiveFor("tasks", w.q.now()), w.a.ID()+"-"+id+".yaml"); err != nil {
			w.q.log.Warn().Err(err).Str("role", w.a.ID()).Str("task_id", id).Msg("archive the cancelled task's file")
		}
	}
}
