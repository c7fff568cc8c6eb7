package store

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Task statuses. A task is open while queued or in flight (assigned,
// delivered, undelivered, stalled) and closed once done, failed, blocked
// or cancelled. A closed task changes again only when a person retries a
// failed one (Retry).
const (
	StatusQueued      = "queued"      // waiting in its role's queue
	StatusAssigned    = "assigned"    // task file written, nudge being typed
	StatusDelivered   = "delivered"   // nudge typed and confirmed on screen
	StatusUndelivered = "undelivered" // nudge typed but never confirmed
	// StatusStalled: delivered, but no report after every reminder; the
	// task still holds its role until a person retries or cancels it.
	StatusStalled   = "stalled"
	StatusDone      = "done"
	StatusFailed    = "failed"
	StatusBlocked   = "blocked"
	StatusCancelled = "cancelled"
)

// TaskStatuses lists the task statuses in the order a task goes through
// them. The schema's CHECK holds the same list.
var TaskStatuses = []string{
	StatusQueued, StatusAssigned, StatusDelivered, StatusUndelivered, StatusStalled,
	StatusDone, StatusFailed, StatusBlocked, StatusCancelled,
}

// ReportStatuses are the statuses a report closes its task with.
var ReportStatuses = []string{StatusDone, StatusFailed, StatusBlocked}

// Priorities of a command and of its task, dispatched high first; within a
// priority, in arrival order. These are the words of the command file's
// priority key too.
const (
	PriorityHigh   = "high"
	PriorityNormal = "normal"
	PriorityLow    = "low"
)

// Priorities lists the priorities, highest first.
var Priorities = []string{PriorityHigh, PriorityNormal, PriorityLow}

// PriorityRank orders priorities as the tasks' priority_rank column does:
// 0 high, 1 normal (also a command that names none), 2 low.
func PriorityRank(p string) int {
	switch p {
	case PriorityHigh:
		return 0
	case PriorityLow:
		return 2
	}
	return 1
}

// Closed reports whether status is final.
func Closed(status string) bool {
	switch status {
	case StatusDone, StatusFailed, StatusBlocked, StatusCancelled:
		return true
	}
	return false
}

// InFlightStatus reports whether a task in status occupies its role.
func InFlightStatus(status string) bool {
	switch status {
	case StatusAssigned, StatusDelivered, StatusUndelivered, StatusStalled:
		return true
	}
	return false
}

// inFlightSQL is InFlightStatus as an SQL list.
const inFlightSQL = `('assigned','delivered','undelivered','stalled')`

// CommandRecord is a validated command taken from a claimed file.
type CommandRecord struct {
	// ID is the command's id, unique across the workspace's history.
	ID string
	// ClaimName names the claimed file. Several commands from one file share
	// it; together with ID it recognises a file redone after a crash.
	ClaimName string
	// File is the name the file had when it was dropped.
	File     string
	To       string // role id; the role must have been synced
	From     string
	Title    string
	Body     string
	Tags     []string
	Priority string // "" means normal
	RunID    string // the current run; it must have been started
	// Parent is the task this command continues (the open task of the role
	// that sent it), or ""; Root and Depth place it in its chain (see
	// Task). The caller works them out, since it decides whether a chain
	// is too long.
	Parent, Root string
	Depth        int
	// ReceivedAt dates the task, including its t-YYYYMMDD id (UTC).
	ReceivedAt time.Time
}

// Task is one command's unit of work for a role.
type Task struct {
	ID, CommandID, RunID, Role, From, Title, Body string
	Tags                                          []string
	Priority, Status                              string
	// Seq orders tasks by arrival across the whole history.
	Seq int64

	CreatedAt, UpdatedAt time.Time
	// AssignedAt and DeliveredAt describe the latest attempt; zero if none.
	AssignedAt, DeliveredAt time.Time
	FinishedAt              time.Time // zero while open
	// Attempts counts Assign calls, Submits the submit keys typed in all.
	Attempts, Submits int
	// Summary is the report's summary, or the reason for a cancel.
	Summary    string
	ReportPath string // the archived report that closed the task
	// Parent is the task whose role sent this task's command ("" for a
	// command from a person); Root is the first task of the chain (its own
	// id when it has no parent) and Depth its hops from there (0 at the root).
	Parent, Root string
	Depth        int
	// HeadCommit is the commit checked out in the role's working directory
	// when its report arrived ("" without a report, or outside git).
	HeadCommit string
}

// Accepted is what AcceptCommands did with one record.
type Accepted struct {
	// Task is the command's task: the new one, or for AlreadyRecorded and
	// Duplicate the one recorded before.
	Task Task
	// Duplicate: the command id was accepted earlier from another claimed
	// file (FirstClaim). The claim is recorded but no task was made.
	Duplicate bool
	// AlreadyRecorded: this claim was recorded before (a claimed file redone
	// after a crash); nothing changed. If the claim was a duplicate, only
	// FirstClaim says so, so the duplicate is not reported twice.
	AlreadyRecorded bool
	// FirstClaim is the claim the command id was first accepted from, set
	// when that was another claim.
	FirstClaim string
}

// AcceptCommands records a batch of commands and their tasks in one
// transaction, so a crash leaves either all of the batch or none of it. For
// each record, in order:
//   - this claim already holds this command id: AlreadyRecorded, with the
//     task recorded then (a claimed file redone after a crash);
//   - another claim holds the id: Duplicate, with FirstClaim; the claim is
//     recorded so that redoing it is AlreadyRecorded, no task is made;
//   - else the command and a queued task are inserted. The task id is
//     t-YYYYMMDD-NNNN, the UTC date of ReceivedAt and the next number for
//     that day; Seq is the next in arrival order. The single writer makes
//     both unique without further locking.
//
// A record that cannot be stored (unknown role or run, missing id) fails
// the whole batch.
func (s *Store) AcceptCommands(recs []CommandRecord) ([]Accepted, error) {
	out := make([]Accepted, 0, len(recs))
	err := s.write(func(tx *writeTx) error {
		var seq int64
		if err := tx.QueryRow(`SELECT COALESCE(MAX(seq), 0) FROM tasks`).Scan(&seq); err != nil {
			return err
		}
		for _, rec := range recs {
			a, err := acceptCommand(tx, rec, &seq)
			if err != nil {
				return fmt.Errorf("command %q from %s: %w", rec.ID, rec.ClaimName, err)
			}
			out = append(out, a)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("accept commands: %w", err)
	}
	return out, nil
}

func acceptCommand(tx *writeTx, rec CommandRecord, seq *int64) (Accepted, error) {
	if rec.ID == "" || rec.ClaimName == "" || rec.To == "" {
		return Accepted{}, errors.New("id, claim name and role are required")
	}
	prio, err := normPriority(rec.Priority)
	if err != nil {
		return Accepted{}, err
	}

	// Redone claim?
	var taskID string
	err = tx.QueryRow(`SELECT t.id FROM commands c JOIN tasks t ON t.command_id = c.id
WHERE c.id = ? AND c.claim_name = ?`, rec.ID, rec.ClaimName).Scan(&taskID)
	if err == nil {
		t, err := loadTask(tx, taskID)
		return Accepted{Task: t, AlreadyRecorded: true}, err
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return Accepted{}, err
	}

	// Known id, from this claim (a redone duplicate) or another?
	var first string
	err = tx.QueryRow(`SELECT c.claim_name, t.id FROM commands c JOIN tasks t ON t.command_id = c.id
WHERE c.id = ?`, rec.ID).Scan(&first, &taskID)
	switch {
	case err == nil:
		t, err := loadTask(tx, taskID)
		if err != nil {
			return Accepted{}, err
		}
		res, err := tx.Exec(`INSERT INTO command_duplicates (claim_name, command_id, file, run_id, received_at)
VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
			rec.ClaimName, rec.ID, rec.File, rec.RunID, formatTime(rec.ReceivedAt))
		if err != nil {
			return Accepted{}, err
		}
		if n, err := res.RowsAffected(); err != nil {
			return Accepted{}, err
		} else if n == 0 {
			return Accepted{Task: t, AlreadyRecorded: true, FirstClaim: first}, nil
		}
		return Accepted{Task: t, Duplicate: true, FirstClaim: first}, nil
	case !errors.Is(err, sql.ErrNoRows):
		return Accepted{}, err
	}

	// New command. Checked here for an error that says what to do; the
	// foreign keys would only say "constraint failed".
	if ok, err := exists(tx, `SELECT 1 FROM roles WHERE id = ?`, rec.To); err != nil {
		return Accepted{}, err
	} else if !ok {
		return Accepted{}, fmt.Errorf("unknown role %q (roles are recorded by SyncRoles)", rec.To)
	}
	if ok, err := exists(tx, `SELECT 1 FROM runs WHERE id = ?`, rec.RunID); err != nil {
		return Accepted{}, err
	} else if !ok {
		return Accepted{}, fmt.Errorf("unknown run %q (runs are recorded by StartRun)", rec.RunID)
	}
	tags, err := json.Marshal(nonNil(rec.Tags))
	if err != nil {
		return Accepted{}, err
	}
	at := formatTime(rec.ReceivedAt)
	if _, err := tx.Exec(`INSERT INTO commands
(id, claim_name, file, to_role, from_role, title, body, tags, priority, run_id, received_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		rec.ID, rec.ClaimName, rec.File, rec.To, rec.From, rec.Title, rec.Body, string(tags), prio, rec.RunID, at); err != nil {
		return Accepted{}, err
	}
	day := rec.ReceivedAt.UTC().Format("20060102")
	var n int64
	if err := tx.QueryRow(`INSERT INTO task_numbers (day, last) VALUES (?, 1)
ON CONFLICT (day) DO UPDATE SET last = last + 1 RETURNING last`, day).Scan(&n); err != nil {
		return Accepted{}, err
	}
	*seq++
	t := Task{
		ID: fmt.Sprintf("t-%s-%04d", day, n), CommandID: rec.ID, RunID: rec.RunID, Role: rec.To,
		From: rec.From, Title: rec.Title, Body: rec.Body, Tags: nonNil(rec.Tags), Priority: prio,
		Status: StatusQueued, Seq: *seq, CreatedAt: rec.ReceivedAt.UTC(), UpdatedAt: rec.ReceivedAt.UTC(),
		Parent: rec.Parent, Root: rec.Root, Depth: rec.Depth,
	}
	if t.Root == "" {
		t.Root = t.ID
	}
	if _, err := tx.Exec(`INSERT INTO tasks
(id, run_id, role_id, title, body, status, created_at, updated_at, command_id, from_role, tags, priority, seq, parent_id, root_id, depth)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		t.ID, t.RunID, t.Role, t.Title, t.Body, t.Status, at, at, t.CommandID, t.From, string(tags), t.Priority, t.Seq,
		t.Parent, t.Root, t.Depth); err != nil {
		return Accepted{}, err
	}
	return Accepted{Task: t}, nil
}

func normPriority(p string) (string, error) {
	switch p {
	case "":
		return PriorityNormal, nil
	case PriorityHigh, PriorityNormal, PriorityLow:
		return p, nil
	}
	return "", fmt.Errorf("unknown priority %q (high, normal or low)", p)
}

func exists(q queryer, query string, arg any) (bool, error) {
	var one int
	err := q.QueryRow(query, arg).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// nonNil keeps "no tags" as [] rather than null in the database and in
// the Task, so callers can range and compare without a nil case.
func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// NextQueued returns the role's next task to dispatch, highest priority
// first and then in arrival order; nil when its queue is empty.
func (s *Store) NextQueued(role string) (*Task, error) {
	t, err := scanTask(s.read().QueryRow(`SELECT `+taskColumns+` FROM tasks
WHERE role_id = ? AND status = ? ORDER BY priority_rank, seq LIMIT 1`, role, StatusQueued))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("next queued for %s: %w", role, err)
	}
	return &t, nil
}

// PendingTask is what orders a role among those that wait for a slot: its
// task's id, status, priority and age.
type PendingTask struct {
	ID, Status, Priority string
	CreatedAt            time.Time
}

// Pending returns the role's task in flight and its next queued task (as
// NextQueued orders them), nil where there is none. The queue asks it of
// every sleeping role at each task handed in and each make-room, so it
// reads four columns in one query rather than two whole tasks.
func (s *Store) Pending(role string) (inFlight, next *PendingTask, err error) {
	rows, err := s.read().Query(`SELECT id, status, priority, created_at FROM tasks
WHERE role_id = ? AND status IN `+inFlightSQL+`
UNION ALL
SELECT * FROM (SELECT id, status, priority, created_at FROM tasks
WHERE role_id = ? AND status = ? ORDER BY priority_rank, seq LIMIT 1)`, role, role, StatusQueued)
	if err != nil {
		return nil, nil, fmt.Errorf("pending for %s: %w", role, err)
	}
	defer rows.Close()
	for rows.Next() {
		var t PendingTask
		var created sql.NullString
		if err := rows.Scan(&t.ID, &t.Status, &t.Priority, &created); err != nil {
			return nil, nil, fmt.Errorf("pending for %s: %w", role, err)
		}
		if t.CreatedAt, err = parseTime(created); err != nil {
			return nil, nil, fmt.Errorf("pending for %s: task %s: %w", role, t.ID, err)
		}
		if t.Status == StatusQueued {
			next = &t
		} else if inFlight == nil {
			inFlight = &t
		}
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("pending for %s: %w", role, err)
	}
	return inFlight, next, nil
}

// InFlight returns the role's task that is assigned, delivered,
// undelivered or stalled; nil when the role is free. After a crash this is the task to
// hand out again.
func (s *Store) InFlight(role string) (*Task, error) {
	t, err := scanTask(s.read().QueryRow(`SELECT `+taskColumns+` FROM tasks
WHERE role_id = ? AND status IN `+inFlightSQL+` ORDER BY seq LIMIT 1`, role))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("in flight for %s: %w", role, err)
	}
	return &t, nil
}

// Assign marks a task handed to its role (again, for a task already in
// flight: a retry after a failed delivery or a restart). It counts the
// attempt and clears the previous attempt's delivery time. A closed task
// gives ErrTaskClosed, and a task whose role is busy with another task
// ErrRoleBusy.
func (s *Store) Assign(taskID string, at time.Time) (Task, error) {
	var t Task
	err := s.write(func(tx *writeTx) error {
		cur, err := openTask(tx, taskID)
		if err != nil {
			return err
		}
		var other string
		err = tx.QueryRow(`SELECT id FROM tasks WHERE role_id = ? AND id <> ? AND status IN `+inFlightSQL,
			cur.Role, taskID).Scan(&other)
		if err == nil {
			return fmt.Errorf("%w: %s is working on %s, not taking %s", ErrRoleBusy, cur.Role, other, taskID)
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		if _, err := tx.Exec(`UPDATE tasks SET status = ?, attempts = attempts + 1, assigned_at = ?,
delivered_at = NULL, updated_at = ? WHERE id = ?`,
			StatusAssigned, formatTime(at), formatTime(at), taskID); err != nil {
			return err
		}
		t, err = loadTask(tx, taskID)
		return err
	})
	if err != nil {
		return Task{}, fmt.Errorf("assign: %w", err)
	}
	return t, nil
}

// MarkDelivery records how typing the nudge went: delivered if the agent's
// screen confirmed it, undelivered if not (unless already delivered). submits is added to the task's
// count of submit keys typed. A task closed meanwhile (its report beat the
// confirmation) is returned unchanged, without error: the race is normal.
// A task never assigned gives ErrNotAssigned.
func (s *Store) MarkDelivery(taskID string, confirmed bool, submits int, at time.Time) (Task, error) {
	var t Task
	err := s.write(func(tx *writeTx) error {
		cur, err := loadTask(tx, taskID)
		if err != nil {
			return err
		}
		switch {
		case Closed(cur.Status):
			// A fast agent may report before its nudge is confirmed: the
			// task stays closed, but what the delivery took is kept.
			if confirmed {
				if _, err := tx.Exec(`UPDATE tasks SET submits = submits + ?, delivered_at = COALESCE(delivered_at, ?) WHERE id = ?`,
					submits, formatTime(at), taskID); err != nil {
					return err
				}
			}
			t, err = loadTask(tx, taskID)
			return err
		case cur.Status == StatusQueued:
			return fmt.Errorf("%w: %s is queued", ErrNotAssigned, taskID)
		}
		status, delivered := StatusUndelivered, any(nil)
		switch {
		case confirmed:
			status, delivered = StatusDelivered, formatTime(at)
		case cur.Status == StatusDelivered:
			// The agent already has this attempt's nudge; an unconfirmed
			// extra one does not take it back.
			status = StatusDelivered
		}
		if _, err := tx.Exec(`UPDATE tasks SET status = ?, submits = submits + ?,
delivered_at = COALESCE(?, delivered_at), updated_at = ? WHERE id = ?`,
			status, submits, delivered, formatTime(at), taskID); err != nil {
			return err
		}
		t, err = loadTask(tx, taskID)
		return err
	})
	if err != nil {
		return Task{}, fmt.Errorf("mark delivery: %w", err)
	}
	return t, nil
}

// Cancel closes an open task as cancelled, keeping reason as its summary.
func (s *Store) Cancel(taskID, reason string, at time.Time) (Task, error) {
	var t Task
	err := s.write(func(tx *writeTx) error {
		if _, err := openTask(tx, taskID); err != nil {
			return err
		}
		if _, err := tx.Exec(`UPDATE tasks SET status = ?, summary = ?, finished_at = ?, updated_at = ? WHERE id = ?`,
			StatusCancelled, reason, formatTime(at), formatTime(at), taskID); err != nil {
			return err
		}
		var err error
		t, err = loadTask(tx, taskID)
		return err
	})
	if err != nil {
		return Task{}, fmt.Errorf("cancel: %w", err)
	}
	return t, nil
}

// TaskFilter selects tasks. Every field set must match; empty fields
// match everything.
type TaskFilter struct {
	Role, Status string
	// Since and Until bound when the task arrived (its CreatedAt): from
	// Since, included, to Until, excluded, to the millisecond.
	Since, Until time.Time
	// Search is text to find in the task's title, body or report (its
	// summary and details): words, "a phrase", or a prefix*, as
	// searchQuery reads them. Letter case and Latin accents do not
	// matter; any run of Chinese or Japanese characters is found.
	Search string
	Limit  int // 0: no limit
}

// Tasks returns the tasks matching f, newest first.
func (s *Store) Tasks(f TaskFilter) ([]Task, error) {
	q, args, err := tasksQuery(s.read(), f, seqWindowScan)
	if err != nil {
		return nil, fmt.Errorf("list tasks: %w", err)
	}
	ts, err := queryTasks(s.read(), q, args...)
	if err != nil {
		return nil, fmt.Errorf("list tasks: %w", err)
	}
	return ts, nil
}

// TaskForCommand returns the task made from the command with the given id;
// nil when the queue has not taken the command (yet), or took it as a
// duplicate of another.
func (s *Store) TaskForCommand(commandID string) (*Task, error) {
	t, err := scanTask(s.read().QueryRow(`SELECT `+taskColumns+` FROM tasks WHERE command_id = ?`, commandID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("task for command %s: %w", commandID, err)
	}
	return &t, nil
}

// tasksQuery is the query behind Tasks. With a search, the index's rowid
// (the task's seq) drives the query newest first, so the first matches
// come without reading the others; a time window narrows the seqs it
// reads (seqWindow).
func tasksQuery(db queryer, f TaskFilter, scan int64) (string, []any, error) {
	var (
		where []string
		args  []any
	)
	from, order, seq := `tasks t`, `t.seq DESC`, `t.seq`
	if fts := searchQuery(f.Search); fts != "" {
		from, order, seq = `task_search JOIN tasks t ON t.seq = task_search.rowid`, `task_search.rowid DESC`, `task_search.rowid`
		where, args = append(where, "task_search MATCH ?"), append(args, fts)
	}
	if f.Role != "" {
		where, args = append(where, "t.role_id = ?"), append(args, f.Role)
	}
	if f.Status != "" {
		where, args = append(where, "t.status = ?"), append(args, f.Status)
	}
	// Times are RFC 3339 text whose fraction has no fixed width, so text
	// order is off within a second ("…:00Z" sorts after "…:00.5Z"). The
	// text bound, on whole seconds, is cheap and never excludes a match;
	// julianday compares exactly (to the millisecond).
	if !f.Since.IsZero() {
		where = append(where, "t.created_at >= ? AND julianday(t.created_at) >= julianday(?)")
		args = append(args, wholeSecond(f.Since), formatTime(f.Since))
	}
	if !f.Until.IsZero() {
		where = append(where, "t.created_at < ? AND julianday(t.created_at) < julianday(?)")
		args = append(args, wholeSecond(f.Until.Add(time.Second)), formatTime(f.Until))
	}
	if !f.Since.IsZero() || !f.Until.IsZero() {
		lo, hi, err := seqWindow(db, f.Since, f.Until, scan)
		if err != nil {
			return "", nil, err
		}
		if lo > 0 {
			where, args = append(where, seq+" >= ?"), append(args, lo)
		}
		if hi > 0 {
			where, args = append(where, seq+" <= ?"), append(args, hi)
		}
	}
	q := `SELECT ` + taskColumnsOf("t") + ` FROM ` + from
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	q += ` ORDER BY ` + order + ` LIMIT ?`
	return q, append(args, limit(f.Limit)), nil
}

// seqWindowScan is the most index entries seqWindow reads to bound one
// side of a window: a few milliseconds.
const seqWindowScan = 100000

// seqWindow returns bounds of the seqs of the tasks that arrived in
// [since, until) (0 for a side left open): every such task has lo <= seq
// <= hi. Seq and arrival time mostly go together, so a window in the past
// is a narrow range of seqs, which the query then reads alone instead of
// skipping every newer task; but they need not (clocks go back), so the
// bounds are the exact least and greatest seq in the window, read from
// the tasks_created index. Reading a side costs one index entry per task
// beyond it, so a side that would read more than scan entries (Tasks:
// seqWindowScan) is left open: the query finds its way there quickly
// anyway.
func seqWindow(db queryer, since, until time.Time, scan int64) (lo, hi int64, err error) {
	var cond []string
	var args []any
	if !since.IsZero() {
		cond, args = append(cond, "created_at >= ?"), append(args, wholeSecond(since))
	}
	if !until.IsZero() {
		cond, args = append(cond, "created_at < ?"), append(args, wholeSecond(until.Add(time.Second)))
	}
	where := strings.Join(cond, " AND ")
	// The window's size, estimated from the seqs at its edges.
	var first, last, top sql.NullInt64
	if err := db.QueryRow(`SELECT
  (SELECT seq FROM tasks INDEXED BY tasks_created WHERE `+where+` ORDER BY created_at LIMIT 1),
  (SELECT seq FROM tasks INDEXED BY tasks_created WHERE `+where+` ORDER BY created_at DESC LIMIT 1),
  (SELECT MAX(seq) FROM tasks)`, append(args, args...)...).Scan(&first, &last, &top); err != nil {
		return 0, 0, err
	}
	if !first.Valid {
		return top.Int64 + 1, 0, nil // no task in the window: past every seq
	}
	var minQ, maxQ bool
	switch {
	case !since.IsZero() && !until.IsZero():
		minQ = last.Int64-first.Int64 <= scan
		maxQ = minQ
	case !since.IsZero():
		minQ = top.Int64-first.Int64 <= scan // the tasks since
	default:
		maxQ = last.Int64 <= scan // the tasks until
	}
	if !minQ && !maxQ {
		return 0, 0, nil
	}
	var mn, mx sql.NullInt64
	if err := db.QueryRow(`SELECT MIN(seq), MAX(seq) FROM tasks INDEXED BY tasks_created WHERE `+where, args...).Scan(&mn, &mx); err != nil {
		return 0, 0, err
	}
	if minQ {
		lo = mn.Int64
	}
	if maxQ {
		hi = mx.Int64
	}
	return lo, hi, nil
}

// wholeSecond is t's second as the leading characters every stored time of
// that second shares.
func wholeSecond(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05") }

// Task returns the task with the given id, or ErrUnknownTask.
func (s *Store) Task(id string) (Task, error) {
	t, err := loadTask(s.read(), id)
	if err != nil {
		return Task{}, fmt.Errorf("get task: %w", err)
	}
	return t, nil
}

// Subtasks returns the tasks the task with the given id caused: those made
// from the commands its role sent while it worked on it (their Parent is
// id), in order of arrival.
func (s *Store) Subtasks(id string) ([]Task, error) {
	// A subtask arrives after its parent: the seq index bounds the scan.
	ts, err := queryTasks(s.read(), `SELECT `+taskColumns+` FROM tasks
WHERE seq > (SELECT seq FROM tasks WHERE id = ?) AND parent_id = ? ORDER BY seq`, id, id)
	if err != nil {
		return nil, fmt.Errorf("subtasks of %s: %w", id, err)
	}
	return ts, nil
}

// QueueDepths returns the number of queued tasks per role; roles with an
// empty queue are absent.
func (s *Store) QueueDepths() (map[string]int, error) {
	m, err := countBy(s.read(), `SELECT role_id, COUNT(*) FROM tasks WHERE status = ? GROUP BY role_id`, StatusQueued)
	if err != nil {
		return nil, fmt.Errorf("queue depths: %w", err)
	}
	return m, nil
}

// Counts returns the number of tasks per status; statuses with no task are
// absent. The counts are kept by triggers (task_counts): the dashboard
// asks after every change, and counting a long history each time cost
// more than all the rest of the supervisor's work.
func (s *Store) Counts() (map[string]int, error) {
	m, err := countBy(s.read(), `SELECT status, n FROM task_counts WHERE n > 0`)
	if err != nil {
		return nil, fmt.Errorf("task counts: %w", err)
	}
	return m, nil
}

func countBy(q queryer, query string, args ...any) (map[string]int, error) {
	rows, err := q.Query(query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	m := map[string]int{}
	for rows.Next() {
		var k string
		var n int
		if err := rows.Scan(&k, &n); err != nil {
			return nil, err
		}
		m[k] = n
	}
	return m, rows.Err()
}

// limit turns "0 means all" into SQLite's "negative means no limit".
func limit(n int) int {
	if n <= 0 {
		return -1
	}
	return n
}

const taskColumns = `id, command_id, run_id, role_id, from_role, title, body, tags, priority, status, seq,
created_at, updated_at, assigned_at, delivered_at, finished_at, attempts, submits, summary, report_path,
parent_id, root_id, depth, head_commit`

// taskColumnsOf is taskColumns, each qualified with the table alias.
func taskColumnsOf(alias string) string {
	cols := strings.Split(taskColumns, ",")
	for i, c := range cols {
		cols[i] = alias + "." + strings.TrimSpace(c)
	}
	return strings.Join(cols, ", ")
}

type scanner interface{ Scan(dest ...any) error }

func scanTask(row scanner) (Task, error) {
	var (
		t                                     Task
		tags                                  string
		created, updated, assigned, delivered sql.NullString
		finished                              sql.NullString
	)
	if err := row.Scan(&t.ID, &t.CommandID, &t.RunID, &t.Role, &t.From, &t.Title, &t.Body, &tags,
		&t.Priority, &t.Status, &t.Seq, &created, &updated, &assigned, &delivered, &finished,
		&t.Attempts, &t.Submits, &t.Summary, &t.ReportPath, &t.Parent, &t.Root, &t.Depth, &t.HeadCommit); err != nil {
		return Task{}, err
	}
	if err := json.Unmarshal([]byte(tags), &t.Tags); err != nil {
		return Task{}, fmt.Errorf("task %s: tags: %w", t.ID, err)
	}
	t.Tags = nonNil(t.Tags)
	for _, f := range []struct {
		dst *time.Time
		src sql.NullString
	}{{&t.CreatedAt, created}, {&t.UpdatedAt, updated}, {&t.AssignedAt, assigned}, {&t.DeliveredAt, delivered}, {&t.FinishedAt, finished}} {
		var err error
		if *f.dst, err = parseTime(f.src); err != nil {
			return Task{}, fmt.Errorf("task %s: %w", t.ID, err)
		}
	}
	return t, nil
}

func queryTasks(q queryer, query string, args ...any) ([]Task, error) {
	rows, err := q.Query(query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Task
	for rows.Next() {
		t, err := scanTask(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// loadTask reads a task, mapping "no row" to ErrUnknownTask.
func loadTask(q queryer, id string) (Task, error) {
	t, err := scanTask(q.QueryRow(`SELECT `+taskColumns+` FROM tasks WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Task{}, fmt.Errorf("%w %s", ErrUnknownTask, id)
	}
	return t, err
}

// openTask reads a task that must still be open.
func openTask(q queryer, id string) (Task, error) {
	t, err := loadTask(q, id)
	if err != nil {
		return Task{}, err
	}
	if Closed(t.Status) {
		return Task{}, fmt.Errorf("%w: %s is %s", ErrTaskClosed, id, t.Status)
	}
	return t, nil
}

// ErrNotRetryable means Retry was asked for a task that is not stalled,
// undelivered or failed.
var ErrNotRetryable = errors.New("task cannot be retried")

// MarkStalled records that a delivered task got no report after every
// reminder. It still holds its role; a report that comes later closes it.
func (s *Store) MarkStalled(taskID string, at time.Time) (Task, error) {
	var t Task
	err := s.write(func(tx *writeTx) error {
		cur, err := openTask(tx, taskID)
		if err != nil {
			return err
		}
		if cur.Status != StatusDelivered && cur.Status != StatusUndelivered {
			return fmt.Errorf("%s is %s, not delivered", taskID, cur.Status)
		}
		if _, err := tx.Exec(`UPDATE tasks SET status = ?, updated_at = ? WHERE id = ?`,
			StatusStalled, formatTime(at), taskID); err != nil {
			return err
		}
		t, err = loadTask(tx, taskID)
		return err
	})
	if err != nil {
		return Task{}, fmt.Errorf("mark stalled: %w", err)
	}
	return t, nil
}

// Retry puts a stalled, undelivered or failed task back in its role's
// queue, where it keeps its place by priority and arrival, so it goes out
// again as soon as the role is free. A failed task is reopened: its report
// stays in the history, its summary and finish time are cleared. Any other
// task gives ErrNotRetryable.
func (s *Store) Retry(taskID string, at time.Time) (Task, error) {
	var t Task
	err := s.write(func(tx *writeTx) error {
		cur, err := loadTask(tx, taskID)
		if err != nil {
			return err
		}
		switch cur.Status {
		case StatusStalled, StatusUndelivered, StatusFailed:
		default:
			return fmt.Errorf("%w: %s is %s (only stalled, undelivered or failed tasks are retried)", ErrNotRetryable, taskID, cur.Status)
		}
		if _, err := tx.Exec(`UPDATE tasks SET status = ?, delivered_at = NULL, finished_at = NULL,
summary = '', report_path = '', updated_at = ? WHERE id = ?`, StatusQueued, formatTime(at), taskID); err != nil {
			return err
		}
		t, err = loadTask(tx, taskID)
		return err
	})
	if err != nil {
		return Task{}, fmt.Errorf("retry: %w", err)
	}
	return t, nil
}

// Exchanges counts the tasks made from commands between roles a and b, in
// either direction, received since the given time.
func (s *Store) Exchanges(a, b string, since time.Time) (int, error) {
	var n int
	err := s.read().QueryRow(`SELECT COUNT(*) FROM tasks WHERE created_at >= ? AND
((role_id = ? AND from_role = ?) OR (role_id = ? AND from_role = ?))`, formatTime(since), a, b, b, a).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count exchanges between %s and %s: %w", a, b, err)
	}
	return n, nil
}
