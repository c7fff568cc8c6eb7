package store

import (
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"
)

func TestAcceptCommandsQueuesNumberedTasks(t *testing.T) {
	s, run := workspace(t)
	res := accept(t, s,
		command(run, "a.yaml", "cmd-1", "ashigaru1"),
		command(run, "b.yaml", "cmd-2", "ashigaru2"),
	)
	res = append(res, accept(t, s, command(run, "c.yaml", "cmd-3", "ashigaru1"))...)

	for i, want := range []string{"t-20261122-0001", "t-20261122-0002", "t-20261122-0003"} {
		got := res[i]
		if got.Duplicate || got.AlreadyRecorded || got.Task.ID != want || got.Task.Seq != int64(i+1) || got.Task.Status != StatusQueued {
			t.Errorf("result %d = %+v, want new queued task %s seq %d", i, got, want, i+1)
		}
	}
	stored, err := s.Task("t-20261122-0001")
	if err != nil {
		t.Fatal(err)
	}
	want := Task{
		ID: "t-20261122-0001", CommandID: "cmd-1", RunID: run.ID, Role: "ashigaru1", From: "karo",
		Title: "Title of cmd-1", Body: "Body of cmd-1", Tags: []string{"frontend"},
		Priority: PriorityNormal, Status: StatusQueued, Seq: 1, CreatedAt: day, UpdatedAt: day,
		Root: "t-20261122-0001",
	}
	if !reflect.DeepEqual(stored, want) || !reflect.DeepEqual(res[0].Task, want) {
		t.Fatalf("stored task = %+v\nreturned    %+v\nwant        %+v", stored, res[0].Task, want)
	}
}

func TestTaskNumbersRestartEachDayAndGrowPast9999(t *testing.T) {
	s, run := workspace(t)
	next := day.AddDate(0, 0, 1)
	rec := func(id string, at time.Time) CommandRecord {
		c := command(run, id+".yaml", id, "ashigaru1")
		c.ReceivedAt = at
		return c
	}
	accept(t, s, rec("a", day))
	if _, err := s.w.Exec(`UPDATE task_numbers SET last = 9999`); err != nil {
		t.Fatal(err)
	}
	res := accept(t, s, rec("b", day), rec("c", next), rec("d", next.Add(23*time.Hour)))
	var ids []string
	for _, r := range res {
		ids = append(ids, r.Task.ID)
	}
	if want := []string{"t-20261122-10000", "t-20261123-0001", "t-20261124-0001"}; !slices.Equal(ids, want) {
		t.Fatalf("ids = %v, want %v", ids, want)
	}
	// The date is the UTC one, whatever zone the caller's clock is in.
	tokyo := time.FixedZone("JST", 9*3600)
	late := time.Date(2026, 11, 25, 8, 0, 0, 0, tokyo) // 24th, 23:00 UTC
	if r := accept(t, s, rec("e", late)); r[0].Task.ID != "t-20261124-0002" {
		t.Fatalf("id = %s, want the UTC date", r[0].Task.ID)
	}
}

func TestAcceptCommandsRedoneClaimIsAlreadyRecorded(t *testing.T) {
	s, run := workspace(t)
	// One file holding two commands: one claim, two ids.
	first := accept(t, s, command(run, "karo.yaml", "cmd-1", "ashigaru1"), command(run, "karo.yaml", "cmd-2", "ashigaru2"))
	// The process died after recording but before archiving: the claimed
	// file is processed again on the next start.
	again := accept(t, s, command(run, "karo.yaml", "cmd-1", "ashigaru1"), command(run, "karo.yaml", "cmd-2", "ashigaru2"))
	for i := range again {
		if !again[i].AlreadyRecorded || again[i].Duplicate || again[i].Task.ID != first[i].Task.ID {
			t.Errorf("redo %d = %+v, want AlreadyRecorded with task %s", i, again[i], first[i].Task.ID)
		}
	}
	if c, _ := s.Counts(); c[StatusQueued] != 2 || len(c) != 1 {
		t.Fatalf("counts = %v, want 2 queued", c)
	}
}

