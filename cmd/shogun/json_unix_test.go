//go:build !windows

package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/control"
	"github.com/shogun-dev/shogun/shoguntest"
	"github.com/shogun-dev/shogun/skills"
	"github.com/shogun-dev/shogun/store"
)

// jsonOutput runs a command that prints JSON and returns what it printed.
func jsonOutput(t *testing.T, args ...string) []byte {
	t.Helper()
	out, errOut, code := shogun(t, args...)
	if code != 0 {
		t.Fatalf("shogun %s: exit %d\n%s", strings.Join(args, " "), code, errOut)
	}
	return []byte(out)
}

// `shogun tasks --json` prints the documented snake_case keys, RFC 3339
// times, and no key for a time that has not happened. (It used to print Go
// field names, "ID" and "Status", and 0001-01-01T00:00:00Z.)
func TestTasksJSONMatchesTheDocs(t *testing.T) {
	ws, db := skillsWorkspace(t)
	if out := strings.TrimSpace(string(jsonOutput(t, "tasks", "--workspace", ws, "--json", "--role", "nobody"))); out != "[]" {
		t.Errorf("tasks --json with no task = %s, want []", out)
	}
	// One task left queued, with neither tags nor a sender.
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	run, err := st.StartRun(2, ws, time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC))
	if err == nil {
		_, err = st.AcceptCommands([]store.CommandRecord{{ID: "waiting", ClaimName: "w.yaml", File: "w.yaml", To: "karo",
			Title: "Wait", Body: "Not yet", RunID: run.ID, ReceivedAt: time.Date(2026, 11, 23, 9, 1, 0, 0, time.UTC)}})
	}
	if err := errors.Join(err, st.Close()); err != nil {
		t.Fatal(err)
	}

	out := jsonOutput(t, "tasks", "--workspace", ws, "--json", "--limit", "0")
	shoguntest.CheckOutput(t, shoguntest.ReadDocShape(t, "json.md", docTasks), []control.Task{}, out)
	var tasks []map[string]any
	if err := json.Unmarshal(out, &tasks); err != nil {
		t.Fatal(err)
	}
	if len(tasks) != 8 {
		t.Fatalf("tasks --json listed %d tasks, want 8:\n%s", len(tasks), out)
	}
	queued, done := tasks[0], tasks[len(tasks)-1] // newest first
	if queued["status"] != store.StatusQueued || done["status"] != store.StatusDone {
		t.Fatalf("first and last task: %v, %v", queued["status"], done["status"])
	}
	for _, k := range []string{"assigned_at", "delivered_at", "finished_at", "from", "summary", "report_path"} {
		if _, there := queued[k]; there {
			t.Errorf("the queued task has %s = %v; an unset value is left out", k, queued[k])
		}
	}
	if tags, ok := queued["tags"].([]any); !ok || len(tags) != 0 {
		t.Errorf("the queued task's tags = %#v, want []", queued["tags"])
	}
	if done["finished_at"] != "2026-11-22T09:01:01Z" || done["created_at"] != "2026-11-22T09:01:00Z" || done["summary"] != "Raised the timeout" {
		t.Errorf("the first task: %v", done)
	}
}

// `shogun skills scan --json` prints the documented keys.
func TestSkillsScanJSONMatchesTheDocs(t *testing.T) {
	ws, _ := skillsWorkspace(t)
	out := jsonOutput(t, "skills", "scan", "--workspace", ws, "--json")
	shoguntest.CheckOutput(t, shoguntest.ReadDocShape(t, "json.md", docSkillsScan), skills.ScanResult{}, out)
	if !strings.Contains(string(out), `"name": "fix-flaky-test"`) {
		t.Errorf("scan --json does not list fix-flaky-test:\n%s", out)
	}
	// Nothing recurs above this threshold: candidates is [], not null.
	empty := jsonOutput(t, "skills", "scan", "--workspace", ws, "--json", "--threshold", "99")
	shoguntest.CheckOutput(t, shoguntest.ReadDocShape(t, "json.md", docSkillsScan), skills.ScanResult{}, empty)
}

