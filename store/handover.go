package store

import (
	"database/sql"
	"fmt"
	"strings"
	"time"
)

// EventHandedOver is the kind of the event that records a hand-over: its
// role is the role the task left, its message names the role it went to
// and why (see HandOver).
const EventHandedOver = "handed-over"

// Handover is one move of an open task from its role to another: a role at
// a usage limit hands its tasks to its fallback role.
type Handover struct {
	TaskID string
	// From is the role the task must still be on, To the role it goes to.
	From, To string
	// Reason says why, for people: "codex is at its usage limit until
	// 15:04 with no free account".
	Reason string
	// Note, when set, is added to the task's body as a paragraph of its
	// own: where the role that had the task in flight left it.
	Note  string
	RunID string
	At    time.Time
}

// HandOver moves an open task from h.From to h.To in one transaction with
// the event that records it (EventHandedOver, on the task, from h.From):
// both happen or neither, so a supervisor killed during a hand-over never
// leaves a task moved without its record, nor moves it twice. The task is
// queued on h.To, keeping its place by priority and arrival, its attempts
// and its chain; a task that was in flight loses its delivery, and gets
// h.Note in its body. A task that is closed gives ErrTaskClosed, and one
// that is no longer h.From's (already handed over, by this supervisor
// before a crash, say) ErrWrongRole: nothing changes then.
func (s *Store) HandOver(h Handover) (Task, error) {
	var t Task
	err := s.write(func(tx *writeTx) error {
		cur, err := openTask(tx, h.TaskID)
		if err != nil {
			return err
		}
		if cur.Role != h.From {
			return fmt.Errorf("%w: %s is %s's, not %s's", ErrWrongRole, h.TaskID, cur.Role, h.From)
		}
		if ok, err := exists(tx, `SELECT 1 FROM roles WHERE id = ?`, h.To); err != nil {
			return err
		} else if !ok {
			return fmt.Errorf("unknown role %q (roles are recorded by SyncRoles)", h.To)
		}
		body := cur.Body
		if h.Note != "" {
			body = strings.TrimRight(body, "\n") + "\n\n" + h.Note
		}
		at := formatTime(h.At)
		if _, err := tx.Exec(`UPDATE tasks SET role_id = ?, status = ?, delivered_at = NULL, body = ?, updated_at = ?
WHERE id = ?`, h.To, StatusQueued, body, at, h.TaskID); err != nil {
			return err
		}
		if _, err := tx.Exec(insertEvent,
			at, h.RunID, h.From, EventHandedOver, h.TaskID, handoverMessage(h.To, h.Reason)); err != nil {
			return err
		}
		t, err = loadTask(tx, h.TaskID)
		return err
	})
	if err != nil {
		return Task{}, fmt.Errorf("hand over %s from %s to %s: %w", h.TaskID, h.From, h.To, err)
	}
	return t, nil
}

// handoverPrefix starts the message of a hand-over event; the role it went
// to follows, then the reason.
const handoverPrefix = "handed over to "

func handoverMessage(to, reason string) string {
	return handoverPrefix + to + ": " + reason
}

// Handovers returns the hand-overs of the given tasks, oldest first per
// task, read back from their events: the chain of roles each went through.
func (s *Store) Handovers(taskIDs []string) (map[string][]Handover, error) {
	out := map[string][]Handover{}
	if len(taskIDs) == 0 {
		return out, nil
	}
	args := make([]any, 0, len(taskIDs)+1)
	args = append(args, EventHandedOver)
	for _, id := range taskIDs {
		args = append(args, id)
	}
	// Unprepared: each length of the list is a new query text.
	rows, err := s.r.Query(`SELECT at, run_id, role, task_id, message FROM events
WHERE kind = ? AND task_id IN (?`+strings.Repeat(",?", len(taskIDs)-1)+`) ORDER BY id`, args...)
	if err != nil {
		return nil, fmt.Errorf("hand-overs: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			h   Handover
			at  sql.NullString
			msg string
		)
		if err := rows.Scan(&at, &h.RunID, &h.From, &h.TaskID, &msg); err != nil {
			return nil, fmt.Errorf("hand-overs: %w", err)
		}
		if h.At, err = parseTime(at); err != nil {
			return nil, fmt.Errorf("hand-overs of %s: %w", h.TaskID, err)
		}
		rest, _ := strings.CutPrefix(msg, handoverPrefix)
		h.To, h.Reason, _ = strings.Cut(rest, ": ")
		out[h.TaskID] = append(out[h.TaskID], h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("hand-overs: %w", err)
	}
	return out, nil
}
