//go:build !windows

package queue_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/store"
)

// An agent that looks at its report right after writing it (Claude Code's
// Write tool renames its temporary file into place, then stats the name)
// must find it: shogun closes the task at once, leaves the file where it
// is for the grace, then archives it. The same report written again for
// the closed task is a duplicate, not a failure.
func TestReportStaysReadableForItsAgent(t *testing.T) {
	dir := t.TempDir()
	rec := filepath.Join(dir, "a.jsonl")
	ws := testWorkspace(t, sim("ashigaru1", rec, "--work-time", "0s", "--check-report", "300ms"))
	write(t, filepath.Join(ws, "config", "settings.yaml"), "queue:\n  report_grace: 2s\n")
	r := startTeam(t, ws)
	reports := filepath.Join(ws, "runtime", "queue", "reports")
	report := filepath.Join(reports, "ashigaru1.yaml")

	r.drop(t, "one.yaml", "id: cmd-one\nto: ashigaru1\ntitle: First\nbody: b\n")
	tasks := r.waitTasks(t, "the task done", 20*time.Second, func(ts []store.Task) bool {
		return len(ts) == 1 && ts[0].Status == store.StatusDone
	})
	// Closed as soon as it was read, while the agent's file is still there.
	written, err := os.ReadFile(report)
	if err != nil {
		t.Fatalf("the report is gone the moment its task closed: %v", err)
	}
	if !strings.Contains(string(written), tasks[0].ID) {
		t.Fatalf("report file = %q, want the report on %s", written, tasks[0].ID)
	}
	waitFor(t, "the agent to look at its report again", 5*time.Second, func() bool {
		for _, e := range records(t, rec) {
			if e.Kind == "report" {
				return true
			}
		}
		return false
	})
	time.Sleep(500 * time.Millisecond) // the agent's look comes 300 ms after the write

	// After the grace the file is archived and gone from where it was.
	waitFor(t, "the report file released after its grace", 10*time.Second, func() bool {
		_, err := os.Lstat(report)
		return os.IsNotExist(err)
	})
	reps, err := r.team.Store().ReportsForTask(tasks[0].ID)
	if err != nil || len(reps) != 1 {
		t.Fatalf("reports recorded = %+v, %v; want one", reps, err)
	}
	if b, err := os.ReadFile(reps[0].ArchivedPath); err != nil || string(b) != string(written) {
		t.Errorf("archived report %s = %q, %v; want what the agent wrote", reps[0].ArchivedPath, b, err)
	}

	// The agent writes the same report again, as one that saw an error
	// would: archived as a duplicate, nothing rejected.
	tmp := filepath.Join(reports, ".again.tmp")
	write(t, tmp, string(written))
	if err := os.Rename(tmp, report); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the duplicate archived", 10*time.Second, func() bool {
		return len(archivedNames(ws, "reports")) == 2
	})
	if failed, _ := os.ReadDir(filepath.Join(ws, "runtime", "queue", "failed")); len(failed) != 0 {
		t.Errorf("the same report again went to failed/: %v", names(failed))
	}
	if reps, _ := r.team.Store().ReportsForTask(tasks[0].ID); len(reps) != 1 {
		t.Errorf("the duplicate was recorded: %d reports", len(reps))
	}
	d, _ := os.ReadFile(filepath.Join(ws, "runtime", "dashboard.md"))
	if strings.Contains(string(d), "rejected") {
		t.Errorf("the dashboard asks for attention over a duplicate:\n%s", d)
	}

	// A second task: the agent never saw its report vanish.
	r.drop(t, "two.yaml", "id: cmd-two\nto: ashigaru1\ntitle: Second\nbody: b\n")
	r.waitTasks(t, "both tasks done", 20*time.Second, func(ts []store.Task) bool {
		return countStatus(ts, store.StatusDone) == 2
	})
	waitFor(t, "the agent to look at its second report", 5*time.Second, func() bool {
		n := 0
		for _, e := range records(t, rec) {
			if e.Kind == "report" {
				n++
			}
		}
		return n == 2
	})
	time.Sleep(500 * time.Millisecond)
	for _, e := range records(t, rec) {
		if e.Kind == "report-gone" {
			t.Errorf("the agent found its report gone: %+v", e)
		}
	}
}

// A report file still held when the role's next task goes out is released
// first, so the agent writes its next report to a free name; and a
// different report renamed over a held one is read, not removed unread.
func TestHeldReportReleasedForTheNextTask(t *testing.T) {
	dir := t.TempDir()
	rec := filepath.Join(dir, "a.jsonl")
	ws := testWorkspace(t, sim("ashigaru1", rec, "--work-time", "0s"))
	write(t, filepath.Join(ws, "config", "settings.yaml"), "queue:\n  report_grace: 1h\n")
	r := startTeam(t, ws)
	report := filepath.Join(ws, "runtime", "queue", "reports", "ashigaru1.yaml")

	r.drop(t, "one.yaml", "id: cmd-one\nto: ashigaru1\ntitle: First\nbody: b\n")
	r.waitTasks(t, "the first task done", 20*time.Second, func(ts []store.Task) bool {
		return len(ts) == 1 && ts[0].Status == store.StatusDone
	})
	if _, err := os.Lstat(report); err != nil {
		t.Fatalf("report not held: %v", err)
	}
	r.drop(t, "two.yaml", "id: cmd-two\nto: ashigaru1\ntitle: Second\nbody: b\n")
	tasks := r.waitTasks(t, "the second task done", 20*time.Second, func(ts []store.Task) bool {
		return countStatus(ts, store.StatusDone) == 2
	})
	// The file there now is the second report, held in turn.
	b, err := os.ReadFile(report)
	if err != nil || !strings.Contains(string(b), tasks[0].ID) {
		t.Fatalf("report file = %q, %v; want the second task's report (%s)", b, err, tasks[0].ID)
	}
	// The task is closed in the history first, then its file archived.
	deadline := time.Now().Add(10 * time.Second)
	for len(archivedNames(ws, "reports")) < 2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := len(archivedNames(ws, "reports")); n != 2 {
		t.Errorf("archived reports = %d, want 2", n)
	}
	if failed, _ := os.ReadDir(filepath.Join(ws, "runtime", "queue", "failed")); len(failed) != 0 {
		t.Errorf("failed/ = %v, want nothing", names(failed))
	}
}

func names(entries []os.DirEntry) []string {
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i] = e.Name()
	}
	return out
}