func TestAcceptCommandsDuplicateID(t *testing.T) {
	s, run := workspace(t)
	first := accept(t, s, command(run, "a.yaml", "cmd-42", "ashigaru1"))[0]

	dup := accept(t, s, command(run, "b.yaml", "cmd-42", "ashigaru2"))[0]
	if !dup.Duplicate || dup.AlreadyRecorded || dup.FirstClaim != "a.yaml" || dup.Task.ID != first.Task.ID {
		t.Fatalf("second claim of cmd-42 = %+v, want Duplicate of a.yaml", dup)
	}
	// Crash recovery redoes the duplicate's claimed file: it must not be
	// reported as a new duplicate.
	redo := accept(t, s, command(run, "b.yaml", "cmd-42", "ashigaru2"))[0]
	if !redo.AlreadyRecorded || redo.Duplicate || redo.FirstClaim != "a.yaml" {
		t.Fatalf("redone duplicate claim = %+v, want AlreadyRecorded", redo)
	}
	// The same id twice within one batch, from different files.
	batch := accept(t, s, command(run, "c.yaml", "cmd-43", "ashigaru1"), command(run, "d.yaml", "cmd-43", "ashigaru1"))
	if batch[0].Duplicate || !batch[1].Duplicate || batch[1].FirstClaim != "c.yaml" {
		t.Fatalf("same id in one batch = %+v", batch)
	}
	tasks, err := s.Tasks(TaskFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) != 2 {
		t.Fatalf("%d tasks, want 2 (one per distinct id)", len(tasks))
	}
}

func TestAcceptCommandsRejectsBadRecords(t *testing.T) {
	s, run := workspace(t)
	for _, tc := range []struct {
		name string
		edit func(*CommandRecord)
	}{
		{"role never synced", func(c *CommandRecord) { c.To = "ghost" }},
		{"run never started", func(c *CommandRecord) { c.RunID = "run-nope" }},
		{"no id", func(c *CommandRecord) { c.ID = "" }},
		{"no claim", func(c *CommandRecord) { c.ClaimName = "" }},
		{"bad priority", func(c *CommandRecord) { c.Priority = "urgent" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			good := command(run, "good.yaml", "cmd-good", "ashigaru1")
			bad := command(run, "bad.yaml", "cmd-bad", "ashigaru1")
			tc.edit(&bad)
			if _, err := s.AcceptCommands([]CommandRecord{good, bad}); err == nil {
				t.Fatal("AcceptCommands accepted the batch")
			} else {
				t.Log(err)
			}
			// The batch is one transaction: the good record is not kept either.
			if ts, _ := s.Tasks(TaskFilter{}); len(ts) != 0 {
				t.Fatalf("%d tasks left by a failed batch", len(ts))
			}
		})
	}
}

func TestNextQueuedByPriorityThenArrival(t *testing.T) {
	s, run := workspace(t)
	var recs []CommandRecord
	for i, p := range []string{PriorityLow, PriorityNormal, PriorityHigh, "", PriorityHigh, PriorityLow} {
		c := command(run, fmt.Sprintf("%d.yaml", i), fmt.Sprintf("cmd-%d", i), "ashigaru1")
		c.Priority = p
		recs = append(recs, c)
	}
	recs = append(recs, command(run, "other.yaml", "cmd-other", "ashigaru2"))
	accept(t, s, recs...)

	var order []string
	for {
		next, err := s.NextQueued("ashigaru1")
		if err != nil {
			t.Fatal(err)
		}
		if next == nil {
			break
		}
		order = append(order, next.CommandID)
		if _, err := s.Cancel(next.ID, "test drains the queue", day); err != nil {
			t.Fatal(err)
		}
	}
	if want := []string{"cmd-2", "cmd-4", "cmd-1", "cmd-3", "cmd-0", "cmd-5"}; !slices.Equal(order, want) {
		t.Fatalf("dispatch order = %v, want %v", order, want)
	}
	if next, err := s.NextQueued("karo"); next != nil || err != nil {
		t.Fatalf("NextQueued for an empty queue = %v, %v", next, err)
	}
}

