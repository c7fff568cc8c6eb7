package fakemodel

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

const (
	testCwd   = "/work/proj"
	testNudge = "Read runtime/queue/tasks/ashigaru1.yaml and carry out the task. Write your report to runtime/queue/reports/ashigaru1.yaml."
)

// testTask is a task file as shogun writes it, with directives in its body.
func testTask(body ...string) string {
	var b strings.Builder
	b.WriteString("task_id: t-20260101-0001\ncommand_id: cmd-1\nrole: ashigaru1\ntitle: Say hello\nbody: |\n")
	for _, l := range body {
		b.WriteString("  " + l + "\n")
	}
	b.WriteString("assigned_at: 2026-01-01T00:00:00Z\nreport_to: runtime/queue/reports/ashigaru1.yaml\n")
	return b.String()
}

// start runs a server on a free port for the test.
func start(t *testing.T, s *Server) *Server {
	t.Helper()
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// post sends a JSON body and returns the answer's status, headers and body.
func post(t *testing.T, url string, body any, header ...string) (int, http.Header, []byte) {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, out
}

// sseEvent is one server-sent event.
type sseEvent struct {
	name string
	data map[string]any
	raw  string
}

func parseSSE(t *testing.T, body []byte) []sseEvent {
	t.Helper()
	var out []sseEvent
	var cur sseEvent
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "event: "):
			cur.name = strings.TrimPrefix(l, "event: ")
		case strings.HasPrefix(l, "data: "):
			cur.raw = strings.TrimPrefix(l, "data: ")
			if cur.raw != "[DONE]" {
				if err := json.Unmarshal([]byte(cur.raw), &cur.data); err != nil {
					t.Fatalf("event data %q: %v", cur.raw, err)
				}
			}
		case l == "" && cur.raw != "":
			out = append(out, cur)
			cur = sseEvent{}
		}
	}
	return out
}

func names(evs []sseEvent) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.name)
	}
	return out
}

// anthropicTools are the tools Claude Code 2.1.197 offers, in short.
var anthropicTools = []map[string]any{
	{"name": "Bash", "input_schema": schemaOf("command", "string", "description", "string")},
	{"name": "Read", "input_schema": schemaOf("file_path", "string")},
	{"name": "Write", "input_schema": schemaOf("file_path", "string", "content", "string")},
	{"name": "mcp__shogun__report", "input_schema": schemaOf("task_id", "string", "status", "string", "summary", "string")},
	{"name": "mcp__shogun__send_task", "input_schema": schemaOf("to", "string", "title", "string", "body", "string")},
}

func schemaOf(kv ...string) map[string]any {
	props := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		props[kv[i]] = map[string]any{"type": kv[i+1]}
	}
	return map[string]any{"type": "object", "properties": props}
}

