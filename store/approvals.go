package store

import (
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// The decisions an approval ends with, and the one it has while a person
// is asked.
const (
	ApprovalAllow   = "allow"
	ApprovalDeny    = "deny"
	ApprovalPending = "pending"
)

// Who or what decided an approval (Approval.DecidedBy).
const (
	// DecidedByPolicy: a rule or the default of config/policy.yaml.
	DecidedByPolicy = "policy"
	// DecidedByPerson: someone answered (Via says where).
	DecidedByPerson = "person"
	// DecidedByTimeout: nobody answered within approvals.timeout.
	DecidedByTimeout = "timeout"
	// DecidedByShutdown: the supervisor stopped, or died, while it waited
	// (closed as denied by the next run).
	DecidedByShutdown = "shutdown"
)

// ErrApprovalDecided means an answer came for an approval that is no
// longer pending: someone else answered first, or it timed out.
var ErrApprovalDecided = errors.New("approval already decided")

// ErrUnknownApproval means no approval has the given id.
var ErrUnknownApproval = errors.New("unknown approval")

// Approval is one decision on an action an agent wanted to take.
type Approval struct {
	ID int64
	// AskedAt is when the CLI asked; DecidedAt when the decision was
	// made (zero while pending).
	AskedAt, DecidedAt time.Time
	RunID              string
	Role               string
	// TaskID is the role's task at the time, "" when it had none.
	TaskID string
	// CLI is the role's preset (claude, codex …).
	CLI string
	// Kind and Subject are the action: shell and its command line, read or
	// write and the path, fetch and the URL, mcp and the tool.
	Kind, Subject string
	// Decision is ApprovalAllow, ApprovalDeny or ApprovalPending.
	Decision string
	// Asked is true when the policy left it to a person.
	Asked bool
	// DecidedBy is one of the DecidedBy constants.
	DecidedBy string
	// Rule is the policy rule that decided or asked ("config/policy.yaml:12").
	Rule string
	// Reason is the policy's reason line, told to the agent.
	Reason string
	// Via is where a person answered: "cli", "console" or "api".
	Via string
	// Note is what the person added.
	Note string
}

// AddApproval records an approval and returns its id.
func (s *Store) AddApproval(a Approval) (int64, error) {
	if a.AskedAt.IsZero() {
		a.AskedAt = time.Now()
	}
	res, err := s.w.Exec(`INSERT INTO approvals (asked_at, decided_at, run_id, role, task_id, cli, kind, subject, decision, asked, decided_by, rule, reason, via, note)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		formatTime(a.AskedAt), nullTime(a.DecidedAt), a.RunID, a.Role, a.TaskID, a.CLI, a.Kind, a.Subject, a.Decision, a.Asked,
		a.DecidedBy, a.Rule, a.Reason, a.Via, a.Note)
	if err != nil {
		return 0, fmt.Errorf("add approval for %s: %w", a.Role, err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return 0, fmt.Errorf("add approval for %s: %w", a.Role, err)
	}
	s.changes.signal()
	return id, nil
}

// DecideApproval records the decision on a pending approval. It fails with
// ErrApprovalDecided when the approval is decided already, so that of two
// answers only the first counts.
func (s *Store) DecideApproval(id int64, decision, by, via, note string, at time.Time) error {
	if decision != ApprovalAllow && decision != ApprovalDeny {
		return fmt.Errorf("decide approval %d: decision %q is neither allow nor deny", id, decision)
	}
	res, err := s.w.Exec(`UPDATE approvals SET decision = ?, decided_by = ?, via = ?, note = ?, decided_at = ?
WHERE id = ? AND decision = 'pending'`, decision, by, via, note, formatTime(at), id)
	if err != nil {
		return fmt.Errorf("decide approval %d: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("decide approval %d: %w", id, err)
	} else if n == 0 {
		if _, err := s.Approval(id); err != nil {
			return fmt.Errorf("decide approval %d: %w", id, err)
		}
		return fmt.Errorf("decide approval %d: %w", id, ErrApprovalDecided)
	}
	s.changes.signal()
	return nil
}

// CloseStaleApprovals denies the approvals still pending from runs other
// than runID: their supervisor stopped or died while a person was asked,
// and the CLI that asked has long stopped waiting. It returns how many.
func (s *Store) CloseStaleApprovals(runID string, at time.Time) (int, error) {
	res, err := s.w.Exec(`UPDATE approvals SET decision = 'deny', decided_by = ?, decided_at = ?
WHERE decision = 'pending' AND run_id != ?`, DecidedByShutdown, formatTime(at), runID)
	if err != nil {
		return 0, fmt.Errorf("close stale approvals: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("close stale approvals: %w", err)
	}
	if n > 0 {
		s.changes.signal()
	}
	return int(n), nil
}

const approvalColumns = `id, asked_at, decided_at, run_id, role, task_id, cli, kind, subject, decision, asked, decided_by, rule, reason, via, note`

// Approval returns one approval by id.
func (s *Store) Approval(id int64) (Approval, error) {
	list, err := s.queryApprovals(`SELECT `+approvalColumns+` FROM approvals WHERE id = ?`, id)
	if err != nil {
		return Approval{}, fmt.Errorf("approval %d: %w", id, err)
	}
	if len(list) == 0 {
		return Approval{}, fmt.Errorf("approval %d: %w", id, ErrUnknownApproval)
	}
	return list[0], nil
}

// Approvals returns the approvals asked at or after since (zero: all), in
// the order they were asked; n > 0 keeps the last n of them.
func (s *Store) Approvals(since time.Time, n int) ([]Approval, error) {
	list, err := s.queryApprovals(`SELECT * FROM (SELECT `+approvalColumns+` FROM approvals
WHERE julianday(asked_at) >= julianday(?) ORDER BY id DESC LIMIT ?) ORDER BY id`, formatTime(since), limit(n))
	if err != nil {
		return nil, fmt.Errorf("approvals: %w", err)
	}
	return list, nil
}

// CountApprovals returns how many approvals were asked at or after since
// (zero: all): what a list cut to its last n leaves out.
func (s *Store) CountApprovals(since time.Time) (int, error) {
	var n int
	if err := s.read().QueryRow(`SELECT count(*) FROM approvals WHERE julianday(asked_at) >= julianday(?)`, formatTime(since)).Scan(&n); err != nil {
		return 0, fmt.Errorf("count approvals: %w", err)
	}
	return n, nil
}

// TaskApprovals returns the approvals asked while the role worked on the
// task, in the order they were asked: the last n of them (n > 0), and how
// many there are in all.
func (s *Store) TaskApprovals(taskID string, n int) (list []Approval, total int, err error) {
	if taskID == "" {
		return nil, 0, nil
	}
	list, err = s.queryApprovals(`SELECT * FROM (SELECT `+approvalColumns+` FROM approvals WHERE task_id = ? AND task_id != ''
ORDER BY id DESC LIMIT ?) ORDER BY id`, taskID, limit(n))
	if err == nil {
		err = s.read().QueryRow(`SELECT count(*) FROM approvals WHERE task_id = ? AND task_id != ''`, taskID).Scan(&total)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("approvals of task %s: %w", taskID, err)
	}
	return list, total, nil
}

func (s *Store) queryApprovals(query string, args ...any) ([]Approval, error) {
	rows, err := s.read().Query(query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Approval
	for rows.Next() {
		var (
			a              Approval
			asked, decided sql.NullString
		)
		if err := rows.Scan(&a.ID, &asked, &decided, &a.RunID, &a.Role, &a.TaskID, &a.CLI, &a.Kind, &a.Subject, &a.Decision,
			&a.Asked, &a.DecidedBy, &a.Rule, &a.Reason, &a.Via, &a.Note); err != nil {
			return nil, err
		}
		var err error
		if a.AskedAt, err = parseTime(asked); err != nil {
			return nil, fmt.Errorf("approval %d: %w", a.ID, err)
		}
		if a.DecidedAt, err = parseTime(decided); err != nil {
			return nil, fmt.Errorf("approval %d: %w", a.ID, err)
		}
		out = append(out, a)
	}
	return out, rows.Err()
}
