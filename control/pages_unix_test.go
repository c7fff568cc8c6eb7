//go:build !windows

package control_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/shogun-dev/shogun/config"
	"github.com/shogun-dev/shogun/control"
	"github.com/shogun-dev/shogun/shoguntest"
	"github.com/shogun-dev/shogun/skills"
	"github.com/shogun-dev/shogun/team"
	"github.com/shogun-dev/shogun/workspace"
)

var shogunBin string

func TestMain(m *testing.M) { shoguntest.Main(m, &shogunBin) }

// running is a team run in this process with its control socket, and a
// client of that socket.
type running struct {
	ws   string
	team *team.Team
	http *http.Client
}

// simRole is a roles.yaml entry for a simulated agent.
func simRole(id string, args ...string) string {
	q := []string{`"agent-sim"`}
	for _, a := range args {
		q = append(q, fmt.Sprintf("%q", a))
	}
	return fmt.Sprintf(`  - id: %s
    prompt_path: roles/ashigaru.md
    command: {exec: "${SHOGUN_EXE}", args: [%s]}
    cli: generic
    ready_pattern: "› "
    busy_pattern: "esc to interrupt"
    submit_delay: 80ms
    stop: {keys: "/exit\r", timeout: 5s}
`, id, strings.Join(q, ", "))
}

// runTeam runs a workspace with the given roles.yaml entries, as `shogun
// start` would, and serves its control socket until the test ends.
func runTeam(t *testing.T, entries ...string) *running {
	t.Helper()
	ws := t.TempDir()
	if _, err := config.Scaffold(ws, config.ScaffoldOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, filepath.FromSlash(workspace.RolesFile)), []byte("roles:\n"+strings.Join(entries, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	lookup := func(k string) (string, bool) {
		if k == "SHOGUN_EXE" {
			return shogunBin, true
		}
		return os.LookupEnv(k)
	}
	cfg, err := config.Load(ws, lookup)
	if err != nil {
		t.Fatal(err)
	}
	log := zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.InfoLevel)
	tm, err := team.Open(team.Options{Config: cfg, Logger: log, Executable: shogunBin, Lookup: lookup})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := control.Listen(ws, tm, cancel, log)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); _ = tm.Run(ctx) }()
	go func() { defer wg.Done(); _ = srv.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		tm.Close()
	})
	sock := control.Endpoint(ws)
	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", sock)
	}}}
	t.Cleanup(client.CloseIdleConnections)
	return &running{ws: ws, team: tm, http: client}
}

// do sends a request to the control socket and returns the status and
// body.
func (r *running) do(t *testing.T, method, path string, body any) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, "http://shogun"+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := r.http.Do(req)
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

// get decodes the JSON answer of a GET that must succeed.
func (r *running) get(t *testing.T, path string, out any) {
	t.Helper()
	code, b := r.do(t, http.MethodGet, path, nil)
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, code, b)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("GET %s: %v\n%s", path, err, b)
	}
}

// refused checks that a request gets code and an error saying want.
func (r *running) refused(t *testing.T, method, path string, body any, code int, want string) {
	t.Helper()
	got, b := r.do(t, method, path, body)
	var e control.ErrorReply
	if got != code || json.Unmarshal(b, &e) != nil || !strings.Contains(e.Error, want) {
		t.Errorf("%s %s: %d %s, want %d saying %q", method, path, got, b, code, want)
	}
}

// waitTask polls GET /v1/tasks/{id} until cond holds.
func (r *running) waitTask(t *testing.T, id, what string, cond func(control.TaskDetailReply) bool) control.TaskDetailReply {
	t.Helper()
	var d control.TaskDetailReply
	shoguntest.WaitFor(t, what, 60*time.Second, func() bool {
		code, b := r.do(t, http.MethodGet, "/v1/tasks/"+id, nil)
		return code == http.StatusOK && json.Unmarshal(b, &d) == nil && cond(d)
	})
	return d
}

// send hands a task over POST /v1/send and returns the id of its task.
func (r *running) send(t *testing.T, req control.SendRequest) string {
	t.Helper()
	code, b := r.do(t, http.MethodPost, "/v1/send", req)
	var sent control.SendReply
	if code != http.StatusOK || json.Unmarshal(b, &sent) != nil || sent.ID == "" {
		t.Fatalf("POST /v1/send: %d %s", code, b)
	}
	var taskID string
	shoguntest.WaitFor(t, "the task of command "+sent.ID, 30*time.Second, func() bool {
		var tl control.TasksReply
		r.get(t, "/v1/tasks?role="+req.To, &tl)
		for _, tk := range tl.Tasks {
			if tk.CommandID == sent.ID {
				taskID = tk.ID
				return true
			}
		}
		return false
	})
	return taskID
}

