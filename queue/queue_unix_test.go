//go:build !windows

package queue_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/shogun-dev/shogun/queue"
	"github.com/shogun-dev/shogun/store"
	"github.com/shogun-dev/shogun/supervisor"
)

// A command becomes a task file and a submitted nudge; the agent's report
// closes the task, the sender is told, and the next queued task follows.
func TestCommandToReportEndToEnd(t *testing.T) {
	dir := t.TempDir()
	karoRec, ashiRec := filepath.Join(dir, "karo.jsonl"), filepath.Join(dir, "ashigaru1.jsonl")
	ws := testWorkspace(t, sim("karo", karoRec), sim("ashigaru1", ashiRec, "--work-time", "300ms"))
	r := startTeam(t, ws)

	r.drop(t, "login.yaml", "id: cmd-login\nto: ashigaru1\nfrom: karo\ntitle: Add the login form\nbody: |\n  Create src/login.tsx\n  with email and password.\ntags: [frontend]\n")
	r.drop(t, "logout.yaml", "id: cmd-logout\nto: ashigaru1\nfrom: karo\ntitle: Add logout\nbody: Add a logout button.\n")

	tasks := r.waitTasks(t, "both tasks done", 30*time.Second, func(ts []store.Task) bool {
		return len(ts) == 2 && countStatus(ts, store.StatusDone) == 2
	})
	first, second := tasks[1], tasks[0] // newest first
	if first.CommandID != "cmd-login" || second.CommandID != "cmd-logout" || first.Seq > second.Seq {
		t.Fatalf("tasks out of order: %+v / %+v", first, second)
	}
	if first.Attempts != 1 || first.Submits < 1 || first.From != "karo" || first.Summary != "Done: Add the login form" {
		t.Errorf("first task = %+v", first)
	}

	// The agent got each task as one submitted nudge naming the task file.
	var nudges, worked []string
	for _, rec := range records(t, ashiRec) {
		switch rec.Kind {
		case "submit":
			if strings.HasPrefix(rec.Line, "Read runtime/queue/tasks/") {
				nudges = append(nudges, rec.Line)
			}
		case "task":
			worked = append(worked, rec.TaskID)
		}
	}
	wantNudge := "Read runtime/queue/tasks/ashigaru1.yaml and carry out the task. Write your report to runtime/queue/reports/ashigaru1.yaml."
	if len(nudges) != 2 || nudges[0] != wantNudge {
		t.Errorf("nudges = %q, want two of %q", nudges, wantNudge)
	}
	if strings.Join(worked, ",") != first.ID+","+second.ID {
		t.Errorf("agent worked on %v, want %s then %s", worked, first.ID, second.ID)
	}

	// The current task file is the second task; the first was archived.
	b, err := os.ReadFile(filepath.Join(ws, "runtime", "queue", "tasks", "ashigaru1.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var tf queue.Task
	if err := yaml.Unmarshal(b, &tf); err != nil {
		t.Fatal(err)
	}
	if tf.TaskID != second.ID || tf.ReportTo != "runtime/queue/reports/ashigaru1.yaml" || tf.From != "karo" {
		t.Errorf("task file = %+v", tf)
	}
	if archivedPath(ws, "tasks", "ashigaru1-"+first.ID+".yaml") == "" {
		t.Errorf("first task file not archived: %v", archivedNames(ws, "tasks"))
	}

	// The sender was told about both reports, with the archived report path.
	waitFor(t, "two notify lines in karo", 15*time.Second, func() bool {
		n := 0
		for _, rec := range records(t, karoRec) {
			if rec.Kind == "submit" && strings.HasPrefix(rec.Line, "Report from ashigaru1 on '") {
				n++
			}
		}
		return n == 2
	})
	for _, rec := range records(t, karoRec) {
		if archivedReportLine.MatchString(rec.Line) {
			goto notified
		}
	}
	t.Errorf("karo never got the notify for the login form: %+v", records(t, karoRec))
notified:

	reps, err := r.team.Store().ReportsForTask(first.ID)
	if err != nil || len(reps) != 1 || reps[0].Status != "done" {
		t.Fatalf("reports for %s = %+v, %v", first.ID, reps, err)
	}
	if _, err := os.Stat(reps[0].ArchivedPath); err != nil {
		t.Errorf("report not archived at %s: %v", reps[0].ArchivedPath, err)
	}
	waitFor(t, "the dashboard to show both reports", 5*time.Second, func() bool {
		d, _ := os.ReadFile(filepath.Join(ws, "runtime", "dashboard.md"))
		return strings.Contains(string(d), first.ID+" Add the login form | done: Done: Add the login form") &&
			strings.Contains(string(d), second.ID+" Add logout | done")
	})
	st, err := os.ReadFile(filepath.Join(ws, "runtime", "state", "status.yaml"))
	if err != nil || !strings.Contains(string(st), "id: ashigaru1") || !strings.Contains(string(st), "done: 2") {
		t.Errorf("status.yaml = %s (%v)", st, err)
	}
}

// Bad files end in failed/ with an error file saying why, the supervisor
// keeps going, and a good file after them is still handled.
func TestBadInputIsRejectedWithReasons(t *testing.T) {
	dir := t.TempDir()
	ws := testWorkspace(t, sim("ashigaru1", filepath.Join(dir, "a.jsonl"), "--work-time", "0s"),
		strings.Replace(sim("spare", filepath.Join(dir, "s.jsonl")), "  - id: spare\n", "  - id: spare\n    enabled: false\n", 1))
	r := startTeam(t, ws)
	bomb := "a: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n"
	type badFile struct {
		name, content, want string
		line, col           int // where the record says the problem is; 0, 0: not checked
	}
	cases := []badFile{
		{"invalid.yaml", "to: ashigaru1\ntitle: [unclosed\n", "invalid YAML", 0, 0},
		{"types.yaml", "to: ashigaru1\ntitle: [a, b]\nbody: x\n", `"title" must be a string, got a list`, 2, 8},
		{"unknown-key.yaml", "to: ashigaru1\ntitle: t\nbody: b\ncolour: red\n", `unknown key "colour"`, 4, 1},
		{"unknown-role.yaml", "title: t\nbody: b\nto: ashigaru9\n", `unknown role "ashigaru9" in to`, 3, 1},
		{"disabled-role.yaml", "to: spare\ntitle: t\nbody: b\n", `role "spare" in to is disabled`, 1, 1},
		{"no-title.yaml", "to: ashigaru1\nbody: b\n", `missing "title"`, 0, 0},
		{"huge.yaml", "to: ashigaru1\ntitle: t\nbody: " + strings.Repeat("x", 2<<20) + "\n", "over the 1048576-byte limit", 0, 0},
		{"bomb.yaml", bomb, "alias", 0, 0},
		// A semantic error, found after decoding, still names its key's place.
		{"no-parent.yaml", "to: ashigaru1\ntitle: t\nbody: b\nparent: t-20261122-0001\n", `parent "t-20261122-0001" is not a task of this workspace`, 4, 1},
		{"no-parent-in-list.yaml", "commands:\n  - to: ashigaru1\n    title: t\n    body: b\n  - to: ashigaru1\n    title: u\n    body: c\n    parent: t-20261122-0001\n",
			`commands[1]: parent "t-20261122-0001" is not a task of this workspace`, 8, 5},
	}
	for _, c := range cases {
		r.drop(t, c.name, c.content)
	}
	// A report for a task that does not exist.
	reports := filepath.Join(ws, "runtime", "queue", "reports")
	write(t, filepath.Join(reports, ".ghost.tmp"), "task_id: t-19990101-0001\nstatus: done\nsummary: ghost\n")
	if err := os.Rename(filepath.Join(reports, ".ghost.tmp"), filepath.Join(reports, "ghost.yaml")); err != nil {
		t.Fatal(err)
	}
	failed := filepath.Join(ws, "runtime", "queue", "failed")
	all := append(cases, badFile{"ghost.yaml", "", `report for unknown task "t-19990101-0001"`, 0, 0})
	for _, c := range all {
		waitFor(t, c.name+" in failed/", 15*time.Second, func() bool {
			_, err := os.Stat(filepath.Join(failed, c.name))
			return err == nil
		})
		rec, err := queue.ReadFailure(filepath.Join(failed, c.name+".error.yaml"))
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if !strings.Contains(rec.Error, c.want) {
			t.Errorf("%s: error %q, want it to contain %q", c.name, rec.Error, c.want)
		}
		if c.line > 0 && (rec.Line != c.line || rec.Column != c.col) {
			t.Errorf("%s: the record says line %d column %d, want %d:%d", c.name, rec.Line, rec.Column, c.line, c.col)
		}
	}
	// Still running: a good command and a duplicate of it.
	r.drop(t, "good.yaml", "id: cmd-good\nto: ashigaru1\ntitle: good\nbody: fine\n")
	r.waitTasks(t, "the good task done", 20*time.Second, func(ts []store.Task) bool {
		return len(ts) == 1 && ts[0].Status == store.StatusDone
	})
	r.drop(t, "again.yaml", "id: cmd-good\nto: ashigaru1\ntitle: good again\nbody: fine\n")
	waitFor(t, "the duplicate archived", 10*time.Second, func() bool {
		for _, name := range archivedNames(ws, "commands") {
			if strings.HasSuffix(name, "-again.yaml") {
				return true
			}
		}
		return false
	})
	time.Sleep(300 * time.Millisecond)
	if ts, _ := r.team.Store().Tasks(store.TaskFilter{}); len(ts) != 1 {
		t.Errorf("a duplicate id made another task: %d tasks", len(ts))
	}
}

// A file written in place, slowly, in three parts is accepted once whole.
func TestSlowInPlaceWriterIsAccepted(t *testing.T) {
	dir := t.TempDir()
	ws := testWorkspace(t, sim("ashigaru1", filepath.Join(dir, "a.jsonl"), "--work-time", "0s"))
	r := startTeam(t, ws)
	path := filepath.Join(ws, "runtime", "queue", "commands", "slow.yaml")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	parts := []string{"id: cmd-slow\nto: ashi", "garu1\ntitle: written slowly\nbo", "dy: |\n  all three parts\n  arrived\n"}
	for i, p := range parts {
		if _, err := f.WriteString(p); err != nil {
			t.Fatal(err)
		}
		if i < len(parts)-1 {
			time.Sleep(150 * time.Millisecond)
		}
	}
	f.Close()
	tasks := r.waitTasks(t, "the slow command's task", 20*time.Second, func(ts []store.Task) bool { return len(ts) == 1 })
	if tasks[0].Body != "all three parts\narrived\n" || tasks[0].CommandID != "cmd-slow" {
		t.Errorf("task = %+v", tasks[0])
	}
	if entries, _ := os.ReadDir(filepath.Join(ws, "runtime", "queue", "failed")); len(entries) != 0 {
		t.Errorf("failed/ is not empty: %v", entries)
	}
}

// An agent that ignores its nudge leaves the task undelivered, visibly.
func TestIgnoredNudgeIsUndelivered(t *testing.T) {
	dir := t.TempDir()
	ws := testWorkspace(t, strings.Replace(sim("deaf", filepath.Join(dir, "d.jsonl"), "--ignore-input"), "  - id: deaf\n", "  - id: deaf\n    startup_prompt: \"\"\n", 1))
	r := startTeam(t, ws)
	r.drop(t, "c.yaml", "id: cmd-deaf\nto: deaf\ntitle: unheard\nbody: nobody listens\n")
	tasks := r.waitTasks(t, "the task undelivered", 30*time.Second, func(ts []store.Task) bool {
		return len(ts) == 1 && ts[0].Status == store.StatusUndelivered
	})
	if tasks[0].Submits != 5 {
		t.Errorf("submits = %d, want 1 + 4 retries after growing pauses", tasks[0].Submits)
	}
	waitFor(t, "the dashboard to flag it", 5*time.Second, func() bool {
		d, _ := os.ReadFile(filepath.Join(ws, "runtime", "dashboard.md"))
		return strings.Contains(string(d), "task "+tasks[0].ID+" for deaf is undelivered")
	})
}

// When the agent crashes with a task in flight, the restarted program gets
// the same task again, with the attempt counted.
func TestTaskInFlightIsDeliveredAgainAfterACrash(t *testing.T) {
	dir := t.TempDir()
	rec := filepath.Join(dir, "f.jsonl")
	ws := testWorkspace(t, sim("flaky", rec, "--work-time", "30s", "--crash-after", "2500ms"))
	r := startTeam(t, ws)
	r.drop(t, "c.yaml", "id: cmd-flaky\nto: flaky\ntitle: survive a crash\nbody: keep going\n")
	tasks := r.waitTasks(t, "a second attempt", 40*time.Second, func(ts []store.Task) bool {
		return len(ts) == 1 && ts[0].Attempts >= 2
	})
	waitFor(t, "the agent to work on it twice", 20*time.Second, func() bool {
		n := 0
		for _, rc := range records(t, rec) {
			if rc.Kind == "task" && rc.TaskID == tasks[0].ID {
				n++
			}
		}
		return n >= 2
	})
	events, err := r.team.Store().Events(0)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range events {
		if e.Kind == "redeliver" && e.TaskID == tasks[0].ID {
			return
		}
	}
	t.Errorf("no redeliver event for %s", tasks[0].ID)
}

// A file renamed into the folder is whole when it appears, so it does not
// wait the settle time, however long that is; one written in place does.
func TestRenamedFileIsTakenAtOnce(t *testing.T) {
	dir := t.TempDir()
	ws := testWorkspace(t, sim("ashigaru1", filepath.Join(dir, "a.jsonl"), "--work-time", "0s"))
	write(t, filepath.Join(ws, "config", "settings.yaml"), "queue:\n  settle: 30s\n")
	r := startTeam(t, ws)
	// Once a role is ready the queue runs and watches its folders.
	role, _ := r.team.Supervisor().Role("ashigaru1")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := role.WaitState(ctx, supervisor.Ready); err != nil {
		t.Fatalf("ashigaru1 never ready: %v", err)
	}
	began := time.Now()
	r.drop(t, "renamed.yaml", "id: cmd-renamed\nto: ashigaru1\ntitle: renamed in\nbody: b\n")
	r.waitTasks(t, "the renamed command's task", 20*time.Second, func(ts []store.Task) bool { return len(ts) == 1 })
	if took := time.Since(began); took >= 30*time.Second {
		t.Errorf("the renamed file waited the settle time: %v", took)
	}
	f, err := os.Create(filepath.Join(ws, "runtime", "queue", "commands", "in-place.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("id: cmd-in-place\nto: ashigaru1\ntitle: written in place\nbody: b\n")
	f.Close()
	time.Sleep(2 * time.Second)
	if ts, _ := r.team.Store().Tasks(store.TaskFilter{}); len(ts) != 1 {
		t.Errorf("a file written in place was taken before its settle time: %d tasks", len(ts))
	}
}
