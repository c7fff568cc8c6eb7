//go:build !windows

package main

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/control"
	"github.com/shogun-dev/shogun/shoguntest"
	"github.com/shogun-dev/shogun/store"
	"github.com/shogun-dev/shogun/supervisor"
	"github.com/shogun-dev/shogun/workspace"
)

// tableIDs are the task ids of `shogun tasks`' table, in order.
func tableIDs(out string) []string {
	var ids []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if f := strings.Fields(line); len(f) > 0 && strings.HasPrefix(f[0], "t-") {
			ids = append(ids, f[0])
		}
	}
	return ids
}

// `shogun tasks --search` finds words in titles, bodies and reports, and
// combines with --since, --until, --role and --status; what a person types
// is never a syntax error.
func TestTasksSearch(t *testing.T) {
	ws, _ := skillsWorkspace(t) // seven tasks, 09:01 to 09:07 UTC on 2026-11-22
	all := tableIDs(jsonless(t, "tasks", "-w", ws))
	if len(all) != 7 {
		t.Fatalf("tasks lists %d tasks, want 7", len(all))
	}
	task := func(i int) string { return all[len(all)-i] } // task(1) is the first to arrive
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--search", "flaky"}, []string{task(3), task(2), task(1)}},
		{[]string{"--search", "FLAKY", "--status", "failed"}, []string{task(3)}},
		{[]string{"-s", "serialised"}, []string{task(2)}}, // in the report's summary
		{[]string{"--search", `"release notes"`, "--role", "ashigaru2"}, []string{task(5), task(4)}},
		{[]string{"--search", `"notes release"`}, nil},
		{[]string{"--search", "invent*"}, []string{task(3)}},
		{[]string{"--since", "2026-11-22T09:04:00Z", "--until", "2026-11-22T09:06:00Z"}, []string{task(5), task(4)}},
		{[]string{"--search", "the", "--until", "2026-11-22T09:03:00Z"}, []string{task(2), task(1)}},
		{[]string{"--search", "plan", "--since", "2026-11-22T09:07:00Z"}, []string{task(7)}},
		{[]string{"--search", `NEAR("flaky" -test) OR title:*`}, nil},
		{[]string{"--search", `"`}, nil},
	} {
		args := append([]string{"tasks", "-w", ws}, tc.args...)
		got := tableIDs(jsonless(t, args...))
		if strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("shogun %s: %v, want %v", strings.Join(tc.args, " "), got, tc.want)
		}
	}

	// The same with --json, against the documented keys.
	out := jsonOutput(t, "tasks", "-w", ws, "--json", "--search", "flaky", "--status", "done")
	shoguntest.CheckOutput(t, shoguntest.ReadDocShape(t, "json.md", docTasks), []control.Task{}, out)
	var tasks []control.Task
	if err := json.Unmarshal(out, &tasks); err != nil || len(tasks) != 2 || tasks[0].ID != task(2) {
		t.Errorf("tasks --json --search flaky --status done: %v\n%s", err, out)
	}

	for _, tc := range []struct {
		args []string
		err  string
	}{
		{[]string{"--since", "yesterday"}, `--since: "yesterday" is not a time`},
		{[]string{"--until", "-3d"}, `--until: "-3d" is not a time`},
		{[]string{"--since", "2026-11-22", "--until", "2026-11-21"}, "is not after --since"},
	} {
		_, errOut, code := shogun(t, append([]string{"tasks", "-w", ws}, tc.args...)...)
		if code != 2 || !strings.Contains(errOut, tc.err) {
			t.Errorf("shogun tasks %s: exit %d, %q; want a usage error (exit 2) with %q", strings.Join(tc.args, " "), code, errOut, tc.err)
		}
	}
}

// jsonless runs a command that must succeed and returns its output.
func jsonless(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, code := shogun(t, args...)
	if code != 0 {
		t.Fatalf("shogun %s: exit %d\n%s", strings.Join(args, " "), code, errOut)
	}
	return out
}

