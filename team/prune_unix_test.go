//go:build !windows

package team

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/shogun-dev/shogun/shoguntest"
	"github.com/shogun-dev/shogun/store"
)

// While the supervisor runs, events and log records older than
// data.retain are pruned; tasks and reports of any age are kept, and so
// are newer events.
func TestTheSupervisorPrunesOldEventsAndLogs(t *testing.T) {
	roles := `roles:
  - id: worker
    prompt_path: roles/ashigaru.md
    command: {exec: /bin/sh, args: ["-c", "exec sleep 1000"]}
    cli: generic
    stop: {keys: "", timeout: 1s}
`
	now := time.Now()
	old := now.Add(-40 * 24 * time.Hour)
	var oldTask string
	var logged shoguntest.Buffer
	tm := runTeam(t, roles, "keep_awake: false\ndata:\n  retain: 30d\n", func(o *Options) {
		o.PruneAfter = 200 * time.Millisecond
		o.Logger = zerolog.New(io.MultiWriter(zerolog.NewTestWriter(t), &logged))
		// A history with a task, its report, events and a log record from
		// 40 days ago, and an event from today.
		st, err := store.Open(o.Config.Settings.Data.SQLitePath)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		if err := st.SyncRoles([]store.RoleInfo{{ID: "worker", Name: "worker", PromptPath: "roles/ashigaru.md", Enabled: true}}, old); err != nil {
			t.Fatal(err)
		}
		run, err := st.StartRun(1, "old", old)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.EndRun(run.ID, store.RunStopped, old); err != nil {
			t.Fatal(err)
		}
		ids, err := st.InsertFinishedTasks(run.ID, []store.FinishedTaskRecord{{Role: "worker", Title: "Old work", Body: "b",
			Status: store.StatusDone, Summary: "done long ago", CreatedAt: old, FinishedAt: old}})
		if err != nil {
			t.Fatal(err)
		}
		oldTask = ids[0]
		for i := range 300 {
			if err := st.AddEvent(store.Event{At: old.Add(time.Duration(i) * time.Second), RunID: run.ID, Kind: "old"}); err != nil {
				t.Fatal(err)
			}
		}
		if err := st.AddEvent(store.Event{At: now.Add(-time.Hour), RunID: run.ID, Kind: "recent"}); err != nil {
			t.Fatal(err)
		}
		if err := st.RecordLog(run.ID, "worker", "runtime/logs/old.log", old); err != nil {
			t.Fatal(err)
		}
	})
	st := tm.Store()
	var pruned struct{ Events, Logs int }
	shoguntest.WaitFor(t, "the supervisor's log says it pruned", 30*time.Second, func() bool {
		for _, line := range strings.Split(logged.String(), "\n") {
			if strings.Contains(line, "pruned old events") {
				if err := json.Unmarshal([]byte(line), &pruned); err != nil {
					t.Fatalf("%v: %s", err, line)
				}
				return true
			}
		}
		return false
	})
	if pruned.Events != 300 || pruned.Logs != 1 {
		t.Errorf("the supervisor pruned %d events and %d log records, want 300 and 1", pruned.Events, pruned.Logs)
	}
	evs, _ := st.Events(0)
	recent := 0
	for _, e := range evs {
		if e.Kind == "recent" {
			recent++
		}
		if e.At.Before(now.Add(-30 * 24 * time.Hour)) {
			t.Errorf("an event older than data.retain is left: %+v", e)
		}
	}
	if recent != 1 {
		t.Errorf("the recent event is gone: %+v", evs)
	}
	task, err := st.Task(oldTask)
	if err != nil || task.Status != store.StatusDone {
		t.Errorf("the old task after pruning: %+v, %v", task, err)
	}
	if reps, err := st.ReportsForTask(oldTask); err != nil || len(reps) != 1 {
		t.Errorf("the old task's report after pruning: %v, %v", reps, err)
	}
	if found, err := st.Tasks(store.TaskFilter{Search: "old work"}); err != nil || len(found) != 1 {
		t.Errorf("search for the old task after pruning: %v, %v", found, err)
	}
	// Nothing was left for a second prune.
	if res, err := st.Prune(context.Background(), now.Add(-30*24*time.Hour), store.PruneOptions{}); err != nil || res.Logs+res.Events != 0 {
		t.Errorf("left for a second prune: %+v, %v", res, err)
	}
}
