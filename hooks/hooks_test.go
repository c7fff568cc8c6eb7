package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/control"
)

// fakeSupervisor answers Ask with ask and every wait with wait.
type fakeSupervisor struct {
	ask     control.Approval
	askErr  error
	wait    control.Approval
	waitErr error
	asked   []control.ApprovalRequest
	// sessions are the session ids told, as role=id.
	sessions []string
}

func (f *fakeSupervisor) NoteSession(role, id string) error {
	f.sessions = append(f.sessions, role+"="+id)
	return nil
}

func (f *fakeSupervisor) Ask(r control.ApprovalRequest) (control.Approval, error) {
	f.asked = append(f.asked, r)
	return f.ask, f.askErr
}

func (f *fakeSupervisor) WaitApproval(int64, time.Duration) (control.Approval, error) {
	time.Sleep(time.Millisecond)
	return f.wait, f.waitErr
}

func hookInput(tool string, input any) string {
	b, _ := json.Marshal(map[string]any{"hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": input, "cwd": "/w/src"})
	return string(b)
}

// What Claude Code is told when something goes wrong around the question:
// a refusal denies, a supervisor that is not there or has no policy gives
// no opinion, one that vanishes mid-question denies, and so does the hook's
// own time limit.
func TestClaudeHookWhenThingsGoWrong(t *testing.T) {
	pending := control.Approval{ID: 7, Decision: "pending"}
	for _, tc := range []struct {
		name     string
		input    string
		sup      *fakeSupervisor
		decision string
		reason   string
	}{
		{"no supervisor", hookInput("Bash", map[string]any{"command": "ls"}), &fakeSupervisor{askErr: control.ErrNoSupervisor}, "", ""},
		{"no policy", hookInput("Bash", map[string]any{"command": "ls"}), &fakeSupervisor{askErr: &control.APIError{Status: http.StatusConflict, Message: "no approvals policy"}}, "", ""},
		{"refused", hookInput("Bash", map[string]any{"command": "ls"}), &fakeSupervisor{askErr: &control.APIError{Status: http.StatusBadRequest, Message: "action: bad"}}, "deny", "action: bad"},
		{"stuck supervisor", hookInput("Bash", map[string]any{"command": "ls"}), &fakeSupervisor{askErr: errors.New("the supervisor did not answer")}, "ask", "could not decide"},
		{"gone mid-question", hookInput("Bash", map[string]any{"command": "ls"}), &fakeSupervisor{ask: pending, waitErr: errors.New("gone")}, "deny", "stopped answering"},
		{"time limit", hookInput("Bash", map[string]any{"command": "ls"}), &fakeSupervisor{ask: pending, wait: pending}, "deny", "time limit"},
		{"not JSON", "{not json", &fakeSupervisor{}, "deny", "not JSON"},
		{"bad tool input", hookInput("Bash", map[string]any{"command": 42}), &fakeSupervisor{}, "deny", "input"},
		{"oversize", hookInput("Write", map[string]any{"file_path": "/w/a", "content": strings.Repeat("x", maxInput)}), &fakeSupervisor{}, "deny", "over"},
		{"another event", `{"hook_event_name":"PostToolUse","tool_name":"Bash"}`, &fakeSupervisor{}, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := Claude(strings.NewReader(tc.input), &out, Options{Role: "dev", Supervisor: tc.sup, Limit: 50 * time.Millisecond, Poll: 5 * time.Millisecond}); err != nil {
				t.Fatal(err)
			}
			if tc.decision == "" {
				if out.Len() != 0 {
					t.Errorf("printed %q, want nothing (no opinion)", out.String())
				}
				return
			}
			var o ClaudeHookOutput
			if err := json.Unmarshal(out.Bytes(), &o); err != nil {
				t.Fatalf("printed %q: %v", out.String(), err)
			}
			if d := o.HookSpecificOutput; d.HookEventName != "PreToolUse" || d.PermissionDecision != tc.decision || !strings.Contains(d.PermissionDecisionReason, tc.reason) {
				t.Errorf("decision %+v, want %s saying %q", d, tc.decision, tc.reason)
			}
		})
	}
}

// The supervisor is asked with the CLI's folder, so relative paths are
// judged where the CLI's shell is.
func TestClaudeHookSendsTheCLIsFolder(t *testing.T) {
	sup := &fakeSupervisor{ask: control.Approval{Decision: "allow", DecidedBy: "policy", Reason: "r"}}
	var out bytes.Buffer
	if err := Claude(strings.NewReader(hookInput("Bash", map[string]any{"command": "rm -rf build"})), &out, Options{Role: "dev", Supervisor: sup, Limit: time.Second}); err != nil {
		t.Fatal(err)
	}
	if len(sup.asked) != 1 || sup.asked[0] != (control.ApprovalRequest{Role: "dev", CLI: "claude", Kind: "shell", Command: "rm -rf build", Cwd: "/w/src"}) {
		t.Errorf("asked %+v", sup.asked)
	}
}

// Each CLI's hook tells the supervisor the session id on its input, even
// for a tool the policy does not govern, so that the role's wake resumes
// its own conversation; an input without one tells nothing.
func TestHooksTellTheSession(t *testing.T) {
	const id = "0f8e3c1a-6b2d-4c11-9a7e-2d5b8f10c3aa"
	for _, tc := range []struct {
		cli  string
		hook func(io.Reader, io.Writer, Options) error
		in   string
	}{
		{"claude", Claude, `{"session_id":"` + id + `","hook_event_name":"PreToolUse","tool_name":"TodoWrite","tool_input":{}}`},
		{"codex", Codex, `{"session_id":"` + id + `","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"cat a"}}`},
		{"gemini", Gemini, `{"session_id":"` + id + `","hook_event_name":"BeforeTool","tool_name":"read_file","tool_input":{"file_path":"a"}}`},
	} {
		t.Run(tc.cli, func(t *testing.T) {
			sup := &fakeSupervisor{askErr: control.ErrNoSupervisor}
			if err := tc.hook(strings.NewReader(tc.in), io.Discard, Options{Role: "dev", Supervisor: sup, Limit: time.Second}); err != nil {
				t.Fatal(err)
			}
			if len(sup.sessions) != 1 || sup.sessions[0] != "dev="+id {
				t.Errorf("told %q, want dev=%s", sup.sessions, id)
			}
			sup = &fakeSupervisor{askErr: control.ErrNoSupervisor}
			if err := tc.hook(strings.NewReader(strings.Replace(tc.in, id, "", 1)), io.Discard, Options{Role: "dev", Supervisor: sup, Limit: time.Second}); err != nil {
				t.Fatal(err)
			}
			if len(sup.sessions) != 0 {
				t.Errorf("told %q for an input without a session", sup.sessions)
			}
		})
	}
}