// anthropicTurns builds Claude's messages: the nudge, then for each result
// a tool_use and its tool_result.
func anthropicTurns(nudge string, results ...string) []any {
	msgs := []any{map[string]any{"role": "user", "content": []any{
		map[string]any{"type": "text", "text": "<system-reminder>context</system-reminder>"},
		map[string]any{"type": "text", "text": nudge}}}}
	for i, r := range results {
		id := "toolu_" + string(rune('a'+i))
		msgs = append(msgs,
			map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": id, "name": "X", "input": map[string]any{}}}},
			map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": id, "content": r}}})
	}
	return msgs
}

// anthropicCall reads a streamed Messages answer: the tool called and its
// arguments, or the text.
func anthropicCall(t *testing.T, body []byte) (name string, args map[string]any, text string) {
	t.Helper()
	var partial strings.Builder
	for _, e := range parseSSE(t, body) {
		switch e.name {
		case "content_block_start":
			cb := e.data["content_block"].(map[string]any)
			if cb["type"] == "tool_use" {
				name = cb["name"].(string)
			}
		case "content_block_delta":
			d := e.data["delta"].(map[string]any)
			switch d["type"] {
			case "input_json_delta":
				partial.WriteString(d["partial_json"].(string))
			case "text_delta":
				text += d["text"].(string)
			}
		}
	}
	if name != "" {
		if err := json.Unmarshal([]byte(partial.String()), &args); err != nil {
			t.Fatalf("tool input %q: %v", partial.String(), err)
		}
	}
	return name, args, text
}

func TestAnthropicStepsOfATask(t *testing.T) {
	s := start(t, &Server{})
	task := "     1\t" + strings.ReplaceAll(testTask(
		"Greet.",
		"fakemodel: write hello.txt hello world",
		"fakemodel: run echo hi > out.txt",
		`fakemodel: report done via write "Wrote hello.txt"`,
		`fakemodel: report failed via shell "no luck"`,
		`fakemodel: report blocked via mv "which one?"`,
		`fakemodel: report done via mcp "via mcp"`,
		`fakemodel: write $REPORT ""`,
		`fakemodel: report done as t-20250101-0009 via write stale`,
		`fakemodel: send ashigaru2 via mcp "Sub task" "fakemodel: write a.txt a\nfakemodel: report done"`,
	), "\n", "\n     2\t")
	report := testCwd + "/runtime/queue/reports/ashigaru1.yaml"
	steps := []struct {
		tool string
		args map[string]any
		text string
	}{
		{tool: "Read", args: map[string]any{"file_path": testCwd + "/runtime/queue/tasks/ashigaru1.yaml"}},
		{tool: "Write", args: map[string]any{"file_path": testCwd + "/hello.txt", "content": "hello world\n"}},
		{tool: "Bash", args: map[string]any{"command": "echo hi > out.txt", "description": "fakemodel step"}},
		{tool: "Write", args: map[string]any{"file_path": report,
			"content": "task_id: t-20260101-0001\nstatus: done\nsummary: Wrote hello.txt\n"}},
		{tool: "Bash", args: map[string]any{"command": "cat > " + report + " <<'FAKEMODEL_EOF'\n" +
			"task_id: t-20260101-0001\nstatus: failed\nsummary: no luck\nFAKEMODEL_EOF", "description": "fakemodel step"}},
		{tool: "Bash", args: map[string]any{"command": "cat > " + report + ".tmp <<'FAKEMODEL_EOF'\n" +
			"task_id: t-20260101-0001\nstatus: blocked\nsummary: \"which one?\"\nFAKEMODEL_EOF\nmv " + report + ".tmp " + report,
			"description": "fakemodel step"}},
		{tool: "mcp__shogun__report", args: map[string]any{"task_id": "t-20260101-0001", "status": "done", "summary": "via mcp"}},
		{tool: "Write", args: map[string]any{"file_path": report, "content": ""}},
		{tool: "Write", args: map[string]any{"file_path": report,
			"content": "task_id: t-20250101-0009\nstatus: done\nsummary: stale\n"}},
		{tool: "mcp__shogun__send_task", args: map[string]any{"to": "ashigaru2", "title": "Sub task",
			"body": "fakemodel: write a.txt a\nfakemodel: report done"}},
		{text: "Done: stale"},
	}
	var results []string
	for i, want := range steps {
		req := map[string]any{"model": "claude-opus", "stream": true, "system": "Working directory: " + testCwd + "\n",
			"tools": anthropicTools, "messages": anthropicTurns(testNudge, results...)}
		status, _, body := post(t, s.URL()+"/v1/messages?beta=true", req)
		if status != 200 {
			t.Fatalf("step %d: status %d: %s", i, status, body)
		}
		name, args, text := anthropicCall(t, body)
		if name != want.tool || text != want.text {
			t.Fatalf("step %d: called %q with text %q, want %q %q", i, name, text, want.tool, want.text)
		}
		if want.tool != "" {
			gotJSON, _ := json.Marshal(args)
			wantJSON, _ := json.Marshal(want.args)
			if !bytes.Equal(gotJSON, wantJSON) {
				t.Errorf("step %d: %s args\n %s\nwant\n %s", i, name, gotJSON, wantJSON)
			}
		}
		if i == 0 {
			results = append(results, task)
		} else {
			results = append(results, "ok")
		}
	}
}

func TestAnthropicStreamShape(t *testing.T) {
	s := start(t, &Server{})
	req := map[string]any{"model": "m", "stream": true, "system": "Working directory: /p", "tools": anthropicTools,
		"messages": anthropicTurns(testNudge)}
	_, h, body := post(t, s.URL()+"/v1/messages", req)
	if ct := h.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Content-Type %q", ct)
	}
	want := "message_start ping content_block_start content_block_delta content_block_stop message_delta message_stop"
	evs := parseSSE(t, body)
	if got := strings.Join(compact(names(evs)), " "); got != want {
		t.Errorf("events %s\nwant %s", got, want)
	}
	for _, e := range evs {
		if e.data["type"] != e.name {
			t.Errorf("event %s has type %v", e.name, e.data["type"])
		}
		if e.name == "message_delta" {
			if sr := e.data["delta"].(map[string]any)["stop_reason"]; sr != "tool_use" {
				t.Errorf("stop_reason %v, want tool_use", sr)
			}
		}
	}

	// Not streamed: one JSON message.
	req["stream"] = false
	_, _, body = post(t, s.URL()+"/v1/messages", req)
	var msg struct {
		StopReason string `json:"stop_reason"`
		Content    []struct {
			Type, Name string
			Input      map[string]any
		}
	}
	if err := json.Unmarshal(body, &msg); err != nil || msg.StopReason != "tool_use" || len(msg.Content) != 1 ||
		msg.Content[0].Name != "Read" || msg.Content[0].Input["file_path"] != "/p/runtime/queue/tasks/ashigaru1.yaml" {
		t.Errorf("non-streamed answer %s (%v)", body, err)
	}
}

