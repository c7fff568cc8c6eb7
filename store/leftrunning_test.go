package store

import (
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// A delivered task that got no report after every reminder is stalled: it
// still holds its role, a late report closes it, and a person can retry it,
// which puts it back in the queue in its old place.
func TestStalledTaskHoldsItsRoleUntilRetried(t *testing.T) {
	s, run := workspace(t)
	res := accept(t, s, command(run, "a.yaml", "cmd-1", "ashigaru1"), command(run, "b.yaml", "cmd-2", "ashigaru1"))
	first, second := res[0].Task, res[1].Task
	if _, err := s.Assign(first.ID, day); err != nil {
		t.Fatal(err)
	}
	if _, err := s.MarkDelivery(first.ID, true, 1, day); err != nil {
		t.Fatal(err)
	}
	got, err := s.MarkStalled(first.ID, day.Add(time.Minute))
	if err != nil || got.Status != StatusStalled {
		t.Fatalf("MarkStalled = %+v, %v", got, err)
	}
	if f, err := s.InFlight("ashigaru1"); err != nil || f == nil || f.ID != first.ID {
		t.Fatalf("InFlight with a stalled task = %+v, %v; want the stalled task", f, err)
	}
	if _, err := s.Assign(second.ID, day); !errors.Is(err, ErrRoleBusy) {
		t.Fatalf("Assign beside a stalled task: %v, want ErrRoleBusy", err)
	}
	if _, err := s.Retry(second.ID, day); !errors.Is(err, ErrNotRetryable) {
		t.Fatalf("Retry of a queued task: %v, want ErrNotRetryable", err)
	}
	got, err = s.Retry(first.ID, day.Add(2*time.Minute))
	if err != nil || got.Status != StatusQueued || !got.DeliveredAt.IsZero() {
		t.Fatalf("Retry = %+v, %v; want queued", got, err)
	}
	if next, err := s.NextQueued("ashigaru1"); err != nil || next == nil || next.ID != first.ID {
		t.Fatalf("NextQueued after the retry = %+v, %v; want the retried task first", next, err)
	}

	// A failed task is reopened by a retry.
	if _, err := s.Assign(first.ID, day); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.AcceptReport(report(first.ID, "r.yaml", StatusFailed, day.Add(3*time.Minute))); err != nil {
		t.Fatal(err)
	}
	got, err = s.Retry(first.ID, day.Add(4*time.Minute))
	if err != nil || got.Status != StatusQueued || !got.FinishedAt.IsZero() || got.Summary != "" {
		t.Fatalf("Retry of a failed task = %+v, %v; want it queued again", got, err)
	}
	if _, err := s.Cancel(second.ID, "x", day); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Retry(second.ID, day); !errors.Is(err, ErrNotRetryable) {
		t.Fatalf("Retry of a cancelled task: %v, want ErrNotRetryable", err)
	}
}

// A task keeps its place in a chain of commands, and the commands between
// two roles can be counted.
func TestChainAndExchanges(t *testing.T) {
	s, run := workspace(t)
	root := accept(t, s, command(run, "a.yaml", "cmd-1", "ashigaru1"))[0].Task
	if root.Root != root.ID || root.Depth != 0 || root.Parent != "" {
		t.Fatalf("root task = %+v", root)
	}
	rec := command(run, "b.yaml", "cmd-2", "karo")
	rec.From, rec.Parent, rec.Root, rec.Depth = "ashigaru1", root.ID, root.ID, 1
	child := accept(t, s, rec)[0].Task
	if stored, err := s.Task(child.ID); err != nil || stored.Parent != root.ID || stored.Root != root.ID || stored.Depth != 1 {
		t.Fatalf("child = %+v, %v", stored, err)
	}
	n, err := s.Exchanges("karo", "ashigaru1", day.Add(-time.Minute))
	if err != nil || n != 2 {
		t.Fatalf("Exchanges = %d, %v; want 2 (one each way)", n, err)
	}
	if n, err := s.Exchanges("karo", "ashigaru1", day.Add(time.Minute)); err != nil || n != 0 {
		t.Fatalf("Exchanges since later = %d, %v; want 0", n, err)
	}
}

// A database of schema 2 (before stalled tasks) is migrated with its
// history: tasks and the reports that refer to them are kept.
func TestMigrateFromVersion2KeepsTasks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shogun.db")
	db, err := sql.Open("sqlite", dsn(path, false))
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range migrations[:2] {
		if _, err := db.Exec(m); err != nil {
			t.Fatalf("migration %d: %v", i+1, err)
		}
	}
	at := day.Format(time.RFC3339)
	for _, q := range []string{
		`PRAGMA user_version = 2`,
		fmt.Sprintf(`INSERT INTO roles VALUES ('ashigaru1', 'A', 'roles/a.md', 1, '%s', '%s')`, at, at),
		fmt.Sprintf(`INSERT INTO runs (id, started_at, status) VALUES ('run-1', '%s', 'running')`, at),
		fmt.Sprintf(`INSERT INTO commands (id, claim_name, file, to_role, title, body, run_id, received_at)
VALUES ('cmd-1', 'c', 'c.yaml', 'ashigaru1', 'T', 'B', 'run-1', '%s')`, at),
		fmt.Sprintf(`INSERT INTO tasks (id, run_id, role_id, title, body, status, created_at, updated_at, command_id, seq)
VALUES ('t-20261122-0001', 'run-1', 'ashigaru1', 'T', 'B', 'done', '%s', '%s', 'cmd-1', 1)`, at, at),
		fmt.Sprintf(`INSERT INTO reports (claim_name, file, task_id, status, summary, received_at)
VALUES ('r', 'r.yaml', 't-20261122-0001', 'done', 'ok', '%s')`, at),
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()

	s := openAt(t, path)
	task, err := s.Task("t-20261122-0001")
	if err != nil || task.Status != StatusDone || task.Title != "T" || task.Depth != 0 {
		t.Fatalf("task after migration = %+v, %v", task, err)
	}
	if reps, err := s.ReportsForTask(task.ID); err != nil || len(reps) != 1 {
		t.Fatalf("reports after migration = %v, %v", reps, err)
	}
	if _, err := s.w.Exec(`UPDATE tasks SET status = 'stalled' WHERE id = ?`, task.ID); err != nil {
		t.Fatalf("stalled refused after migration: %v", err)
	}
	var fk int
	if err := s.w.QueryRow(`PRAGMA foreign_keys`).Scan(&fk); err != nil || fk != 1 {
		t.Fatalf("foreign_keys after migration = %d, %v; want on", fk, err)
	}
}