// `shogun skills list --json` prints the documented keys.
func TestSkillsListJSONMatchesTheDocs(t *testing.T) {
	ws, _ := skillsWorkspace(t)
	if out := strings.TrimSpace(string(jsonOutput(t, "skills", "list", "--workspace", ws, "--json"))); out != "[]" {
		t.Errorf("list --json before any scan = %s, want []", out)
	}
	shogun(t, "skills", "scan", "--workspace", ws)
	out := jsonOutput(t, "skills", "list", "--workspace", ws, "--json")
	shoguntest.CheckOutput(t, shoguntest.ReadDocShape(t, "json.md", docSkillsList), []skills.ListEntry{}, out)
	var list []skills.ListEntry
	if err := json.Unmarshal(out, &list); err != nil || len(list) < 3 {
		t.Fatalf("list --json: %v, %d candidates\n%s", err, len(list), out)
	}
}

// `shogun skills export --json` prints the documented keys, with nothing
// to export and with files written.
func TestSkillsExportJSONMatchesTheDocs(t *testing.T) {
	ws, _ := skillsWorkspace(t)
	shogun(t, "skills", "scan", "--workspace", ws)
	sh := shoguntest.ReadDocShape(t, "json.md", docSkillExport)
	shoguntest.CheckOutput(t, sh, skills.ExportResult{}, jsonOutput(t, "skills", "export", "--workspace", ws, "--json"))
	shogun(t, "skills", "review", "--workspace", ws, "--approve", "plan-sprint")
	out := jsonOutput(t, "skills", "export", "--workspace", ws, "--json")
	shoguntest.CheckOutput(t, sh, skills.ExportResult{}, out)
	var res skills.ExportResult
	if err := json.Unmarshal(out, &res); err != nil || len(res.Files) != 2 || !res.Files[0].Written {
		t.Errorf("export --json: %v\n%s", err, out)
	}
}

// `shogun status --json` and `shogun screen --json` print the API's
// documented shapes, with lists that are [] rather than null.
func TestStatusAndScreenJSONMatchTheDocs(t *testing.T) {
	ws := teamWorkspace(t, simEntry("ashigaru1"))
	startBackground(t, ws)
	waitStatus(t, ws, "ready", func(s control.StatusReply) bool { return stateOf(s, "ashigaru1") == "ready" })

	out := jsonOutput(t, "status", "--json", "-w", ws)
	shoguntest.CheckOutput(t, shoguntest.ReadDocShape(t, "api.md", docStatus), control.StatusReply{}, out)
	if !strings.Contains(string(out), `"attention": []`) || !strings.Contains(string(out), `"tasks": {}`) {
		t.Errorf("status --json with nothing to say: want \"attention\": [] and \"tasks\": {}\n%s", out)
	}
	out = jsonOutput(t, "screen", "ashigaru1", "--json", "-w", ws)
	shoguntest.CheckOutput(t, shoguntest.ReadDocShape(t, "api.md", docScreen), control.ScreenReply{}, out)

	// The type endpoint's answers, straight from the socket: typed without
	// submit (200), refused text (400), an unknown role (404).
	answer := shoguntest.ReadDocShape(t, "api.md", "### The answer — `TypeReply`")
	errShape := shoguntest.ReadDocShape(t, "api.md", "## Errors — `ErrorReply`")
	code, body := apiCall(t, ws, "POST", "/v1/roles/ashigaru1/type", `{"text": "draft", "submit": false}`)
	if code != http.StatusOK || !strings.Contains(string(body), `"confirmed":true`) {
		t.Errorf("type without submit: %d %s", code, body)
	}
	shoguntest.CheckOutput(t, answer, control.TypeReply{}, body)
	code, body = apiCall(t, ws, "POST", "/v1/roles/ashigaru1/type", `{"text": "a\u001b[201~b", "submit": true}`)
	if code != http.StatusBadRequest {
		t.Errorf("type with an escape: %d %s, want 400", code, body)
	}
	shoguntest.CheckOutput(t, errShape, control.ErrorReply{}, body)
	code, body = apiCall(t, ws, "GET", "/v1/roles/nobody/screen", "")
	if code != http.StatusNotFound {
		t.Errorf("screen of an unknown role: %d %s, want 404", code, body)
	}
	shoguntest.CheckOutput(t, errShape, control.ErrorReply{}, body)
}

