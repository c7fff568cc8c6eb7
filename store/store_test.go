package store

import (
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// day is the date the tests' commands arrive on.
var day = time.Date(2026, 11, 22, 10, 15, 0, 0, time.UTC)

// workspace opens a fresh history as `shogun start` would leave it: roles
// synced and a run started.
func workspace(t testing.TB) (*Store, Run) {
	t.Helper()
	return workspaceWith(t, openAt(t, filepath.Join(t.TempDir(), "data", "shogun.db")))
}

// workspaceWith gives s the roles and run of workspace.
func workspaceWith(t testing.TB, s *Store) (*Store, Run) {
	t.Helper()
	if err := s.SyncRoles([]RoleInfo{
		{ID: "karo", Name: "Karo", PromptPath: "roles/karo.md", Enabled: true},
		{ID: "ashigaru1", Name: "Ashigaru 1", PromptPath: "roles/ashigaru.md", Enabled: true},
		{ID: "ashigaru2", Name: "Ashigaru 2", PromptPath: "roles/ashigaru.md", Enabled: true},
	}, day); err != nil {
		t.Fatal(err)
	}
	run, err := s.StartRun(4242, "/ws", day)
	if err != nil {
		t.Fatal(err)
	}
	return s, run
}

// openAt opens the store at path for a test; where there is no database
// yet, it starts from a copy of an empty history (emptyHistoryAt) instead of
// running every migration again. Tests of how Open creates a database use
// openFresh.
func openAt(t testing.TB, path string) *Store {
	t.Helper()
	emptyHistoryAt(t, path)
	return openFresh(t, path)
}

// openFresh opens the store at path with Open alone.
func openFresh(t testing.TB, path string) *Store {
	t.Helper()
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

// command is a command as the queue would record it from a dropped file.
func command(run Run, claim, id, to string) CommandRecord {
	return CommandRecord{
		ID: id, ClaimName: claim, File: claim, To: to, From: "karo",
		Title: "Title of " + id, Body: "Body of " + id, Tags: []string{"frontend"},
		Priority: PriorityNormal, RunID: run.ID, ReceivedAt: day,
	}
}

func accept(t testing.TB, s *Store, recs ...CommandRecord) []Accepted {
	t.Helper()
	res, err := s.AcceptCommands(recs)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != len(recs) {
		t.Fatalf("AcceptCommands returned %d results for %d records", len(res), len(recs))
	}
	return res
}

func userVersion(t *testing.T, db *sql.DB) int {
	t.Helper()
	var v int
	if err := db.QueryRow(`PRAGMA user_version`).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestOpenCreatesSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data", "shogun.db")
	s := openFresh(t, path)
	if v := userVersion(t, s.r); v != SchemaVersion || SchemaVersion != len(migrations) {
		t.Fatalf("user_version = %d, SchemaVersion = %d, migrations = %d", v, SchemaVersion, len(migrations))
	}
	// The seed's columns, which other tools may query, plus the new tables.
	want := map[string][]string{
		"roles":            {"id", "name", "prompt_path", "enabled", "created_at", "updated_at"},
		"runs":             {"id", "started_at", "ended_at", "status"},
		"tasks":            {"id", "run_id", "role_id", "title", "body", "status", "created_at", "updated_at"},
		"logs":             {"id", "run_id", "role_id", "path", "created_at"},
		"skill_candidates": {"id", "name", "description", "body", "source_task_ids", "status", "created_at", "updated_at"},
		"skills":           {"id", "name", "description", "body", "target", "path", "created_at"},
		"commands":         {"id", "claim_name"},
		"reports":          {"id", "task_id", "claim_name"},
		"events":           {"id", "at", "kind"},
	}
	for table, cols := range want {
		rows, err := s.r.Query(`SELECT name FROM pragma_table_info(?)`, table)
		if err != nil {
			t.Fatal(err)
		}
		var have []string
		for rows.Next() {
			var c string
			if err := rows.Scan(&c); err != nil {
				t.Fatal(err)
			}
			have = append(have, c)
		}
		rows.Close()
		for _, c := range cols {
			if !slices.Contains(have, c) {
				t.Errorf("table %s: no column %s (has %v)", table, c, have)
			}
		}
	}
}

func TestOpenConnectionSettings(t *testing.T) {
	s := openFresh(t, filepath.Join(t.TempDir(), "shogun.db"))
	for name, db := range map[string]*sql.DB{"writer": s.w, "reader": s.r} {
		for pragma, want := range map[string]string{
			"journal_mode": "wal", "busy_timeout": "5000", "synchronous": "1", "foreign_keys": "1",
		} {
			var got string
			if err := db.QueryRow(`PRAGMA ` + pragma).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("%s: %s = %s, want %s", name, pragma, got, want)
			}
		}
	}
	if _, err := s.r.Exec(`INSERT INTO events (at, kind) VALUES ('x', 'y')`); err == nil {
		t.Error("the read pool accepted a write")
	}
}

func TestOpenPathNeedingEscapes(t *testing.T) {
	// A URI would cut the path at ? or #, or decode %20. Windows allows no
	// ? in a file name.
	name := "odd ?#%20 name"
	if runtime.GOOS == "windows" {
		name = "odd #%20 name"
	}
	path := filepath.Join(t.TempDir(), name, "shogun.db")
	s := openFresh(t, path)
	if err := s.AddEvent(Event{Kind: "x"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("database not at the given path: %v", err)
	}
}

func TestReopenKeepsData(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shogun.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.AddEvent(Event{At: day, Kind: "started"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = openAt(t, path)
	if v := userVersion(t, s.r); v != SchemaVersion {
		t.Fatalf("user_version after reopen = %d", v)
	}
	evs, err := s.Events(0)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 || evs[0].Kind != "started" || !evs[0].At.Equal(day) {
		t.Fatalf("events after reopen = %+v", evs)
	}
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shogun.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.w.Exec(fmt.Sprintf(`PRAGMA user_version = %d`, SchemaVersion+1)); err != nil {
		t.Fatal(err)
	}
	s.Close()

	s, err = Open(path)
	if err == nil {
		s.Close()
		t.Fatal("Open accepted a database from a newer shogun")
	}
	if !errors.Is(err, ErrNewerSchema) {
		t.Fatalf("err = %v, want ErrNewerSchema", err)
	}
	t.Log(err)
}

func TestStartRunMarksLeftoverRunCrashed(t *testing.T) {
	s, first := workspace(t)
	if first.ID != "run-20261122T101500Z-4242" || first.Status != RunRunning {
		t.Fatalf("first run = %+v", first)
	}
	later := day.Add(time.Hour)
	second, err := s.StartRun(4343, "/ws", later)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Run(first.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != RunCrashed || !got.EndedAt.Equal(later) {
		t.Fatalf("first run after a second start = %+v, want crashed at %v", got, later)
	}
	if err := s.EndRun(second.ID, RunStopped, later.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Run(second.ID); got.Status != RunStopped || got.Pid != 4343 || got.Workspace != "/ws" {
		t.Fatalf("second run = %+v", got)
	}
	// A third start in the same second with the same pid still gets its own id.
	third, err := s.StartRun(4343, "/ws", later)
	if err != nil {
		t.Fatal(err)
	}
	if third.ID != second.ID+"-2" {
		t.Fatalf("third run id = %s", third.ID)
	}
	if got, _ := s.Run(second.ID); got.Status != RunStopped {
		t.Fatalf("a stopped run changed on the next start: %+v", got)
	}
	if err := s.EndRun("run-nope", RunStopped, later); err == nil {
		t.Fatal("EndRun of an unknown run succeeded")
	}
}

func TestSyncRolesKeepsHistory(t *testing.T) {
	s, _ := workspace(t)
	// ashigaru2 leaves the configuration; karo is disabled.
	if err := s.SyncRoles([]RoleInfo{
		{ID: "karo", Name: "Karo", PromptPath: "roles/karo.md", Enabled: false},
		{ID: "ashigaru1", Name: "Ashigaru 1", PromptPath: "roles/ashigaru.md", Enabled: true},
	}, day.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	roles, err := s.Roles()
	if err != nil {
		t.Fatal(err)
	}
	want := []RoleInfo{
		{ID: "ashigaru1", Name: "Ashigaru 1", PromptPath: "roles/ashigaru.md", Enabled: true},
		{ID: "ashigaru2", Name: "Ashigaru 2", PromptPath: "roles/ashigaru.md", Enabled: true},
		{ID: "karo", Name: "Karo", PromptPath: "roles/karo.md", Enabled: false},
	}
	if !slices.Equal(roles, want) {
		t.Fatalf("roles = %+v\nwant %+v", roles, want)
	}
	var updated string
	if err := s.r.QueryRow(`SELECT updated_at FROM roles WHERE id = 'ashigaru1'`).Scan(&updated); err != nil {
		t.Fatal(err)
	}
	if updated != formatTime(day) {
		t.Errorf("unchanged role's updated_at moved to %s", updated)
	}
}

func TestRecordLogIsIdempotent(t *testing.T) {
	s, run := workspace(t)
	for range 2 {
		if err := s.RecordLog(run.ID, "ashigaru1", "runtime/logs/ashigaru1.log", day); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.RecordLog(run.ID, "ghost", "runtime/logs/ghost.log", day); err == nil {
		t.Error("RecordLog accepted a role that was never synced")
	}
	var n int
	if err := s.r.QueryRow(`SELECT COUNT(*) FROM logs`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Fatalf("%d log rows, want 1", n)
	}
}

func TestEventsNewestFirst(t *testing.T) {
	s, run := workspace(t)
	for i, kind := range []string{"queued", "assigned", "report"} {
		if err := s.AddEvent(Event{At: day.Add(time.Duration(i) * time.Second), RunID: run.ID, Role: "ashigaru1", Kind: kind, TaskID: "t-1", Message: kind + "!"}); err != nil {
			t.Fatal(err)
		}
	}
	evs, err := s.Events(2)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 2 || evs[0].Kind != "report" || evs[1].Kind != "assigned" || evs[0].RunID != run.ID || evs[0].Message != "report!" {
		t.Fatalf("events = %+v", evs)
	}
	if err := s.AddEvent(Event{}); err == nil {
		t.Error("AddEvent accepted an event without a kind")
	}
}

func TestClosedStore(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "shogun.db"))
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if err := s.AddEvent(Event{Kind: "x"}); err == nil || !strings.Contains(err.Error(), "add event") {
		t.Fatalf("AddEvent on a closed store: %v", err)
	}
}
