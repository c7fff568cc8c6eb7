package store

import (
	"database/sql"
	"fmt"
)

// migrations are applied in order; migration i brings the database to
// user_version i+1. Never edit one that has shipped: add a new one, since
// existing databases already ran the old text.
var migrations = []string{
	// 1: the seed's tables (columns kept, some added) plus commands,
	// command_duplicates, reports, events and the task numbering.
	`
CREATE TABLE roles (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  prompt_path TEXT NOT NULL,
  enabled INTEGER NOT NULL DEFAULT 1,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);

CREATE TABLE runs (
  id TEXT PRIMARY KEY,
  started_at TEXT NOT NULL,
  ended_at TEXT,
  status TEXT NOT NULL,
  pid INTEGER NOT NULL DEFAULT 0,
  workspace TEXT NOT NULL DEFAULT ''
);
CREATE INDEX runs_status ON runs(status);

-- One row per accepted command id; the claim it came from is kept so that
-- redoing that claimed file after a crash is recognised.
CREATE TABLE commands (
  id TEXT PRIMARY KEY,
  claim_name TEXT NOT NULL,
  file TEXT NOT NULL,
  to_role TEXT NOT NULL,
  from_role TEXT NOT NULL DEFAULT '',
  title TEXT NOT NULL,
  body TEXT NOT NULL,
  tags TEXT NOT NULL DEFAULT '[]',
  priority TEXT NOT NULL DEFAULT 'normal',
  run_id TEXT NOT NULL REFERENCES runs(id),
  received_at TEXT NOT NULL
);
CREATE INDEX commands_claim ON commands(claim_name);

-- Claims that repeated an already accepted command id: recorded, never
-- dispatched, and recognised when the same claim is redone.
CREATE TABLE command_duplicates (
  claim_name TEXT NOT NULL,
  command_id TEXT NOT NULL REFERENCES commands(id),
  file TEXT NOT NULL,
  run_id TEXT NOT NULL REFERENCES runs(id),
  received_at TEXT NOT NULL,
  PRIMARY KEY (claim_name, command_id)
);

CREATE TABLE tasks (
  id TEXT PRIMARY KEY,
  run_id TEXT NOT NULL,
  role_id TEXT NOT NULL,
  title TEXT NOT NULL,
  body TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN
    ('queued','assigned','delivered','undelivered','done','failed','blocked','cancelled')),
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  command_id TEXT NOT NULL UNIQUE REFERENCES commands(id),
  from_role TEXT NOT NULL DEFAULT '',
  tags TEXT NOT NULL DEFAULT '[]',
  priority TEXT NOT NULL DEFAULT 'normal' CHECK (priority IN ('high','normal','low')),
  priority_rank INTEGER GENERATED ALWAYS AS
    (CASE priority WHEN 'high' THEN 0 WHEN 'normal' THEN 1 ELSE 2 END) VIRTUAL,
  seq INTEGER NOT NULL UNIQUE,
  assigned_at TEXT,
  delivered_at TEXT,
  finished_at TEXT,
  attempts INTEGER NOT NULL DEFAULT 0,
  submits INTEGER NOT NULL DEFAULT 0,
  summary TEXT NOT NULL DEFAULT '',
  report_path TEXT NOT NULL DEFAULT '',
  FOREIGN KEY(run_id) REFERENCES runs(id),
  FOREIGN KEY(role_id) REFERENCES roles(id)
);
-- NextQueued: a role's queued tasks in dispatch order.
CREATE INDEX tasks_role_status ON tasks(role_id, status, priority_rank, seq);
CREATE INDEX tasks_status ON tasks(status, role_id);
-- A role works on one task at a time; the database holds that line too.
CREATE UNIQUE INDEX tasks_one_in_flight ON tasks(role_id)
  WHERE status IN ('assigned','delivered','undelivered');

-- The last task number given out per UTC day (t-YYYYMMDD-NNNN).
CREATE TABLE task_numbers (
  day TEXT PRIMARY KEY,
  last INTEGER NOT NULL
);

CREATE TABLE reports (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  claim_name TEXT NOT NULL,
  file TEXT NOT NULL,
  task_id TEXT NOT NULL REFERENCES tasks(id),
  status TEXT NOT NULL CHECK (status IN ('done','failed','blocked')),
  summary TEXT NOT NULL,
  details TEXT NOT NULL DEFAULT '',
  files TEXT NOT NULL DEFAULT '[]',
  skill_name TEXT NOT NULL DEFAULT '',
  skill_description TEXT NOT NULL DEFAULT '',
  archived_path TEXT NOT NULL DEFAULT '',
  received_at TEXT NOT NULL,
  UNIQUE (claim_name, task_id)
);
CREATE INDEX reports_task ON reports(task_id);

CREATE TABLE logs (
  id TEXT PRIMARY KEY,
  run_id TEXT NOT NULL,
  role_id TEXT NOT NULL,
  path TEXT NOT NULL,
  created_at TEXT NOT NULL,
  FOREIGN KEY(run_id) REFERENCES runs(id),
  FOREIGN KEY(role_id) REFERENCES roles(id)
);

CREATE TABLE events (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  at TEXT NOT NULL,
  run_id TEXT NOT NULL DEFAULT '',
  role TEXT NOT NULL DEFAULT '',
  kind TEXT NOT NULL,
  task_id TEXT NOT NULL DEFAULT '',
  message TEXT NOT NULL DEFAULT ''
);

CREATE TABLE skill_candidates (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  description TEXT NOT NULL,
  body TEXT NOT NULL,
  source_task_ids TEXT NOT NULL,
  status TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);

CREATE TABLE skills (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  description TEXT NOT NULL,
  body TEXT NOT NULL,
  target TEXT NOT NULL,
  path TEXT NOT NULL,
  created_at TEXT NOT NULL
);
`,
	// 2: skill review. A candidate remembers the group it was mined from
	// (kind and key, so a re-scan updates it instead of adding another),
	// how many tasks backed it when it was rejected (it comes back only when
	// its group has grown enough), and whether a person edited it (a re-scan
	// then keeps the text). Every status change is a row in skill_decisions.
	// An exported file is one skills row per target and path.
	`
ALTER TABLE skill_candidates ADD COLUMN kind TEXT NOT NULL DEFAULT '';
ALTER TABLE skill_candidates ADD COLUMN group_key TEXT NOT NULL DEFAULT '';
ALTER TABLE skill_candidates ADD COLUMN rejected_size INTEGER NOT NULL DEFAULT 0;
ALTER TABLE skill_candidates ADD COLUMN edited_at TEXT;
CREATE UNIQUE INDEX skill_candidates_name ON skill_candidates(name);
CREATE INDEX skill_candidates_status ON skill_candidates(status, name);

CREATE TABLE skill_decisions (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  candidate_id TEXT NOT NULL REFERENCES skill_candidates(id),
  name TEXT NOT NULL,
  decision TEXT NOT NULL,
  from_status TEXT NOT NULL,
  to_status TEXT NOT NULL,
  by TEXT NOT NULL DEFAULT '',
  note TEXT NOT NULL DEFAULT '',
  at TEXT NOT NULL
);
CREATE INDEX skill_decisions_candidate ON skill_decisions(candidate_id, id);

ALTER TABLE skills ADD COLUMN candidate_id TEXT NOT NULL DEFAULT '';
ALTER TABLE skills ADD COLUMN layout TEXT NOT NULL DEFAULT '';
ALTER TABLE skills ADD COLUMN sha256 TEXT NOT NULL DEFAULT '';
CREATE UNIQUE INDEX skills_target_path ON skills(target, path);
`,
}

