package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/shogun-dev/shogun/control"
	"github.com/shogun-dev/shogun/queue"
	"github.com/shogun-dev/shogun/store"
)

// The tools' names, as clients list and call them.
const (
	ToolSendTask   = "send_task"
	ToolReport     = "report"
	ToolMyTask     = "my_task"
	ToolListTasks  = "list_tasks"
	ToolTeamStatus = "team_status"
)

// SendTaskInput is what send_task takes.
type SendTaskInput struct {
	To       string   `json:"to" jsonschema:"the role id that is to do the work, such as karo or ashigaru1 (team_status lists the roles)"`
	Title    string   `json:"title" jsonschema:"one line naming the task; no line breaks"`
	Body     string   `json:"body" jsonschema:"everything the other role needs to do the task without asking: the goal, the files to touch, how to tell it is done. It has not seen your task, so repeat what matters"`
	Priority string   `json:"priority,omitempty" jsonschema:"high, normal (the default) or low: the order among the tasks waiting for that role"`
	Tags     []string `json:"tags,omitempty" jsonschema:"short labels, one word each (no spaces), that group related tasks, such as frontend"`
}

// SendTaskOutput is what send_task answers.
type SendTaskOutput struct {
	CommandID string `json:"command_id" jsonschema:"the id of the command written"`
	File      string `json:"file" jsonschema:"the command file written, absolute"`
	// Status is "queued" once the supervisor made the task, "written"
	// while no supervisor has taken the file.
	Status string `json:"status" jsonschema:"queued: the supervisor made the task (task_id); written: the file waits for the supervisor"`
	TaskID string `json:"task_id,omitempty" jsonschema:"the task made from the command, once queued"`
	// TaskStatus is the task's state when the answer was made (queued,
	// assigned, delivered …).
	TaskStatus string `json:"task_status,omitempty" jsonschema:"the task's state now: queued, assigned, delivered …"`
	Message    string `json:"message" jsonschema:"what happened, in a sentence"`
}

// ReportInput is what report takes: the fields of a report file.
type ReportInput struct {
	TaskID         string          `json:"task_id,omitempty" jsonschema:"the task_id of the task you report on (my_task shows it); default: your current task"`
	Status         string          `json:"status" jsonschema:"done: finished and checked; failed: it cannot be done (say why in details); blocked: someone must decide something first (put the question in details)"`
	Summary        string          `json:"summary" jsonschema:"the outcome in one line, no line breaks"`
	Details        string          `json:"details,omitempty" jsonschema:"what you did, how you checked it, open questions; any number of lines"`
	Files          []string        `json:"files,omitempty" jsonschema:"the files you changed, as paths"`
	SkillCandidate *SkillCandidate `json:"skill_candidate,omitempty" jsonschema:"only when this task is a pattern likely to recur: a reusable skill to propose"`
}

// SkillCandidate is a skill an agent proposes in a report.
type SkillCandidate struct {
	Name        string `json:"name" jsonschema:"a short kebab-case name, such as add-react-form"`
	Description string `json:"description" jsonschema:"when the skill applies, such as: When asked to add a form to the React app"`
}

// ReportOutput is what report answers.
type ReportOutput struct {
	TaskID string `json:"task_id" jsonschema:"the task reported on"`
	File   string `json:"file" jsonschema:"the report file written, absolute"`
	// Status is the task's status after the report: done, failed or
	// blocked once the supervisor recorded it, "written" while no
	// supervisor has taken the file.
	Status  string `json:"status" jsonschema:"the task's state now: done, failed or blocked once recorded; written: the file waits for the supervisor; cancelled: kept but changes nothing"`
	Message string `json:"message" jsonschema:"what happened, in a sentence"`
}

// MyTaskOutput is what my_task answers.
type MyTaskOutput struct {
	Role string `json:"role" jsonschema:"your role id"`
	// Task is the role's task in flight; nil when it has none.
	Task       *control.Task `json:"task,omitempty" jsonschema:"your current task; absent when you have none"`
	TaskFile   string        `json:"task_file" jsonschema:"your task file, absolute"`
	ReportFile string        `json:"report_file" jsonschema:"where your report goes (the report tool writes it), absolute"`
	Queued     int           `json:"queued" jsonschema:"tasks waiting for you after this one"`
	Message    string        `json:"message" jsonschema:"what to do now, in a sentence"`
}

