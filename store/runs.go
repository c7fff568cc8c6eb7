package store

import (
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// Run statuses. EndRun takes any status; these are the ones this package
// itself writes, plus the ones a run ends with.
const (
	RunRunning = "running"
	RunCrashed = "crashed" // found still running by the next start
	RunStopped = "stopped" // a clean stop
	RunFailed  = "failed"  // stopped on an error
)

// Run is one `shogun start`, from start to stop or crash.
type Run struct {
	ID        string
	StartedAt time.Time
	EndedAt   time.Time // zero while running
	Status    string
	Pid       int
	Workspace string
}

// StartRun records a new run with status "running". A run still marked
// running can only be left over from a process that died without EndRun,
// so each such run is marked "crashed", ended at at.
//
// The id, run-YYYYMMDDTHHMMSSZ-PID, sorts by start time; should it already
// exist (same second, same pid), a -2, -3... suffix keeps it unique.
func (s *Store) StartRun(pid int, workspace string, at time.Time) (Run, error) {
	run := Run{StartedAt: at.UTC(), Status: RunRunning, Pid: pid, Workspace: workspace}
	err := s.write(func(tx *writeTx) error {
		if _, err := tx.Exec(`UPDATE runs SET status = ?, ended_at = ? WHERE status = ?`,
			RunCrashed, formatTime(at), RunRunning); err != nil {
			return err
		}
		base := "run-" + at.UTC().Format("20060102T150405Z") + "-" + strconv.Itoa(pid)
		run.ID = base
		for n := 2; ; n++ {
			var one int
			err := tx.QueryRow(`SELECT 1 FROM runs WHERE id = ?`, run.ID).Scan(&one)
			if errors.Is(err, sql.ErrNoRows) {
				break
			}
			if err != nil {
				return err
			}
			run.ID = base + "-" + strconv.Itoa(n)
		}
		_, err := tx.Exec(`INSERT INTO runs (id, started_at, status, pid, workspace) VALUES (?, ?, ?, ?, ?)`,
			run.ID, formatTime(at), RunRunning, pid, workspace)
		return err
	})
	if err != nil {
		return Run{}, fmt.Errorf("start run: %w", err)
	}
	return run, nil
}

// EndRun records the end of a run with the given status (RunStopped for a
// clean stop).
func (s *Store) EndRun(id, status string, at time.Time) error {
	if status == "" {
		return fmt.Errorf("end run %s: empty status", id)
	}
	res, err := s.w.Exec(`UPDATE runs SET status = ?, ended_at = ? WHERE id = ?`, status, formatTime(at), id)
	if err != nil {
		return fmt.Errorf("end run %s: %w", id, err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return fmt.Errorf("end run %s: unknown run", id)
	}
	return nil
}

// Run returns the run with the given id.
func (s *Store) Run(id string) (Run, error) {
	var (
		r              Run
		started, ended sql.NullString
		err            error
	)
	err = s.read().QueryRow(`SELECT id, started_at, ended_at, status, pid, workspace FROM runs WHERE id = ?`, id).
		Scan(&r.ID, &started, &ended, &r.Status, &r.Pid, &r.Workspace)
	if errors.Is(err, sql.ErrNoRows) {
		return Run{}, fmt.Errorf("get run: unknown run %s", id)
	}
	if err != nil {
		return Run{}, fmt.Errorf("get run %s: %w", id, err)
	}
	if r.StartedAt, err = parseTime(started); err != nil {
		return Run{}, fmt.Errorf("get run %s: %w", id, err)
	}
	if r.EndedAt, err = parseTime(ended); err != nil {
		return Run{}, fmt.Errorf("get run %s: %w", id, err)
	}
	return r, nil
}

// RoleInfo is a role as configured in config/roles.yaml.
type RoleInfo struct {
	ID, Name, PromptPath string
	Enabled              bool
}

// SyncRoles records the configured roles: new ones are inserted, known ones
// updated (updated_at moves only when something changed). Rows are never
// deleted, even for roles gone from the configuration, because old tasks
// and logs still refer to them.
func (s *Store) SyncRoles(roles []RoleInfo, at time.Time) error {
	err := s.write(func(tx *writeTx) error {
		for _, r := range roles {
			if r.ID == "" {
				return errors.New("role with empty id")
			}
			if _, err := tx.Exec(`
INSERT INTO roles (id, name, prompt_path, enabled, created_at, updated_at)
VALUES (?1, ?2, ?3, ?4, ?5, ?5)
ON CONFLICT (id) DO UPDATE SET
  name = excluded.name, prompt_path = excluded.prompt_path,
  enabled = excluded.enabled, updated_at = excluded.updated_at
WHERE name IS NOT excluded.name OR prompt_path IS NOT excluded.prompt_path
  OR enabled IS NOT excluded.enabled`,
				r.ID, r.Name, r.PromptPath, r.Enabled, formatTime(at)); err != nil {
				return fmt.Errorf("role %s: %w", r.ID, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sync roles: %w", err)
	}
	return nil
}

// Roles returns every role ever synced, by id.
func (s *Store) Roles() ([]RoleInfo, error) {
	rows, err := s.read().Query(`SELECT id, name, prompt_path, enabled FROM roles ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("list roles: %w", err)
	}
	defer rows.Close()
	var out []RoleInfo
	for rows.Next() {
		var r RoleInfo
		if err := rows.Scan(&r.ID, &r.Name, &r.PromptPath, &r.Enabled); err != nil {
			return nil, fmt.Errorf("list roles: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list roles: %w", err)
	}
	return out, nil
}

// RecordLog records that a role's terminal output for a run is kept at
// path. Recording the same run, role and path again is a no-op, so a
// caller may record on every (re)start of the role without checking.
func (s *Store) RecordLog(runID, role, path string, at time.Time) error {
	// The id is the natural key itself: the seed's logs table wants a text
	// id, and this one makes the insert idempotent.
	id := runID + "|" + role + "|" + path
	_, err := s.w.Exec(`INSERT INTO logs (id, run_id, role_id, path, created_at) VALUES (?, ?, ?, ?, ?)
ON CONFLICT (id) DO NOTHING`, id, runID, role, path, formatTime(at))
	if err != nil {
		return fmt.Errorf("record log %s: %w", path, err)
	}
	return nil
}
