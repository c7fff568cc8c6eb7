package hooks

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/control"
	"github.com/shogun-dev/shogun/policy"
)

// Codex 0.169.0's PreToolUse input: its shell tool as Bash with the whole
// line, a file edit as apply_patch with the patch's text, MCP tools as
// Claude Code names them.
func TestCodexToolsBecomeActions(t *testing.T) {
	for _, tc := range []struct {
		tool, input string
		want        []policy.Action
		governed    bool
		bad         bool
	}{
		{"Bash", `{"command":"git status"}`, []policy.Action{{Kind: policy.Shell, Command: "git status"}}, true, false},
		{"apply_patch", `{"command":"*** Begin Patch\n*** Add File: a.txt\n+x\n*** Update File: config/policy.yaml\n@@\n-a\n+b\n*** End Patch"}`,
			[]policy.Action{{Kind: policy.Write, Path: "a.txt"}, {Kind: policy.Write, Path: "config/policy.yaml"}}, true, false},
		{"mcp__shogun__report", `{"summary":"s"}`, []policy.Action{{Kind: policy.MCP, Tool: "shogun/report"}}, true, false},
		{"view_image", `{"path":"x.png"}`, nil, false, false},
		{"apply_patch", `{"command":"no headers"}`, nil, false, true},
		{"apply_patch", `{"command":7}`, nil, false, true},
		{"Bash", `{"command":["ls"]}`, nil, false, true},
	} {
		acts, ok, err := CodexActions(tc.tool, []byte(tc.input))
		if (err != nil) != tc.bad || ok != tc.governed || !slices.Equal(acts, tc.want) {
			t.Errorf("CodexActions(%s, %s) = %+v, %v, %v; want %+v, governed %v, error %v", tc.tool, tc.input, acts, ok, err, tc.want, tc.governed, tc.bad)
		}
	}
}

// Gemini CLI 0.61.0's built-in tools and their arguments.
func TestGeminiToolsBecomeActions(t *testing.T) {
	for _, tc := range []struct {
		tool, input string
		want        []policy.Action
		governed    bool
		bad         bool
	}{
		{"run_shell_command", `{"command":"git status","description":"d"}`, []policy.Action{{Kind: policy.Shell, Command: "git status"}}, true, false},
		{"run_shell_command", `{"command":"make","dir_path":"sub dir"}`, []policy.Action{{Kind: policy.Shell, Command: "cd 'sub dir' && make"}}, true, false},
		{"read_file", `{"file_path":"/w/a.go"}`, []policy.Action{{Kind: policy.Read, Path: "/w/a.go"}}, true, false},
		{"read_many_files", `{"include":["a.go","runtime/state/ui.token"]}`, []policy.Action{{Kind: policy.Read, Path: "a.go"}, {Kind: policy.Read, Path: "runtime/state/ui.token"}}, true, false},
		{"list_directory", `{"dir_path":"/etc"}`, []policy.Action{{Kind: policy.Read, Path: "/etc"}}, true, false},
		{"grep_search", `{"pattern":"x"}`, []policy.Action{{Kind: policy.Read, Path: "."}}, true, false},
		{"glob", `{"pattern":"/root/.ssh/**"}`, []policy.Action{{Kind: policy.Read, Path: "/root/.ssh/**"}}, true, false},
		{"write_file", `{"file_path":"config/policy.yaml","content":"x"}`, []policy.Action{{Kind: policy.Write, Path: "config/policy.yaml"}}, true, false},
		{"replace", `{"file_path":"a.go","old_string":"a","new_string":"b"}`, []policy.Action{{Kind: policy.Write, Path: "a.go"}}, true, false},
		{"web_fetch", `{"prompt":"summarize https://go.dev/doc and http://x.example/y"}`, []policy.Action{{Kind: policy.Fetch, URL: "https://go.dev/doc"}, {Kind: policy.Fetch, URL: "http://x.example/y"}}, true, false},
		{"google_web_search", `{"query":"q"}`, []policy.Action{{Kind: policy.Fetch}}, true, false},
		{"mcp__shogun__report", `{}`, []policy.Action{{Kind: policy.MCP, Tool: "shogun/report"}}, true, false},
		{"write_todos", `{"todos":[]}`, nil, false, false},
		{"run_shell_command", `{"command":""}`, nil, false, true},
		{"write_file", `{"file_path":42}`, nil, false, true},
		{"read_many_files", `{}`, nil, false, true},
	} {
		acts, ok, err := GeminiActions(tc.tool, []byte(tc.input))
		if (err != nil) != tc.bad || ok != tc.governed || !slices.Equal(acts, tc.want) {
			t.Errorf("GeminiActions(%s, %s) = %+v, %v, %v; want %+v, governed %v, error %v", tc.tool, tc.input, acts, ok, err, tc.want, tc.governed, tc.bad)
		}
	}
}

