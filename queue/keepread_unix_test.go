//go:build !windows

package queue_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/store"
)

// readBack reads a file the test expects to be there.
func readBack(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// rewriteInPlace writes content over a file the way an editor or a CLI's
// write tool without a temporary file does: the same file, truncated.
func rewriteInPlace(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Issue 30 item 2. A report left in place for its agent (report_grace)
// and written again by it, in place, after shogun read it: the archive of
// the closed task, the rejected copy in failed/ and the duplicate's archive
// each still hold the bytes shogun read, never what the agent wrote later.
func TestArchivedAndRejectedReportsAreWhatWasRead(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "a.jsonl")
	ws := testWorkspace(t, sim("ashigaru1", rec, "--work-time", "0s"))
	write(t, filepath.Join(ws, "config", "settings.yaml"), "queue:\n  report_grace: 1h\n")
	r := startTeam(t, ws)
	report := queueDir(ws, "reports", "ashigaru1.yaml")
	failed := queueDir(ws, "failed")

	r.drop(t, "one.yaml", "id: cmd-one\nto: ashigaru1\ntitle: First\nbody: b\n")
	tasks := r.waitTasks(t, "the task done", 20*time.Second, func(ts []store.Task) bool {
		return len(ts) == 1 && ts[0].Status == store.StatusDone
	})
	id := tasks[0].ID
	reps, err := r.team.Store().ReportsForTask(id)
	if err != nil || len(reps) != 1 {
		t.Fatalf("reports = %+v, %v", reps, err)
	}
	accepted := readBack(t, report)
	archive := reps[0].ArchivedPath
	waitFor(t, "the report archived", 10*time.Second, func() bool { _, err := os.Stat(archive); return err == nil })

	// The agent rewrites its report, in place, to say something else.
	second := "task_id: " + id + "\nstatus: failed\nsummary: changed my mind\n"
	rewriteInPlace(t, report, second)
	if rec := failedRecord(t, ws, "ashigaru1.yaml"); !strings.Contains(rec.Error, "already closed") {
		t.Errorf("the rewritten report was rejected for %q, want: already closed", rec.Error)
	}
	if got := readBack(t, archive); got != accepted {
		t.Errorf("the archived report of a done task changed after the fact:\n%s\nwant what was read:\n%s", got, accepted)
	}
	// And again: the copy in failed/ is what was rejected.
	third := "task_id: " + id + "\nstatus: blocked\nsummary: third thoughts\n"
	rewriteInPlace(t, report, third)
	waitFor(t, "the third report rejected", 15*time.Second, func() bool {
		entries, _ := os.ReadDir(failed)
		return len(entries) == 4 // two files, each with its .error.yaml
	})
	if got := readBack(t, filepath.Join(failed, "ashigaru1.yaml")); got != second {
		t.Errorf("failed/ashigaru1.yaml = %q, want what was rejected: %q", got, second)
	}
	// The first report again, a duplicate: archived as read.
	rewriteInPlace(t, report, accepted)
	waitFor(t, "the duplicate archived", 15*time.Second, func() bool { return len(archivedNames(ws, "reports")) == 2 })
	rewriteInPlace(t, report, "task_id: "+id+"\nstatus: failed\nsummary: fourth\n")
	waitFor(t, "the fourth report rejected", 15*time.Second, func() bool {
		entries, _ := os.ReadDir(failed)
		return len(entries) == 6
	})
	paths, _ := filepath.Glob(filepath.Join(filepath.Dir(archive), "*"))
	if len(paths) != 2 {
		t.Fatalf("archived reports = %v, want the report and its duplicate", paths)
	}
	for _, p := range paths {
		if got := readBack(t, p); got != accepted {
			t.Errorf("archived %s = %q, want what was read: %q", filepath.Base(p), got, accepted)
		}
	}
	if reps, _ := r.team.Store().ReportsForTask(id); len(reps) != 1 {
		t.Errorf("reports recorded = %d, want 1", len(reps))
	}
}

// Issue 30 item 3. A CLI's write tool creates the report empty and fills it
// a moment later (Gemini CLI's write_file under load): the empty file is
// not rejected while its writer may still be at work. The task is done by
// the filled report, nothing is in failed/ and nothing asks for attention.
func TestReportWrittenEmptyThenFilledIsAccepted(t *testing.T) {
	cases := map[string]string{
		// Created empty and closed; written again after a pause.
		"closed between": `: > "$1"; sleep 1; printf '%s' "$2" > "$1"`,
		// Kept open, empty, for longer than the file may stay unchanged:
		// only Linux tells that a writer still has it open.
		"kept open": `exec 3> "$1"; sleep 3; printf '%s' "$2" >&3`,
	}
	for name, script := range cases {
		t.Run(name, func(t *testing.T) {
			if name == "kept open" && runtime.GOOS != "linux" {
				t.Skip("an open writer is seen on Linux only")
			}
			rec := filepath.Join(t.TempDir(), "a.jsonl")
			ws := testWorkspace(t, sim("ashigaru1", rec, "--work-time", "60s"))
			r := startTeam(t, ws)
			r.drop(t, "one.yaml", "id: cmd-one\nto: ashigaru1\ntitle: First\nbody: b\n")
			tasks := r.waitTasks(t, "the task delivered", 20*time.Second, func(ts []store.Task) bool {
				return len(ts) == 1 && ts[0].Status == store.StatusDelivered
			})
			report := queueDir(ws, "reports", "ashigaru1.yaml")
			content := "task_id: " + tasks[0].ID + "\nstatus: done\nsummary: written in two steps\n"
			out, err := exec.Command("sh", "-c", script, "sh", report, content).CombinedOutput()
			if err != nil {
				t.Fatalf("writer: %v: %s", err, out)
			}
			r.waitTasks(t, "the task done by the filled report", 20*time.Second, func(ts []store.Task) bool {
				return len(ts) == 1 && ts[0].Status == store.StatusDone && ts[0].Summary == "written in two steps"
			})
			claimed := queueDir(ws, "reports", ".claimed")
			waitFor(t, "every claimed report settled", 15*time.Second, func() bool {
				entries, _ := os.ReadDir(claimed)
				for _, e := range entries {
					if !strings.HasPrefix(e.Name(), ".") {
						return false
					}
				}
				return true
			})
			if entries, _ := os.ReadDir(queueDir(ws, "failed")); len(entries) != 0 {
				t.Errorf("failed/ = %v, want nothing", names(entries))
			}
			for _, line := range readStatus(t, ws).Attention {
				if strings.Contains(line, "rejected") {
					t.Errorf("attention line %q, want none about the report", line)
				}
			}
		})
	}
}
