package queue

import (
	"fmt"
	"time"
)

// Task is what shogun writes to runtime/queue/tasks/<role>.yaml for the role
// to read when nudged. The agent echoes TaskID in its report; the other
// fields come from the command.
type Task struct {
	TaskID    string `yaml:"task_id"`
	CommandID string `yaml:"command_id"`
	// Role is the role doing the task (the command's To).
	Role string `yaml:"role"`
	// From is the role told when the report arrives; empty for none.
	From     string   `yaml:"from,omitempty"`
	Title    string   `yaml:"title"`
	Body     string   `yaml:"body"`
	Tags     []string `yaml:"tags,omitempty"`
	Priority string   `yaml:"priority,omitempty"`
	// AssignedAt is when the task was handed to the role.
	AssignedAt time.Time `yaml:"assigned_at"`
	// Attempt, when not 0, tells the agent the task was handed out before
	// (after a restart, say), so it can check what earlier work left.
	Attempt int `yaml:"attempt,omitempty"`
	// ReportTo is where the agent should write its report, as it sees it
	// from its working directory: relative with forward slashes when the
	// file is inside that folder (the workspace, usually), absolute
	// otherwise (a role in its own git worktree).
	ReportTo string `yaml:"report_to"`
}

// Validate reports the first problem with t, or nil; MarshalTask refuses a
// task that does not pass, so an agent never reads a half-filled task.
func (t Task) Validate() error {
	if p := firstProblem(
		checkRequired("task_id", t.TaskID), checkID("task_id", t.TaskID),
		checkRequired("command_id", t.CommandID), checkID("command_id", t.CommandID),
		checkRequired("role", t.Role), checkRole("role", t.Role),
		checkRole("from", t.From),
		checkRequired("title", t.Title), checkLine("title", t.Title),
		checkRequired("body", t.Body),
		checkTags(t.Tags),
		checkEnum("priority", t.Priority, priorities, true),
	); p != nil {
		return p
	}
	if t.AssignedAt.IsZero() {
		return missingField("assigned_at")
	}
	if t.Attempt < 0 {
		return &fieldError{field: "attempt", msg: fmt.Sprintf(`"attempt" must not be negative, got %d`, t.Attempt)}
	}
	if p := firstProblem(checkRequired("report_to", t.ReportTo), checkLine("report_to", t.ReportTo)); p != nil {
		return p
	}
	return nil
}
