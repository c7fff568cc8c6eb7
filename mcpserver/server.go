// Package mcpserver is shogun's MCP server: the file queue as tools that an
// agent's CLI (Claude Code, Codex, Copilot CLI, Gemini CLI) calls instead of
// writing YAML by hand, for one role, the caller.
//
// Tools: send_task (a command file, as `shogun send` writes it, from the
// caller), report (the caller's report file, as the agent would write it),
// my_task, list_tasks and team_status. Resources: the caller's task file and
// runtime/dashboard.md. Every tool writes and reads exactly what the file
// protocol does, through the queue's and the history's own checks, so a call
// the queue would refuse is an error result that says why, and nothing is
// written. `shogun mcp` runs the server on stdio; it takes the workspace from
// SHOGUN_WORKSPACE and the caller from SHOGUN_ROLE, which the supervisor sets
// for every role's program and so for the tool servers its CLI starts.
package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/shogun-dev/shogun/config"
	"github.com/shogun-dev/shogun/control"
	"github.com/shogun-dev/shogun/queue"
	"github.com/shogun-dev/shogun/store"
	"github.com/shogun-dev/shogun/workspace"
)

// DefaultSettle is how long send_task and report wait, while a supervisor
// runs, for it to take the file they wrote, so that the answer can say what
// became of it (the task made, the task closed, or why it was refused).
// The queue takes a file within milliseconds; this bounds a busy machine.
const DefaultSettle = 5 * time.Second

// Options configure the server of one role.
type Options struct {
	// Config is the workspace's configuration, loaded.
	Config *config.Config
	// Role is the caller: the role whose agent's CLI started the server.
	// It must be an enabled role of Config.
	Role string
	// Version is shogun's version, told to the client.
	Version string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Settle is how long a tool that wrote a file waits for the running
	// supervisor to take it; zero means DefaultSettle, negative not at all.
	Settle time.Duration
}

// New returns the MCP server for opts.Role. It refuses a role that is not
// an enabled role of the configuration: a tool server must not speak for
// a role that has no agent.
func New(opts Options) (*mcp.Server, error) {
	if opts.Config == nil {
		return nil, errors.New("new mcp server: no configuration")
	}
	// The role errors are for a person reading `shogun mcp`'s one line.
	r, ok := opts.Config.Role(opts.Role)
	switch {
	case opts.Role == "":
		return nil, errors.New("no role given")
	case !ok:
		return nil, fmt.Errorf("role %q is not in config/roles.yaml (roles: %s)", opts.Role, roleIDs(opts.Config))
	case !r.Enabled:
		return nil, fmt.Errorf("role %q is disabled in config/roles.yaml", opts.Role)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Settle == 0 {
		opts.Settle = DefaultSettle
	}
	t := &tools{
		cfg: opts.Config, role: opts.Role, layout: workspace.New(opts.Config.Workspace),
		limits: queue.Limits{MaxBytes: opts.Config.Settings.Queue.MaxFileBytes},
		now:    opts.Now, settle: opts.Settle,
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "shogun", Title: "shogun team queue", Version: opts.Version},
		&mcp.ServerOptions{Instructions: instructions(opts.Role), Capabilities: &mcp.ServerCapabilities{}})
	t.register(srv)
	t.resources(srv)
	return srv, nil
}

// instructions is what a client may put in the model's context about the
// server as a whole; each tool describes itself.
func instructions(role string) string {
	return "You are role " + role + " in a team of AI agents run by the shogun supervisor. " +
		"These tools are the team's task queue: my_task shows the task you were given, report closes it, " +
		"send_task hands work to another role, list_tasks and team_status show the team. " +
		"They write the same files as the file protocol in your role's instructions, checked first, " +
		"so use them instead of writing queue YAML by hand."
}

// tools holds what every tool and resource of one role's server needs.
type tools struct {
	cfg    *config.Config
	role   string
	layout workspace.Layout
	limits queue.Limits
	now    func() time.Time
	settle time.Duration
}

// history opens the workspace's history for one call. It is not kept open:
// the supervisor owns the database, and a call is rare.
func (t *tools) history() (*store.Store, error) {
	path := t.cfg.Settings.Data.SQLitePath
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("no task history yet at %s: the supervisor has not run in this workspace (%v)", t.rel(path), err)
	}
	st, err := store.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open the task history: %w", err)
	}
	return st, nil
}

// supervisorRunning reports whether a supervisor answers for the
// workspace, with its status.
func (t *tools) supervisorRunning() (control.StatusReply, error) {
	return control.NewClient(t.cfg.Workspace).Status()
}

// rel is path as a person reads it in a message: relative to the workspace
// when inside it.
func (t *tools) rel(path string) string { return workspace.RelTo(t.cfg.Workspace, path) }

// await polls done every 50 ms until it says true or the settle time is
// over; it reports whether done said true.
func (t *tools) await(ctx context.Context, done func() bool) bool {
	if t.settle < 0 {
		return done()
	}
	deadline := time.Now().Add(t.settle)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if done() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		select {
		case <-ctx.Done():
			return false
		case <-tick.C:
		}
	}
}

// failure is why the queue refused the file named name dropped since
// since, or "" (queue.Refusal).
func (t *tools) failure(name string, since time.Time) string {
	return queue.Refusal(t.cfg, name, since)
}

func roleIDs(cfg *config.Config) string { return strings.Join(cfg.EnabledIDs(), ", ") }