// apiCall sends one request to the workspace's control socket, as curl
// --unix-socket would, and returns the status and the body.
func apiCall(t *testing.T, ws, method, path, body string) (int, []byte) {
	t.Helper()
	sock := control.Endpoint(ws)
	c := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", sock)
		},
	}}
	req, err := http.NewRequest(method, "http://shogun"+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

// A task handed over to a fallback role shows it: the table names the role
// it came from, the task's page lists the move, and --json carries it in
// the documented keys.
func TestTasksShowAHandOver(t *testing.T) {
	ws, db := skillsWorkspace(t)
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	run, err := st.StartRun(2, ws, at)
	var res []store.Accepted
	if err == nil {
		res, err = st.AcceptCommands([]store.CommandRecord{{ID: "moved", ClaimName: "m.yaml", File: "m.yaml", To: "ashigaru1",
			Title: "Moved on", Body: "Do it", RunID: run.ID, ReceivedAt: at}})
	}
	if err == nil {
		_, err = st.HandOver(store.Handover{TaskID: res[0].Task.ID, From: "ashigaru1", To: "ashigaru2", RunID: run.ID, At: at.Add(time.Minute),
			Reason: "ashigaru1 is at its usage limit until 10:00:00 with no free account"})
	}
	if err := errors.Join(err, st.Close()); err != nil {
		t.Fatal(err)
	}
	id := res[0].Task.ID

	out := jsonOutput(t, "tasks", "--workspace", ws, "--json", "--role", "ashigaru2")
	shoguntest.CheckOutput(t, shoguntest.ReadDocShape(t, "json.md", docTasks), []control.Task{}, out)
	var tasks []control.Task
	if err := json.Unmarshal(out, &tasks); err != nil || len(tasks) == 0 || tasks[0].ID != id {
		t.Fatalf("tasks --json: %v, want %s first\n%s", err, id, out)
	}
	for _, other := range tasks[1:] {
		if other.HandedOver != nil {
			t.Errorf("task %s, never moved, has handed_over %+v", other.ID, other.HandedOver)
		}
	}
	if h := tasks[0].HandedOver; len(h) != 1 || h[0].From != "ashigaru1" || h[0].To != "ashigaru2" ||
		!strings.HasPrefix(h[0].Reason, "ashigaru1 is at its usage limit") || !h[0].At.Equal(at.Add(time.Minute)) {
		t.Errorf("handed_over = %+v", h)
	}
	if table, _, _ := shogun(t, "tasks", "--workspace", ws, "--role", "ashigaru2"); !strings.Contains(table, "ashigaru2 (from ashigaru1)") {
		t.Errorf("the table does not say where the task came from:\n%s", table)
	}
	if page, _, _ := shogun(t, "tasks", id, "--workspace", ws); !strings.Contains(page, "from ashigaru1 to ashigaru2: ashigaru1 is at its usage limit until 10:00:00 with no free account") {
		t.Errorf("the task's page does not list the hand-over:\n%s", page)
	}
}

// A task's page lists the account changes of its role while the task was
// its, as the queue records them: the move before it was typed
// (accounts_switch_at) and the move at a usage limit after which it was
// typed again. Before, the page left both out: they were only in the
// history's events.
func TestATasksPageListsItsAccountChanges(t *testing.T) {
	ws, db := skillsWorkspace(t)
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	run, err := st.StartRun(2, ws, at)
	var res []store.Accepted
	if err == nil {
		res, err = st.AcceptCommands([]store.CommandRecord{{ID: "long", ClaimName: "l.yaml", File: "l.yaml", To: "ashigaru1",
			Title: "Long job", Body: "Do it", RunID: run.ID, ReceivedAt: at}})
	}
	if err == nil {
		id := res[0].Task.ID
		err = st.AddEvents([]store.Event{
			{At: at.Add(time.Minute), RunID: run.ID, Role: "ashigaru1", Kind: "account", TaskID: id,
				Message: "account team/a has used 88% of its usage window (accounts_switch_at 85%): moving to account team/b before the next task"},
			{At: at.Add(2 * time.Minute), RunID: run.ID, Role: "ashigaru1", Kind: "delivered", TaskID: id, Message: "attempt 1"},
			{At: at.Add(9 * time.Minute), RunID: run.ID, Role: "ashigaru1", Kind: "redeliver", TaskID: id,
				Message: "attempt 2, after an account change (team/b → team/c)"},
		})
	}
	if err := errors.Join(err, st.Close()); err != nil {
		t.Fatal(err)
	}
	page, errOut, code := shogun(t, "tasks", res[0].Task.ID, "--workspace", ws)
	if code != 0 {
		t.Fatalf("tasks %s: exit %d: %s", res[0].Task.ID, code, errOut)
	}
	for _, want := range []string{"moving to account team/b before the next task", "attempt 2, after an account change (team/b → team/c)"} {
		if !strings.Contains(page, want) {
			t.Errorf("the task's page lacks %q:\n%s", want, page)
		}
	}
}