func TestTaskLifecycle(t *testing.T) {
	s, run := workspace(t)
	task := accept(t, s, command(run, "a.yaml", "cmd-1", "ashigaru1"))[0].Task
	at := func(min int) time.Time { return day.Add(time.Duration(min) * time.Minute) }

	if f, err := s.InFlight("ashigaru1"); f != nil || err != nil {
		t.Fatalf("InFlight before Assign = %v, %v", f, err)
	}
	if _, err := s.MarkDelivery(task.ID, true, 1, at(1)); !errors.Is(err, ErrNotAssigned) {
		t.Fatalf("MarkDelivery of a queued task: %v, want ErrNotAssigned", err)
	}

	steps := []struct {
		name string
		do   func() (Task, error)
		want Task // only the fields the step changes
	}{
		{"assign", func() (Task, error) { return s.Assign(task.ID, at(1)) },
			Task{Status: StatusAssigned, Attempts: 1, AssignedAt: at(1)}},
		{"nudge not confirmed", func() (Task, error) { return s.MarkDelivery(task.ID, false, 2, at(2)) },
			Task{Status: StatusUndelivered, Attempts: 1, Submits: 2, AssignedAt: at(1)}},
		{"assign again", func() (Task, error) { return s.Assign(task.ID, at(3)) },
			Task{Status: StatusAssigned, Attempts: 2, Submits: 2, AssignedAt: at(3)}},
		{"nudge confirmed", func() (Task, error) { return s.MarkDelivery(task.ID, true, 1, at(4)) },
			Task{Status: StatusDelivered, Attempts: 2, Submits: 3, AssignedAt: at(3), DeliveredAt: at(4)}},
		{"extra nudge not confirmed", func() (Task, error) { return s.MarkDelivery(task.ID, false, 0, at(5)) },
			Task{Status: StatusDelivered, Attempts: 2, Submits: 3, AssignedAt: at(3), DeliveredAt: at(4)}},
	}
	for _, st := range steps {
		got, err := st.do()
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if got.Status != st.want.Status || got.Attempts != st.want.Attempts || got.Submits != st.want.Submits ||
			!got.AssignedAt.Equal(st.want.AssignedAt) || !got.DeliveredAt.Equal(st.want.DeliveredAt) {
			t.Fatalf("%s: task = %+v, want %+v", st.name, got, st.want)
		}
		f, err := s.InFlight("ashigaru1")
		if err != nil || f == nil || f.ID != task.ID || f.Status != st.want.Status {
			t.Fatalf("%s: InFlight = %+v, %v", st.name, f, err)
		}
	}

	// A second task for the same role must wait for the first.
	second := accept(t, s, command(run, "b.yaml", "cmd-2", "ashigaru1"))[0].Task
	if _, err := s.Assign(second.ID, at(5)); !errors.Is(err, ErrRoleBusy) {
		t.Fatalf("Assign while the role is busy: %v, want ErrRoleBusy", err)
	}

	// The report arrives before the delivery is confirmed: the late
	// confirmation leaves the closed task closed, counting its submit.
	if _, _, err := s.AcceptReport(report(task.ID, "reports/a.yaml", StatusDone, at(6))); err != nil {
		t.Fatal(err)
	}
	late, err := s.MarkDelivery(task.ID, true, 1, at(7))
	if err != nil || late.Status != StatusDone || late.Submits != 4 {
		t.Fatalf("MarkDelivery after the report = %+v, %v", late, err)
	}
	if _, err := s.Assign(task.ID, at(8)); !errors.Is(err, ErrTaskClosed) {
		t.Fatalf("Assign of a done task: %v, want ErrTaskClosed", err)
	}
	if f, _ := s.InFlight("ashigaru1"); f != nil {
		t.Fatalf("InFlight after the report = %+v", f)
	}
	if _, err := s.Assign(second.ID, at(9)); err != nil {
		t.Fatalf("Assign of the next task once the role is free: %v", err)
	}
}