// event is one server-sent event.
type event struct {
	kind string
	data string
}

// stream reads a server-sent event stream until the test ends.
type stream struct {
	mu     sync.Mutex
	events []event
	body   io.Closer
}

func (r *running) stream(t *testing.T, path string) *stream {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "http://shogun"+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := r.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("GET %s: %d %s %s", path, resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	s := &stream{body: resp.Body}
	t.Cleanup(func() { resp.Body.Close() })
	go func() {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		var cur event
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if cur.kind != "" {
					s.mu.Lock()
					s.events = append(s.events, cur)
					s.mu.Unlock()
				}
				cur = event{}
			case strings.HasPrefix(line, "event: "):
				cur.kind = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				cur.data += strings.TrimPrefix(line, "data: ")
			}
		}
	}()
	return s
}

// all returns the events of a kind received so far.
func (s *stream) all(kind string) []event {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []event
	for _, e := range s.events {
		if e.kind == kind {
			out = append(out, e)
		}
	}
	return out
}

// A task handed over POST /v1/send is written as `shogun send` writes
// it, delivered, and shows up with its task file, timeline, report and log;
// the event stream tells its status changes as they happen, and bad input
// is refused with the reason and writes nothing.
func TestSendAndFollowATask(t *testing.T) {
	r := runTeam(t, simRole("worker", "--work-time", "1500ms"), simRole("karo"))
	events := r.stream(t, "/v1/events/stream")
	// The status as it is comes first, with both roles.
	shoguntest.WaitFor(t, "a status event with both roles", 30*time.Second, func() bool {
		for _, e := range events.all("status") {
			var st control.StatusReply
			if json.Unmarshal([]byte(e.data), &st) == nil && len(st.Roles) == 2 {
				return true
			}
		}
		return false
	})

	// Refusals: the same checks and words as `shogun send`.
	cmds := workspace.New(r.ws).Commands()
	for _, c := range []struct {
		req  any
		code int
		want string
	}{
		{control.SendRequest{To: "nobody", Title: "t", Body: "b"}, http.StatusUnprocessableEntity, `send: unknown role "nobody" in to`},
		{control.SendRequest{To: "worker", From: "ghost", Title: "t", Body: "b"}, http.StatusUnprocessableEntity, `unknown role "ghost" in from`},
		{control.SendRequest{To: "worker", Title: "two\nlines", Body: "b"}, http.StatusUnprocessableEntity, "title"},
		{control.SendRequest{To: "worker", Title: "t"}, http.StatusUnprocessableEntity, "body"},
		{control.SendRequest{To: "worker", Title: "t", Body: "b", Priority: "urgent"}, http.StatusUnprocessableEntity, "priority"},
		{control.SendRequest{To: "worker", Title: "t", Body: "b", Tags: []string{"front end"}}, http.StatusUnprocessableEntity, `"tags[0]" must not contain spaces`},
		{map[string]any{"to": "worker", "title": "t", "body": "b", "color": "red"}, http.StatusBadRequest, "unknown field \"color\""},
	} {
		r.refused(t, http.MethodPost, "/v1/send", c.req, c.code, c.want)
	}
	if left, _ := filepath.Glob(filepath.Join(cmds, "*.yaml")); len(left) != 0 {
		t.Errorf("refused sends wrote %v", left)
	}

	first := r.send(t, control.SendRequest{To: "worker", From: "karo", Title: "Tidy the docs folder",
		Body: "Sort the files\r\nby topic, zebra-unique-word.", Priority: "high", Tags: []string{"docs"}})
	// The report's event is recorded just after the report closes the task.
	d := r.waitTask(t, first, "the first task done", func(d control.TaskDetailReply) bool {
		return d.Task.Status == "done" && slices.ContainsFunc(d.Events, func(e control.TaskEvent) bool { return e.Kind == "report" })
	})
	tk := d.Task
	if tk.From != "karo" || tk.Priority != "high" || len(tk.Tags) != 1 || tk.Tags[0] != "docs" || tk.Body != "Sort the files\nby topic, zebra-unique-word." {
		t.Errorf("task as sent = %+v", tk)
	}
	if d.Attempts != 1 || d.Submits < 1 {
		t.Errorf("attempts %d, submits %d", d.Attempts, d.Submits)
	}
	if !strings.Contains(d.TaskFile, "task_id: "+first) || !strings.Contains(d.TaskFile, "Tidy the docs folder") || d.TaskFilePath == "" {
		t.Errorf("task file %s:\n%s", d.TaskFilePath, d.TaskFile)
	}
	kinds := map[string]bool{}
	for _, e := range d.Events {
		kinds[e.Kind] = true
	}
	if !kinds["queued"] || !kinds["delivered"] || !kinds["report"] {
		t.Errorf("timeline %+v, want queued, delivered and report", d.Events)
	}
	if d.Report == nil || d.Report.Status != "done" || d.Report.Summary != "Done: Tidy the docs folder" ||
		!strings.Contains(d.Report.Details, "worked on") || d.Report.Files == nil || !strings.HasPrefix(d.Report.Path, "runtime/queue/archive/") {
		t.Errorf("report = %+v", d.Report)
	}

	// The stream told the task's status as it changed, up to done. Each
	// event is the task as it is then: a loaded machine may skip a status
	// that lasted a moment, never the last one.
	shoguntest.WaitFor(t, "task events up to done", 30*time.Second, func() bool {
		var statuses []string
		for _, e := range events.all("task") {
			var tk control.Task
			if json.Unmarshal([]byte(e.data), &tk) == nil && tk.ID == first {
				statuses = append(statuses, tk.Status)
			}
		}
		n := len(statuses)
		return n >= 2 && statuses[n-1] == "done" && statuses[0] != "done"
	})

	// The list filters, and the search finds the body's word.
	var tl control.TasksReply
	r.get(t, "/v1/tasks?q=zebra-unique-word", &tl)
	if len(tl.Tasks) != 1 || tl.Tasks[0].ID != first {
		t.Errorf("search = %+v", tl.Tasks)
	}
	r.get(t, "/v1/tasks?role=karo", &tl)
	if len(tl.Tasks) != 0 {
		t.Errorf("karo's tasks = %+v", tl.Tasks)
	}
	tomorrow := time.Now().AddDate(0, 0, 1).Format(time.DateOnly)
	r.get(t, "/v1/tasks?since="+tomorrow, &tl)
	if len(tl.Tasks) != 0 {
		t.Errorf("tasks since %s = %+v", tomorrow, tl.Tasks)
	}
	r.refused(t, http.MethodGet, "/v1/tasks?status=finished", nil, http.StatusBadRequest, "status \"finished\"")
	r.refused(t, http.MethodGet, "/v1/tasks?since=yesterday", nil, http.StatusBadRequest, "since")
	r.refused(t, http.MethodGet, "/v1/tasks/t-19990101-0001", nil, http.StatusNotFound, "unknown task")

	// A second task, well after the first: its log is its own.
	time.Sleep(4 * time.Second)
	second := r.send(t, control.SendRequest{To: "worker", Title: "Check the links", Body: "check them"})
	r.waitTask(t, second, "the second task done", func(d control.TaskDetailReply) bool { return d.Task.Status == "done" })
	// The task closes as its report is read; the agent's own "Reported"
	// line reaches the log a moment later.
	var code int
	var log string
	for end := time.Now().Add(5 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		var b []byte
		code, b = r.do(t, http.MethodGet, "/v1/tasks/"+second+"/log", nil)
		if log = string(b); strings.Contains(log, "Reported "+second) || time.Now().After(end) {
			break
		}
	}
	if code != http.StatusOK || !strings.Contains(log, "Task "+second) || !strings.Contains(log, "Reported "+second) ||
		strings.Contains(log, first) || strings.Contains(log, "\x1b") {
		t.Errorf("the second task's log (%d):\n%s", code, log)
	}
	if code, b := r.do(t, http.MethodGet, "/v1/tasks/"+second+"/log?strip=0", nil); code != http.StatusOK || !bytes.Contains(b, []byte("\x1b[")) {
		t.Errorf("raw task log (%d) has no escape sequences:\n%q", code, b)
	}

	// A reload is told, with no error: the files load.
	if code, b := r.do(t, http.MethodPost, "/v1/reload", nil); code != http.StatusOK {
		t.Fatalf("reload: %d %s", code, b)
	}
	shoguntest.WaitFor(t, "a config event", 30*time.Second, func() bool {
		for _, e := range events.all("config") {
			var ce control.ConfigEvent
			if json.Unmarshal([]byte(e.data), &ce) == nil && ce.Error == nil {
				return true
			}
		}
		return false
	})

	// The runs: this one, running.
	var runs control.RunsReply
	r.get(t, "/v1/runs", &runs)
	if len(runs.Runs) != 1 || !runs.Runs[0].Current || runs.Runs[0].Status != "running" || runs.Runs[0].ID != r.team.RunID() {
		t.Errorf("runs = %+v", runs.Runs)
	}
}

