package control

import (
	"encoding/json"
	"time"

	"github.com/shogun-dev/shogun/store"
	"github.com/shogun-dev/shogun/usage"
)

// The JSON that people and scripts see: the API's requests and answers
// (docs/api.md) and what the CLI prints with --json (docs/json.md). Each
// shape is one tagged type here, and the tests hold both documents to these
// types key by key, so a field added here without its line in the docs, or
// the other way round, fails the build's tests.

// StatusReply is GET /v1/status, and what `shogun status --json` prints.
type StatusReply struct {
	Pid     int     `json:"pid"`
	RunID   string  `json:"run_id"`
	UptimeS float64 `json:"uptime_s"`
	// Roles are the roles running in this supervisor, in roles.yaml order.
	Roles []RoleReply `json:"roles"`
	// Tasks counts the history's tasks by status; a status no task has is
	// left out.
	Tasks map[string]int `json:"tasks"`
	// Attention is what a person should look at, one line each.
	Attention []string `json:"attention"`
	// Halted, when set, says why the queue has stopped taking work.
	Halted string `json:"halted,omitempty"`
	// ConfigError, when set, says why the configuration files as they
	// are now are not in effect, one problem per line: the supervisor
	// runs on with the configuration it had.
	ConfigError string `json:"config_error,omitempty"`
	// MaxRunning is agent.max_running, how many roles' programs may run at
	// once, and SlotsInUse how many do; both left out without a bound,
	// and SlotsInUse always there with one, 0 included (MarshalJSON).
	MaxRunning int `json:"max_running,omitempty"`
	SlotsInUse int `json:"slots_in_use,omitempty"`
	// CLISlots are the bounds of agent.max_running_per_cli, by CLI, with
	// how many of that CLI's roles are alive; left out without any.
	CLISlots map[string]CLISlots `json:"cli_slots,omitempty"`
}

// MarshalJSON writes slots_in_use whenever max_running is there, 0
// included, as docs/api.md promises: a script reading "slots_in_use" with
// a bound must not find it missing when every role sleeps.
func (r StatusReply) MarshalJSON() ([]byte, error) {
	type plain StatusReply // without this method
	out := struct {
		plain
		SlotsInUse *int `json:"slots_in_use,omitempty"`
	}{plain: plain(r)}
	if r.MaxRunning > 0 {
		out.SlotsInUse = &r.SlotsInUse
	}
	return json.Marshal(out)
}

// CLISlots is one CLI's bound in StatusReply.
type CLISlots struct {
	InUse int `json:"in_use"`
	Max   int `json:"max"`
}

// RoleReply is one role in StatusReply.
type RoleReply struct {
	ID          string  `json:"id"`
	Name        string  `json:"name"`
	State       string  `json:"state"`
	Pid         int     `json:"pid,omitempty"`
	UptimeS     float64 `json:"uptime_s"`
	Restarts    int     `json:"restarts"`
	TaskID      string  `json:"task_id,omitempty"`
	TaskTitle   string  `json:"task_title,omitempty"`
	TaskStatus  string  `json:"task_status,omitempty"`
	QueueDepth  int     `json:"queue_depth"`
	SinceOutput float64 `json:"since_output_s"`
	LastError   string  `json:"last_error,omitempty"`
	// LastLine is the most telling line the previous program left on its
	// screen when it exited (an error line over a link or a note): why a
	// role that keeps exiting at start is fatal.
	LastLine string `json:"last_line,omitempty"`
	// SubmitDelayMS is the pause between text and submit in effect, which
	// grows past the configured one when a submit became a newline.
	SubmitDelayMS int64 `json:"submit_delay_ms"`
	// LimitedUntil is when a limited role's usage limit lifts (UTC);
	// left out when the role is not limited.
	LimitedUntil time.Time `json:"limited_until,omitzero"`
	// MemoryBytes is what the running program's whole process tree held
	// at the supervisor's last look (every 2 s); left out when no program
	// runs or the OS does not tell.
	MemoryBytes uint64 `json:"memory_bytes,omitempty"`
	// MemoryMaxBytes is the role's memory_max; left out without one.
	MemoryMaxBytes uint64 `json:"memory_max_bytes,omitempty"`
	// OverMemory is why and when the role was last restarted for going
	// over memory_max; left out when it never was.
	OverMemory string `json:"over_memory,omitempty"`
	// BackoffReason, while State is backoff, is why shogun itself ended
	// the program it is about to restart ("memory 2.3 GB over memory_max
	// 2 GB"); left out after a crash and in every other state.
	BackoffReason string `json:"backoff_reason,omitempty"`
	// SleepReason, while State is sleeping, waking or waiting-slot, says
	// why ("idle for idle_after 10m with nothing queued; the next task
	// wakes it", "has work; waits for a slot (agent.max_running 4)").
	SleepReason string `json:"sleep_reason,omitempty"`
	// Account is the key of the account the role's program runs on (see
	// docs/accounts.md); left out for a role without accounts.
	Account string `json:"account,omitempty"`
	// Budget, when set, says why the role gets no new task: its daily
	// budget, or the team's, is reached ("budget reached: 1.02M of 1M
	// tokens today"; docs/usage.md).
	Budget string `json:"budget,omitempty"`
	// Held, when set, says why no new task is typed into the role until a
	// person looks (its approvals hook may be off: `shogun restart ROLE`
	// or `shogun status --dismiss` releases it).
	Held string `json:"held,omitempty"`
}