// SchemaVersion is the user_version this package migrates databases to,
// the number of migrations.
const SchemaVersion = 2

// migrate brings db up to SchemaVersion, one transaction per migration so
// that a crash mid-way leaves a database at a known version.
func migrate(db *sql.DB) error {
	for {
		done, err := migrateOne(db)
		if err != nil || done {
			return err
		}
	}
}

func migrateOne(db *sql.DB) (done bool, err error) {
	tx, err := db.Begin()
	if err != nil {
		return false, fmt.Errorf("migrate: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	// Read the version inside the write transaction: another process opening
	// the same database at the same moment must not run a migration twice.
	var v int
	if err := tx.QueryRow(`PRAGMA user_version`).Scan(&v); err != nil {
		return false, fmt.Errorf("migrate: read user_version: %w", err)
	}
	switch {
	case v > len(migrations):
		return false, fmt.Errorf("migrate: %w: version %d, this shogun knows up to %d", ErrNewerSchema, v, len(migrations))
	case v == len(migrations):
		return true, tx.Commit()
	}
	if _, err := tx.Exec(migrations[v]); err != nil {
		return false, fmt.Errorf("migrate to version %d: %w", v+1, err)
	}
	// user_version lives in the database header, which is written as part of
	// this transaction: the schema and its version commit together.
	if _, err := tx.Exec(fmt.Sprintf(`PRAGMA user_version = %d`, v+1)); err != nil {
		return false, fmt.Errorf("migrate to version %d: %w", v+1, err)
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("migrate to version %d: %w", v+1, err)
	}
	return false, nil
}
