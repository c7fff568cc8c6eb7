// Package hooks is what runs inside a CLI's own permission hook (`shogun
// hook claude`, `shogun hook codex`, `shogun hook gemini`): it turns the CLI's description of a tool call into a
// policy.Action, asks the running supervisor to decide it by the
// workspace's policy, waits while a person is asked, and answers in the
// CLI's own format.
//
// When there is nothing to ask (not run by shogun, no supervisor, no
// policy, a tool the policy does not govern) the hook gives no opinion, and
// the CLI's own permission settings decide as they would without it.
package hooks

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/shogun-dev/shogun/control"
	"github.com/shogun-dev/shogun/policy"
)

// Asker is the part of the supervisor's API a hook uses
// (*control.Client).
type Asker interface {
	Ask(control.ApprovalRequest) (control.Approval, error)
	WaitApproval(id int64, wait time.Duration) (control.Approval, error)
	// NoteSession tells the session the role's CLI holds now.
	NoteSession(role, id string) error
}

var _ Asker = (*control.Client)(nil)

// Options are a hook's surroundings.
type Options struct {
	// Role is the role the CLI runs as (SHOGUN_ROLE); "" means the CLI
	// was not started by shogun, and the hook gives no opinion.
	Role string
	// Supervisor answers the questions.
	Supervisor Asker
	// Limit is how long the hook may take in all: the time limit the CLI
	// gives it, less a margin. A question still open then is denied.
	Limit time.Duration
	// Poll is how long one wait for a person's answer lasts (default 25 s).
	Poll time.Duration
}

// maxInput bounds what the hook reads from the CLI: a tool call's input
// with a whole file to write fits.
const maxInput = 8 << 20

// verdict is a hook's decision: "" for no opinion, else allow, deny or ask
// (leave it to the CLI's own prompt) with a reason.
type verdict struct{ decision, reason string }

// decide asks the supervisor about action-shaped req and waits for the
// answer within the limit.
func decide(opts Options, req control.ApprovalRequest) verdict {
	a, err := opts.Supervisor.Ask(req)
	var apiErr *control.APIError
	switch {
	case errors.Is(err, control.ErrNoSupervisor):
		return verdict{} // the CLI's own settings, as without shogun
	case errors.As(err, &apiErr) && apiErr.Status == http.StatusBadRequest:
		return verdict{"deny", "shogun refused the request: " + apiErr.Message}
	case errors.As(err, &apiErr) && (apiErr.Status == http.StatusConflict || apiErr.Status == http.StatusNotFound):
		return verdict{} // no policy, or a role shogun does not know
	case err != nil:
		return verdict{"ask", "shogun could not decide: " + err.Error()}
	}
	poll := opts.Poll
	if poll <= 0 {
		poll = 25 * time.Second
	}
	deadline := time.Now().Add(opts.Limit)
	for a.Decision == "pending" {
		left := time.Until(deadline)
		if left <= 0 {
			return verdict{"deny", fmt.Sprintf("no answer from a person within the hook's time limit (approval %d)", a.ID)}
		}
		if a, err = opts.Supervisor.WaitApproval(a.ID, min(poll, left)); err != nil {
			return verdict{"deny", fmt.Sprintf("the supervisor stopped answering while a person was asked (approval %d): %v", a.ID, err)}
		}
	}
	return verdict{a.Decision, reasonOf(a)}
}

// reasonOf is what the agent is told about a decision.
func reasonOf(a control.Approval) string {
	switch {
	case a.DecidedBy == "person" && a.Note != "":
		return fmt.Sprintf("shogun: a person answered %s: %s", a.Decision, a.Note)
	case a.DecidedBy == "person":
		return fmt.Sprintf("shogun: a person answered %s", a.Decision)
	case a.DecidedBy == "timeout":
		return "shogun: nobody answered in time, so it is denied (" + a.Note + ")"
	case a.DecidedBy == "shutdown":
		return "shogun: the supervisor is stopping, so it is denied"
	}
	return "shogun policy: " + a.Reason
}

// Claude runs Claude Code's PreToolUse hook: the hook's JSON on in, the
// decision as JSON on out (nothing for no opinion).
func Claude(in io.Reader, out io.Writer, opts Options) error {
	data, err := io.ReadAll(io.LimitReader(in, maxInput+1))
	if err != nil {
		return fmt.Errorf("claude hook: read the tool call: %w", err)
	}
	if opts.Role == "" {
		return nil
	}
	noteSession(data, opts)
	v := claudeVerdict(data, opts)
	if v.decision == "" {
		return nil
	}
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(ClaudeHookOutput{HookSpecificOutput: ClaudeDecision{
		HookEventName: "PreToolUse", PermissionDecision: v.decision, PermissionDecisionReason: v.reason,
	}}); err != nil {
		return fmt.Errorf("claude hook: write the decision: %w", err)
	}
	return nil
}

func claudeVerdict(data []byte, opts Options) verdict {
	return preToolUseVerdict(data, opts, "claude", ClaudeActions)
}

// preToolUseVerdict decides a PreToolUse hook's input, which Claude Code
// and Codex share, by the CLI's reading of its tool calls (actions).
func preToolUseVerdict(data []byte, opts Options, cli string, actions func(tool string, input json.RawMessage) ([]policy.Action, bool, error)) verdict {
	if len(data) > maxInput {
		return verdict{"deny", fmt.Sprintf("shogun: the tool call is over %d bytes", maxInput)}
	}
	var in ClaudeHookInput
	if err := json.Unmarshal(data, &in); err != nil {
		return verdict{"deny", "shogun: the hook's input is not JSON: " + err.Error()}
	}
	if in.HookEventName != "PreToolUse" {
		return verdict{}
	}
	acts, governed, err := actions(in.ToolName, in.ToolInput)
	if err != nil {
		return verdict{"deny", "shogun: " + err.Error()}
	}
	if !governed {
		return verdict{}
	}
	return decideAll(opts, cli, in.Cwd, acts)
}

// decideAll asks the supervisor about each action of one tool call in
// turn. A patch of several files is allowed only when each file is; the
// first refusal (or lack of an opinion) is the answer.
func decideAll(opts Options, cli, cwd string, acts []policy.Action) verdict {
	var v verdict
	for _, a := range acts {
		v = decide(opts, control.ApprovalRequest{Role: opts.Role, CLI: cli, Kind: string(a.Kind),
			Command: a.Command, Path: a.Path, URL: a.URL, Tool: a.Tool, Cwd: cwd})
		if v.decision != "allow" {
			return v
		}
	}
	return v
}

// noteSession tells the supervisor the session id on a hook's input (all
// three CLIs write session_id), so that the role's next wake resumes its
// own conversation, even after a /clear. The hook runs inside the role's
// process tree, which is what lets the supervisor take the id as the
// role's; the supervisor checks its form. Nothing is told for an input
// that is not JSON or has no id, and a failure changes no decision.
func noteSession(data []byte, opts Options) {
	if len(data) > maxInput {
		return
	}
	var in struct {
		SessionID string `json:"session_id"`
	}
	if json.Unmarshal(data, &in) != nil || in.SessionID == "" {
		return
	}
	_ = opts.Supervisor.NoteSession(opts.Role, in.SessionID)
}
