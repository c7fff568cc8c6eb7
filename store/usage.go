package store

import (
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/shogun-dev/shogun/usage"
)

// UsageFile is one record file of a role's CLI as read up to now.
type UsageFile struct {
	Role, CLI, Path string
	Cursor          usage.Cursor
}

// UsageCursor is where reading path for role stopped; the zero Cursor for
// a file never read.
func (s *Store) UsageCursor(role, path string) (usage.Cursor, error) {
	var c usage.Cursor
	err := s.read().QueryRow(`SELECT offset, state FROM usage_cursors WHERE role = ? AND file = ?`, role, path).Scan(&c.Offset, &c.State)
	if errors.Is(err, sql.ErrNoRows) {
		return usage.Cursor{}, nil
	}
	if err != nil {
		return c, fmt.Errorf("read usage cursor of %s: %w", path, err)
	}
	return c, nil
}

// AddUsage records what was read from f: the records, each attributed to
// the role's task of the time (the latest one handed to the role at or
// before the record, unless it had finished before), and the new cursor,
// in one transaction. A record already kept (same file and key: a reply
// written again as it streamed) takes the larger of each number: a
// streamed count only grows, and a line written again with smaller ones
// (an agent erasing what it spent) lowers nothing.
func (s *Store) AddUsage(f UsageFile, recs []usage.Record, at time.Time) error {
	err := s.write(func(tx *writeTx) error {
		for _, r := range recs {
			taskID, err := usageTask(tx, f.Role, r.At)
			if err != nil {
				return err
			}
			if _, err := tx.Exec(`INSERT INTO usage_records
(file, key, role, cli, task_id, at, day, model, input, output, cache_read, cache_write, reasoning)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (file, key) DO UPDATE SET input = max(input, excluded.input), output = max(output, excluded.output),
  cache_read = max(cache_read, excluded.cache_read), cache_write = max(cache_write, excluded.cache_write),
  reasoning = max(reasoning, excluded.reasoning), model = excluded.model`,
				f.Path, r.Key, f.Role, f.CLI, taskID, formatTime(r.At), r.At.UTC().Format(time.DateOnly), r.Model,
				r.Input, r.Output, r.CacheRead, r.CacheWrite, r.Reasoning); err != nil {
				return err
			}
		}
		_, err := tx.Exec(`INSERT INTO usage_cursors (file, role, offset, state, updated_at) VALUES (?, ?, ?, ?, ?)
ON CONFLICT (role, file) DO UPDATE SET offset = excluded.offset, state = excluded.state, updated_at = excluded.updated_at`,
			f.Path, f.Role, f.Cursor.Offset, f.Cursor.State, formatTime(at))
		return err
	})
	if err != nil {
		return fmt.Errorf("add usage of %s from %s: %w", f.Role, f.Path, err)
	}
	return nil
}

// usageTask is the role's task at t: the latest assigned at or before t
// (tasks_role_assigned), if it had not finished before t; "" for none.
func usageTask(tx *writeTx, role string, t time.Time) (string, error) {
	var id string
	var finished sql.NullString
	err := tx.QueryRow(`SELECT id, finished_at FROM tasks
WHERE role_id = ? AND assigned_at IS NOT NULL AND julianday(assigned_at) <= julianday(?)
ORDER BY julianday(assigned_at) DESC, seq DESC LIMIT 1`, role, formatTime(t)).Scan(&id, &finished)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	if finished.Valid {
		end, err := parseTime(finished)
		if err != nil {
			return "", err
		}
		if end.Before(t) {
			return "", nil
		}
	}
	return id, nil
}

// UsageSum is the tokens of one role, task, day and model.
type UsageSum struct {
	Role, TaskID, Day, Model string
	usage.Tokens
	// Calls is how many model calls these are.
	Calls int64
}

// UsageFilter chooses records for Usage: Since, when set, leaves out the
// days before its own (UTC); From, when set, the records before it (a
// budget's local day); Role and TaskID, when set, keep only theirs.
type UsageFilter struct {
	Since        time.Time
	From         time.Time
	Role, TaskID string
}

// Usage sums the tokens recorded, per role, task, day and model.
func (s *Store) Usage(f UsageFilter) ([]UsageSum, error) {
	var where []string
	var args []any
	if !f.Since.IsZero() {
		where = append(where, "day >= ?")
		args = append(args, f.Since.UTC().Format(time.DateOnly))
	}
	if !f.From.IsZero() {
		// day narrows the look-up to the index's days; at decides.
		where = append(where, "day >= ?", "julianday(at) >= julianday(?)")
		args = append(args, f.From.UTC().Format(time.DateOnly), formatTime(f.From))
	}
	if f.Role != "" {
		where = append(where, "role = ?")
		args = append(args, f.Role)
	}
	if f.TaskID != "" {
		where = append(where, "task_id = ?")
		args = append(args, f.TaskID)
	}
	q := `SELECT role, task_id, day, model, SUM(input), SUM(output), SUM(cache_read), SUM(cache_write), SUM(reasoning), COUNT(*)
FROM usage_records`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " GROUP BY role, task_id, day, model ORDER BY day, role, task_id, model"
	rows, err := s.read().Query(q, args...)
	if err != nil {
		return nil, fmt.Errorf("read usage: %w", err)
	}
	defer rows.Close()
	var out []UsageSum
	for rows.Next() {
		var u UsageSum
		if err := rows.Scan(&u.Role, &u.TaskID, &u.Day, &u.Model, &u.Input, &u.Output, &u.CacheRead, &u.CacheWrite,
			&u.Reasoning, &u.Calls); err != nil {
			return nil, fmt.Errorf("read usage: %w", err)
		}
		out = append(out, u)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read usage: %w", err)
	}
	return out, nil
}

// Spent is what each role used from from on: its tokens (every kind but
// reasoning, which is inside output) and their cost estimated from prices.
func (s *Store) Spent(from time.Time, prices usage.Prices) (map[string]usage.Spent, error) {
	sums, err := s.Usage(UsageFilter{From: from})
	if err != nil {
		return nil, err
	}
	out := map[string]usage.Spent{}
	for _, u := range sums {
		cost, _ := prices.Cost(u.Model, u.Tokens)
		sp := out[u.Role]
		sp.Tokens += u.Total()
		sp.CostUSD += cost
		out[u.Role] = sp
	}
	return out, nil
}

// TaskTokens are the tokens of each of the tasks ids (tasks without any
// are left out).
func (s *Store) TaskTokens(ids []string) (map[string]usage.Tokens, error) {
	out := map[string]usage.Tokens{}
	if len(ids) == 0 {
		return out, nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	// Unprepared: each length of the list is a new query text.
	rows, err := s.r.Query(`SELECT task_id, SUM(input), SUM(output), SUM(cache_read), SUM(cache_write), SUM(reasoning)
FROM usage_records WHERE task_id IN (?`+strings.Repeat(", ?", len(ids)-1)+`) GROUP BY task_id`, args...)
	if err != nil {
		return nil, fmt.Errorf("read tasks' tokens: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var t usage.Tokens
		if err := rows.Scan(&id, &t.Input, &t.Output, &t.CacheRead, &t.CacheWrite, &t.Reasoning); err != nil {
			return nil, fmt.Errorf("read tasks' tokens: %w", err)
		}
		out[id] = t
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read tasks' tokens: %w", err)
	}
	return out, nil
}