// ListTasksInput is what list_tasks takes; every field is a filter.
type ListTasksInput struct {
	Role   string `json:"role,omitempty" jsonschema:"only this role's tasks (default: every role)"`
	Status string `json:"status,omitempty" jsonschema:"only tasks in this state (default: every state)"`
	Limit  int    `json:"limit,omitempty" jsonschema:"at most this many, newest first (default 20, at most 200)"`
	Bodies bool   `json:"bodies,omitempty" jsonschema:"include each task's body (default false: titles only, to keep the answer short)"`
}

// ListTasksOutput is what list_tasks answers.
type ListTasksOutput struct {
	Tasks []control.Task `json:"tasks" jsonschema:"the tasks, newest first"`
}

// Limits of list_tasks.
const (
	defaultListLimit = 20
	maxListLimit     = 200
)

func (t *tools) register(srv *mcp.Server) {
	closed, readOnly := false, true
	writes := &mcp.ToolAnnotations{DestructiveHint: &closed, OpenWorldHint: &closed}
	reads := &mcp.ToolAnnotations{ReadOnlyHint: readOnly, OpenWorldHint: &closed}

	mcp.AddTool(srv, &mcp.Tool{
		Name:  ToolSendTask,
		Title: "Hand a task to another role",
		Description: "Hand a piece of work to another role of the team: the supervisor queues it as a task for that role and " +
			"tells you when its report arrives (a line typed into your terminal naming the report file). Use it to delegate; " +
			"the other role works on one task at a time, so several tasks for one role wait in its queue. " +
			"It writes a command file into runtime/queue/commands/ exactly as `shogun send` does, with you as the sender, " +
			"after the checks the supervisor makes (the role exists and is enabled, the title is one line), so a bad call " +
			"is an error that says why and writes nothing. The answer has the task id once the supervisor took it.",
		InputSchema: schemaFor[SendTaskInput](map[string][]string{"priority": store.Priorities}),
		Annotations: writes,
	}, t.sendTask)

	mcp.AddTool(srv, &mcp.Tool{
		Name:  ToolReport,
		Title: "Report on your task",
		Description: "Close your current task with a report, once it is finished, cannot be done, or needs a decision: " +
			"the supervisor records it, tells the role that sent the task, and gives you your next task. " +
			"Report exactly once per task, after the work is done and checked. " +
			"It writes your report file (the report_to of your task file) as the file protocol does, after the checks the " +
			"supervisor makes (the status, a one-line summary, the task is yours and was handed to you and is still open), " +
			"so a bad call is an error that says why and writes nothing; fix the call and try again.",
		InputSchema: schemaFor[ReportInput](map[string][]string{"status": store.ReportStatuses}),
		Annotations: writes,
	}, t.report)

	mcp.AddTool(srv, &mcp.Tool{
		Name:  ToolMyTask,
		Title: "Show your current task",
		Description: "Show the task you are working on: its id, title, body, who sent it and its state, with your task " +
			"file and report file, and how many tasks wait for you. Use it when you are told you have a task, when you " +
			"resume work, or before you report.",
		InputSchema: schemaFor[struct{}](nil),
		Annotations: reads,
	}, t.myTask)

	mcp.AddTool(srv, &mcp.Tool{
		Name:  ToolListTasks,
		Title: "List the team's tasks",
		Description: "List tasks from the team's history, newest first, with their state (queued, assigned, delivered, " +
			"undelivered, stalled, done, failed, blocked, cancelled), role, sender, times and report summary. Use it to " +
			"check on work you handed out, or to find a task id.",
		InputSchema: schemaFor[ListTasksInput](map[string][]string{"status": store.TaskStatuses}),
		Annotations: reads,
	}, t.listTasks)

	mcp.AddTool(srv, &mcp.Tool{
		Name:  ToolTeamStatus,
		Title: "Show the team's status",
		Description: "Show every role of the running team: its state (ready, busy, attention: waiting for a person, " +
			"limited, fatal …), its current task, how many tasks wait for it, and what needs a person. Use it before " +
			"handing out work, to pick a role that is free, or to see whether anything is stuck. It asks the running " +
			"supervisor; without one it is an error saying so.",
		InputSchema: schemaFor[struct{}](nil),
		Annotations: reads,
	}, t.teamStatus)
}

// schemaFor is the JSON schema of T, as the SDK would infer it, with the
// allowed values of some string properties (enum) added: the model sees
// them and the SDK checks them before the tool runs.
func schemaFor[T any](enums map[string][]string) *jsonschema.Schema {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		panic(fmt.Sprintf("mcpserver: schema of %T: %v", *new(T), err))
	}
	for name, values := range enums {
		p := s.Properties[name]
		if p == nil {
			panic(fmt.Sprintf("mcpserver: schema of %T has no property %q", *new(T), name))
		}
		for _, v := range values {
			p.Enum = append(p.Enum, v)
		}
	}
	return s
}