// compact drops repeats of the same event in a row.
func compact(s []string) []string {
	var out []string
	for _, v := range s {
		if len(out) == 0 || out[len(out)-1] != v {
			out = append(out, v)
		}
	}
	return out
}

func TestTextAnswers(t *testing.T) {
	s := start(t, &Server{})
	cases := []struct{ typed, want string }{
		{"Read roles/ashigaru.md and follow it from now on. You are Ashigaru 1 (role id: ashigaru1) in a shogun team.", "Understood"},
		{"Report from ashigaru2 on 'Sub task': read runtime/queue/reports/ashigaru2.yaml", "Noted"},
		{"/clear", "OK."},
		{"You have an open task: read runtime/queue/tasks/a.yaml and write your report to runtime/queue/reports/a.yaml.", ""},
	}
	for _, c := range cases {
		req := map[string]any{"model": "m", "stream": true, "tools": anthropicTools, "messages": anthropicTurns(c.typed)}
		_, _, body := post(t, s.URL()+"/v1/messages", req)
		name, _, text := anthropicCall(t, body)
		if c.want == "" {
			if name != "Read" {
				t.Errorf("%q: called %q (text %q), want Read of the task", c.typed, name, text)
			}
			continue
		}
		if name != "" || !strings.HasPrefix(text, c.want) {
			t.Errorf("%q: called %q, text %q, want text %q…", c.typed, name, text, c.want)
		}
	}
}

func TestMissingToolAndBadDirective(t *testing.T) {
	s := start(t, &Server{})
	cases := []struct {
		name    string
		tools   []map[string]any
		results []string
		want    string
	}{
		{"no read or shell", anthropicTools[2:3], nil, "no read or shell tool"},
		{"no write or shell", anthropicTools[1:2], []string{testTask("fakemodel: write a.txt a")}, "no write or shell tool"},
		{"no mcp", anthropicTools[:3], []string{testTask("fakemodel: report done via mcp")}, "no tool report of the MCP server shogun"},
		{"unknown directive", anthropicTools, []string{testTask("fakemodel: dance")}, `unknown directive "dance"`},
		{"bad route", anthropicTools, []string{testTask("fakemodel: report done via pigeon")}, `route "pigeon"`},
		{"not a task", anthropicTools, []string{"no such file"}, "cannot read the task"},
	}
	for _, c := range cases {
		req := map[string]any{"model": "m", "stream": true, "tools": c.tools, "messages": anthropicTurns(testNudge, c.results...)}
		_, _, body := post(t, s.URL()+"/v1/messages", req)
		name, _, text := anthropicCall(t, body)
		if name != "" || !strings.Contains(text, c.want) {
			t.Errorf("%s: called %q, text %q, want text with %q", c.name, name, text, c.want)
		}
	}
}

func TestLimitAndSlow(t *testing.T) {
	now := time.Date(2026, 1, 1, 10, 0, 0, 0, time.Local)
	s := start(t, &Server{Now: func() time.Time { return now }})
	task := testTask("fakemodel: limit 2m", "fakemodel: slow 300ms", "fakemodel: report done")
	req := map[string]any{"model": "m", "stream": true, "tools": anthropicTools, "messages": anthropicTurns(testNudge, task)}
	status, h, body := post(t, s.URL()+"/v1/messages", req)
	if status != http.StatusTooManyRequests || h.Get("anthropic-ratelimit-unified-status") != "rejected" ||
		!strings.Contains(string(body), `"rate_limit_error"`) || !strings.Contains(string(body), "resets 10:02:00") {
		t.Fatalf("first answer %d %v %s, want a 429 rate_limit_error resetting at 10:02:00", status, h, body)
	}
	now = now.Add(time.Minute)
	if status, _, _ = post(t, s.URL()+"/v1/messages", req); status != http.StatusTooManyRequests {
		t.Fatalf("a minute later: status %d, want still 429", status)
	}
	now = now.Add(time.Minute)
	began := time.Now()
	status, _, body = post(t, s.URL()+"/v1/messages", req)
	name, _, _ := anthropicCall(t, body)
	if status != 200 || name != "Write" {
		t.Fatalf("after the reset: status %d, called %q, want the report written", status, name)
	}
	if d := time.Since(began); d < 300*time.Millisecond {
		t.Errorf("slow answer took %v, want at least 300ms", d)
	}
}

