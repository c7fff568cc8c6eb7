package hooks

import (
	"testing"

	"github.com/shogun-dev/shogun/policy"
)

func TestClaudeToolsBecomeActions(t *testing.T) {
	for _, tc := range []struct {
		tool, input string
		want        policy.Action
		governed    bool
		bad         bool
	}{
		{"Bash", `{"command":"ls -la","description":"list"}`, policy.Action{Kind: policy.Shell, Command: "ls -la"}, true, false},
		{"Write", `{"file_path":"/w/a.go","content":"x"}`, policy.Action{Kind: policy.Write, Path: "/w/a.go"}, true, false},
		{"Edit", `{"file_path":"/w/a.go","old_string":"a","new_string":"b"}`, policy.Action{Kind: policy.Write, Path: "/w/a.go"}, true, false},
		{"Read", `{"file_path":"/w/a.go"}`, policy.Action{Kind: policy.Read, Path: "/w/a.go"}, true, false},
		{"Grep", `{"pattern":"x"}`, policy.Action{Kind: policy.Read, Path: "."}, true, false},
		{"Grep", `{"pattern":"/root/.ssh/x","path":"src"}`, policy.Action{Kind: policy.Read, Path: "src"}, true, false},
		{"Grep", `{"pattern":"x","glob":"runtime/state/*"}`, policy.Action{Kind: policy.Read, Path: "runtime/state"}, true, false},
		{"Grep", `{"pattern":"x","glob":"*.go","path":"src"}`, policy.Action{Kind: policy.Read, Path: "src"}, true, false},
		// A Glob reaches where its pattern leads, not only its path.
		{"Glob", `{"pattern":"/root/.ssh/**"}`, policy.Action{Kind: policy.Read, Path: "/root/.ssh"}, true, false},
		{"Glob", `{"pattern":"**/*.go"}`, policy.Action{Kind: policy.Read, Path: "."}, true, false},
		{"Glob", `{"pattern":"../runtime/state/*","path":"src"}`, policy.Action{Kind: policy.Read, Path: "runtime/state"}, true, false},
		{"Glob", `{"pattern":"data/shogun.db"}`, policy.Action{Kind: policy.Read, Path: "data"}, true, false},
		{"Glob", `{"pattern":"~/.ssh/id_*","path":"/w"}`, policy.Action{Kind: policy.Read, Path: "~/.ssh"}, true, false},
		{"Glob", `{"pattern":"/*"}`, policy.Action{Kind: policy.Read, Path: "/"}, true, false},
		{"WebFetch", `{"url":"https://go.dev","prompt":"p"}`, policy.Action{Kind: policy.Fetch, URL: "https://go.dev"}, true, false},
		{"mcp__shogun__report", `{}`, policy.Action{Kind: policy.MCP, Tool: "shogun/report"}, true, false},
		{"TodoWrite", `{"todos":[]}`, policy.Action{}, false, false},
		{"Bash", `{"command":""}`, policy.Action{}, false, true},
		{"Bash", `{"command":42}`, policy.Action{}, false, true},
	} {
		a, ok, err := ClaudeAction(tc.tool, []byte(tc.input))
		if (err != nil) != tc.bad || ok != tc.governed || a != tc.want {
			t.Errorf("ClaudeAction(%s, %s) = %+v, %v, %v; want %+v, governed %v, error %v", tc.tool, tc.input, a, ok, err, tc.want, tc.governed, tc.bad)
		}
	}
}

// Copilot CLI runs the same hooks with Claude Code's tool names, a file as
// "path", and an Edit as a patch's text: each file of the patch is a write.
func TestCopilotToolsBecomeActions(t *testing.T) {
	acts, ok, err := ClaudeActions("Read", []byte(`{"path":"/w/runtime/queue/tasks/copilot.yaml"}`))
	if err != nil || !ok || len(acts) != 1 || acts[0] != (policy.Action{Kind: policy.Read, Path: "/w/runtime/queue/tasks/copilot.yaml"}) {
		t.Errorf("Read with path = %+v, %v, %v", acts, ok, err)
	}
	patch := `"*** Begin Patch\n*** Add File: /w/out.txt\n+made\n*** Update File: /w/.git/config\n@@\n-x\n+y\n*** End Patch\n"`
	acts, ok, err = ClaudeActions("Edit", []byte(patch))
	if err != nil || !ok || len(acts) != 2 || acts[0].Path != "/w/out.txt" || acts[1].Path != "/w/.git/config" || acts[1].Kind != policy.Write {
		t.Errorf("Edit as a patch = %+v, %v, %v", acts, ok, err)
	}
	if _, _, err := ClaudeActions("Edit", []byte(`"no header at all"`)); err == nil {
		t.Error("a patch that names no file was taken")
	}
}