func (t *tools) sendTask(ctx context.Context, _ *mcp.CallToolRequest, in SendTaskInput) (*mcp.CallToolResult, SendTaskOutput, error) {
	cmd := queue.Command{To: in.To, From: t.role, Title: in.Title, Body: in.Body, Priority: in.Priority, Tags: in.Tags}
	if err := cmd.Validate(); err != nil {
		return nil, SendTaskOutput{}, fmt.Errorf("send_task: %w", err)
	}
	if err := queue.CheckRoles(t.cfg, cmd); err != nil {
		return nil, SendTaskOutput{}, fmt.Errorf("send_task: %w", err)
	}
	// The error record the queue may write is dated by the file system's
	// clock, not by Now.
	written := time.Now()
	id, path, err := queue.Send(t.cfg.Workspace, cmd, t.now())
	if err != nil {
		return nil, SendTaskOutput{}, fmt.Errorf("send_task: %w", err)
	}
	out := SendTaskOutput{CommandID: id, File: path, Status: "written"}
	if _, err := t.supervisorRunning(); err != nil {
		out.Message = fmt.Sprintf("Command %s written to %s; no supervisor is running, so it becomes a task for %s at the next `shogun start`.", id, t.rel(path), in.To)
		return nil, out, nil
	}
	task, refusal := queue.AwaitTaken(ctx, t.cfg, id, path, written, t.settle)
	switch {
	case task != nil:
		out.Status, out.TaskID, out.TaskStatus = "queued", task.ID, task.Status
		out.Message = fmt.Sprintf("Task %s queued for %s; you will be told when its report arrives.", task.ID, in.To)
	case refusal != "":
		return nil, SendTaskOutput{}, fmt.Errorf("send_task: the supervisor refused command %s: %s (see %s)",
			id, refusal, t.rel(t.layout.Failed()))
	default:
		out.Message = fmt.Sprintf("Command %s written to %s; the supervisor has not taken it yet.", id, t.rel(path))
	}
	return nil, out, nil
}

func (t *tools) report(ctx context.Context, _ *mcp.CallToolRequest, in ReportInput) (*mcp.CallToolResult, ReportOutput, error) {
	rep := queue.Report{TaskID: in.TaskID, Status: in.Status, Summary: in.Summary, Details: in.Details, Files: in.Files}
	if in.SkillCandidate != nil {
		rep.SkillCandidate = &queue.SkillCandidate{Name: in.SkillCandidate.Name, Description: in.SkillCandidate.Description}
	}
	st, err := t.history()
	if err != nil {
		return nil, ReportOutput{}, fmt.Errorf("report: %w", err)
	}
	defer st.Close()
	if rep.TaskID == "" {
		cur, err := st.InFlight(t.role)
		if err != nil {
			return nil, ReportOutput{}, fmt.Errorf("report: %w", err)
		}
		if cur == nil {
			return nil, ReportOutput{}, fmt.Errorf("report: you (%s) have no task in flight to report on; my_task shows your task", t.role)
		}
		rep.TaskID = cur.ID
	}
	if err := rep.Validate(); err != nil {
		return nil, ReportOutput{}, fmt.Errorf("report: %w", err)
	}
	task, err := st.CheckReport(rep.TaskID, t.role)
	if err != nil {
		return nil, ReportOutput{}, fmt.Errorf("report: %s", t.refusal(st, rep.TaskID, err))
	}
	written := time.Now()
	path, err := queue.WriteReport(t.cfg.Workspace, t.role, rep, t.limits)
	if err != nil {
		return nil, ReportOutput{}, fmt.Errorf("report: %w", err)
	}
	out := ReportOutput{TaskID: rep.TaskID, File: path, Status: "written"}
	if _, err := t.supervisorRunning(); err != nil {
		out.Message = fmt.Sprintf("Report on %s written to %s; no supervisor is running, so it is recorded at the next `shogun start`.", rep.TaskID, t.rel(path))
		return nil, out, nil
	}
	// The task was open when the report was checked: closed now, it was
	// closed by this report (or cancelled). The file itself stays where it
	// is for queue.report_grace, so its presence says nothing.
	t.await(ctx, func() bool {
		if now, err := st.Task(rep.TaskID); err == nil {
			task = now
		}
		return store.Closed(task.Status) || t.failure(filepath.Base(path), written) != ""
	})
	switch {
	case task.Status == store.StatusCancelled:
		out.Status = task.Status
		out.Message = fmt.Sprintf("Task %s had been cancelled (%s); your report is kept in the history but changes nothing.", task.ID, task.Summary)
	case store.Closed(task.Status):
		out.Status = task.Status
		out.Message = fmt.Sprintf("Task %s is %s; the supervisor recorded your report", task.ID, task.Status)
		if task.From != "" {
			out.Message += " and tells " + task.From
		}
		out.Message += ". Wait for your next task."
	case t.failure(filepath.Base(path), written) != "":
		return nil, ReportOutput{}, fmt.Errorf("report: the supervisor refused the report: %s (see %s)",
			t.failure(filepath.Base(path), written), t.rel(t.layout.Failed()))
	default:
		out.Message = fmt.Sprintf("Report on %s written to %s; the supervisor has not recorded it yet.", rep.TaskID, t.rel(path))
	}
	return nil, out, nil
}