// ScreenReply is GET /v1/roles/{id}/screen, and what `shogun screen
// --json` prints.
type ScreenReply struct {
	Text      string   `json:"text"`
	Lines     []string `json:"lines"`
	CursorRow int      `json:"cursor_row"`
	CursorCol int      `json:"cursor_col"`
	State     string   `json:"state"`
}

// TypeRequest is the body of POST /v1/roles/{id}/type.
type TypeRequest struct {
	Text   string `json:"text"`
	Submit bool   `json:"submit"`
}

// TypeReply is its answer, once the text has been typed.
type TypeReply struct {
	// Submits is how many times the submit key was sent.
	Submits int `json:"submits"`
	// Confirmed is false when the text was typed and submitted but the
	// screen never showed that the program took it; always true without
	// submit.
	Confirmed bool `json:"confirmed"`
	// Reason says, for an unconfirmed submit, what the screen showed.
	Reason string `json:"reason,omitempty"`
}

// RestartReply is the answer to POST /v1/roles/{id}/restart.
type RestartReply struct {
	Role   string `json:"role"`
	Result string `json:"result"` // "restarting", or "waiting for a slot"
	// Reason says, while the role waits for a slot, which bound is
	// reached.
	Reason string `json:"reason,omitempty"`
}

// StopReply is the answer to POST /v1/stop.
type StopReply struct {
	Result string `json:"result"` // "stopping"
}

// DismissReply is the answer to POST /v1/attention/dismiss.
type DismissReply struct {
	// Dismissed counts the rejected-file alerts cleared and the held roles
	// released.
	Dismissed int `json:"dismissed"`
}

// CancelRequest is the body of POST /v1/tasks/{id}/cancel; the body may be
// left out.
type CancelRequest struct {
	// Reason is recorded as the task's summary and told to its sender.
	Reason string `json:"reason,omitempty"`
}

// TaskReply is the answer to POST /v1/tasks/{id}/retry and
// POST /v1/tasks/{id}/cancel: the task as it is now.
type TaskReply struct {
	TaskID string `json:"task_id"`
	Role   string `json:"role"`
	// Status is "queued" after a retry (it goes out when its role is
	// free) and "cancelled" after a cancel.
	Status string `json:"status"`
}

// ErrorReply is the body of every non-2xx answer.
type ErrorReply struct {
	Error string `json:"error"`
}

