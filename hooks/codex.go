package hooks

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/shogun-dev/shogun/policy"
)

// Codex runs Codex's PreToolUse hook: the hook's JSON on in (the pinned
// 0.169.0 writes Claude Code's fields: hook_event_name, tool_name,
// tool_input, cwd, and more), a refusal as JSON on out.
//
// Codex 0.169.0 takes only "deny" from a PreToolUse hook: "allow" and
// "ask" are refused as unsupported. So an action the policy allows, or a
// person allowed, gets no output, and Codex's own sandbox and approval
// policy decide it as they would without shogun; a deny is
// hookSpecificOutput.permissionDecision "deny" with the reason, which Codex
// tells the model ("Command blocked by PreToolUse hook: …").
func Codex(in io.Reader, out io.Writer, opts Options) error {
	data, err := io.ReadAll(io.LimitReader(in, maxInput+1))
	if err != nil {
		return fmt.Errorf("codex hook: read the tool call: %w", err)
	}
	if opts.Role == "" {
		return nil
	}
	noteSession(data, opts)
	v := codexVerdict(data, opts)
	if v.decision != "deny" {
		return nil
	}
	if err := writeJSON(out, ClaudeHookOutput{HookSpecificOutput: ClaudeDecision{
		HookEventName: "PreToolUse", PermissionDecision: "deny", PermissionDecisionReason: v.reason,
	}}); err != nil {
		return fmt.Errorf("codex hook: write the decision: %w", err)
	}
	return nil
}

func codexVerdict(data []byte, opts Options) verdict {
	return preToolUseVerdict(data, opts, "codex", CodexActions)
}

// CodexActions turns a Codex tool call, as its PreToolUse hook describes
// it, into the policy.Actions it takes. Codex 0.169.0 names its shell tool
// "Bash" (tool_input.command, the whole line), its file edits
// "apply_patch" (tool_input.command, the patch's text: each file a write)
// and an MCP tool "mcp__SERVER__TOOL". ok is false for a tool the policy
// does not govern.
func CodexActions(tool string, input json.RawMessage) (acts []policy.Action, ok bool, err error) {
	switch {
	case tool == "apply_patch":
		var in struct {
			Command string `json:"command"`
		}
		if err := json.Unmarshal(input, &in); err != nil {
			return nil, false, fmt.Errorf("codex tool apply_patch: input: %w", err)
		}
		paths := patchFiles(in.Command)
		if len(paths) == 0 {
			return nil, false, fmt.Errorf("codex tool apply_patch: a patch that names no file")
		}
		for _, p := range paths {
			acts = append(acts, policy.Action{Kind: policy.Write, Path: p})
		}
		return acts, true, nil
	case tool == "Bash", strings.HasPrefix(tool, "mcp__"):
		return ClaudeActions(tool, input)
	}
	return nil, false, nil
}

// writeJSON writes v as one line of JSON, HTML characters as they are.
func writeJSON(out io.Writer, v any) error {
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
