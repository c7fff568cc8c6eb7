package store

import (
	"errors"
	"reflect"
	"testing"
	"time"
)

// report is a report as the queue would record it from a dropped file.
func report(taskID, claim, status string, at time.Time) ReportRecord {
	return ReportRecord{
		ClaimName: claim, File: claim, TaskID: taskID, Status: status,
		Summary: "Login form added", Details: "see diff", Files: []string{"src/login.tsx"},
		SkillName: "add-react-form", SkillDescription: "When asked to add a form",
		ArchivedPath: "runtime/archive/reports/" + claim, ReceivedAt: at,
	}
}

func TestAcceptReportClosesTaskOnce(t *testing.T) {
	s, run := workspace(t)
	task := accept(t, s, command(run, "a.yaml", "cmd-1", "ashigaru1"))[0].Task
	if _, err := s.Assign(task.ID, day); err != nil {
		t.Fatal(err)
	}
	at := day.Add(10 * time.Minute)

	got, again, err := s.AcceptReport(report(task.ID, "ashigaru1.yaml", StatusDone, at))
	if err != nil || again {
		t.Fatalf("first report: again=%v err=%v", again, err)
	}
	if got.Status != StatusDone || got.Summary != "Login form added" || !got.FinishedAt.Equal(at) ||
		got.ReportPath != "runtime/archive/reports/ashigaru1.yaml" {
		t.Fatalf("task after its report = %+v", got)
	}

	// The same claimed file redone after a crash.
	got, again, err = s.AcceptReport(report(task.ID, "ashigaru1.yaml", StatusDone, at.Add(time.Hour)))
	if err != nil || !again || got.Status != StatusDone || !got.FinishedAt.Equal(at) {
		t.Fatalf("redone report: task=%+v again=%v err=%v", got, again, err)
	}

	// A second, different report for the same task.
	_, _, err = s.AcceptReport(report(task.ID, "late.yaml", StatusFailed, at.Add(time.Hour)))
	if !errors.Is(err, ErrTaskClosed) {
		t.Fatalf("second report: %v, want ErrTaskClosed", err)
	}
	t.Log(err)

	reps, err := s.ReportsForTask(task.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := Report{
		ID: 1, TaskID: task.ID, Role: "ashigaru1", Title: "Title of cmd-1", Status: StatusDone,
		Summary: "Login form added", Details: "see diff", Files: []string{"src/login.tsx"},
		SkillName: "add-react-form", SkillDescription: "When asked to add a form", File: "ashigaru1.yaml",
		ArchivedPath: "runtime/archive/reports/ashigaru1.yaml", ClaimName: "ashigaru1.yaml", ReceivedAt: at,
	}
	if len(reps) != 1 || !reflect.DeepEqual(reps[0], want) {
		t.Fatalf("reports for the task = %+v\nwant one: %+v", reps, want)
	}
}

func TestAcceptReportStatuses(t *testing.T) {
	s, run := workspace(t)
	for _, tc := range []struct {
		status string
		ok     bool
	}{
		{StatusDone, true}, {StatusFailed, true}, {StatusBlocked, true},
		{StatusCancelled, false}, {StatusQueued, false}, {"", false},
	} {
		t.Run(tc.status, func(t *testing.T) {
			id := "cmd-" + tc.status
			task := accept(t, s, command(run, id+".yaml", id, "ashigaru2"))[0].Task
			if _, err := s.Assign(task.ID, day); err != nil {
				t.Fatal(err)
			}
			got, _, err := s.AcceptReport(report(task.ID, id+"-report.yaml", tc.status, day))
			if tc.ok != (err == nil) {
				t.Fatalf("status %q: err = %v", tc.status, err)
			}
			if !tc.ok {
				if _, err := s.Cancel(task.ID, "refused report", day); err != nil {
					t.Fatal(err)
				}
			}
			if tc.ok && got.Status != tc.status {
				t.Fatalf("task status = %s, want %s", got.Status, tc.status)
			}
		})
	}
}

func TestRecentReportsNewestFirst(t *testing.T) {
	s, run := workspace(t)
	res := accept(t, s,
		command(run, "1.yaml", "cmd-1", "ashigaru1"),
		command(run, "2.yaml", "cmd-2", "ashigaru2"),
		command(run, "3.yaml", "cmd-3", "ashigaru1"),
	)
	for i, r := range res {
		if _, err := s.Assign(r.Task.ID, day); err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.AcceptReport(report(r.Task.ID, r.Task.CommandID+"-report.yaml", StatusDone, day.Add(time.Duration(i)*time.Minute))); err != nil {
			t.Fatal(err)
		}
	}
	reps, err := s.RecentReports(2)
	if err != nil {
		t.Fatal(err)
	}
	if len(reps) != 2 || reps[0].TaskID != res[2].Task.ID || reps[1].TaskID != res[1].Task.ID ||
		reps[1].Role != "ashigaru2" || reps[1].Title != "Title of cmd-2" {
		t.Fatalf("recent reports = %+v", reps)
	}
	if all, _ := s.RecentReports(0); len(all) != 3 {
		t.Fatalf("RecentReports(0) returned %d, want all 3", len(all))
	}
}

// A report closes only a task that its role was given: not one still
// queued, and not another role's when the report says whose it is.
func TestAcceptReportRefusesQueuedAndForeignTasks(t *testing.T) {
	s, run := workspace(t)
	res := accept(t, s, command(run, "1.yaml", "cmd-1", "ashigaru1"), command(run, "2.yaml", "cmd-2", "ashigaru2"))
	mine, theirs := res[0].Task, res[1].Task

	// ashigaru2's task was never handed out: no report can close it.
	queued := report(theirs.ID, "evil.yaml", StatusDone, day)
	if _, _, err := s.AcceptReport(queued); !errors.Is(err, ErrNotDelivered) {
		t.Fatalf("report for a queued task: %v, want ErrNotDelivered", err)
	}
	if _, err := s.Assign(mine.ID, day); err != nil {
		t.Fatal(err)
	}
	// ashigaru2 reports on ashigaru1's task in flight.
	foreign := report(mine.ID, "ashigaru2.yaml", StatusDone, day)
	foreign.Role = "ashigaru2"
	if _, _, err := s.AcceptReport(foreign); !errors.Is(err, ErrWrongRole) {
		t.Fatalf("report from another role: %v, want ErrWrongRole", err)
	}
	for _, id := range []string{mine.ID, theirs.ID} {
		if got, _ := s.Task(id); Closed(got.Status) {
			t.Fatalf("a refused report closed %s: %+v", id, got)
		}
		if reps, _ := s.ReportsForTask(id); len(reps) != 0 {
			t.Fatalf("a refused report was recorded for %s: %+v", id, reps)
		}
	}
	// The task's own role, by name or without one, is accepted.
	own := report(mine.ID, "ashigaru1.yaml", StatusDone, day)
	own.Role = "ashigaru1"
	if got, _, err := s.AcceptReport(own); err != nil || got.Status != StatusDone {
		t.Fatalf("the role's own report: %+v, %v", got, err)
	}
	if _, err := s.Assign(theirs.ID, day); err != nil {
		t.Fatal(err)
	}
	if got, _, err := s.AcceptReport(report(theirs.ID, "any-name.yaml", StatusDone, day)); err != nil || got.Status != StatusDone {
		t.Fatalf("a report under another name for a task in flight: %+v, %v", got, err)
	}
}

// A report records the commit its role had checked out; the task shows it.
func TestReportRecordsTheHeadCommit(t *testing.T) {
	s, run := workspace(t)
	task := accept(t, s, command(run, "a.yaml", "cmd-1", "ashigaru1"))[0].Task
	if _, err := s.Assign(task.ID, day); err != nil {
		t.Fatal(err)
	}
	rec := report(task.ID, "ashigaru1.yaml", StatusDone, day.Add(time.Minute))
	rec.HeadCommit = "0123456789abcdef0123456789abcdef01234567"
	got, _, err := s.AcceptReport(rec)
	if err != nil || got.HeadCommit != rec.HeadCommit {
		t.Fatalf("task after its report: %+v, %v", got, err)
	}
	if again, err := s.Task(task.ID); err != nil || again.HeadCommit != rec.HeadCommit {
		t.Errorf("task read back: %+v, %v", again, err)
	}
	if reps, err := s.ReportsForTask(task.ID); err != nil || len(reps) != 1 || reps[0].HeadCommit != rec.HeadCommit {
		t.Errorf("report read back: %+v, %v", reps, err)
	}
}

// CheckReport refuses exactly what AcceptReport would refuse, and records
// nothing: a writer that checks first never writes a report bound to fail.
func TestCheckReportAgreesWithAcceptReport(t *testing.T) {
	s, run := workspace(t)
	res := accept(t, s,
		command(run, "1.yaml", "cmd-1", "ashigaru1"), command(run, "2.yaml", "cmd-2", "ashigaru2"),
		command(run, "3.yaml", "cmd-3", "karo"))
	open, queued, cancelled := res[0].Task, res[1].Task, res[2].Task
	for _, id := range []string{open.ID, cancelled.ID} {
		if _, err := s.Assign(id, day); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Cancel(cancelled.ID, "not needed", day); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, task, role string
		want             error
	}{
		{"own task in flight", open.ID, "ashigaru1", nil},
		{"a report speaking for no role", open.ID, "", nil},
		{"another role's task", open.ID, "ashigaru2", ErrWrongRole},
		{"a task still queued", queued.ID, "ashigaru2", ErrNotDelivered},
		{"a cancelled task (kept, changes nothing)", cancelled.ID, "karo", nil},
		{"an unknown task", "t-19990101-0001", "ashigaru1", ErrUnknownTask},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := s.CheckReport(c.task, c.role)
			if c.want == nil && (err != nil || got.ID != c.task) {
				t.Fatalf("CheckReport(%s, %q) = %+v, %v; want the task", c.task, c.role, got, err)
			}
			if c.want != nil && !errors.Is(err, c.want) {
				t.Fatalf("CheckReport(%s, %q) = %v, want %v", c.task, c.role, err, c.want)
			}
		})
	}
	if reps, _ := s.RecentReports(0); len(reps) != 0 {
		t.Fatalf("CheckReport recorded reports: %+v", reps)
	}

	// Once its role reports, the task is closed for every later report.
	rep := report(open.ID, "ashigaru1.yaml", StatusDone, day)
	rep.Role = "ashigaru1"
	if _, _, err := s.AcceptReport(rep); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CheckReport(open.ID, "ashigaru1"); !errors.Is(err, ErrTaskClosed) {
		t.Fatalf("CheckReport on a done task: %v, want ErrTaskClosed", err)
	}
}

// TaskForCommand finds the task a command became, and nothing for a
// command the queue has not taken.
func TestTaskForCommand(t *testing.T) {
	s, run := workspace(t)
	res := accept(t, s, command(run, "1.yaml", "cmd-1", "ashigaru1"))
	got, err := s.TaskForCommand("cmd-1")
	if err != nil || got == nil || got.ID != res[0].Task.ID {
		t.Fatalf("TaskForCommand(cmd-1) = %+v, %v; want %s", got, err, res[0].Task.ID)
	}
	if got, err := s.TaskForCommand("cmd-never-sent"); err != nil || got != nil {
		t.Fatalf("TaskForCommand of an unknown command = %+v, %v; want nil", got, err)
	}
}
