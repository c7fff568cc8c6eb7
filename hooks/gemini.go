package hooks

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/shogun-dev/shogun/policy"
)

// GeminiHookInput is what Gemini CLI writes on a BeforeTool hook's
// standard input (the pinned 0.61.0: session_id, transcript_path, cwd,
// hook_event_name, timestamp, tool_name, tool_input, mcp_context,
// original_request_name). Only the fields a decision needs are kept.
type GeminiHookInput struct {
	HookEventName string          `json:"hook_event_name"`
	ToolName      string          `json:"tool_name"`
	ToolInput     json.RawMessage `json:"tool_input"`
	Cwd           string          `json:"cwd"`
	// MCPContext names the server and its tool for an MCP tool call.
	MCPContext *struct {
		ServerName string `json:"server_name"`
		ToolName   string `json:"tool_name"`
	} `json:"mcp_context"`
}

// GeminiHookOutput is what a BeforeTool hook prints for Gemini CLI 0.61.0
// (exit status 0): decision "deny" refuses the call and tells the model
// reason ("Tool execution blocked: …"); "ask" makes Gemini CLI ask on its
// own screen whatever its policy says. Gemini CLI's own policy still
// decides an action the hook does not refuse, so an allow prints nothing.
type GeminiHookOutput struct {
	Decision string `json:"decision"`
	Reason   string `json:"reason,omitempty"`
}

// Gemini runs Gemini CLI's BeforeTool hook: the hook's JSON on in, the
// decision as JSON on out (nothing for no opinion and for an allow).
func Gemini(in io.Reader, out io.Writer, opts Options) error {
	data, err := io.ReadAll(io.LimitReader(in, maxInput+1))
	if err != nil {
		return fmt.Errorf("gemini hook: read the tool call: %w", err)
	}
	if opts.Role == "" {
		return nil
	}
	noteSession(data, opts)
	v := geminiVerdict(data, opts)
	if v.decision != "deny" && v.decision != "ask" {
		return nil
	}
	if err := writeJSON(out, GeminiHookOutput{Decision: v.decision, Reason: v.reason}); err != nil {
		return fmt.Errorf("gemini hook: write the decision: %w", err)
	}
	return nil
}

func geminiVerdict(data []byte, opts Options) verdict {
	if len(data) > maxInput {
		return verdict{"deny", fmt.Sprintf("shogun: the tool call is over %d bytes", maxInput)}
	}
	var in GeminiHookInput
	if err := json.Unmarshal(data, &in); err != nil {
		return verdict{"deny", "shogun: the hook's input is not JSON: " + err.Error()}
	}
	if in.HookEventName != "BeforeTool" {
		return verdict{}
	}
	tool := in.ToolName
	if in.MCPContext != nil && in.MCPContext.ServerName != "" && in.MCPContext.ToolName != "" {
		tool = "mcp__" + in.MCPContext.ServerName + "__" + in.MCPContext.ToolName
	}
	acts, governed, err := GeminiActions(tool, in.ToolInput)
	if err != nil {
		return verdict{"deny", "shogun: " + err.Error()}
	}
	if !governed {
		return verdict{}
	}
	return decideAll(opts, "gemini", in.Cwd, acts)
}

// urlPattern finds the URLs of a web_fetch prompt, which is where Gemini
// CLI's tool takes them from.
var urlPattern = regexp.MustCompile(`https?://[^\s"'<>()\[\]{}]+`)

// GeminiActions turns a Gemini CLI tool call into the policy.Actions it
// takes (the pinned 0.61.0's built-in tools and their arguments; an MCP
// tool named "mcp__SERVER__TOOL", from the hook's mcp_context). ok is false
// for a tool the policy does not govern (write_todos, ask_user …). A
// governed tool whose input does not have the expected shape is an error.
func GeminiActions(tool string, input json.RawMessage) (acts []policy.Action, ok bool, err error) {
	var in struct {
		Command  string   `json:"command"`
		DirPath  string   `json:"dir_path"`
		FilePath string   `json:"file_path"`
		Pattern  string   `json:"pattern"`
		Include  []string `json:"include"`
		Prompt   string   `json:"prompt"`
	}
	if len(input) > 0 {
		if err := json.Unmarshal(input, &in); err != nil {
			return nil, false, fmt.Errorf("gemini tool %s: input: %w", tool, err)
		}
	}
	dir := in.DirPath
	if dir == "" {
		dir = "." // the working directory, as the tools take it
	}
	switch tool {
	case "run_shell_command":
		cmd := in.Command
		if in.DirPath != "" {
			// The command runs there: judge it as the line would be.
			cmd = "cd " + shellWord(in.DirPath) + " && " + cmd
		}
		acts = []policy.Action{{Kind: policy.Shell, Command: cmd}}
	case "read_file":
		acts = []policy.Action{{Kind: policy.Read, Path: in.FilePath}}
	case "list_directory", "grep_search", "search_file_content":
		acts = []policy.Action{{Kind: policy.Read, Path: dir}}
	case "glob":
		// Where the pattern reaches: an absolute pattern names its own folder.
		p := dir
		// On Windows "/root/.ssh/**" is rooted on the current drive: as
		// absolute for where it reaches as C:\root.
		if filepath.IsAbs(in.Pattern) || strings.HasPrefix(in.Pattern, "/") || strings.HasPrefix(in.Pattern, `\`) {
			p = in.Pattern
		}
		acts = []policy.Action{{Kind: policy.Read, Path: p}}
	case "read_many_files":
		if len(in.Include) == 0 {
			return nil, false, fmt.Errorf("gemini tool read_many_files: no include")
		}
		for _, p := range in.Include {
			acts = append(acts, policy.Action{Kind: policy.Read, Path: p})
		}
	case "write_file", "replace":
		acts = []policy.Action{{Kind: policy.Write, Path: in.FilePath}}
	case "web_fetch":
		urls := urlPattern.FindAllString(in.Prompt, 20)
		if len(urls) == 0 {
			urls = []string{""}
		}
		for _, u := range urls {
			acts = append(acts, policy.Action{Kind: policy.Fetch, URL: u})
		}
	case "google_web_search":
		acts = []policy.Action{{Kind: policy.Fetch}}
	default:
		server, name, isMCP := strings.Cut(strings.TrimPrefix(tool, "mcp__"), "__")
		if !strings.HasPrefix(tool, "mcp__") || !isMCP {
			return nil, false, nil
		}
		acts = []policy.Action{{Kind: policy.MCP, Tool: server + "/" + name}}
	}
	for _, a := range acts {
		if err := a.Validate(); err != nil {
			return nil, false, fmt.Errorf("gemini tool %s: %w", tool, err)
		}
	}
	return acts, true, nil
}

// shellWord quotes s as one word of a shell line.
func shellWord(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