func TestCancel(t *testing.T) {
	s, run := workspace(t)
	task := accept(t, s, command(run, "a.yaml", "cmd-1", "ashigaru1"))[0].Task
	got, err := s.Cancel(task.ID, "no longer needed", day.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != StatusCancelled || got.Summary != "no longer needed" || !got.FinishedAt.Equal(day.Add(time.Minute)) {
		t.Fatalf("cancelled task = %+v", got)
	}
	if _, err := s.Cancel(task.ID, "again", day); !errors.Is(err, ErrTaskClosed) {
		t.Fatalf("second Cancel: %v, want ErrTaskClosed", err)
	}
	// A report that comes after the cancel is kept in the history, and the
	// task stays cancelled.
	got, again, err := s.AcceptReport(report(task.ID, "r.yaml", StatusDone, day.Add(2*time.Minute)))
	if err != nil || again || got.Status != StatusCancelled || got.Summary != "no longer needed" {
		t.Fatalf("report for a cancelled task = %+v, %v, %v; want it recorded and the task left cancelled", got, again, err)
	}
	if reps, err := s.ReportsForTask(task.ID); err != nil || len(reps) != 1 {
		t.Fatalf("reports of the cancelled task = %v, %v; want the late one recorded", reps, err)
	}
}

func TestUnknownTask(t *testing.T) {
	s, _ := workspace(t)
	const id = "t-20261122-9999"
	for name, op := range map[string]func() error{
		"Task":         func() error { _, err := s.Task(id); return err },
		"Assign":       func() error { _, err := s.Assign(id, day); return err },
		"MarkDelivery": func() error { _, err := s.MarkDelivery(id, true, 1, day); return err },
		"Cancel":       func() error { _, err := s.Cancel(id, "x", day); return err },
		"AcceptReport": func() error { _, _, err := s.AcceptReport(report(id, "r.yaml", StatusDone, day)); return err },
	} {
		if err := op(); !errors.Is(err, ErrUnknownTask) {
			t.Errorf("%s: %v, want ErrUnknownTask", name, err)
		}
	}
}

func TestTaskQueries(t *testing.T) {
	s, run := workspace(t)
	accept(t, s,
		command(run, "1.yaml", "cmd-1", "ashigaru1"),
		command(run, "2.yaml", "cmd-2", "ashigaru1"),
		command(run, "3.yaml", "cmd-3", "ashigaru2"),
		command(run, "4.yaml", "cmd-4", "ashigaru1"),
	)
	if _, err := s.Assign("t-20261122-0001", day); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Cancel("t-20261122-0003", "x", day); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		f    TaskFilter
		want []string // command ids, newest first
	}{
		{TaskFilter{}, []string{"cmd-4", "cmd-3", "cmd-2", "cmd-1"}},
		{TaskFilter{Limit: 2}, []string{"cmd-4", "cmd-3"}},
		{TaskFilter{Role: "ashigaru1"}, []string{"cmd-4", "cmd-2", "cmd-1"}},
		{TaskFilter{Role: "ashigaru1", Status: StatusQueued}, []string{"cmd-4", "cmd-2"}},
		{TaskFilter{Status: StatusCancelled}, []string{"cmd-3"}},
		{TaskFilter{Role: "karo"}, nil},
	} {
		ts, err := s.Tasks(tc.f)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, task := range ts {
			got = append(got, task.CommandID)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("Tasks(%+v) = %v, want %v", tc.f, got, tc.want)
		}
	}

	depths, err := s.QueueDepths()
	if err != nil {
		t.Fatal(err)
	}
	if len(depths) != 1 || depths["ashigaru1"] != 2 {
		t.Errorf("QueueDepths = %v", depths)
	}
	counts, err := s.Counts()
	if err != nil {
		t.Fatal(err)
	}
	if len(counts) != 3 || counts[StatusQueued] != 2 || counts[StatusAssigned] != 1 || counts[StatusCancelled] != 1 {
		t.Errorf("Counts = %v", counts)
	}
}

