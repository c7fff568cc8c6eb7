package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/shogun-dev/shogun/queue"
	"github.com/shogun-dev/shogun/textsafe"
)

// The resources' addresses. The task file's names the role, so that a
// client that keeps resources of several servers apart tells them apart.
const (
	taskURIPrefix = "shogun://task/"
	DashboardURI  = "shogun://dashboard"
)

// TaskURI is the address of role's task file resource.
func TaskURI(role string) string { return taskURIPrefix + role }

// dashboardLimits bound the dashboard read: it lists every role and the
// recent reports, more than a queue file ever holds.
var dashboardLimits = queue.Limits{MaxBytes: 8 << 20}

func (t *tools) resources(srv *mcp.Server) {
	srv.AddResource(&mcp.Resource{
		URI: TaskURI(t.role), Name: "task", Title: "Your current task file",
		Description: "Your task file, " + t.rel(t.layout.TaskFile(t.role)) + ", as the supervisor wrote it for your " +
			"current task (YAML: task_id, title, body, from, report_to). my_task gives the same with the task's state.",
		MIMEType: "application/yaml",
	}, t.readFile(t.layout.TaskFile(t.role), "application/yaml", t.limits))
	srv.AddResource(&mcp.Resource{
		URI: DashboardURI, Name: "dashboard", Title: "The team's dashboard",
		Description: "runtime/dashboard.md: every role's state and task, the queues, recent reports and what needs a " +
			"person, rewritten by the supervisor on every change.",
		MIMEType: "text/markdown",
	}, t.readFile(t.layout.Dashboard(), "text/markdown", dashboardLimits))
}

// readFile serves a file of the workspace as text. It reads like the queue
// (a regular file only, never through a link, bounded), since an agent may
// have replaced it, and makes control characters other than line breaks
// visible, as everything shogun shows.
func (t *tools) readFile(path, mime string, limits queue.Limits) mcp.ResourceHandler {
	return func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		uri := req.Params.URI
		data, err := queue.ReadFile(path, limits)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil, mcp.ResourceNotFoundError(uri)
		case err != nil:
			return nil, fmt.Errorf("read %s: %w", t.rel(path), err)
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: mime, Text: visibleText(string(data))}}}, nil
	}
}

// visibleText escapes every character textsafe refuses, line by line, so
// that line breaks stay line breaks.
func visibleText(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = textsafe.Escape(l)
	}
	return strings.Join(lines, "\n")
}
