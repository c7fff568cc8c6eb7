package store

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Reasons AcceptReport refuses a report for an open task; the returned
// errors wrap them with the task and its role.
var (
	// ErrNotDelivered means the task is still queued: its role has not been
	// given it, so no report can be about it.
	ErrNotDelivered = errors.New("task not yet handed to its role")
	// ErrWrongRole means the report comes from a role other than the
	// task's.
	ErrWrongRole = errors.New("task belongs to another role")
)

// ReportRecord is a validated report taken from a claimed file.
type ReportRecord struct {
	// ClaimName names the claimed file; with TaskID it recognises a file
	// redone after a crash.
	ClaimName string
	File      string // the name the file had when it was dropped
	TaskID    string
	// Role, when set, is the role the report comes from (the queue takes it
	// from a report file named <role>.yaml): the task must be that role's,
	// or the report is refused with ErrWrongRole.
	Role    string
	Status  string // done, failed or blocked
	Summary string
	Details string
	Files   []string
	// SkillName and SkillDescription carry the agent's skill_candidate, if
	// any, for `shogun skills scan`.
	SkillName, SkillDescription string
	ArchivedPath                string // where the file is kept after processing
	// HeadCommit is the commit checked out in the role's working directory
	// when the report arrived ("" when it is not in a git repository).
	HeadCommit string
	ReceivedAt time.Time
}

// Report is a recorded report, with its task's role and title for display.
type Report struct {
	ID                                              int64
	TaskID, Role, Title, Status, Summary, Details   string
	Files                                           []string
	SkillName, SkillDescription, File, ArchivedPath string
	ClaimName                                       string
	HeadCommit                                      string
	ReceivedAt                                      time.Time
}