// refusal says why the history refuses a report from the caller, in
// words an agent can act on.
func (t *tools) refusal(st *store.Store, taskID string, err error) string {
	task, _ := st.Task(taskID)
	switch {
	case errors.Is(err, store.ErrUnknownTask):
		return fmt.Sprintf("there is no task %q; my_task shows the id of your task", taskID)
	case errors.Is(err, store.ErrWrongRole):
		return fmt.Sprintf("task %s is %s's, not yours (%s): you report only on your own task; my_task shows it", taskID, task.Role, t.role)
	case errors.Is(err, store.ErrTaskClosed):
		return fmt.Sprintf("task %s is already closed (%s): a task takes one report", taskID, task.Status)
	case errors.Is(err, store.ErrNotDelivered):
		return fmt.Sprintf("task %s is still queued for %s: it has not been handed out yet, so there is nothing to report", taskID, task.Role)
	}
	return err.Error()
}

func (t *tools) myTask(_ context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, MyTaskOutput, error) {
	out := MyTaskOutput{Role: t.role, TaskFile: t.layout.TaskFile(t.role), ReportFile: t.layout.ReportFile(t.role)}
	st, err := t.history()
	if err != nil {
		return nil, MyTaskOutput{}, fmt.Errorf("my_task: %w", err)
	}
	defer st.Close()
	cur, err := st.InFlight(t.role)
	if err != nil {
		return nil, MyTaskOutput{}, fmt.Errorf("my_task: %w", err)
	}
	depths, err := st.QueueDepths()
	if err != nil {
		return nil, MyTaskOutput{}, fmt.Errorf("my_task: %w", err)
	}
	out.Queued = depths[t.role]
	if cur == nil {
		out.Message = "You have no task now. Wait until the supervisor gives you one."
		return nil, out, nil
	}
	task := control.TaskFrom(*cur)
	out.Task = &task
	out.Message = fmt.Sprintf("Work on task %s, then call report with its task_id.", cur.ID)
	return nil, out, nil
}

func (t *tools) listTasks(_ context.Context, _ *mcp.CallToolRequest, in ListTasksInput) (*mcp.CallToolResult, ListTasksOutput, error) {
	limit := in.Limit
	switch {
	case limit <= 0:
		limit = defaultListLimit
	case limit > maxListLimit:
		limit = maxListLimit
	}
	if in.Role != "" {
		if _, ok := t.cfg.Role(in.Role); !ok {
			return nil, ListTasksOutput{}, fmt.Errorf("list_tasks: no role %q in config/roles.yaml (roles: %s)", in.Role, roleIDs(t.cfg))
		}
	}
	st, err := t.history()
	if err != nil {
		return nil, ListTasksOutput{}, fmt.Errorf("list_tasks: %w", err)
	}
	defer st.Close()
	tasks, err := st.Tasks(store.TaskFilter{Role: in.Role, Status: in.Status, Limit: limit})
	if err != nil {
		return nil, ListTasksOutput{}, fmt.Errorf("list_tasks: %w", err)
	}
	out := ListTasksOutput{Tasks: make([]control.Task, 0, len(tasks))}
	for _, task := range tasks {
		c := control.TaskFrom(task)
		if !in.Bodies {
			c.Body = ""
		}
		out.Tasks = append(out.Tasks, c)
	}
	return nil, out, nil
}

func (t *tools) teamStatus(_ context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, control.StatusReply, error) {
	st, err := t.supervisorRunning()
	if err != nil {
		return nil, control.StatusReply{}, fmt.Errorf("team_status: %w", err)
	}
	return nil, st, nil
}