// limit … first-key is one account's limit: the key that met it first is
// answered 429, another key goes on with the task.
func TestLimitOfTheFirstKeyOnly(t *testing.T) {
	s := start(t, &Server{})
	task := testTask("fakemodel: limit 1h first-key", "fakemodel: report done")
	req := map[string]any{"model": "m", "stream": true, "tools": anthropicTools, "messages": anthropicTurns(testNudge, task)}
	if status, _, _ := post(t, s.URL()+"/v1/messages", req, "x-api-key", "sk-a"); status != http.StatusTooManyRequests {
		t.Fatalf("key a: status %d, want 429", status)
	}
	if status, _, _ := post(t, s.URL()+"/v1/messages", req, "x-api-key", "sk-a"); status != http.StatusTooManyRequests {
		t.Fatalf("key a again: status %d, want still 429", status)
	}
	status, _, body := post(t, s.URL()+"/v1/messages", req, "x-api-key", "sk-b")
	if name, _, _ := anthropicCall(t, body); status != 200 || name != "Write" {
		t.Fatalf("key b: status %d, called %q, want the report written", status, name)
	}
}

func TestJSONSideRequest(t *testing.T) {
	s := start(t, &Server{})
	// Claude Code's title request.
	req := map[string]any{"model": "haiku", "stream": true, "messages": anthropicTurns("<session>" + testNudge + "</session>"),
		"output_config": map[string]any{"format": map[string]any{"type": "json_schema", "schema": map[string]any{
			"type": "object", "properties": map[string]any{"title": map[string]any{"type": "string"}}, "required": []any{"title"}}}}}
	_, _, body := post(t, s.URL()+"/v1/messages", req)
	_, _, text := anthropicCall(t, body)
	var v map[string]any
	if err := json.Unmarshal([]byte(text), &v); err != nil || v["title"] == nil {
		t.Errorf("title answer %q (%v), want JSON with a title", text, err)
	}
}

func TestLogRedactsSecrets(t *testing.T) {
	var log bytes.Buffer
	s := start(t, &Server{Log: &log})
	req := map[string]any{"model": "m", "contents": []any{map[string]any{"role": "user", "parts": []any{map[string]any{"text": "hi"}}}}}
	post(t, s.URL()+"/v1beta/models/gemini-2.5-pro:generateContent?key=secret-gemini", req, "x-goog-api-key", "secret-goog")
	post(t, s.URL()+"/v1/messages", map[string]any{"model": "m", "messages": anthropicTurns("hi")}, "x-api-key", "secret-ant", "Authorization", "Bearer secret-bearer")
	reqs := s.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests recorded, want 2", len(reqs))
	}
	all := log.String()
	for _, r := range reqs {
		b, _ := json.Marshal(r)
		all += string(b)
	}
	for _, secret := range []string{"secret-gemini", "secret-goog", "secret-ant", "secret-bearer"} {
		if strings.Contains(all, secret) {
			t.Errorf("%s in the log or the records:\n%s", secret, all)
		}
	}
	if reqs[0].API != "gemini" || reqs[0].Model != "gemini-2.5-pro" || !strings.Contains(reqs[0].Path, "key=REDACTED") {
		t.Errorf("gemini request recorded as %+v", reqs[0])
	}
}

func TestListensOnLoopbackOnly(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "192.0.2.1:0"} {
		s := &Server{Addr: addr}
		if err := s.Start(context.Background()); err == nil {
			s.Close()
			t.Errorf("Start on %s succeeded, want an error", addr)
		}
	}
	s := start(t, &Server{})
	if !strings.HasPrefix(s.URL(), "http://127.0.0.1:") {
		t.Errorf("URL %s", s.URL())
	}
	resp, err := http.Head(s.URL() + "/")
	if err != nil || resp.StatusCode != 200 {
		t.Errorf("HEAD /: %v %v", resp, err)
	}
}

func TestParseTask(t *testing.T) {
	cases := []struct {
		name, text, body string
	}{
		{"block", testTask("a", "fakemodel: run ls"), "a\nfakemodel: run ls"},
		{"numbered", "1\ttask_id: t-1\n2\tbody: |-\n3\t  x\n4\t  y\n5\treport_to: r.yaml\n", "x\ny"},
		{"single quoted", "task_id: t-1\nbody: 'fakemodel: run echo ''hi'''\n", "fakemodel: run echo 'hi'"},
		{"double quoted", "task_id: t-1\nbody: \"fakemodel: write a.txt \\\"x\\\"\\nfakemodel: report done\"\n", "fakemodel: write a.txt \"x\"\nfakemodel: report done"},
	}
	for _, c := range cases {
		tk, err := parseTask(c.text)
		if err != nil || tk.Body != c.body {
			t.Errorf("%s: body %q (%v), want %q", c.name, tk.Body, err, c.body)
		}
	}
}