// AcceptReport records a report and closes its task in one transaction, so
// a crash leaves either both or neither:
//   - this claim was already recorded for this task: alreadyRecorded, with
//     the task as it is (a claimed file redone after a crash);
//   - no such task: ErrUnknownTask;
//   - the task is cancelled: the report is recorded but the task is left
//     as it is (the caller sees its status), so a late report is kept and
//     not applied;
//   - the task is otherwise closed: ErrTaskClosed, naming the task and its
//     status, so a second report never closes a task twice;
//   - the task is still queued, never handed to its role: ErrNotDelivered,
//     so a report cannot make work vanish before anyone did it;
//   - Role is set and the task is another role's: ErrWrongRole;
//   - else the report is inserted and the task takes its status, with
//     finished_at, summary and report_path (the archived file), and, when
//     the task has a sender (From), its wake-up is due (PendingWakeups).
func (s *Store) AcceptReport(r ReportRecord) (task Task, alreadyRecorded bool, err error) {
	switch {
	case r.ClaimName == "" || r.TaskID == "":
		return Task{}, false, errors.New("accept report: claim name and task id are required")
	case r.Status != StatusDone && r.Status != StatusFailed && r.Status != StatusBlocked:
		return Task{}, false, fmt.Errorf("accept report for %s: status %q is not done, failed or blocked", r.TaskID, r.Status)
	}
	err = s.write(func(tx *writeTx) error {
		var one int
		err := tx.QueryRow(`SELECT 1 FROM reports WHERE claim_name = ? AND task_id = ?`, r.ClaimName, r.TaskID).Scan(&one)
		if err == nil {
			alreadyRecorded = true
			task, err = loadTask(tx, r.TaskID)
			return err
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		cur, err := loadTask(tx, r.TaskID)
		if err != nil {
			return err
		}
		if err := reportable(cur, r.Role); err != nil {
			return err
		}
		// A report on a cancelled task is kept, but changes nothing.
		keepOnly := cur.Status == StatusCancelled
		files, err := json.Marshal(nonNil(r.Files))
		if err != nil {
			return err
		}
		at := formatTime(r.ReceivedAt)
		if _, err := tx.Exec(`INSERT INTO reports
(claim_name, file, task_id, status, summary, details, files, skill_name, skill_description, archived_path, head_commit, received_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			r.ClaimName, r.File, r.TaskID, r.Status, r.Summary, r.Details, string(files),
			r.SkillName, r.SkillDescription, r.ArchivedPath, r.HeadCommit, at); err != nil {
			return err
		}
		if keepOnly {
			task = cur
			return nil
		}
		if _, err := tx.Exec(`UPDATE tasks SET status = ?, finished_at = ?, summary = ?, report_path = ?, head_commit = ?, updated_at = ?
WHERE id = ?`, r.Status, at, r.Summary, r.ArchivedPath, r.HeadCommit, at, r.TaskID); err != nil {
			return err
		}
		if cur.From != "" {
			if err := addWakeup(tx, r.TaskID, cur.From, at); err != nil {
				return err
			}
		}
		task, err = loadTask(tx, r.TaskID)
		return err
	})
	if err != nil {
		return Task{}, false, fmt.Errorf("accept report: %w", err)
	}
	return task, alreadyRecorded, nil
}

// reportable says why a report from role ("" for a report that speaks for
// no role) cannot be recorded for the task cur, or nil when it can: the
// refusals of AcceptReport. A cancelled task takes a report, which changes
// nothing.
func reportable(cur Task, role string) error {
	switch {
	case Closed(cur.Status) && cur.Status != StatusCancelled:
		return fmt.Errorf("%w: %s is %s", ErrTaskClosed, cur.ID, cur.Status)
	case cur.Status == StatusQueued:
		return fmt.Errorf("%w: %s is queued for %s", ErrNotDelivered, cur.ID, cur.Role)
	case role != "" && role != cur.Role:
		return fmt.Errorf("%w: %s is %s's, not %s's", ErrWrongRole, cur.ID, cur.Role, role)
	}
	return nil
}

// CheckReport says whether AcceptReport would take a report from role for
// taskID now, recording nothing: the task, or the error AcceptReport would
// give (ErrUnknownTask, ErrTaskClosed, ErrNotDelivered, ErrWrongRole). A
// writer checks first so that a report bound to be refused is never
// written; the queue still decides when the report arrives, since the task
// may change in between.
func (s *Store) CheckReport(taskID, role string) (Task, error) {
	cur, err := loadTask(s.read(), taskID)
	if err == nil {
		err = reportable(cur, role)
	}
	if err != nil {
		return Task{}, fmt.Errorf("check report: %w", err)
	}
	return cur, nil
}

const reportQuery = `SELECT r.id, r.task_id, t.role_id, t.title, r.status, r.summary, r.details, r.files,
r.skill_name, r.skill_description, r.file, r.archived_path, r.claim_name, r.head_commit, r.received_at
FROM reports r JOIN tasks t ON t.id = r.task_id`

// RecentReports returns the last n reports, newest first (n <= 0: all).
func (s *Store) RecentReports(n int) ([]Report, error) {
	rs, err := queryReports(s.read(), reportQuery+` ORDER BY r.id DESC LIMIT ?`, limit(n))
	if err != nil {
		return nil, fmt.Errorf("recent reports: %w", err)
	}
	return rs, nil
}

// ReportsForTask returns the reports recorded for a task, in arrival order.
// Since a task closes on its first report there is at most one, but the
// history does not rely on that.
func (s *Store) ReportsForTask(taskID string) ([]Report, error) {
	rs, err := queryReports(s.read(), reportQuery+` WHERE r.task_id = ? ORDER BY r.id`, taskID)
	if err != nil {
		return nil, fmt.Errorf("reports for %s: %w", taskID, err)
	}
	return rs, nil
}

func queryReports(q queryer, query string, args ...any) ([]Report, error) {
	rows, err := q.Query(query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Report
	for rows.Next() {
		var (
			r        Report
			files    string
			received sql.NullString
		)
		if err := rows.Scan(&r.ID, &r.TaskID, &r.Role, &r.Title, &r.Status, &r.Summary, &r.Details, &files,
			&r.SkillName, &r.SkillDescription, &r.File, &r.ArchivedPath, &r.ClaimName, &r.HeadCommit, &received); err != nil {
			return nil, err
		}
		if err := json.Unmarshal([]byte(files), &r.Files); err != nil {
			return nil, fmt.Errorf("report %d: files: %w", r.ID, err)
		}
		r.Files = nonNil(r.Files)
		var err error
		if r.ReceivedAt, err = parseTime(received); err != nil {
			return nil, fmt.Errorf("report %d: %w", r.ID, err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}