// TestConcurrentAcceptCommands drops commands from many goroutines at once,
// and from a second Store on the same file as a second process would: every
// command becomes one task with its own id and sequence number.
func TestConcurrentAcceptCommands(t *testing.T) {
	const writers, perWriter = 8, 200
	for _, stores := range []int{1, 2} {
		t.Run(fmt.Sprintf("%d stores", stores), func(t *testing.T) {
			s, run := workspace(t)
			all := []*Store{s}
			for range stores - 1 {
				all = append(all, openAt(t, s.Path()))
			}
			var wg sync.WaitGroup
			errs := make(chan error, writers)
			for w := range writers {
				wg.Go(func() {
					st := all[w%len(all)]
					for i := range perWriter {
						id := fmt.Sprintf("w%d-c%d", w, i)
						if _, err := st.AcceptCommands([]CommandRecord{command(run, id+".yaml", id, "ashigaru1")}); err != nil {
							errs <- err
							return
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}

			ts, err := s.Tasks(TaskFilter{})
			if err != nil {
				t.Fatal(err)
			}
			ids, seqs := map[string]bool{}, map[int64]bool{}
			for _, task := range ts {
				ids[task.ID], seqs[task.Seq] = true, true
			}
			if len(ts) != writers*perWriter || len(ids) != len(ts) || len(seqs) != len(ts) {
				t.Fatalf("%d tasks, %d distinct ids, %d distinct seqs; want %d of each", len(ts), len(ids), len(seqs), writers*perWriter)
			}
			if _, ok := ids[fmt.Sprintf("t-20261122-%04d", writers*perWriter)]; !ok {
				t.Fatal("task numbers have gaps")
			}
		})
	}
}

// BenchmarkAcceptCommands records commands in batches of 100, as a burst of
// dropped files would arrive.
func BenchmarkAcceptCommands(b *testing.B) {
	s := openAt(b, filepath.Join(b.TempDir(), "shogun.db"))
	if err := s.SyncRoles([]RoleInfo{{ID: "ashigaru1", Name: "A", PromptPath: "a.md", Enabled: true}}, day); err != nil {
		b.Fatal(err)
	}
	run, err := s.StartRun(1, "/ws", day)
	if err != nil {
		b.Fatal(err)
	}
	const batch = 100
	recs := make([]CommandRecord, batch)
	n := 0
	b.ResetTimer()
	for b.Loop() {
		for i := range recs {
			id := fmt.Sprintf("cmd-%d", n)
			n++
			recs[i] = command(run, id+".yaml", id, "ashigaru1")
		}
		if _, err := s.AcceptCommands(recs); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "commands/s")
}

// The task last handed to a role is known from the history alone, whatever
// order the tasks arrived in.
func TestLastAssigned(t *testing.T) {
	s, run := workspace(t)
	if got, err := s.LastAssigned("ashigaru1"); got != nil || err != nil {
		t.Fatalf("LastAssigned before any assignment = %+v, %v", got, err)
	}
	res := accept(t, s, command(run, "1.yaml", "cmd-1", "ashigaru1"), command(run, "2.yaml", "cmd-2", "ashigaru1"),
		command(run, "3.yaml", "cmd-3", "ashigaru2"))
	// The second task goes first (a higher priority, say), then the first;
	// the times differ only below the second, as they do in a fast queue,
	// and the earlier one is a whole second, which sorts after the later
	// one as text.
	second := day.Add(time.Second)
	if _, err := s.Assign(res[1].Task.ID, second); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Cancel(res[1].Task.ID, "done elsewhere", second); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Assign(res[0].Task.ID, second.Add(500*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Assign(res[2].Task.ID, second.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	got, err := s.LastAssigned("ashigaru1")
	if err != nil || got == nil || got.ID != res[0].Task.ID {
		t.Fatalf("LastAssigned = %+v, %v; want %s", got, err, res[0].Task.ID)
	}
}

// The Go lists are the one definition of the history's words; the schema's
// CHECKs were written from them and must take exactly those words, and each
// status is open or closed, in flight or not, by exactly one rule.
func TestStatusAndPriorityListsMatchTheSchema(t *testing.T) {
	s, run := workspace(t)
	id := accept(t, s, command(run, "c.yaml", "c1", "ashigaru1"))[0].Task.ID
	for _, st := range TaskStatuses {
		if _, err := s.w.Exec(`UPDATE tasks SET status = ? WHERE id = ?`, st, id); err != nil {
			t.Errorf("status %q of TaskStatuses refused by the schema: %v", st, err)
		}
		queued := st == StatusQueued
		if n := btoi(queued) + btoi(InFlightStatus(st)) + btoi(Closed(st)); n != 1 {
			t.Errorf("status %q is queued %v, in flight %v, closed %v: want exactly one", st, queued, InFlightStatus(st), Closed(st))
		}
	}
	if _, err := s.w.Exec(`UPDATE tasks SET status = 'finished' WHERE id = ?`, id); err == nil {
		t.Error("the schema took a status outside TaskStatuses")
	}
	for _, p := range Priorities {
		if _, err := s.w.Exec(`UPDATE tasks SET priority = ? WHERE id = ?`, p, id); err != nil {
			t.Errorf("priority %q of Priorities refused by the schema: %v", p, err)
		}
	}
	if _, err := s.w.Exec(`UPDATE tasks SET priority = 'urgent' WHERE id = ?`, id); err == nil {
		t.Error("the schema took a priority outside Priorities")
	}
	for _, st := range ReportStatuses {
		if !Closed(st) {
			t.Errorf("report status %q does not close a task", st)
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestCountsFollowTheTasks: the counts the dashboard shows stay those of
// the tasks through every change of status, and a bulk insert.
func TestCountsFollowTheTasks(t *testing.T) {
	s, run := workspace(t)
	check := func(step string) {
		t.Helper()
		got, err := s.Counts()
		if err != nil {
			t.Fatal(err)
		}
		want, err := countBy(s.r, `SELECT status, COUNT(*) FROM tasks GROUP BY status`)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: counts %v, tasks %v", step, got, want)
		}
	}
	check("empty")
	res := accept(t, s, command(run, "a.yaml", "a", "ashigaru1"), command(run, "b.yaml", "b", "ashigaru2"),
		command(run, "c.yaml", "c", "ashigaru1"))
	check("queued")
	a, b, c := res[0].Task.ID, res[1].Task.ID, res[2].Task.ID
	for _, id := range []string{a, b} {
		if _, err := s.Assign(id, day); err != nil {
			t.Fatal(err)
		}
		if _, err := s.MarkDelivery(id, true, 1, day); err != nil {
			t.Fatal(err)
		}
	}
	check("delivered")
	if _, _, err := s.AcceptReport(ReportRecord{ClaimName: "r1", File: "r.yaml", TaskID: a, Status: StatusFailed, Summary: "no", ReceivedAt: day}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Cancel(c, "not needed", day); err != nil {
		t.Fatal(err)
	}
	check("failed and cancelled")
	if _, err := s.Retry(a, day); err != nil {
		t.Fatal(err)
	}
	check("retried")
	if _, err := s.InsertFinishedTasks(run.ID, []FinishedTaskRecord{{Role: "ashigaru1", Title: "x", Status: StatusDone, CreatedAt: day, FinishedAt: day}}); err != nil {
		t.Fatal(err)
	}
	check("bulk")
}

// Pending is the one look-up that orders sleeping roles for a slot: it must
// name the same tasks as InFlight and NextQueued at every step of a role's
// queue, with their priority and age.
func TestPendingNamesTheTasksInFlightAndNext(t *testing.T) {
	s, run := workspace(t)
	var recs []CommandRecord
	for i, p := range []string{PriorityLow, PriorityHigh, PriorityNormal} {
		c := command(run, fmt.Sprintf("%d.yaml", i), fmt.Sprintf("cmd-%d", i), "ashigaru1")
		c.Priority = p
		c.ReceivedAt = day.Add(time.Duration(i) * time.Minute)
		recs = append(recs, c)
	}
	recs = append(recs, command(run, "other.yaml", "cmd-other", "ashigaru2"))
	accepted := accept(t, s, recs...)

	same := func(step string, got *PendingTask, want *Task) {
		t.Helper()
		switch {
		case got == nil && want == nil:
		case got == nil || want == nil:
			t.Fatalf("%s: Pending gave %+v, the whole look-up %+v", step, got, want)
		case got.ID != want.ID || got.Status != want.Status || got.Priority != want.Priority || !got.CreatedAt.Equal(want.CreatedAt):
			t.Fatalf("%s: Pending gave %+v, the whole look-up %s %s %s %s", step, *got, want.ID, want.Status, want.Priority, want.CreatedAt)
		}
	}
	check := func(step string) {
		t.Helper()
		inFlight, next, err := s.Pending("ashigaru1")
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		wantIn, err := s.InFlight("ashigaru1")
		if err != nil {
			t.Fatal(err)
		}
		wantNext, err := s.NextQueued("ashigaru1")
		if err != nil {
			t.Fatal(err)
		}
		same(step+", in flight", inFlight, wantIn)
		same(step+", next", next, wantNext)
	}

	check("three queued")
	if in, next, _ := s.Pending("ashigaru1"); in != nil || next == nil || next.ID != accepted[1].Task.ID {
		t.Fatalf("three queued: in flight %v, next %v; want none and the high-priority %s", in, next, accepted[1].Task.ID)
	}
	if _, err := s.Assign(accepted[1].Task.ID, day.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	check("one assigned, two queued")
	if _, err := s.Cancel(accepted[1].Task.ID, "test", day.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	check("the assigned one cancelled")
	for _, a := range []Accepted{accepted[0], accepted[2]} {
		if _, err := s.Cancel(a.Task.ID, "test", day.Add(3*time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	check("all closed")
	if in, next, err := s.Pending("karo"); in != nil || next != nil || err != nil {
		t.Fatalf("a role without tasks: %v, %v, %v", in, next, err)
	}
}