// codexTools are the tools Codex 0.169.0 offers a model it does not know,
// in short: exec_command and the shogun MCP server as a namespace.
var codexTools = []any{
	map[string]any{"type": "function", "name": "exec_command", "parameters": schemaOf("cmd", "string", "sandbox_permissions", "string", "justification", "string")},
	map[string]any{"type": "function", "name": "view_image", "parameters": schemaOf("path", "string")},
	map[string]any{"type": "namespace", "name": "mcp__shogun", "tools": []any{
		map[string]any{"type": "function", "name": "report", "parameters": schemaOf("task_id", "string", "status", "string", "summary", "string")},
		map[string]any{"type": "function", "name": "send_task", "parameters": schemaOf("to", "string", "title", "string", "body", "string")},
	}},
}

// codexInput builds Codex's input items: context, the nudge, then a
// function_call and its output per result.
func codexInput(nudge string, results ...string) []any {
	in := []any{
		map[string]any{"type": "message", "role": "developer", "content": []any{map[string]any{"type": "input_text", "text": "<permissions instructions>…"}}},
		map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": "<environment_context>\n  <cwd>" + testCwd + "</cwd>\n</environment_context>"}}},
		map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": nudge}}},
	}
	for i, r := range results {
		id := "call_" + string(rune('a'+i))
		in = append(in,
			map[string]any{"type": "function_call", "name": "exec_command", "arguments": "{}", "call_id": id},
			map[string]any{"type": "function_call_output", "call_id": id, "output": "Process exited with code 0\nOutput:\n" + r})
	}
	return in
}

// responsesItem reads a streamed Responses answer: its one output item as
// response.output_item.done has it, after checking the event order.
func responsesItem(t *testing.T, body []byte) map[string]any {
	t.Helper()
	evs := parseSSE(t, body)
	got := compact(names(evs))
	if len(got) < 5 || got[0] != "response.created" || got[1] != "response.in_progress" ||
		got[2] != "response.output_item.added" || got[len(got)-2] != "response.output_item.done" || got[len(got)-1] != "response.completed" {
		t.Fatalf("events %v", got)
	}
	for i, e := range evs {
		if e.data["type"] != e.name || e.data["sequence_number"] != float64(i) {
			t.Errorf("event %d %s: type %v sequence %v", i, e.name, e.data["type"], e.data["sequence_number"])
		}
	}
	done := evs[len(evs)-1].data["response"].(map[string]any)
	if done["status"] != "completed" || done["usage"] == nil {
		t.Errorf("response.completed: %v", done)
	}
	return evs[len(evs)-2].data["item"].(map[string]any)
}

func TestResponsesStepsOfATask(t *testing.T) {
	s := start(t, &Server{})
	task := testTask("fakemodel: write hello.txt hi", "fakemodel: ask touch x", `fakemodel: report done via mcp "ok"`,
		`fakemodel: send ashigaru2 "T" "B"`)
	steps := []struct {
		name, namespace string
		args            map[string]any
		text            string
	}{
		{name: "exec_command", args: map[string]any{"cmd": "cat " + testCwd + "/runtime/queue/tasks/ashigaru1.yaml"}},
		{name: "exec_command", args: map[string]any{"cmd": "cat > " + testCwd + "/hello.txt <<'FAKEMODEL_EOF'\nhi\nFAKEMODEL_EOF"}},
		{name: "exec_command", args: map[string]any{"cmd": "touch x", "sandbox_permissions": "require_escalated",
			"justification": "fakemodel asks: may I run this?"}},
		{name: "report", namespace: "mcp__shogun", args: map[string]any{"task_id": "t-20260101-0001", "status": "done", "summary": "ok"}},
		{name: "send_task", namespace: "mcp__shogun", args: map[string]any{"to": "ashigaru2", "title": "T", "body": "B"}},
		{text: "Done: ok"},
	}
	var results []string
	for i, want := range steps {
		req := map[string]any{"model": "fake-model", "stream": true, "instructions": "You are Codex.", "tools": codexTools,
			"input": codexInput(testNudge, results...)}
		status, _, body := post(t, s.URL()+"/v1/responses", req)
		if status != 200 {
			t.Fatalf("step %d: status %d %s", i, status, body)
		}
		item := responsesItem(t, body)
		if want.text != "" {
			content, _ := item["content"].([]any)
			if item["type"] != "message" || len(content) != 1 || content[0].(map[string]any)["text"] != want.text {
				t.Fatalf("step %d: item %v, want the text %q", i, item, want.text)
			}
			continue
		}
		var args map[string]any
		_ = json.Unmarshal([]byte(item["arguments"].(string)), &args)
		gotJSON, _ := json.Marshal(args)
		wantJSON, _ := json.Marshal(want.args)
		ns, _ := item["namespace"].(string)
		if item["type"] != "function_call" || item["name"] != want.name || ns != want.namespace || !bytes.Equal(gotJSON, wantJSON) ||
			item["call_id"] == "" {
			t.Fatalf("step %d: item %v\nwant %s %s %s", i, item, want.namespace, want.name, wantJSON)
		}
		r := "ok"
		if i == 0 {
			r = task
		}
		results = append(results, r)
	}
}