// A role's log as `shogun logs` prints it, raw or as text, for download,
// and followed live as events.
func TestRoleLog(t *testing.T) {
	r := runTeam(t, simRole("worker", "--work-time", "200ms"))
	shoguntest.WaitFor(t, "the worker's log", 30*time.Second, func() bool {
		code, b := r.do(t, http.MethodGet, "/v1/roles/worker/log", nil)
		return code == http.StatusOK && strings.Contains(string(b), "agent-sim")
	})
	code, b := r.do(t, http.MethodGet, "/v1/roles/worker/log?strip=0&tail=0", nil)
	if code != http.StatusOK || !bytes.Contains(b, []byte("\x1b[")) {
		t.Errorf("raw log (%d):\n%q", code, b)
	}
	req, _ := http.NewRequest(http.MethodGet, "http://shogun/v1/roles/worker/log?download=1", nil)
	if resp, err := r.http.Do(req); err != nil {
		t.Fatal(err)
	} else {
		resp.Body.Close()
		if cd := resp.Header.Get("Content-Disposition"); cd != `attachment; filename="worker.txt"` {
			t.Errorf("download: Content-Disposition %q", cd)
		}
	}
	r.refused(t, http.MethodGet, "/v1/roles/Not..A-Role/log", nil, http.StatusBadRequest, "is not a role id")
	r.refused(t, http.MethodGet, "/v1/roles/ghost/log", nil, http.StatusNotFound, "has no log yet")
	r.refused(t, http.MethodGet, "/v1/roles/worker/log?strip=maybe", nil, http.StatusBadRequest, "strip")

	live := r.stream(t, "/v1/roles/worker/log?follow=1&tail=5")
	id := r.send(t, control.SendRequest{To: "worker", Title: "Follow me", Body: "b"})
	shoguntest.WaitFor(t, "the task's lines in the followed log", 60*time.Second, func() bool {
		var text strings.Builder
		for _, e := range live.all("log") {
			var s string
			if json.Unmarshal([]byte(e.data), &s) == nil {
				text.WriteString(s)
			}
		}
		return strings.Contains(text.String(), "Reported "+id)
	})
}

