package control

import (
	"time"

	"github.com/shogun-dev/shogun/skills"
	"github.com/shogun-dev/shogun/store"
)

// The JSON of the endpoints the console's Tasks, History and Skills pages
// use (pages.go, events.go; docs/api.md), held to the docs as types.go's.

// TasksReply is GET /v1/tasks.
type TasksReply struct {
	// Tasks are newest first.
	Tasks []Task `json:"tasks"`
}

// TaskDetailReply is GET /v1/tasks/{id}: a task with what it left behind.
type TaskDetailReply struct {
	Task Task `json:"task"`
	// TaskFile is the text of the task file as the agent was given it;
	// left out for a task never handed out or whose file is gone.
	TaskFile string `json:"task_file,omitempty"`
	// TaskFilePath is where it was read, relative to the workspace.
	TaskFilePath string `json:"task_file_path,omitempty"`
	// Attempts counts the times the task was handed out, Submits the
	// submit keys typed for it in all.
	Attempts int `json:"attempts"`
	Submits  int `json:"submits"`
	// Events is the task's timeline, oldest first.
	Events []TaskEvent `json:"events"`
	// Report is the report that closed the task; left out while none has.
	Report *ReportReply `json:"report,omitempty"`
	// Subtasks are the tasks it caused: made from the commands its role
	// sent while it worked on it, oldest first.
	Subtasks []Subtask `json:"subtasks"`
	// Approvals are the decisions on its role's actions while it worked
	// on it (config/policy.yaml), oldest first: the last
	// MaxApprovalsListed of them.
	Approvals []Approval `json:"approvals"`
	// ApprovalsTotal counts them all.
	ApprovalsTotal int `json:"approvals_total"`
}

// Subtask is a task another one caused, as the cause's detail lists it.
type Subtask struct {
	ID     string `json:"id"`
	Role   string `json:"role"`
	Title  string `json:"title"`
	Status string `json:"status"`
}

// TaskEvent is one line of a task's timeline.
type TaskEvent struct {
	At     time.Time `json:"at"`
	Kind   string    `json:"kind"`
	Role   string    `json:"role,omitempty"`
	Detail string    `json:"detail,omitempty"`
}

// ReportReply is a report as an agent wrote it.
type ReportReply struct {
	Status  string `json:"status"`
	Summary string `json:"summary"`
	Details string `json:"details,omitempty"`
	// Files are the paths the agent said it changed, as it wrote them.
	Files      []string  `json:"files"`
	ReceivedAt time.Time `json:"received_at"`
	// Path is the archived report file, relative to the workspace.
	Path string `json:"path,omitempty"`
}

// reportFrom is r as ReportReply shows it; paths are made relative to ws.
func reportFrom(r store.Report, rel func(string) string) *ReportReply {
	files := r.Files
	if files == nil {
		files = []string{}
	}
	out := &ReportReply{Status: r.Status, Summary: r.Summary, Details: r.Details, Files: files, ReceivedAt: r.ReceivedAt.UTC()}
	if r.ArchivedPath != "" {
		out.Path = rel(r.ArchivedPath)
	}
	return out
}

// SendRequest is the body of POST /v1/send: what `shogun send` takes.
type SendRequest struct {
	To       string   `json:"to"`
	Title    string   `json:"title"`
	Body     string   `json:"body"`
	Priority string   `json:"priority,omitempty"`
	Tags     []string `json:"tags,omitempty"`
	From     string   `json:"from,omitempty"`
}

// SendReply is its answer: the command written.
type SendReply struct {
	// ID is the command's id, which its task's command_id will be.
	ID string `json:"id"`
	// File is the command file, relative to the workspace.
	File string `json:"file"`
}

// RunsReply is GET /v1/runs.
type RunsReply struct {
	// Runs are newest first.
	Runs []RunReply `json:"runs"`
}

// RunReply is one run of `shogun start`.
type RunReply struct {
	ID        string    `json:"id"`
	Status    string    `json:"status"` // running, stopped, failed or crashed
	StartedAt time.Time `json:"started_at"`
	EndedAt   time.Time `json:"ended_at,omitzero"`
	Pid       int       `json:"pid"`
	// Current is set on the run of the supervisor answering.
	Current bool `json:"current"`
}

// SkillsReply is GET /v1/skills.
type SkillsReply struct {
	Skills []SkillReply `json:"skills"`
}

// SkillReply is a skill candidate with what the review shows of it.
type SkillReply struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Status      string `json:"status"` // pending, approved, rejected or exported
	Kind        string `json:"kind"`
	Description string `json:"description"`
	// Body is the distilled text, the Markdown after the front matter.
	Body string `json:"body"`
	// Text is the whole skill file as an export writes it and an edit
	// takes it (front matter and body).
	Text string `json:"text"`
	// Tasks is the number of source tasks; SourceTasks the latest of them
	// (at most 8), newest last.
	Tasks       int          `json:"tasks"`
	SourceTasks []SourceTask `json:"source_tasks"`
	Edited      bool         `json:"edited"`
	CreatedAt   time.Time    `json:"created_at"`
	UpdatedAt   time.Time    `json:"updated_at"`
}

// SourceTask is a task a skill candidate was mined from.
type SourceTask struct {
	ID      string `json:"id"`
	Role    string `json:"role,omitempty"`
	Title   string `json:"title,omitempty"`
	Status  string `json:"status,omitempty"`
	Summary string `json:"summary,omitempty"`
	// Missing is set when the task is no longer in the history.
	Missing bool `json:"missing,omitempty"`
}

// SkillEditRequest is the body of PUT /v1/skills/{name}.
type SkillEditRequest struct {
	// Text is the whole skill file, as SkillReply.Text gives it, edited.
	Text string `json:"text"`
}

// SkillEditReply is its answer.
type SkillEditReply struct {
	Skill SkillReply `json:"skill"`
	// Changed is false when the text was the candidate's already.
	Changed bool `json:"changed"`
}

// SkillExportRequest is the body of POST /v1/skills/{name}/export.
type SkillExportRequest struct {
	// Target is codex, copilot, claude or all.
	Target string `json:"target"`
	// Layout is flat (the default) or dir.
	Layout string `json:"layout,omitempty"`
}

// SkillExportReply is its answer, what `shogun skills export --json`
// prints.
type SkillExportReply = skills.ExportResult