// What each hook prints for the supervisor's answers: Codex takes only a
// deny (with its reason) and nothing else; Gemini CLI a deny or an ask,
// and nothing for an allow, which its own policy then decides.
func TestCodexAndGeminiHookOutput(t *testing.T) {
	allow := &fakeSupervisor{ask: control.Approval{Decision: "allow", DecidedBy: "policy", Reason: "inside"}}
	deny := &fakeSupervisor{ask: control.Approval{Decision: "deny", DecidedBy: "policy", Reason: "config/ is not for agents"}}
	pending := control.Approval{ID: 3, Decision: "pending"}
	person := &fakeSupervisor{ask: pending, wait: control.Approval{ID: 3, Decision: "deny", DecidedBy: "person", Note: "not now"}}
	stuck := &fakeSupervisor{askErr: &control.APIError{Status: 500, Message: "boom"}}
	codexIn := `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"echo x >> config/policy.yaml"},"cwd":"/w","turn_id":"t","tool_use_id":"u"}`
	geminiIn := `{"hook_event_name":"BeforeTool","tool_name":"run_shell_command","tool_input":{"command":"echo x >> config/policy.yaml"},"cwd":"/w","timestamp":"2026-01-01T00:00:00Z"}`
	for _, tc := range []struct {
		name string
		run  func(*bytes.Buffer, Options) error
		sup  *fakeSupervisor
		want string // JSON printed, "" for nothing
	}{
		{"codex allow", codexRun(codexIn), allow, ""},
		{"codex deny", codexRun(codexIn), deny, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"shogun policy: config/ is not for agents"}}`},
		{"codex person", codexRun(codexIn), person, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"shogun: a person answered deny: not now"}}`},
		{"codex stuck", codexRun(codexIn), stuck, ""},
		{"codex other event", codexRun(`{"hook_event_name":"PostToolUse","tool_name":"Bash"}`), deny, ""},
		{"gemini allow", geminiRun(geminiIn), allow, ""},
		{"gemini deny", geminiRun(geminiIn), deny, `{"decision":"deny","reason":"shogun policy: config/ is not for agents"}`},
		{"gemini person", geminiRun(geminiIn), person, `{"decision":"deny","reason":"shogun: a person answered deny: not now"}`},
		{"gemini stuck", geminiRun(geminiIn), stuck, `{"decision":"ask","reason":"shogun could not decide: boom"}`},
		{"gemini not JSON", geminiRun(`{`), allow, `{"decision":"deny","reason":"shogun: the hook's input is not JSON: unexpected end of JSON input"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := tc.run(&out, Options{Role: "dev", Supervisor: tc.sup, Limit: time.Second, Poll: 5 * time.Millisecond}); err != nil {
				t.Fatal(err)
			}
			if got := strings.TrimSpace(out.String()); got != tc.want {
				t.Errorf("printed %s\nwant    %s", got, tc.want)
			}
			if tc.want != "" && !json.Valid(out.Bytes()) {
				t.Errorf("not JSON: %s", out.String())
			}
		})
	}
	// The supervisor is asked with the CLI's name and folder.
	if len(deny.asked) == 0 || deny.asked[0] != (control.ApprovalRequest{Role: "dev", CLI: "codex", Kind: "shell", Command: "echo x >> config/policy.yaml", Cwd: "/w"}) {
		t.Errorf("codex asked %+v", deny.asked)
	}
	if last := deny.asked[len(deny.asked)-1]; last.CLI != "gemini" || last.Command != "echo x >> config/policy.yaml" {
		t.Errorf("gemini asked %+v", last)
	}
}

func codexRun(in string) func(*bytes.Buffer, Options) error {
	return func(out *bytes.Buffer, o Options) error { return Codex(strings.NewReader(in), out, o) }
}

func geminiRun(in string) func(*bytes.Buffer, Options) error {
	return func(out *bytes.Buffer, o Options) error { return Gemini(strings.NewReader(in), out, o) }
}
