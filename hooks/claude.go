package hooks

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/shogun-dev/shogun/policy"
)

// ClaudeHookInput is what Claude Code writes on a PreToolUse hook's
// standard input (seen in the pinned 2.1.197: session_id, transcript_path,
// cwd, permission_mode, hook_event_name, tool_name, tool_input,
// tool_use_id). Only the fields a decision needs are kept.
type ClaudeHookInput struct {
	HookEventName string          `json:"hook_event_name"`
	ToolName      string          `json:"tool_name"`
	ToolInput     json.RawMessage `json:"tool_input"`
	Cwd           string          `json:"cwd"`
}

// ClaudeHookOutput is what a PreToolUse hook prints for Claude Code to
// act on: hookSpecificOutput.permissionDecision "allow", "deny" or "ask"
// (the pinned version also knows "defer"), and a reason that Claude Code
// shows to the model on a deny.
type ClaudeHookOutput struct {
	HookSpecificOutput ClaudeDecision `json:"hookSpecificOutput"`
}

// ClaudeDecision is the hookSpecificOutput of ClaudeHookOutput.
type ClaudeDecision struct {
	HookEventName            string `json:"hookEventName"`
	PermissionDecision       string `json:"permissionDecision"`
	PermissionDecisionReason string `json:"permissionDecisionReason,omitempty"`
}

// ClaudeActions turns a Claude Code tool call into the policy.Actions it
// takes: one, or one per file of a patch. ok is false for a tool the
// policy does not govern (TodoWrite, Agent …), which the hook leaves to
// the CLI's own settings. A governed tool whose input does not have the
// expected shape is an error: an agent's input is not trusted to be well
// formed.
//
// Copilot CLI 1.0.102 runs the same hooks (it reads .claude/settings.json)
// with Claude Code's tool names, but names a file "path" and gives an Edit
// as the text of a patch ("*** Add File: PATH" …): both are read here.
func ClaudeActions(tool string, input json.RawMessage) (acts []policy.Action, ok bool, err error) {
	var patch string
	if (tool == "Edit" || tool == "Write") && json.Unmarshal(input, &patch) == nil {
		paths := patchFiles(patch)
		if len(paths) == 0 {
			return nil, false, fmt.Errorf("claude tool %s: a patch that names no file", tool)
		}
		for _, p := range paths {
			acts = append(acts, policy.Action{Kind: policy.Write, Path: p})
		}
		return acts, true, nil
	}
	a, ok, err := ClaudeAction(tool, input)
	if !ok || err != nil {
		return nil, ok, err
	}
	return []policy.Action{a}, true, nil
}

// globReach is the folder a glob pattern searched from base can reach:
// base joined with the pattern's segments before the first one with a
// wildcard (the whole pattern when it is absolute or starts with ~).
func globReach(base, pattern string) string {
	segs := strings.Split(strings.ReplaceAll(pattern, `\`, "/"), "/")
	fixed := 0
	for fixed < len(segs) && !strings.ContainsAny(segs[fixed], "*?[{") {
		fixed++
	}
	if fixed == len(segs) {
		// No wildcard: the pattern names one file, which is read where
		// it is; its folder is what the tool lists.
		fixed = len(segs) - 1
	}
	prefix := strings.Join(segs[:fixed], "/")
	switch {
	case prefix == "" && strings.HasPrefix(pattern, "/"):
		return "/"
	case prefix == "":
		return base
	case filepath.IsAbs(filepath.FromSlash(prefix)) || strings.HasPrefix(prefix, "/") || strings.HasPrefix(prefix, "~"):
		return prefix
	}
	return filepath.ToSlash(filepath.Join(base, prefix))
}

// patchFiles are the files a patch in the apply_patch format touches.
func patchFiles(patch string) []string {
	var out []string
	for _, line := range strings.Split(patch, "\n") {
		for _, head := range []string{"*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: "} {
			if p, ok := strings.CutPrefix(strings.TrimRight(line, "\r"), head); ok && strings.TrimSpace(p) != "" {
				out = append(out, strings.TrimSpace(p))
			}
		}
	}
	return out
}

// ClaudeAction turns a Claude Code tool call into a policy.Action. ok is false
// for a tool the policy does not govern (TodoWrite, Agent …), which the
// hook leaves to Claude Code's own settings. A governed tool whose input
// does not have the expected shape is an error: an agent's input is not
// trusted to be well formed.
func ClaudeAction(tool string, input json.RawMessage) (a policy.Action, ok bool, err error) {
	var in struct {
		Command      string `json:"command"`
		FilePath     string `json:"file_path"`
		NotebookPath string `json:"notebook_path"`
		Path         string `json:"path"`
		URL          string `json:"url"`
		Pattern      string `json:"pattern"`
		Glob         string `json:"glob"`
	}
	if len(input) > 0 {
		if err := json.Unmarshal(input, &in); err != nil {
			return policy.Action{}, false, fmt.Errorf("claude tool %s: input: %w", tool, err)
		}
	}
	// Copilot CLI 1.0.102 runs the same hooks (from .claude/settings.json)
	// with Claude Code's tool names, but names a file "path".
	file := in.FilePath
	if file == "" {
		file = in.Path
	}
	switch tool {
	case "Bash":
		a = policy.Action{Kind: policy.Shell, Command: in.Command}
	case "Read":
		a = policy.Action{Kind: policy.Read, Path: file}
	case "Glob", "Grep", "LS":
		a = policy.Action{Kind: policy.Read, Path: in.Path}
		if a.Path == "" {
			a.Path = "." // the working directory, as the tool takes it
		}
		switch {
		case tool == "Glob":
			// A Glob's pattern reaches where its fixed part leads:
			// {"pattern":"/root/.ssh/**"} reads /root/.ssh.
			a.Path = globReach(a.Path, in.Pattern)
		case tool == "Grep" && strings.Contains(in.Glob, "/"):
			// So does a Grep's file filter when it names folders.
			a.Path = globReach(a.Path, in.Glob)
		}
	case "Write", "Edit", "MultiEdit":
		a = policy.Action{Kind: policy.Write, Path: file}
	case "NotebookEdit":
		a = policy.Action{Kind: policy.Write, Path: in.NotebookPath}
	case "WebFetch":
		a = policy.Action{Kind: policy.Fetch, URL: in.URL}
	case "WebSearch":
		a = policy.Action{Kind: policy.Fetch}
	default:
		server, name, isMCP := strings.Cut(strings.TrimPrefix(tool, "mcp__"), "__")
		if !strings.HasPrefix(tool, "mcp__") || !isMCP {
			return policy.Action{}, false, nil
		}
		a = policy.Action{Kind: policy.MCP, Tool: server + "/" + name}
	}
	if err := a.Validate(); err != nil {
		return policy.Action{}, false, fmt.Errorf("claude tool %s: %w", tool, err)
	}
	return a, true, nil
}
