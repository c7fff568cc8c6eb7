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
	// 3: a team left running. Tasks gain the status stalled (delivered, no
	// report after every reminder; it still holds its role until a person
	// retries or cancels it) and their place in a chain of commands: the
	// task whose role sent the command (parent_id), the first task of the
	// chain (root_id) and how many hops down it the task is (depth, 0 for a
	// command a person sent). A CHECK cannot be altered in SQLite, so the
	// table is rebuilt; it runs with foreign keys off (see noForeignKeys) and
	// is checked before it commits.
	`
CREATE TABLE tasks_new (
  id TEXT PRIMARY KEY,
  run_id TEXT NOT NULL,
  role_id TEXT NOT NULL,
  title TEXT NOT NULL,
  body TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN
    ('queued','assigned','delivered','undelivered','stalled','done','failed','blocked','cancelled')),
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
  parent_id TEXT NOT NULL DEFAULT '',
  root_id TEXT NOT NULL DEFAULT '',
  depth INTEGER NOT NULL DEFAULT 0,
  FOREIGN KEY(run_id) REFERENCES runs(id),
  FOREIGN KEY(role_id) REFERENCES roles(id)
);
INSERT INTO tasks_new (id, run_id, role_id, title, body, status, created_at, updated_at, command_id,
  from_role, tags, priority, seq, assigned_at, delivered_at, finished_at, attempts, submits, summary, report_path)
SELECT id, run_id, role_id, title, body, status, created_at, updated_at, command_id,
  from_role, tags, priority, seq, assigned_at, delivered_at, finished_at, attempts, submits, summary, report_path
FROM tasks;
DROP TABLE tasks;
ALTER TABLE tasks_new RENAME TO tasks;
CREATE INDEX tasks_role_status ON tasks(role_id, status, priority_rank, seq);
CREATE INDEX tasks_status ON tasks(status, role_id);
CREATE UNIQUE INDEX tasks_one_in_flight ON tasks(role_id)
  WHERE status IN ('assigned','delivered','undelivered','stalled');
-- Exchanges: the commands between two roles lately.
CREATE INDEX tasks_pair ON tasks(role_id, from_role, created_at);
`,
	// Role worktrees: a report records the commit checked out in its
	// role's working directory when it arrived (a role with a worktree, or
	// any role working in a git repository), and its task shows it.
	`
ALTER TABLE reports ADD COLUMN head_commit TEXT NOT NULL DEFAULT '';
ALTER TABLE tasks ADD COLUMN head_commit TEXT NOT NULL DEFAULT '';
`,
	// Searchable history (see search.go): task_search indexes each task's
	// title, body and report text under its seq. Triggers keep it current,
	// except for the ranges of seq in search_backfill: the tasks that exist
	// when this runs, which Open indexes in batches with a progress report,
	// and a bulk insert's, indexed in one statement before it commits. A
	// task's seq never changes, and tasks are never deleted but by hand.
	// Listing tasks newest first by status, by role or in a time window
	// (shogun tasks) reads these indexes instead of the whole table.
	`
CREATE INDEX tasks_status_seq ON tasks(status, seq);
CREATE INDEX tasks_role_seq ON tasks(role_id, seq);
CREATE INDEX tasks_created ON tasks(created_at, seq);

CREATE VIRTUAL TABLE task_search USING fts5(title, body, report,
  content='', contentless_delete=1, tokenize='unicode61 remove_diacritics 2');

-- Ranges of seq still to index; the triggers leave them alone.
CREATE TABLE search_backfill (
  next_seq INTEGER NOT NULL,
  last_seq INTEGER NOT NULL
);
INSERT INTO search_backfill (next_seq, last_seq)
  SELECT MIN(seq), MAX(seq) FROM tasks HAVING COUNT(*) > 0;

CREATE TRIGGER task_search_insert AFTER INSERT ON tasks
WHEN NOT EXISTS (SELECT 1 FROM search_backfill b WHERE new.seq BETWEEN b.next_seq AND b.last_seq)
BEGIN
  INSERT INTO task_search (rowid, title, body, report)
  VALUES (new.seq, shogun_search_text(new.title), shogun_search_text(new.body), shogun_search_text(new.summary));
END;

CREATE TRIGGER task_search_update AFTER UPDATE OF title, body, summary ON tasks
WHEN (old.title IS NOT new.title OR old.body IS NOT new.body OR old.summary IS NOT new.summary)
  AND NOT EXISTS (SELECT 1 FROM search_backfill b WHERE new.seq BETWEEN b.next_seq AND b.last_seq)
BEGIN
  DELETE FROM task_search WHERE rowid = new.seq;
  INSERT INTO task_search (rowid, title, body, report)
  SELECT new.seq, shogun_search_text(new.title), shogun_search_text(new.body),
    shogun_search_text(new.summary || char(10) || COALESCE((SELECT group_concat(r.summary || char(10) || r.details, char(10))
      FROM reports r WHERE r.task_id = new.id), ''));
END;

CREATE TRIGGER task_search_delete AFTER DELETE ON tasks
WHEN NOT EXISTS (SELECT 1 FROM search_backfill b WHERE old.seq BETWEEN b.next_seq AND b.last_seq)
BEGIN
  DELETE FROM task_search WHERE rowid = old.seq;
END;

CREATE TRIGGER task_search_report_insert AFTER INSERT ON reports BEGIN
  DELETE FROM task_search WHERE rowid = (SELECT t.seq FROM tasks t WHERE t.id = new.task_id
    AND NOT EXISTS (SELECT 1 FROM search_backfill b WHERE t.seq BETWEEN b.next_seq AND b.last_seq));
  INSERT INTO task_search (rowid, title, body, report)
  SELECT t.seq, shogun_search_text(t.title), shogun_search_text(t.body),
    shogun_search_text(t.summary || char(10) || COALESCE((SELECT group_concat(r.summary || char(10) || r.details, char(10))
      FROM reports r WHERE r.task_id = t.id), ''))
  FROM tasks t WHERE t.id = new.task_id
    AND NOT EXISTS (SELECT 1 FROM search_backfill b WHERE t.seq BETWEEN b.next_seq AND b.last_seq);
END;

CREATE TRIGGER task_search_report_change AFTER UPDATE OF task_id, summary, details ON reports BEGIN
  DELETE FROM task_search WHERE rowid IN (SELECT t.seq FROM tasks t WHERE t.id IN (old.task_id, new.task_id)
    AND NOT EXISTS (SELECT 1 FROM search_backfill b WHERE t.seq BETWEEN b.next_seq AND b.last_seq));
  INSERT INTO task_search (rowid, title, body, report)
  SELECT t.seq, shogun_search_text(t.title), shogun_search_text(t.body),
    shogun_search_text(t.summary || char(10) || COALESCE((SELECT group_concat(r.summary || char(10) || r.details, char(10))
      FROM reports r WHERE r.task_id = t.id), ''))
  FROM tasks t WHERE t.id IN (old.task_id, new.task_id)
    AND NOT EXISTS (SELECT 1 FROM search_backfill b WHERE t.seq BETWEEN b.next_seq AND b.last_seq);
END;

CREATE TRIGGER task_search_report_delete AFTER DELETE ON reports BEGIN
  DELETE FROM task_search WHERE rowid = (SELECT t.seq FROM tasks t WHERE t.id = old.task_id
    AND NOT EXISTS (SELECT 1 FROM search_backfill b WHERE t.seq BETWEEN b.next_seq AND b.last_seq));
  INSERT INTO task_search (rowid, title, body, report)
  SELECT t.seq, shogun_search_text(t.title), shogun_search_text(t.body),
    shogun_search_text(t.summary || char(10) || COALESCE((SELECT group_concat(r.summary || char(10) || r.details, char(10))
      FROM reports r WHERE r.task_id = t.id), ''))
  FROM tasks t WHERE t.id = old.task_id
    AND NOT EXISTS (SELECT 1 FROM search_backfill b WHERE t.seq BETWEEN b.next_seq AND b.last_seq);
END;
`,
	// Incremental skill mining (package skills). skill_state is the miner's
	// own data (token counts, per-task token sets, group memberships, the
	// similarity index, settled groups) as keyed blobs the skills package
	// encodes, so that a scan after a report reads and writes only what the
	// new tasks touch. skill_changes lists the tasks already mined whose
	// status changed since (a report closed them, or a retry reopened one),
	// filled by a trigger for the tasks up to skill_watch's seq: the later
	// ones the next scan reads anyway. A candidate's source tasks move from
	// the JSON list to skill_candidate_sources, in chunks that a scan
	// extends without rewriting a large group's whole list; source_count
	// -1 means the candidate still has its old JSON list. And two costs
	// of a long history at every dispatch and dashboard refresh go: the
	// tasks per status are counted by triggers (task_counts), and a role's
	// latest assignment is found through an index.
	`
CREATE TABLE skill_state (
  k BLOB PRIMARY KEY,
  v BLOB NOT NULL
) WITHOUT ROWID;

CREATE TABLE skill_changes (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  seq INTEGER NOT NULL
);

CREATE TABLE skill_watch (
  one INTEGER PRIMARY KEY CHECK (one = 1),
  seq INTEGER NOT NULL
);

CREATE TRIGGER skill_task_status AFTER UPDATE OF status ON tasks
WHEN old.status != new.status
  AND (old.status IN ('done','failed','blocked') OR new.status IN ('done','failed','blocked'))
  AND new.seq <= (SELECT seq FROM skill_watch)
BEGIN
  INSERT INTO skill_changes (seq) VALUES (new.seq);
END;

-- The few reports that propose a skill, found without reading them all.
CREATE INDEX reports_skill ON reports(task_id) WHERE skill_name != '';

CREATE TABLE skill_candidate_sources (
  candidate_id TEXT NOT NULL,
  start INTEGER NOT NULL,
  data BLOB NOT NULL,
  PRIMARY KEY (candidate_id, start)
) WITHOUT ROWID;
ALTER TABLE skill_candidates ADD COLUMN source_count INTEGER NOT NULL DEFAULT -1;
CREATE INDEX skill_candidates_key ON skill_candidates(group_key);

-- The number of tasks per status, kept by triggers: counting them on a
-- long history at every dashboard refresh cost more than the rest of the
-- supervisor's steady work.
CREATE TABLE task_counts (
  status TEXT PRIMARY KEY,
  n INTEGER NOT NULL
);
INSERT INTO task_counts (status, n) SELECT status, COUNT(*) FROM tasks GROUP BY status;
CREATE TRIGGER task_counts_insert AFTER INSERT ON tasks
BEGIN
  INSERT INTO task_counts (status, n) VALUES (new.status, 1) ON CONFLICT (status) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER task_counts_update AFTER UPDATE OF status ON tasks WHEN old.status != new.status
BEGIN
  UPDATE task_counts SET n = n - 1 WHERE status = old.status;
  INSERT INTO task_counts (status, n) VALUES (new.status, 1) ON CONFLICT (status) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER task_counts_delete AFTER DELETE ON tasks
BEGIN
  UPDATE task_counts SET n = n - 1 WHERE status = old.status;
END;

-- LastAssigned, at every dispatch: the role's latest assignment without
-- reading all its tasks.
CREATE INDEX tasks_role_assigned ON tasks(role_id, julianday(assigned_at), seq) WHERE assigned_at IS NOT NULL;
`,
	// 7: approvals (approvals.go): every decision on an agent's action,
	// by the policy, a person or a time-out. A question waiting for a
	// person is a row with decision 'pending' until it is answered, so a
	// supervisor that dies mid-question leaves it on record; the next run
	// closes it (CloseStaleApprovals).
	`
CREATE TABLE approvals (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  asked_at TEXT NOT NULL,
  decided_at TEXT,
  run_id TEXT NOT NULL DEFAULT '',
  role TEXT NOT NULL,
  task_id TEXT NOT NULL DEFAULT '',
  cli TEXT NOT NULL DEFAULT '',
  kind TEXT NOT NULL,
  subject TEXT NOT NULL,
  decision TEXT NOT NULL CHECK (decision IN ('allow','deny','pending')),
  asked INTEGER NOT NULL DEFAULT 0,
  decided_by TEXT NOT NULL DEFAULT '',
  rule TEXT NOT NULL DEFAULT '',
  reason TEXT NOT NULL DEFAULT '',
  via TEXT NOT NULL DEFAULT '',
  note TEXT NOT NULL DEFAULT ''
);
CREATE INDEX approvals_asked ON approvals(julianday(asked_at));
CREATE INDEX approvals_pending ON approvals(run_id) WHERE decision = 'pending';
`,
	// 8: a task's approvals (TaskApprovals, the task's page) without
	// reading every decision ever made.
	`
CREATE INDEX approvals_task ON approvals(task_id, id) WHERE task_id != '';
`,
	// 9: wake-ups (wakeups.go): the line typed to the role that sent a
	// task's command when a report closes it, recorded with the close so
	// that a supervisor killed before typing it types it after the restart.
	`
CREATE TABLE wakeups (
  task_id TEXT PRIMARY KEY,
  role TEXT NOT NULL,
  due_at TEXT NOT NULL,
  typed_at TEXT
);
CREATE INDEX wakeups_pending ON wakeups(role, due_at) WHERE typed_at IS NULL;
`,
	// 10: tokens (usage.go): one row per model call a role's CLI recorded,
	// keyed by its file and its key in that file, with the task it was
	// attributed to; and how far each record file has been read, so that
	// reading costs what was written since, not the whole history.
	`
CREATE TABLE usage_records (
  file TEXT NOT NULL,
  key TEXT NOT NULL,
  role TEXT NOT NULL,
  cli TEXT NOT NULL DEFAULT '',
  task_id TEXT NOT NULL DEFAULT '',
  at TEXT NOT NULL,
  day TEXT NOT NULL,
  model TEXT NOT NULL DEFAULT '',
  input INTEGER NOT NULL DEFAULT 0,
  output INTEGER NOT NULL DEFAULT 0,
  cache_read INTEGER NOT NULL DEFAULT 0,
  cache_write INTEGER NOT NULL DEFAULT 0,
  reasoning INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (file, key)
);
CREATE INDEX usage_records_day ON usage_records(day, role);
CREATE INDEX usage_records_task ON usage_records(task_id) WHERE task_id != '';

-- Per role: a file in a CLI home that roles share is another folder's
-- conversation for one role and its own for the other.
CREATE TABLE usage_cursors (
  role TEXT NOT NULL,
  file TEXT NOT NULL,
  offset INTEGER NOT NULL,
  state TEXT NOT NULL DEFAULT '',
  updated_at TEXT NOT NULL,
  PRIMARY KEY (role, file)
);
`,
	// 11: accounts (accounts.go): the last usage limit each account of a
	// role met, so that a role is not moved to an account still limited
	// after a restart.
	`
CREATE TABLE account_limits (
  account TEXT PRIMARY KEY,
  role TEXT NOT NULL,
  limited_at TEXT NOT NULL,
  until TEXT NOT NULL
);
`,
}

