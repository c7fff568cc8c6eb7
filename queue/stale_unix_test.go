//go:build !windows

package queue_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/shoguntest"
	"github.com/shogun-dev/shogun/store"
)

// An agent's report that names a task that is not its own (a stale id
// from an earlier conversation), that is no report at all, or that
// rewrites the report of a task already done, is kept in failed/ for the
// record but leaves nothing for a person to clear: the agent is told which
// task is its own, and the rejections' attention lines end once its report
// file is accepted for that task; a rewrite of a finished task's report
// gets no line at all.
func TestAStaleReportLeavesNothingToClear(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "a.jsonl")
	// The agent ends its turn without a report of its own: the note is
	// typed once it is ready again (a note for a task closed by then is not).
	ws := testWorkspace(t, sim("ashigaru1", rec, "--skip-reports", "1", "--work-time", "300ms"))
	r := startTeam(t, ws)
	r.drop(t, "a.yaml", "to: ashigaru1\ntitle: Real work\nbody: do it\n")
	tasks := r.waitTasks(t, "the task delivered", 30*time.Second, func(ts []store.Task) bool {
		return len(ts) == 1 && ts[0].Status == store.StatusDelivered
	})
	id := tasks[0].ID
	reports := filepath.Join(ws, "runtime", "queue", "reports")
	failed := filepath.Join(ws, "runtime", "queue", "failed")
	report := func(taskID, summary string) {
		t.Helper()
		tmp := filepath.Join(reports, ".ashigaru1.tmp")
		write(t, tmp, "task_id: "+taskID+"\nstatus: done\nsummary: "+summary+"\n")
		if err := os.Rename(tmp, filepath.Join(reports, "ashigaru1.yaml")); err != nil {
			t.Fatal(err)
		}
	}
	attention := func() string {
		t.Helper()
		snap, err := r.team.Queue().Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		return strings.Join(snap.Attention, "\n")
	}

	report("t-20000101-0001", "stale")
	waitFor(t, "the stale report rejected", 20*time.Second, func() bool {
		return strings.Contains(attention(), "rejected ashigaru1.yaml")
	})
	waitFor(t, "the agent told which task is its own", 20*time.Second, func() bool {
		for _, s := range shoguntest.Submits(t, rec) {
			if strings.Contains(s.Line, "t-20000101-0001") && strings.Contains(s.Line, "Your task is "+id) {
				return true
			}
		}
		return false
	})
	// Then a report that is no report at all, before the right one.
	tmp := filepath.Join(reports, ".ashigaru1.tmp")
	write(t, tmp, "task_id: [this is not\n")
	if err := os.Rename(tmp, filepath.Join(reports, "ashigaru1.yaml")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the broken report rejected", 20*time.Second, func() bool {
		return strings.Count(attention(), "rejected ashigaru1.yaml") == 2
	})
	report(id, "the real one") // as the agent told would
	r.waitTasks(t, "the task done by the agent's own report", 30*time.Second, func(ts []store.Task) bool {
		return len(ts) == 1 && ts[0].Status == store.StatusDone
	})
	waitFor(t, "the rejection's line gone", 10*time.Second, func() bool { return !strings.Contains(attention(), "rejected") })

	// The report of the finished task written again, saying something else.
	report(id, "said again, differently")
	waitFor(t, "the rewrite rejected into failed/", 20*time.Second, func() bool {
		n, _ := os.ReadDir(failed)
		return len(n) >= 6 // three files, each with its .error.yaml
	})
	if a := attention(); a != "" {
		t.Errorf("a person is asked to look at:\n%s", a)
	}
	names, _ := os.ReadDir(failed)
	var kept []string
	for _, n := range names {
		kept = append(kept, n.Name())
	}
	if !strings.Contains(strings.Join(kept, " "), "ashigaru1.yaml.error.yaml") {
		t.Errorf("failed/ holds %v, want the rejected reports kept for the record", kept)
	}
}
