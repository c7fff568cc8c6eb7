package mcpserver

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/shogun-dev/shogun/config"
	"github.com/shogun-dev/shogun/queue"
	"github.com/shogun-dev/shogun/store"
	"github.com/shogun-dev/shogun/workspace"
)

var day = time.Date(2026, 11, 22, 10, 15, 0, 0, time.UTC)

// team is a workspace from `shogun init` with a history as a supervisor
// leaves it: roles synced, a run started, and the tasks the test makes.
type team struct {
	ws  string
	cfg *config.Config
	st  *store.Store
	run store.Run
}

func newTeam(t *testing.T) *team {
	t.Helper()
	ws := t.TempDir()
	if _, err := config.Scaffold(ws, config.ScaffoldOptions{Demo: true}); err != nil {
		t.Fatal(err)
	}
	roles := "roles:\n"
	for _, id := range []string{"karo", "ashigaru1", "ashigaru2"} {
		roles += "  - {id: " + id + ", prompt_path: roles/ashigaru.md, command: {exec: /bin/true}}\n"
	}
	roles += "  - {id: ronin, prompt_path: roles/ashigaru.md, enabled: false, command: {exec: /bin/true}}\n"
	if err := os.WriteFile(filepath.Join(ws, "config", "roles.yaml"), []byte(roles), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(ws, func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(cfg.Settings.Data.SQLitePath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	var infos []store.RoleInfo
	for _, r := range cfg.Roles {
		infos = append(infos, store.RoleInfo{ID: r.ID, Name: r.Name, PromptPath: r.PromptPath, Enabled: r.Enabled})
	}
	if err := st.SyncRoles(infos, day); err != nil {
		t.Fatal(err)
	}
	run, err := st.StartRun(os.Getpid(), ws, day)
	if err != nil {
		t.Fatal(err)
	}
	return &team{ws: ws, cfg: cfg, st: st, run: run}
}

// task queues a task from karo for role and, when handOut, hands it out as
// the dispatcher would.
func (tm *team) task(t *testing.T, id, role string, handOut bool) store.Task {
	t.Helper()
	res, err := tm.st.AcceptCommands([]store.CommandRecord{{
		ID: id, ClaimName: id + ".yaml", File: id + ".yaml", To: role, From: "karo",
		Title: "Title of " + id, Body: "Body of " + id, RunID: tm.run.ID, ReceivedAt: day,
	}})
	if err != nil {
		t.Fatal(err)
	}
	task := res[0].Task
	if handOut {
		if task, err = tm.st.Assign(task.ID, day); err != nil {
			t.Fatal(err)
		}
		if task, err = tm.st.MarkDelivery(task.ID, true, 1, day); err != nil {
			t.Fatal(err)
		}
	}
	return task
}

// connect is role's agent's CLI connected to the server over an in-memory
// pipe.
func (tm *team) connect(t *testing.T, role string) *mcp.ClientSession {
	t.Helper()
	srv, err := New(Options{Config: tm.cfg, Role: role, Version: "test", Now: func() time.Time { return day }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-cli", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Wait() })
	return cs
}

// call calls a tool and returns its result; a protocol error fails the test.
func call(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error %v", tool, err)
	}
	return res
}

// text is a result's text content.
func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// output decodes a successful result's structured content.
func output[T any](t *testing.T, res *mcp.CallToolResult) T {
	t.Helper()
	var v T
	if res.IsError {
		t.Fatalf("tool error: %s", text(res))
	}
	b, err := json.Marshal(res.StructuredContent)
	if err == nil {
		err = json.Unmarshal(b, &v)
	}
	if err != nil {
		t.Fatalf("structured content %s: %v", b, err)
	}
	return v
}

// files lists the regular files under dir, relative, skipping nothing.
func files(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	return out
}

// Every tool is listed with a description for the model and an input
// schema of type object, the fields a caller must give marked required and
// the words the queue accepts as an enum.
func TestToolsListedWithSchemas(t *testing.T) {
	tm := newTeam(t)
	cs := tm.connect(t, "karo")
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*mcp.Tool{}
	for _, tool := range res.Tools {
		byName[tool.Name] = tool
	}
	want := []struct {
		name     string
		required []string
		enum     map[string][]string
	}{
		{ToolSendTask, []string{"to", "title", "body"}, map[string][]string{"priority": {"high", "normal", "low"}}},
		{ToolReport, []string{"status", "summary"}, map[string][]string{"status": {"done", "failed", "blocked"}}},
		{ToolMyTask, nil, nil},
		{ToolListTasks, nil, map[string][]string{"status": store.TaskStatuses}},
		{ToolTeamStatus, nil, nil},
	}
	if len(res.Tools) != len(want) {
		t.Errorf("%d tools listed, want %d", len(res.Tools), len(want))
	}
	for _, w := range want {
		tool := byName[w.name]
		if tool == nil {
			t.Errorf("tool %s not listed", w.name)
			continue
		}
		if len(tool.Description) < 100 {
			t.Errorf("%s: description too thin for a model to act on: %q", w.name, tool.Description)
		}
		var schema struct {
			Type       string                     `json:"type"`
			Required   []string                   `json:"required"`
			Properties map[string]json.RawMessage `json:"properties"`
		}
		b, _ := json.Marshal(tool.InputSchema)
		if err := json.Unmarshal(b, &schema); err != nil || schema.Type != "object" {
			t.Errorf("%s: input schema %s is not an object schema", w.name, b)
			continue
		}
		if !slices.Equal(schema.Required, w.required) {
			t.Errorf("%s: required %v, want %v", w.name, schema.Required, w.required)
		}
		for prop, values := range w.enum {
			var p struct {
				Enum        []string `json:"enum"`
				Description string   `json:"description"`
			}
			if err := json.Unmarshal(schema.Properties[prop], &p); err != nil || !slices.Equal(p.Enum, values) || p.Description == "" {
				t.Errorf("%s.%s: %s, want enum %v and a description", w.name, prop, schema.Properties[prop], values)
			}
		}
		for name, raw := range schema.Properties {
			if !strings.Contains(string(raw), `"description"`) {
				t.Errorf("%s.%s has no description: %s", w.name, name, raw)
			}
		}
	}
}

// A report the queue would refuse is an error result that says why, and
// nothing is written: no report file, nothing in failed/.
func TestReportRefusesBadCallsAndWritesNothing(t *testing.T) {
	tm := newTeam(t)
	mine := tm.task(t, "cmd-mine", "ashigaru1", true)
	theirs := tm.task(t, "cmd-theirs", "ashigaru2", true)
	queued := tm.task(t, "cmd-queued", "ashigaru1", false)
	cs := tm.connect(t, "ashigaru1")
	cases := []struct {
		name string
		args map[string]any
		want string
	}{
		{"bad status", map[string]any{"task_id": mine.ID, "status": "finished", "summary": "s"}, "status"},
		{"no summary", map[string]any{"task_id": mine.ID, "status": "done"}, "summary"},
		{"summary on two lines", map[string]any{"task_id": mine.ID, "status": "done", "summary": "one\ntwo"}, `"summary" must be one line`},
		{"escape in details", map[string]any{"task_id": mine.ID, "status": "done", "summary": "s", "details": "\x1b]0;x\a"}, `"details" must be text without control characters`},
		{"unknown key", map[string]any{"task_id": mine.ID, "status": "done", "summary": "s", "sumary": "x"}, "sumary"},
		{"another role's task", map[string]any{"task_id": theirs.ID, "status": "done", "summary": "s"}, "is ashigaru2's, not yours (ashigaru1)"},
		{"a task still queued", map[string]any{"task_id": queued.ID, "status": "done", "summary": "s"}, "is still queued for ashigaru1"},
		{"an unknown task", map[string]any{"task_id": "t-19990101-0001", "status": "done", "summary": "s"}, `there is no task "t-19990101-0001"`},
		{"a task id leaving the folder", map[string]any{"task_id": "../x", "status": "done", "summary": "s"}, `"task_id" must not contain a path separator`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := call(t, cs, ToolReport, c.args)
			if !res.IsError || !strings.Contains(text(res), c.want) {
				t.Fatalf("isError %v, %q; want an error result containing %q", res.IsError, text(res), c.want)
			}
			if got := files(t, filepath.Join(tm.ws, "runtime", "queue")); len(got) != 0 {
				t.Fatalf("a refused report left files: %v", got)
			}
		})
	}
	if got, _ := tm.st.Task(mine.ID); got.Status != store.StatusDelivered {
		t.Errorf("task %s is %s after refused reports, want delivered", mine.ID, got.Status)
	}

	// With nothing in flight, a report without task_id has nothing to close.
	idle := tm.connect(t, "karo")
	if res := call(t, idle, ToolReport, map[string]any{"status": "done", "summary": "s"}); !res.IsError || !strings.Contains(text(res), "no task in flight") {
		t.Errorf("report with nothing in flight: %v %q", res.IsError, text(res))
	}
}

// A good report is the role's report file, as the queue reads it; without
// a supervisor it waits there, and a second report does not replace it.
func TestReportWritesTheRolesReportFile(t *testing.T) {
	tm := newTeam(t)
	mine := tm.task(t, "cmd-mine", "ashigaru1", true)
	cs := tm.connect(t, "ashigaru1")
	res := call(t, cs, ToolReport, map[string]any{
		"status": "blocked", "summary": "Which database?", "details": "Postgres or SQLite?\nBoth work.\n",
		"files": []string{"db/schema.sql"}, "skill_candidate": map[string]any{"name": "pick-db", "description": "When a task needs a database"},
	})
	out := output[ReportOutput](t, res)
	path := workspace.New(tm.ws).ReportFile("ashigaru1")
	if out.TaskID != mine.ID || out.File != path || out.Status != "written" || !strings.Contains(out.Message, "no supervisor is running") {
		t.Errorf("report answered %+v", out)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := queue.DecodeReport("ashigaru1.yaml", data, queue.Limits{})
	if err != nil {
		t.Fatalf("the queue refuses the report written: %v\n%s", err, data)
	}
	want := queue.Report{TaskID: mine.ID, Status: "blocked", Summary: "Which database?", Details: "Postgres or SQLite?\nBoth work.\n",
		Files: []string{"db/schema.sql"}, SkillCandidate: &queue.SkillCandidate{Name: "pick-db", Description: "When a task needs a database"}}
	if rep.TaskID != want.TaskID || rep.Status != want.Status || rep.Details != want.Details || !slices.Equal(rep.Files, want.Files) || *rep.SkillCandidate != *want.SkillCandidate {
		t.Errorf("report file reads %+v, want %+v", rep, want)
	}
	res = call(t, cs, ToolReport, map[string]any{"task_id": mine.ID, "status": "done", "summary": "again"})
	if !res.IsError || !strings.Contains(text(res), "already waiting") {
		t.Errorf("second report while the first waits: %v %q", res.IsError, text(res))
	}
	if again, _ := os.ReadFile(path); string(again) != string(data) {
		t.Error("the waiting report was replaced")
	}
}

// send_task writes the command `shogun send` would, from the caller; one
// the queue would refuse is an error and no file.
func TestSendTask(t *testing.T) {
	tm := newTeam(t)
	cs := tm.connect(t, "karo")
	res := call(t, cs, ToolSendTask, map[string]any{"to": "ashigaru1", "title": "Add the login form", "body": "Create src/login.tsx.\n", "priority": "high", "tags": []string{"frontend"}})
	out := output[SendTaskOutput](t, res)
	if out.Status != "written" || filepath.Dir(out.File) != workspace.New(tm.ws).Commands() {
		t.Errorf("send_task answered %+v", out)
	}
	data, err := os.ReadFile(out.File)
	if err != nil {
		t.Fatal(err)
	}
	cmds, err := queue.DecodeCommands(filepath.Base(out.File), data, queue.Limits{})
	if err != nil || len(cmds) != 1 {
		t.Fatalf("the queue reads %+v, %v from\n%s", cmds, err, data)
	}
	if c := cmds[0]; c.ID != out.CommandID || c.To != "ashigaru1" || c.From != "karo" || c.Priority != "high" || c.Body != "Create src/login.tsx.\n" || !slices.Equal(c.Tags, []string{"frontend"}) {
		t.Errorf("command written: %+v", c)
	}

	bad := []struct {
		name string
		args map[string]any
		want string
	}{
		{"unknown role", map[string]any{"to": "nobody", "title": "t", "body": "b"}, `unknown role "nobody" in to (roles: karo, ashigaru1, ashigaru2)`},
		{"disabled role", map[string]any{"to": "ronin", "title": "t", "body": "b"}, `role "ronin" in to is disabled`},
		{"title on two lines", map[string]any{"to": "ashigaru1", "title": "a\nb", "body": "b"}, `"title" must be one line`},
		{"empty body", map[string]any{"to": "ashigaru1", "title": "t", "body": ""}, `"body"`},
		{"bad priority", map[string]any{"to": "ashigaru1", "title": "t", "body": "b", "priority": "urgent"}, "priority"},
		{"no body", map[string]any{"to": "ashigaru1", "title": "t"}, "body"},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			res := call(t, cs, ToolSendTask, c.args)
			if !res.IsError || !strings.Contains(text(res), c.want) {
				t.Fatalf("isError %v, %q; want an error result containing %q", res.IsError, text(res), c.want)
			}
			if got := files(t, workspace.New(tm.ws).Commands()); len(got) != 1 {
				t.Fatalf("a refused command left files: %v", got)
			}
		})
	}
}

// my_task shows the caller's task in flight and its queue; list_tasks
// filters the history.
func TestMyTaskAndListTasks(t *testing.T) {
	tm := newTeam(t)
	cs := tm.connect(t, "ashigaru1")
	out := output[MyTaskOutput](t, call(t, cs, ToolMyTask, nil))
	if out.Task != nil || out.Role != "ashigaru1" || !strings.Contains(out.Message, "no task") {
		t.Errorf("my_task without a task: %+v", out)
	}
	mine := tm.task(t, "cmd-mine", "ashigaru1", true)
	tm.task(t, "cmd-next", "ashigaru1", false)
	tm.task(t, "cmd-other", "ashigaru2", false)
	out = output[MyTaskOutput](t, call(t, cs, ToolMyTask, nil))
	if out.Task == nil || out.Task.ID != mine.ID || out.Task.Body != "Body of cmd-mine" || out.Task.From != "karo" || out.Queued != 1 ||
		out.TaskFile != workspace.New(tm.ws).TaskFile("ashigaru1") || out.ReportFile != workspace.New(tm.ws).ReportFile("ashigaru1") {
		t.Errorf("my_task: %+v (task %+v)", out, out.Task)
	}

	list := output[ListTasksOutput](t, call(t, cs, ToolListTasks, map[string]any{"role": "ashigaru1"}))
	if len(list.Tasks) != 2 || list.Tasks[0].Title != "Title of cmd-next" || list.Tasks[0].Body != "" {
		t.Errorf("list_tasks role ashigaru1: %+v", list.Tasks)
	}
	list = output[ListTasksOutput](t, call(t, cs, ToolListTasks, map[string]any{"status": "queued", "bodies": true, "limit": 1}))
	if len(list.Tasks) != 1 || list.Tasks[0].Title != "Title of cmd-other" || list.Tasks[0].Body != "Body of cmd-other" {
		t.Errorf("list_tasks status queued, limit 1: %+v", list.Tasks)
	}
	for _, args := range []map[string]any{{"status": "finished"}, {"role": "nobody"}} {
		if res := call(t, cs, ToolListTasks, args); !res.IsError {
			t.Errorf("list_tasks %v: no error: %s", args, text(res))
		}
	}
}

// team_status without a supervisor is an error result that says so.
func TestTeamStatusWithoutSupervisor(t *testing.T) {
	tm := newTeam(t)
	res := call(t, tm.connect(t, "karo"), ToolTeamStatus, nil)
	if !res.IsError || !strings.Contains(text(res), "no supervisor is running") {
		t.Errorf("team_status: %v %q", res.IsError, text(res))
	}
}

// The caller's task file and the dashboard are resources; a task file an
// agent replaced with a link is not followed, and control characters show
// escaped.
func TestResources(t *testing.T) {
	tm := newTeam(t)
	cs := tm.connect(t, "ashigaru1")
	ctx := context.Background()
	list, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, r := range list.Resources {
		uris = append(uris, r.URI)
	}
	if want := []string{DashboardURI, TaskURI("ashigaru1")}; !slices.Equal(uris, want) {
		t.Errorf("resources %v, want %v", uris, want)
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: TaskURI("ashigaru1")}); err == nil {
		t.Error("reading a task file that does not exist gave no error")
	}
	layout := workspace.New(tm.ws)
	if err := os.WriteFile(layout.TaskFile("ashigaru1"), []byte("task_id: t-1\ntitle: \"a \\e[2J b\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(layout.Dashboard(), []byte("# shogun\n\x1b[31mred\x1b[0m\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for uri, want := range map[string]string{TaskURI("ashigaru1"): "task_id: t-1\n", DashboardURI: "# shogun\n\\x1b[31mred\\x1b[0m\n"} {
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil || len(res.Contents) != 1 || !strings.HasPrefix(res.Contents[0].Text, want) {
			t.Errorf("read %s: %+v, %v; want text starting %q", uri, res, err, want)
		}
	}
	secret := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(secret, []byte("secret"), 0o600)
	os.Remove(layout.TaskFile("ashigaru1"))
	if err := os.Symlink(secret, layout.TaskFile("ashigaru1")); err != nil {
		t.Skipf("no symbolic links: %v", err)
	}
	if res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: TaskURI("ashigaru1")}); err == nil {
		t.Errorf("a task file replaced by a link was read: %+v", res.Contents[0])
	}
}

// New speaks only for an enabled role of the configuration.
func TestNewRefusesRolesWithoutAnAgent(t *testing.T) {
	tm := newTeam(t)
	for role, want := range map[string]string{
		"":       "no role given",
		"nobody": `role "nobody" is not in config/roles.yaml (roles: karo, ashigaru1, ashigaru2)`,
		"ronin":  `role "ronin" is disabled`,
	} {
		if _, err := New(Options{Config: tm.cfg, Role: role}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("New(%q) = %v, want %q", role, err, want)
		}
	}
}