// The event and log streams are bounded: one more than the limit is
// refused, and closing one makes room.
func TestStreamsAreBounded(t *testing.T) {
	r := runTeam(t, simRole("worker"))
	var open []*stream
	for i := 0; i < 32; i++ {
		open = append(open, r.stream(t, "/v1/events/stream"))
	}
	r.refused(t, http.MethodGet, "/v1/events/stream", nil, http.StatusServiceUnavailable, "too many")
	open[0].body.Close()
	shoguntest.WaitFor(t, "room for a stream", 30*time.Second, func() bool {
		req, _ := http.NewRequest(http.MethodGet, "http://shogun/v1/events/stream", nil)
		resp, err := r.http.Do(req)
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}

// Repeated work becomes a candidate that is reviewed over the API as
// `shogun skills review` would: edited (a bad edit refused, nothing
// changed), approved, exported where `shogun skills export` writes, and
// then no longer decided.
func TestSkillReviewAndExport(t *testing.T) {
	r := runTeam(t, simRole("worker", "--work-time", "100ms"))
	var ids []string
	for _, body := range []string{"Write this week's status report for the team.", "Write the status report of the week for the team."} {
		ids = append(ids, r.send(t, control.SendRequest{To: "worker", Title: "Write the weekly status report", Body: body}))
	}
	for _, id := range ids {
		r.waitTask(t, id, "task "+id+" done", func(d control.TaskDetailReply) bool { return d.Task.Status == "done" })
	}
	// The supervisor scans for skills after reports.
	var sk control.SkillsReply
	shoguntest.WaitFor(t, "a pending skill candidate", 60*time.Second, func() bool {
		r.get(t, "/v1/skills", &sk)
		return len(sk.Skills) > 0
	})
	c := sk.Skills[0]
	if c.Status != "pending" || c.Tasks != 2 || len(c.SourceTasks) != 2 || c.SourceTasks[1].ID != ids[1] ||
		c.SourceTasks[0].Title != "Write the weekly status report" || c.Body == "" || !strings.HasPrefix(c.Text, "---\nname: "+c.Name+"\n") {
		t.Fatalf("candidate = %+v", c)
	}
	path := "/v1/skills/" + c.Name

	// A bad edit changes nothing.
	r.refused(t, http.MethodPut, path, control.SkillEditRequest{Text: "no front matter"}, http.StatusUnprocessableEntity, "not kept")
	edited := string(skills.Render(skills.Document{Name: c.Name, Description: "Edited in the console: when to use it.", Body: c.Body}))
	var er control.SkillEditReply
	code, b := r.do(t, http.MethodPut, path, control.SkillEditRequest{Text: strings.ReplaceAll(edited, "\n", "\r\n")})
	if code != http.StatusOK || json.Unmarshal(b, &er) != nil || !er.Changed || !er.Skill.Edited ||
		er.Skill.Description != "Edited in the console: when to use it." || er.Skill.Text != edited {
		t.Fatalf("edit: %d %s", code, b)
	}
	if code, b := r.do(t, http.MethodPut, path, control.SkillEditRequest{Text: er.Skill.Text}); code != http.StatusOK || !strings.Contains(string(b), `"changed":false`) {
		t.Errorf("the same text again: %d %s", code, b)
	}

	// Export before approval is refused; after it, the file is where the
	// CLI's export puts it, with the text as edited.
	r.refused(t, http.MethodPost, path+"/export", control.SkillExportRequest{Target: "codex"}, http.StatusConflict, "approve it first")
	var got control.SkillReply
	code, b = r.do(t, http.MethodPost, path+"/approve", nil)
	if code != http.StatusOK || json.Unmarshal(b, &got) != nil || got.Status != "approved" {
		t.Fatalf("approve: %d %s", code, b)
	}
	r.refused(t, http.MethodPost, path+"/export", control.SkillExportRequest{Target: "claude", Layout: "flat"}, http.StatusUnprocessableEntity, "claude")
	r.refused(t, http.MethodPost, path+"/export", control.SkillExportRequest{Target: "emacs"}, http.StatusBadRequest, "target")
	var res control.SkillExportReply
	code, b = r.do(t, http.MethodPost, path+"/export", control.SkillExportRequest{Target: "codex", Layout: "flat"})
	if code != http.StatusOK || json.Unmarshal(b, &res) != nil || len(res.Files) != 1 || !res.Files[0].Written ||
		res.Files[0].Path != "skills/codex/"+c.Name+".md" {
		t.Fatalf("export: %d %s", code, b)
	}
	file, err := os.ReadFile(filepath.Join(r.ws, filepath.FromSlash(res.Files[0].Path)))
	if err != nil || string(file) != er.Skill.Text {
		t.Errorf("exported file (%v):\n%s\nwant:\n%s", err, file, er.Skill.Text)
	}
	code, b = r.do(t, http.MethodPost, path+"/export", control.SkillExportRequest{Target: "claude", Layout: "dir"})
	if code != http.StatusOK || json.Unmarshal(b, &res) != nil || len(res.Files) != 1 || res.Files[0].Path != ".claude/skills/"+c.Name+"/SKILL.md" {
		t.Errorf("export for claude: %d %s", code, b)
	}
	r.get(t, "/v1/skills?status=exported", &sk)
	if len(sk.Skills) != 1 || sk.Skills[0].Name != c.Name {
		t.Errorf("exported skills = %+v", sk.Skills)
	}
	r.refused(t, http.MethodPost, path+"/reject", nil, http.StatusConflict, "already exported")
	r.refused(t, http.MethodPost, "/v1/skills/no-such-skill/approve", nil, http.StatusNotFound, "unknown skill")
	r.refused(t, http.MethodGet, "/v1/skills?status=maybe", nil, http.StatusBadRequest, "status")
}