// noForeignKeys are the migrations (by index) that rebuild a table others
// refer to: SQLite's way is to run them with foreign keys off, then check
// the keys before committing.
var noForeignKeys = map[int]bool{2: true}

// SchemaVersion is the user_version this package migrates databases to,
// the number of migrations.
const SchemaVersion = 11

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
	// The writer has one connection, so the pragma holds for the
	// transaction below; it cannot be changed inside one.
	var v0 int
	if err := db.QueryRow(`PRAGMA user_version`).Scan(&v0); err != nil {
		return false, fmt.Errorf("migrate: read user_version: %w", err)
	}
	if noForeignKeys[v0] {
		if _, err := db.Exec(`PRAGMA foreign_keys = OFF`); err != nil {
			return false, fmt.Errorf("migrate: %w", err)
		}
		defer func() {
			if _, ferr := db.Exec(`PRAGMA foreign_keys = ON`); ferr != nil && err == nil {
				err = fmt.Errorf("migrate: %w", ferr)
			}
		}()
	}
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
	if noForeignKeys[v] {
		if err := checkForeignKeys(tx); err != nil {
			return false, fmt.Errorf("migrate to version %d: %w", v+1, err)
		}
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

// checkForeignKeys fails if any row refers to one that does not exist.
func checkForeignKeys(tx *sql.Tx) error {
	rows, err := tx.Query(`PRAGMA foreign_key_check`)
	if err != nil {
		return fmt.Errorf("check foreign keys: %w", err)
	}
	defer rows.Close()
	if rows.Next() {
		return fmt.Errorf("check foreign keys: a row refers to one that does not exist")
	}
	return rows.Err()
}