func TestLimitBodies(t *testing.T) {
	s := start(t, &Server{})
	task := testTask("fakemodel: limit", "fakemodel: run ls")
	cases := []struct {
		name, path string
		req        map[string]any
		want       []string
	}{
		{"responses", "/v1/responses", map[string]any{"model": "m", "stream": true, "tools": codexTools, "input": codexInput(testNudge, task)},
			[]string{`"type":"usage_limit_reached"`, `"resets_at":`}},
		{"gemini", "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse", map[string]any{
			"tools": geminiTools, "contents": geminiContents(testNudge, task)},
			[]string{`"status":"RESOURCE_EXHAUSTED"`, `PerDay`, `"retryDelay":`}},
		{"chat", "/v1/chat/completions", map[string]any{"model": "m", "stream": true, "tools": chatTools, "messages": chatMessages(testNudge, task)},
			[]string{`"code":"rate_limit_exceeded"`, "Rate limit exceeded"}},
	}
	for _, c := range cases {
		status, h, body := post(t, s.URL()+c.path, c.req)
		if status != http.StatusTooManyRequests || h.Get("Retry-After") == "" {
			t.Errorf("%s: status %d, retry-after %q, want 429 with retry-after", c.name, status, h.Get("Retry-After"))
		}
		for _, w := range c.want {
			if !strings.Contains(string(body), w) {
				t.Errorf("%s: body %s, want %s in it", c.name, body, w)
			}
		}
	}
}

// geminiTools are the tools Gemini CLI 0.61.0 offers, in short.
var geminiTools = []any{map[string]any{"functionDeclarations": []any{
	map[string]any{"name": "read_file", "parametersJsonSchema": schemaOf("file_path", "string")},
	map[string]any{"name": "write_file", "parametersJsonSchema": schemaOf("file_path", "string", "content", "string")},
	map[string]any{"name": "run_shell_command", "parametersJsonSchema": schemaOf("command", "string", "description", "string")},
	map[string]any{"name": "mcp_shogun_report", "parametersJsonSchema": schemaOf("task_id", "string", "status", "string", "summary", "string")},
}}}

// geminiContents builds Gemini CLI's contents: the context, the nudge,
// then a functionCall and its functionResponse per result.
func geminiContents(nudge string, results ...string) []any {
	c := []any{
		map[string]any{"role": "user", "parts": []any{map[string]any{"text": "- **Workspace Directories:**\n  - " + testCwd + "\n"}}},
		map[string]any{"role": "user", "parts": []any{map[string]any{"text": nudge}}},
	}
	for _, r := range results {
		c = append(c,
			map[string]any{"role": "model", "parts": []any{map[string]any{"functionCall": map[string]any{"name": "x", "args": map[string]any{}}}}},
			map[string]any{"role": "user", "parts": []any{map[string]any{"functionResponse": map[string]any{"name": "x",
				"response": map[string]any{"output": r}}}}})
	}
	return c
}

