//go:build !windows

package agentsim

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// schemaCommand is a command as section 5 of DESIGN.md defines it, every
// field, so that decoding with KnownFields rejects anything else the agent
// might write.
type schemaCommand struct {
	ID       string   `yaml:"id"`
	To       string   `yaml:"to"`
	From     string   `yaml:"from"`
	Title    string   `yaml:"title"`
	Body     string   `yaml:"body"`
	Tags     []string `yaml:"tags"`
	Priority string   `yaml:"priority"`
}

// readCommands decodes every file in dir strictly, by name, and fails on any
// file that is not a finished command: a temporary file left behind, or one
// the supervisor would pick up half written.
func readCommands(t *testing.T, dir string) map[string]schemaCommand {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	cmds := make(map[string]schemaCommand)
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".yaml") || strings.HasPrefix(e.Name(), ".") {
			t.Errorf("%s left in the commands folder", e.Name())
			continue
		}
		f, err := os.Open(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewDecoder(f)
		dec.KnownFields(true)
		var c schemaCommand
		err = dec.Decode(&c)
		f.Close()
		if err != nil {
			t.Fatalf("command %s is not valid: %v", e.Name(), err)
		}
		cmds[e.Name()] = c
	}
	return cmds
}

// notify types a notification as the supervisor's notify template makes it,
// and waits until the agent has heard it.
func (a *ptyAgent) notify(role, title string) {
	a.t.Helper()
	m := a.mark()
	a.typeLine(fmt.Sprintf("Report from %s on '%s': read r/%s.yaml", role, title, role))
	a.waitFor("Understood: Report from "+role, m)
}

// noFile fails the test if path exists.
func noFile(t *testing.T, path, why string) {
	t.Helper()
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("%s: %s exists (%v)", why, path, err)
	}
}

func TestDelegateHandsDownAndWaits(t *testing.T) {
	t.Parallel()
	roles := []string{"ashigaru1", "ashigaru2", "ashigaru3"}
	// The workspace is not the working directory, to see the commands go to
	// $SHOGUN_WORKSPACE; the agent's own role comes from $SHOGUN_ROLE.
	ws := t.TempDir()
	a := startAgent(t, Options{WorkTime: 100 * time.Millisecond, Delegate: roles}, "SHOGUN_WORKSPACE="+ws, "SHOGUN_ROLE=karo")
	cmdDir := filepath.Join(ws, "runtime", "queue", "commands")
	reportPath := filepath.Join(a.dir, "runtime", "queue", "reports", "karo.yaml")
	writeFile(t, filepath.Join(a.dir, "tasks", "karo.yaml"), `task_id: t-7
command_id: cmd-042
role: karo
from: shogun
title: Build the keep
body: |
  Stone walls,
  a gate.
tags: [castle, stone]
assigned_at: 2026-11-22T10:15:00Z
report_to: runtime/queue/reports/karo.yaml
`)
	a.waitPrompt()
	m := a.mark()
	a.typeLine("read tasks/karo.yaml")
	a.waitFor("Working… (esc to interrupt)", m)
	for i, r := range roles {
		a.waitFor(fmt.Sprintf("→ Handed \"Build the keep (part %d of 3)\" to %s", i+1, r), m)
	}
	waiting := a.waitFor("◦ Waiting for reports on t-7 from ashigaru1, ashigaru2, ashigaru3", m)
	idle := a.waitFor("? for shortcuts · waiting for 3 reports", waiting)
	if pane := a.output()[waiting:idle]; strings.Contains(pane, "esc to interrupt") {
		t.Errorf("busy indicator drawn while waiting for reports: %q", pane)
	}

	cmds := readCommands(t, cmdDir)
	if len(cmds) != len(roles) {
		t.Fatalf("%d commands written, want %d: %+v", len(cmds), len(roles), cmds)
	}
	for i, r := range roles {
		name := fmt.Sprintf("karo-t-7-%d.yaml", i+1)
		want := schemaCommand{
			ID:    "t-7-" + r,
			To:    r,
			From:  "karo",
			Title: fmt.Sprintf("Build the keep (part %d of 3)", i+1),
			Body:  fmt.Sprintf("Stone walls,\na gate.\nPart %d of 3, handed down by karo.\n", i+1),
			Tags:  []string{"castle", "stone"},
		}
		if got, ok := cmds[name]; !ok || !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %+v (present %v), want %+v", name, got, ok, want)
		}
	}
	noFile(t, filepath.Join(a.dir, "runtime", "queue", "commands"), "commands went to the working directory, not the workspace")

	// The supervisor types one notification per part, in any order; repeats
	// and lines about other work change nothing.
	a.notify("ashigaru3", "Build the keep (part 3 of 3)")
	a.notify("ashigaru3", "Build the keep (part 3 of 3)")
	a.notify("ashigaru10", "Something else")
	m = a.mark()
	a.typeLine("How is it going?")
	a.waitFor("? for shortcuts · waiting for 2 reports", a.waitFor("Understood: How is it going?", m))
	a.notify("ashigaru1", "Build the keep (part 1 of 3)")
	a.waitFor("waiting for 1 report", m)
	noFile(t, reportPath, "reported with a part still out")

	m = a.mark()
	a.notify("ashigaru2", "Build the keep (part 2 of 3)")
	a.waitFor("✓ Reported t-7 (done)", m)
	r := readReport(t, reportPath)
	if r.TaskID != "t-7" || r.Status != "done" || r.Summary != "Done: Build the keep (3 parts)" {
		t.Errorf("report %+v, want t-7 done with summary %q", r, "Done: Build the keep (3 parts)")
	}
	for _, role := range roles {
		if !strings.Contains(r.Details, role) {
			t.Errorf("details %q do not name %s", r.Details, role)
		}
	}
	heard := strings.Count(a.output(), "✓ ashigaru3 reported")
	if heard != 1 {
		t.Errorf("the repeated notification from ashigaru3 was taken %d times", heard)
	}

	// The supervisor has taken the commands; the same task delivered again
	// is not handed down again, and with all parts in it is reported at once.
	if err := os.RemoveAll(cmdDir); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(reportPath); err != nil {
		t.Fatal(err)
	}
	m = a.mark()
	a.typeLine("read tasks/karo.yaml")
	a.waitFor("→ Already handed \"Build the keep (part 3 of 3)\" to ashigaru3", m)
	a.waitFor("✓ Reported t-7 (done)", m)
	if cmds := readCommands(t, cmdDir); len(cmds) != 0 {
		t.Errorf("redelivery wrote commands again: %+v", cmds)
	}
	readReport(t, reportPath)

	var tasks, reports []recordEntry
	for _, e := range withoutTimes(a.records()) {
		switch e.Kind {
		case recordTask:
			tasks = append(tasks, e)
		case recordReport:
			reports = append(reports, e)
		}
	}
	wantTask := recordEntry{Kind: recordTask, TaskID: "t-7", Line: "Build the keep"}
	wantReport := recordEntry{Kind: recordReport, TaskID: "t-7", Line: reportPath}
	if !reflect.DeepEqual(tasks, []recordEntry{wantTask, wantTask}) {
		t.Errorf("task records %+v, want two of %+v", tasks, wantTask)
	}
	if !reflect.DeepEqual(reports, []recordEntry{wantReport, wantReport}) {
		t.Errorf("report records %+v, want two of %+v", reports, wantReport)
	}
}