// The table stops at 50 tasks unless told otherwise; --json lists them
// all unless --limit is given.
func TestTasksJSONHasNoDefaultLimit(t *testing.T) {
	ws, db := skillsWorkspace(t)
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	run, err := st.StartRun(2, ws, time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	var recs []store.CommandRecord
	for i := range 60 {
		recs = append(recs, store.CommandRecord{ID: fmt.Sprintf("more-%d", i), ClaimName: "more.yaml", File: "more.yaml",
			To: "karo", Title: "More", Body: "More work", RunID: run.ID, ReceivedAt: time.Date(2026, 11, 23, 9, 1, i, 0, time.UTC)})
	}
	if _, err := st.AcceptCommands(recs); err != nil {
		t.Fatal(err)
	}
	st.Close()
	for _, tc := range []struct {
		args []string
		want int
	}{
		{nil, 50},
		{[]string{"--limit", "0"}, 67},
		{[]string{"--limit", "3"}, 3},
	} {
		if got := len(tableIDs(jsonless(t, append([]string{"tasks", "-w", ws}, tc.args...)...))); got != tc.want {
			t.Errorf("tasks %v lists %d tasks, want %d", tc.args, got, tc.want)
		}
	}
	for _, tc := range []struct {
		args []string
		want int
	}{
		{nil, 67},
		{[]string{"--limit", "3"}, 3},
	} {
		var tasks []control.Task
		if err := json.Unmarshal(jsonOutput(t, append([]string{"tasks", "-w", ws, "--json"}, tc.args...)...), &tasks); err != nil || len(tasks) != tc.want {
			t.Errorf("tasks --json %v: %d tasks, %v; want %d", tc.args, len(tasks), err, tc.want)
		}
	}
}

// `shogun db vacuum` compacts a stopped workspace's history and refuses,
// saying why, while the supervisor runs.
func TestDBVacuum(t *testing.T) {
	ws, _ := skillsWorkspace(t)
	out := jsonless(t, "db", "vacuum", "-w", ws)
	if !strings.HasPrefix(out, "compacted data/shogun.db: ") {
		t.Errorf("db vacuum printed %q", out)
	}
	if ids := tableIDs(jsonless(t, "tasks", "-w", ws, "--search", "flaky")); len(ids) != 3 {
		t.Errorf("search after a vacuum: %v", ids)
	}

	ws = teamWorkspace(t, simEntry("ashigaru1"))
	startBackground(t, ws)
	waitStatus(t, ws, "ready", func(s control.StatusReply) bool { return stateOf(s, "ashigaru1") == "ready" })
	_, errOut, code := shogun(t, "db", "vacuum", "-w", ws)
	if code == 0 || !strings.Contains(errOut, "is running this workspace") || !strings.Contains(errOut, "shogun stop") {
		t.Errorf("db vacuum with the supervisor running: exit %d, %q", code, errOut)
	}
	// The supervisor still runs and still answers.
	waitStatus(t, ws, "still ready", func(s control.StatusReply) bool { return stateOf(s, "ashigaru1") == "ready" })
}

// While a supervisor runs the workspace, a command does not upgrade a
// history from an older shogun under it (the older supervisor could no
// longer record tasks): it says what to do, and the history is unchanged.
func TestCommandsLeaveAnOlderHistoryAloneUnderARunningSupervisor(t *testing.T) {
	ws, path := skillsWorkspace(t)
	// This test process stands for the older supervisor: it holds the
	// workspace's lock, and the history records its run as running.
	st, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.StartRun(os.Getpid(), ws, time.Now()); err != nil {
		t.Fatal(err)
	}
	st.Close()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(fmt.Sprintf(`PRAGMA user_version = %d`, store.SchemaVersion-1)); err != nil {
		t.Fatal(err)
	}
	db.Close()
	lock, err := supervisor.AcquireLock(workspace.New(ws).Lock())
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	for _, args := range [][]string{{"tasks"}, {"tasks", "--search", "flaky"}, {"skills", "list"}} {
		_, errOut, code := shogun(t, append(args, "-w", ws)...)
		if code == 0 || !strings.Contains(errOut, "is from an older shogun") || !strings.Contains(errOut, "shogun stop") {
			t.Errorf("shogun %s: exit %d, %q", strings.Join(args, " "), code, errOut)
		}
	}
	if v, _, err := store.Peek(path, os.Getpid()); err != nil || v != store.SchemaVersion-1 {
		t.Errorf("schema version after the refusals: %d, %v; want it unchanged", v, err)
	}
}

// historyModes fails the test unless data/ has mode 0700 and the database
// and its -wal and -shm files 0600.
func historyModes(t *testing.T, ws, when string) {
	t.Helper()
	l := workspace.New(ws)
	want := map[string]fs.FileMode{l.Path(workspace.DataDir): 0o700}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		want[l.Database()+suffix] = 0o600
	}
	for p, perm := range want {
		fi, err := os.Stat(p)
		if err != nil {
			t.Errorf("%s: %s: %v", when, workspace.RelTo(ws, p), err)
		} else if got := fi.Mode().Perm(); got != perm {
			t.Errorf("%s: %s has mode %04o, want %04o", when, workspace.RelTo(ws, p), got, perm)
		}
	}
}

// Under the usual umask (022) the history is the owner's alone: data/ is
// 0700 from `shogun init`, the database and its -wal and -shm 0600 from
// their creation. A workspace whose history an older shogun left readable
// by everyone (data/ 0755, the files 0644) is tightened at start.
func TestHistoryIsOwnerOnly(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	ws := teamWorkspace(t, simEntry("ashigaru1", "--work-time", "100ms"))
	if fi, err := os.Stat(filepath.Join(ws, "data")); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("init made data/ %v (%v), want 0700", fi.Mode().Perm(), err)
	}
	run := func(title string) {
		t.Helper()
		cmd, _ := startBackground(t, ws)
		waitStatus(t, ws, "ready", func(s control.StatusReply) bool { return stateOf(s, "ashigaru1") == "ready" })
		send(t, ws, title)
		shoguntest.WaitFor(t, "the task done", 30*time.Second, func() bool {
			ts := tasksJSON(t, ws)
			return len(ts) > 0 && ts[0].Title == title && ts[0].Status == store.StatusDone
		})
		historyModes(t, ws, title)
		if _, errOut, code := shogun(t, "stop", "-w", ws); code != 0 {
			t.Fatalf("stop: %s", errOut)
		}
		_ = cmd.Wait()
	}
	run("in a new workspace")

	// As an older shogun left it; the -wal and -shm of a killed one too.
	l := workspace.New(ws)
	if err := os.Chmod(l.Path(workspace.DataDir), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		f, err := os.OpenFile(l.Database()+suffix, os.O_WRONLY|os.O_CREATE, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		if err := os.Chmod(l.Database()+suffix, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run("in an older workspace")
	if ts := tasksJSON(t, ws); len(ts) != 2 {
		t.Errorf("the history holds %d tasks after the second run, want both", len(ts))
	}
}