func TestGeminiSteps(t *testing.T) {
	s := start(t, &Server{})
	task := testTask(`fakemodel: report done via mcp "ok"`)
	second := strings.Replace(testTask(`fakemodel: report done via mcp "second"`), "t-20260101-0001", "t-20260101-0002", 1)
	cases := []struct {
		name    string
		results []string
		call    string
		args    map[string]any
		text    string
	}{
		{"read", nil, "read_file", map[string]any{"file_path": testCwd + "/runtime/queue/tasks/ashigaru1.yaml"}, ""},
		{"mcp report", []string{task}, "mcp_shogun_report", map[string]any{"task_id": "t-20260101-0001", "status": "done", "summary": "ok"}, ""},
		{"finished", []string{task, "ok"}, "", nil, "Done: ok"},
		// A resumed Gemini CLI sends the history without the new
		// nudge: the new task's read follows the earlier task's steps
		// under the earlier (same) nudge, and the new task is the one
		// worked on.
		{"resumed: the new task", []string{task, "ok", second}, "mcp_shogun_report", map[string]any{"task_id": "t-20260101-0002", "status": "done", "summary": "second"}, ""},
		{"resumed: the new task finished", []string{task, "ok", second, "ok"}, "", nil, "Done: second"},
	}
	for _, c := range cases {
		for _, stream := range []bool{true, false} {
			path := "/v1beta/models/gemini-3.1-pro-preview:generateContent"
			if stream {
				path = "/v1beta/models/gemini-3.1-pro-preview:streamGenerateContent?alt=sse"
			}
			_, _, body := post(t, s.URL()+path, map[string]any{"tools": geminiTools, "contents": geminiContents(testNudge, c.results...)})
			var chunks []map[string]any
			if stream {
				for _, e := range parseSSE(t, body) {
					chunks = append(chunks, e.data)
				}
			} else {
				var v map[string]any
				if err := json.Unmarshal(body, &v); err != nil {
					t.Fatalf("%s: %s", c.name, body)
				}
				chunks = append(chunks, v)
			}
			var call map[string]any
			text := ""
			for _, ch := range chunks {
				cand := ch["candidates"].([]any)[0].(map[string]any)
				for _, p := range cand["content"].(map[string]any)["parts"].([]any) {
					part := p.(map[string]any)
					if fc, ok := part["functionCall"].(map[string]any); ok {
						call = fc
					}
					if tx, ok := part["text"].(string); ok {
						text += tx
					}
				}
			}
			if last := chunks[len(chunks)-1]["candidates"].([]any)[0].(map[string]any); last["finishReason"] != "STOP" {
				t.Errorf("%s (stream %v): last chunk without finishReason STOP: %v", c.name, stream, last)
			}
			if c.call == "" {
				if call != nil || text != c.text {
					t.Errorf("%s (stream %v): call %v text %q, want text %q", c.name, stream, call, text, c.text)
				}
				continue
			}
			gotJSON, _ := json.Marshal(call["args"])
			wantJSON, _ := json.Marshal(c.args)
			if call == nil || call["name"] != c.call || !bytes.Equal(gotJSON, wantJSON) {
				t.Errorf("%s (stream %v): call %v, want %s %s", c.name, stream, call, c.call, wantJSON)
			}
		}
	}

	// The side request that wants JSON: a filled object, not a tool call.
	_, _, body := post(t, s.URL()+"/v1beta/models/gemini-3.5-flash-lite:generateContent", map[string]any{
		"contents": geminiContents(testNudge),
		"generationConfig": map[string]any{"responseMimeType": "application/json", "responseJsonSchema": map[string]any{
			"type": "OBJECT", "properties": map[string]any{
				"complexity_reasoning": map[string]any{"type": "STRING"}, "complexity_score": map[string]any{"type": "INTEGER"},
				"next_speaker": map[string]any{"type": "STRING", "enum": []any{"user", "model"}}}}}})
	var resp struct {
		Candidates []struct {
			Content struct{ Parts []struct{ Text string } }
		}
	}
	var obj map[string]any
	if json.Unmarshal(body, &resp) != nil || len(resp.Candidates) != 1 ||
		json.Unmarshal([]byte(resp.Candidates[0].Content.Parts[0].Text), &obj) != nil ||
		obj["next_speaker"] != "user" || obj["complexity_score"] != float64(0) || obj["complexity_reasoning"] != "fakemodel" {
		t.Errorf("JSON side request answered %s", body)
	}
}

// chatTools are tools as an OpenAI Chat Completions client offers them.
var chatTools = []any{
	map[string]any{"type": "function", "function": map[string]any{"name": "view", "parameters": schemaOf("path", "string")}},
	map[string]any{"type": "function", "function": map[string]any{"name": "create", "parameters": schemaOf("path", "string", "file_text", "string")}},
	map[string]any{"type": "function", "function": map[string]any{"name": "bash", "parameters": schemaOf("command", "string", "description", "string")}},
}

func chatMessages(nudge string, results ...string) []any {
	m := []any{
		map[string]any{"role": "system", "content": "Current working directory: " + testCwd},
		map[string]any{"role": "user", "content": nudge},
	}
	for i, r := range results {
		id := "call_" + string(rune('a'+i))
		m = append(m,
			map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{"id": id, "type": "function",
				"function": map[string]any{"name": "x", "arguments": "{}"}}}},
			map[string]any{"role": "tool", "tool_call_id": id, "content": r})
	}
	return m
}