func TestDelegateKeepsEachTaskWaiting(t *testing.T) {
	t.Parallel()
	a := startAgent(t, Options{Delegate: []string{"ashigaru1", "ashigaru2"}, Role: "karo"})
	cmdDir := filepath.Join(a.dir, "runtime", "queue", "commands")
	writeFile(t, filepath.Join(a.dir, "a.yaml"), "task_id: t-a\ntitle: Walls\nbody: Build walls\nreport_to: ra.yaml\n")
	writeFile(t, filepath.Join(a.dir, "b.yaml"), "task_id: t-b\ntitle: Moat\nbody: Dig a moat\nreport_to: rb.yaml\n")
	a.waitPrompt()
	m := a.mark()
	a.typeLine("read a.yaml")
	a.waitFor("◦ Waiting for reports on t-a", m)

	// A new task while the first waits: it is handed down too, at once.
	m = a.mark()
	a.typeLine("read b.yaml")
	a.waitFor("◦ Waiting for reports on t-b", m)
	a.waitFor("waiting for 4 reports", m)
	names := slices.Sorted(maps.Keys(readCommands(t, cmdDir)))
	if want := []string{"karo-t-a-1.yaml", "karo-t-a-2.yaml", "karo-t-b-1.yaml", "karo-t-b-2.yaml"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("commands %q, want %q", names, want)
	}

	// The first task delivered again while it waits: nothing is written and
	// its wait goes on where it was.
	if err := os.RemoveAll(cmdDir); err != nil {
		t.Fatal(err)
	}
	m = a.mark()
	a.typeLine("read a.yaml")
	a.waitFor("◦ Waiting for reports on t-a from ashigaru1, ashigaru2", m)
	if cmds := readCommands(t, cmdDir); len(cmds) != 0 {
		t.Errorf("redelivery wrote commands again: %+v", cmds)
	}

	// Notifications naming the second task's parts go to it, though the
	// first waits for the same roles and is older.
	m = a.mark()
	a.notify("ashigaru2", "Moat (part 2 of 2)")
	a.notify("ashigaru1", "Moat (part 1 of 2)")
	a.waitFor("✓ Reported t-b (done)", m)
	noFile(t, filepath.Join(a.dir, "ra.yaml"), "the first task reported with its parts out")
	if r := readReport(t, filepath.Join(a.dir, "rb.yaml")); r.Summary != "Done: Moat (2 parts)" {
		t.Errorf("second task's report %+v", r)
	}

	// A notification that names only the role goes to the oldest task
	// waiting for it.
	m = a.mark()
	a.typeLine("Report from ashigaru1")
	a.waitFor("✓ ashigaru1 reported \"Walls (part 1 of 2)\"", m)
	a.notify("ashigaru2", "Walls (part 2 of 2)")
	a.waitFor("✓ Reported t-a (done)", m)
	readReport(t, filepath.Join(a.dir, "ra.yaml"))

	var tasks []string
	for _, e := range a.records() {
		if e.Kind == recordTask {
			tasks = append(tasks, e.TaskID)
		}
	}
	if want := []string{"t-a", "t-b", "t-a"}; !reflect.DeepEqual(tasks, want) {
		t.Errorf("tasks recorded as started: %q, want %q", tasks, want)
	}
}

func TestDelegateNeedsOwnRole(t *testing.T) {
	t.Parallel()
	a := startAgent(t, Options{Delegate: []string{"ashigaru1"}}, "SHOGUN_ROLE=")
	if code := a.waitExit(); code == 0 {
		t.Errorf("a delegating agent without a role exited with 0")
	}
	a.waitFor("delegating needs the agent's own role", 0)
}
