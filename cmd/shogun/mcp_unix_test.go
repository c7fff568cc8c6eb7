//go:build !windows

package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/shogun-dev/shogun/control"
	"github.com/shogun-dev/shogun/mcpserver"
	"github.com/shogun-dev/shogun/shoguntest"
)

// mcpSession starts `shogun mcp` as role's CLI would inside a role and
// connects to it over its standard input and output.
func mcpSession(t *testing.T, ws, role string) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(bin, "mcp")
	cmd.Env = append(os.Environ(), "SHOGUN_WORKSPACE="+ws, "SHOGUN_ROLE="+role)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: role + "-cli", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to shogun mcp as %s: %v", role, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func callTool(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func structured[T any](t *testing.T, res *mcp.CallToolResult) T {
	t.Helper()
	var v T
	if res.IsError {
		t.Fatalf("tool error: %s", resultText(res))
	}
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("structured content %s: %v", b, err)
	}
	return v
}

// The queue as tools, end to end: the karo's CLI lists the tools and hands
// a task to ashigaru1 with send_task; the running supervisor delivers it;
// ashigaru1's CLI sees it with my_task, a report with a bad status is an
// error that writes nothing, and a good report closes the task and the karo
// is told.
func TestMCPToolsDriveTheRunningTeam(t *testing.T) {
	ws := teamWorkspace(t, simEntry("karo"), simEntry("ashigaru1", "--skip-reports", "1"))
	startBackground(t, ws)
	waitStatus(t, ws, "both roles ready", func(s control.StatusReply) bool {
		return stateOf(s, "karo") == "ready" && stateOf(s, "ashigaru1") == "ready"
	})

	karo := mcpSession(t, ws, "karo")
	list, err := karo.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Tools) != 5 {
		t.Errorf("%d tools listed, want 5", len(list.Tools))
	}
	for _, tool := range list.Tools {
		schema, _ := json.Marshal(tool.InputSchema)
		if !strings.Contains(string(schema), `"type":"object"`) || tool.Description == "" {
			t.Errorf("tool %s: description %q, input schema %s", tool.Name, tool.Description, schema)
		}
	}
	status := structured[control.StatusReply](t, callTool(t, karo, mcpserver.ToolTeamStatus, nil))
	if len(status.Roles) != 2 {
		t.Errorf("team_status roles: %+v", status.Roles)
	}

	sent := structured[mcpserver.SendTaskOutput](t, callTool(t, karo, mcpserver.ToolSendTask, map[string]any{
		"to": "ashigaru1", "title": "Add the login form", "body": "Create src/login.tsx with a form.\n", "tags": []string{"frontend"},
	}))
	if sent.Status != "queued" || sent.TaskID == "" {
		t.Fatalf("send_task answered %+v, want the task queued", sent)
	}
	delivered := waitTaskStatus(t, ws, "Add the login form", "delivered")
	if delivered.ID != sent.TaskID || delivered.From != "karo" || delivered.Role != "ashigaru1" {
		t.Errorf("the delivered task is %+v, want %s from karo", delivered, sent.TaskID)
	}

	a1 := mcpSession(t, ws, "ashigaru1")
	mine := structured[mcpserver.MyTaskOutput](t, callTool(t, a1, mcpserver.ToolMyTask, nil))
	if mine.Task == nil || mine.Task.ID != sent.TaskID || mine.Task.Body != "Create src/login.tsx with a form.\n" {
		t.Fatalf("my_task: %+v", mine)
	}

	queueDir := filepath.Join(ws, "runtime", "queue")
	bad := callTool(t, a1, mcpserver.ToolReport, map[string]any{"task_id": sent.TaskID, "status": "finished", "summary": "Login form added"})
	if !bad.IsError || !strings.Contains(resultText(bad), "status") {
		t.Errorf("report with status finished: isError %v, %q", bad.IsError, resultText(bad))
	}
	for _, dir := range []string{"reports", "reports/.claimed", "failed"} {
		if files := visibleFiles(t, filepath.Join(queueDir, dir)); len(files) != 0 {
			t.Errorf("a refused report left %s in %s", files, dir)
		}
	}

	done := structured[mcpserver.ReportOutput](t, callTool(t, a1, mcpserver.ToolReport, map[string]any{
		"status": "done", "summary": "Login form added", "files": []string{"src/login.tsx"},
	}))
	if done.TaskID != sent.TaskID || done.Status != "done" || !strings.Contains(done.Message, "tells karo") {
		t.Errorf("report answered %+v", done)
	}
	closed := waitTaskStatus(t, ws, "Add the login form", "done")
	if closed.Summary != "Login form added" || closed.Attempts != 1 {
		t.Errorf("closed task: %+v", closed)
	}
	// The karo is told, as for a report written by hand.
	shoguntest.WaitFor(t, "the notify line in karo's log", 30*time.Second, func() bool {
		b, _ := os.ReadFile(filepath.Join(ws, "runtime", "logs", "karo.log"))
		return strings.Contains(string(b), "Report from ashigaru1 on 'Add the login form'")
	})
	if files := visibleFiles(t, filepath.Join(queueDir, "failed")); len(files) != 0 {
		t.Errorf("failed/ holds %s", files)
	}
}

// visibleFiles lists the files of dir that are not hidden (the queue's
// .claimed folder is).
func visibleFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	var out []string
	for _, e := range entries {
		if !e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			out = append(out, e.Name())
		}
	}
	return out
}

// A command the running queue refuses after send_task wrote it (here the
// rate limit: one exchange allowed between two roles) comes back as an
// error that says why, as the agent would otherwise never learn.
func TestMCPSendTaskSaysWhyTheQueueRefusedIt(t *testing.T) {
	ws := teamWorkspace(t, simEntry("karo"), simEntry("ashigaru1", "--skip-reports", "5"))
	settings := filepath.Join(ws, "config", "settings.yaml")
	if err := os.WriteFile(settings, []byte("queue:\n  max_exchanges: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	startBackground(t, ws)
	waitStatus(t, ws, "both roles ready", func(s control.StatusReply) bool {
		return stateOf(s, "karo") == "ready" && stateOf(s, "ashigaru1") == "ready"
	})
	karo := mcpSession(t, ws, "karo")
	first := structured[mcpserver.SendTaskOutput](t, callTool(t, karo, mcpserver.ToolSendTask, map[string]any{"to": "ashigaru1", "title": "First", "body": "one"}))
	if first.Status != "queued" {
		t.Fatalf("first send_task: %+v", first)
	}
	second := callTool(t, karo, mcpserver.ToolSendTask, map[string]any{"to": "ashigaru1", "title": "Second", "body": "two"})
	if !second.IsError || !strings.Contains(resultText(second), "refused") || !strings.Contains(resultText(second), "rate limit") {
		t.Errorf("second send_task past the rate limit: isError %v, %q", second.IsError, resultText(second))
	}
}