func TestChatSteps(t *testing.T) {
	s := start(t, &Server{})
	task := testTask("fakemodel: write a.txt hi")
	cases := []struct {
		results []string
		call    string
		args    string
		text    string
	}{
		{nil, "view", `{"path":"` + testCwd + `/runtime/queue/tasks/ashigaru1.yaml"}`, ""},
		{[]string{task}, "create", `{"file_text":"hi\n","path":"` + testCwd + `/a.txt"}`, ""},
		{[]string{task, "ok"}, "", "", "Done: task t-20260101-0001 (Say hello)."},
	}
	for i, c := range cases {
		_, _, body := post(t, s.URL()+"/v1/chat/completions", map[string]any{"model": "gpt-4o", "stream": true,
			"tools": chatTools, "messages": chatMessages(testNudge, c.results...)})
		evs := parseSSE(t, body)
		if evs[len(evs)-1].raw != "[DONE]" {
			t.Errorf("case %d: stream does not end with [DONE]", i)
		}
		var name, args, text, finish string
		for _, e := range evs[:len(evs)-1] {
			choices, _ := e.data["choices"].([]any)
			if len(choices) == 0 {
				continue
			}
			ch := choices[0].(map[string]any)
			if f, ok := ch["finish_reason"].(string); ok {
				finish = f
			}
			d := ch["delta"].(map[string]any)
			if tx, ok := d["content"].(string); ok {
				text += tx
			}
			for _, tc := range asList(d["tool_calls"]) {
				fn := tc.(map[string]any)["function"].(map[string]any)
				if n, ok := fn["name"].(string); ok {
					name = n
				}
				args += fn["arguments"].(string)
			}
		}
		wantFinish := "stop"
		if c.call != "" {
			wantFinish = "tool_calls"
		}
		if name != c.call || args != c.args || text != c.text || finish != wantFinish {
			t.Errorf("case %d: call %q %s text %q finish %q, want %q %s %q %q", i, name, args, text, finish, c.call, c.args, c.text, wantFinish)
		}
	}
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// Copilot CLI's apply_patch is a freeform (custom) tool: the call is one
// tool_calls delta of type custom with the whole patch as input.
func TestChatFreeformApplyPatch(t *testing.T) {
	s := start(t, &Server{})
	tools := append([]any{map[string]any{"type": "custom", "custom": map[string]any{"name": "apply_patch"}}}, chatTools[0], chatTools[2])
	_, _, body := post(t, s.URL()+"/v1/chat/completions", map[string]any{"model": "gpt-4o", "stream": true, "tools": tools,
		"messages": chatMessages(testNudge, testTask("fakemodel: write a.txt one\\ntwo"))})
	var custom map[string]any
	for _, e := range parseSSE(t, body) {
		for _, ch := range asList(e.data["choices"]) {
			for _, tc := range asList(ch.(map[string]any)["delta"].(map[string]any)["tool_calls"]) {
				if c, ok := tc.(map[string]any)["custom"].(map[string]any); ok {
					custom = c
				}
			}
		}
	}
	want := "*** Begin Patch\n*** Add File: " + testCwd + "/a.txt\n+one\\ntwo\n*** End Patch\n"
	if custom == nil || custom["name"] != "apply_patch" || custom["input"] != want {
		t.Errorf("custom call %v, want apply_patch with %q", custom, want)
	}
}

// A limit "for" one credential answers 429 to that account only: the same
// task read with another key goes on, as when a limited role hands its
// task to a role on another account or CLI.
func TestLimitForOneCredential(t *testing.T) {
	s := start(t, &Server{})
	task := testTask("fakemodel: limit 1h for "+CredentialKey("codex-key"), "fakemodel: report done")
	codex := map[string]any{"model": "m", "stream": true, "tools": codexTools, "input": codexInput(testNudge, task)}
	if status, _, body := post(t, s.URL()+"/v1/responses", codex, "Authorization", "Bearer codex-key"); status != http.StatusTooManyRequests {
		t.Errorf("with the limited key: status %d %s, want 429", status, body)
	}
	claude := map[string]any{"model": "m", "stream": true, "tools": anthropicTools, "messages": anthropicTurns(testNudge, task)}
	status, _, body := post(t, s.URL()+"/v1/messages", claude, "x-api-key", "claude-key")
	if name, _, _ := anthropicCall(t, body); status != 200 || name != "Write" {
		t.Errorf("with another key: status %d, called %q, want the report written", status, name)
	}
	bad := testTask("fakemodel: limit 1h for", "fakemodel: report done")
	_, _, body = post(t, s.URL()+"/v1/messages", map[string]any{"model": "m", "stream": true, "tools": anthropicTools, "messages": anthropicTurns(testNudge, bad)})
	if _, _, text := anthropicCall(t, body); !strings.Contains(text, "limit wants [DURATION] [for KEY") {
		t.Errorf("limit for no key: %q, want the directive refused", text)
	}
}

// WindowUsed answers Codex with the rate-limit headers of the credential's
// window; another credential gets none.
func TestWindowUsedHeaders(t *testing.T) {
	s := start(t, &Server{WindowUsed: func(key string) (float64, bool) { return 92.5, key == CredentialKey("spent") }})
	req := map[string]any{"model": "m", "stream": true, "tools": codexTools, "input": codexInput("hello")}
	_, h, _ := post(t, s.URL()+"/v1/responses", req, "Authorization", "Bearer spent")
	if h.Get("x-codex-primary-used-percent") != "92.5" || h.Get("x-codex-primary-window-minutes") != "300" || h.Get("x-codex-primary-reset-at") == "" {
		t.Errorf("headers for the spent key: %v, want x-codex-primary-used-percent 92.5 with its window and reset", h)
	}
	if _, h, _ := post(t, s.URL()+"/v1/responses", req, "Authorization", "Bearer other"); h.Get("x-codex-primary-used-percent") != "" {
		t.Errorf("headers for another key: %v, want no rate-limit header", h)
	}
}