// Task is one task of the history as `shogun tasks --json` prints it (an
// array of them). Times are RFC 3339 in UTC; one that has not happened
// (a queued task's assigned_at, an open task's finished_at) is left out,
// and so are from, summary and report_path while empty.
type Task struct {
	ID        string   `json:"id"`
	CommandID string   `json:"command_id"`
	RunID     string   `json:"run_id"`
	Role      string   `json:"role"`
	From      string   `json:"from,omitempty"`
	Title     string   `json:"title"`
	Body      string   `json:"body"`
	Tags      []string `json:"tags"`
	Priority  string   `json:"priority"`
	Status    string   `json:"status"`
	// Seq orders tasks by arrival across the whole history.
	Seq       int64     `json:"seq"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	// AssignedAt and DeliveredAt describe the latest attempt.
	AssignedAt  time.Time `json:"assigned_at,omitzero"`
	DeliveredAt time.Time `json:"delivered_at,omitzero"`
	FinishedAt  time.Time `json:"finished_at,omitzero"`
	// Attempts counts the times the task was handed out, Submits the
	// submit keys typed for it in all.
	Attempts int `json:"attempts"`
	Submits  int `json:"submits"`
	// Summary is the report's summary, or the reason for a cancel.
	Summary string `json:"summary,omitempty"`
	// ReportPath is the archived report that closed the task.
	ReportPath string `json:"report_path,omitempty"`
	// Parent is the task whose role sent this task's command, Root the
	// first task of that chain; Depth counts the hops from it (0 for a
	// command a person sent).
	Parent string `json:"parent,omitempty"`
	Root   string `json:"root,omitempty"`
	Depth  int    `json:"depth"`
	// HeadCommit is the commit checked out in the role's working
	// directory (its worktree, with worktree: true) when its report
	// arrived; left out without a report or outside git.
	HeadCommit string `json:"head_commit,omitempty"`
	// Tokens are what its role's CLI recorded while it worked on the
	// task (see docs/usage.md); left out when none were recorded.
	Tokens *usage.Tokens `json:"tokens,omitempty"`
	// HandedOver are the moves of the task from one role to another, oldest
	// first (a role at its usage limit hands its tasks to its fallback);
	// left out when it never moved.
	HandedOver []Handover `json:"handed_over,omitempty"`
}

// Handover is one move of a task to another role.
type Handover struct {
	From   string    `json:"from"`
	To     string    `json:"to"`
	Reason string    `json:"reason"`
	At     time.Time `json:"at"`
}

// WithHandovers sets each task's HandedOver from hs (store.Handovers).
func WithHandovers(tasks []Task, hs map[string][]store.Handover) {
	for i := range tasks {
		for _, h := range hs[tasks[i].ID] {
			tasks[i].HandedOver = append(tasks[i].HandedOver, Handover{From: h.From, To: h.To, Reason: h.Reason, At: h.At.UTC()})
		}
	}
}

// WithTokens sets each task's Tokens from tokens (store.TaskTokens).
func WithTokens(tasks []Task, tokens map[string]usage.Tokens) {
	for i := range tasks {
		if t, ok := tokens[tasks[i].ID]; ok {
			tasks[i].Tokens = &t
		}
	}
}

// taskIDs are the ids of tasks.
func taskIDs(tasks []Task) []string {
	ids := make([]string, len(tasks))
	for i, t := range tasks {
		ids[i] = t.ID
	}
	return ids
}

// TaskFrom is t as Task shows it.
func TaskFrom(t store.Task) Task {
	tags := t.Tags
	if tags == nil {
		tags = []string{}
	}
	utc := func(at time.Time) time.Time {
		if at.IsZero() {
			return time.Time{}
		}
		return at.UTC()
	}
	return Task{
		ID: t.ID, CommandID: t.CommandID, RunID: t.RunID, Role: t.Role, From: t.From,
		Title: t.Title, Body: t.Body, Tags: tags, Priority: t.Priority, Status: t.Status, Seq: t.Seq,
		CreatedAt: utc(t.CreatedAt), UpdatedAt: utc(t.UpdatedAt),
		AssignedAt: utc(t.AssignedAt), DeliveredAt: utc(t.DeliveredAt), FinishedAt: utc(t.FinishedAt),
		Attempts: t.Attempts, Submits: t.Submits, Summary: t.Summary, ReportPath: t.ReportPath,
		Parent: t.Parent, Root: t.Root, Depth: t.Depth, HeadCommit: t.HeadCommit,
	}
}
