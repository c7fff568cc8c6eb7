package control

import (
	"time"

	"github.com/shogun-dev/shogun/store"
)

// The approvals' JSON (docs/api.md, "Approvals"): what a CLI's hook asks,
// the decisions, and a person's answer.

// ApprovalRequest is the body of POST /v1/approvals: an action a role's
// CLI asks to take. Kind says which of command, path, url and tool is the
// action; the others are left out.
type ApprovalRequest struct {
	// Role is the role that asks (the CLI's SHOGUN_ROLE).
	Role string `json:"role"`
	// CLI names the CLI ("claude").
	CLI string `json:"cli"`
	// Kind is shell, read, write, fetch or mcp.
	Kind    string `json:"kind"`
	Command string `json:"command,omitempty"`
	Path    string `json:"path,omitempty"`
	URL     string `json:"url,omitempty"`
	// Tool is an MCP tool as "server/tool".
	Tool string `json:"tool,omitempty"`
	// Cwd is the folder the CLI is in (an earlier cd of its shell), which
	// relative paths are taken from; left out: the role's working folder.
	Cwd string `json:"cwd,omitempty"`
}

// Approval is one decision on an action: the answer to POST /v1/approvals
// and to an answer, and an item of ApprovalsReply. A question still
// waiting for a person has decision "pending" and no decided_at.
type Approval struct {
	ID        int64     `json:"id"`
	AskedAt   time.Time `json:"asked_at"`
	DecidedAt time.Time `json:"decided_at,omitzero"`
	RunID     string    `json:"run_id"`
	Role      string    `json:"role"`
	TaskID    string    `json:"task_id,omitempty"`
	CLI       string    `json:"cli"`
	Kind      string    `json:"kind"`
	// Subject is the command, path, URL or tool, as the agent gave it.
	Subject string `json:"subject"`
	// Decision is allow, deny or pending.
	Decision string `json:"decision"`
	// Asked is true when the policy left the decision to a person.
	Asked bool `json:"asked"`
	// DecidedBy is policy, person, timeout or shutdown; left out while
	// pending.
	DecidedBy string `json:"decided_by,omitempty"`
	// Rule is the rule of config/policy.yaml that decided or asked.
	Rule string `json:"rule,omitempty"`
	// Reason is the policy's reason, told to the agent.
	Reason string `json:"reason,omitempty"`
	// Via is where a person answered: cli, console or api.
	Via string `json:"via,omitempty"`
	// Note is what the person (or the time-out) added.
	Note string `json:"note,omitempty"`
}

// ApprovalFrom is a as the API shows it.
func ApprovalFrom(a store.Approval) Approval {
	out := Approval{ID: a.ID, AskedAt: a.AskedAt.UTC(), RunID: a.RunID, Role: a.Role, TaskID: a.TaskID, CLI: a.CLI,
		Kind: a.Kind, Subject: a.Subject, Decision: a.Decision, Asked: a.Asked, DecidedBy: a.DecidedBy,
		Rule: a.Rule, Reason: a.Reason, Via: a.Via, Note: a.Note}
	if !a.DecidedAt.IsZero() {
		out.DecidedAt = a.DecidedAt.UTC()
	}
	return out
}

// ApprovalsReply is GET /v1/approvals, and what `shogun approvals --json`
// prints.
type ApprovalsReply struct {
	// Approvals are in the order they were asked: the last limit of them,
	// at most MaxApprovalsListed.
	Approvals []Approval `json:"approvals"`
	// Total is how many approvals match (since, pending): more than
	// Approvals holds when the list was cut.
	Total int `json:"total"`
}

// AnswerRequest is the body of POST /v1/approvals/{id}/answer and POST
// /v1/roles/{id}/answer.
type AnswerRequest struct {
	// ID is the id of the question answered (Question.ID, as GET
	// /v1/questions gave it). With it, the answer reaches that question
	// or none: 409 "the question changed" when it is no longer open.
	// Without it, POST /v1/roles/{id}/answer answers the role's only open
	// question and refuses (409) a role with more than one.
	ID string `json:"id,omitempty"`
	// Decision is allow or deny.
	Decision string `json:"decision"`
	// Always, with allow, also allows the same action of the same role
	// without asking until the supervisor stops.
	Always bool `json:"always,omitempty"`
	// Note is recorded with the decision.
	Note string `json:"note,omitempty"`
	// Via says where the answer was given: cli, console or api (the
	// default).
	Via string `json:"via,omitempty"`
	// Kind, for a question on a CLI's screen, is the kind the person
	// means to answer: required unless it is a permission question, so
	// that nothing is typed into a trust or sign-in dialog by a "yes"
	// meant for a permission.
	Kind string `json:"kind,omitempty"`
	// Option, for a question on a CLI's screen, picks an option by its key
	// instead of decision (a trust or sign-in dialog's options mean
	// neither allow nor deny).
	Option string `json:"option,omitempty"`
}

// QuestionsReply is GET /v1/questions, and what `shogun questions --json`
// prints: what waits for a person's answer now.
type QuestionsReply struct {
	Questions []Question `json:"questions"`
}

// Question is one question waiting for a person: an action a CLI's hook
// asked about (source hook, its approval pending), or a dialog on a
// waiting role's screen (source screen).
type Question struct {
	// ID names the question while it is open: a hook's is its approval's
	// id (a number), a screen's starts with "s-" (a hash of the role,
	// when the dialog appeared and the whole dialog). An answer that
	// names it reaches this question or none.
	ID   string `json:"id"`
	Role string `json:"role"`
	CLI  string `json:"cli"`
	// Source is hook or screen.
	Source string `json:"source"`
	// Kind is permission, trust, sign-in or other.
	Kind string `json:"kind"`
	// Prompt is what is asked, as the screen says it (or, for a hook,
	// in shogun's words).
	Prompt string `json:"prompt"`
	// Subject is the command, file, URL or tool asked about, whole (a
	// command of several lines is their lines joined with "\n").
	Subject string `json:"subject,omitempty"`
	// Options are the answers, with the keys that pick them.
	Options []QuestionOption `json:"options"`
	// ApprovalID is the pending approval of a hook's question.
	ApprovalID int64 `json:"approval_id,omitempty"`
	// AskedAt is when a hook asked; left out for a screen.
	AskedAt time.Time `json:"asked_at,omitzero"`
}

// QuestionOption is one answer of a Question.
type QuestionOption struct {
	// Key picks it (the number on screen; y, a or n for a hook).
	Key   string `json:"key"`
	Label string `json:"label"`
	// Answer is yes, always or no when the option means one of them.
	Answer string `json:"answer,omitempty"`
}
