package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/shogun-dev/shogun/roles"
	"github.com/shogun-dev/shogun/workspace"
)

// MCPServerName is the name the CLIs know shogun's MCP server by: their
// tool names are built from it (Claude Code's mcp__shogun__report).
const MCPServerName = "shogun"

// MCPEnv are the variables `shogun mcp` reads: the workspace and the role it
// speaks for. The supervisor sets both in every role's environment; each
// CLI must pass them on to the servers it starts.
var MCPEnv = []string{"SHOGUN_WORKSPACE", "SHOGUN_ROLE"}

// MCPClientFile is one CLI's MCP configuration, as `shogun init` writes it
// into the workspace, where each CLI looks for a project's configuration
// when it runs there (a role's cwd is the workspace unless set otherwise).
type MCPClientFile struct {
	// Path is relative to the workspace, slash separated.
	Path string
	// CLIs names the presets that read the file.
	CLIs []string
	// Content is the file.
	Content []byte
}

// MCPClientFiles returns the MCP configuration files that make each CLI
// start `exe mcp` as its tool server "shogun"; exe "" means "shogun", looked
// up in PATH. How each CLI reads them, as seen with the pinned versions
// (Claude Code 2.1.197, Codex 0.169.0, Gemini CLI 0.61.0, Copilot CLI
// 1.0.102):
//
//   - .mcp.json: the project's servers for Claude Code, and for Copilot CLI
//     in a trusted folder. Both start a server with their whole
//     environment, so SHOGUN_WORKSPACE and SHOGUN_ROLE reach it.
//   - .claude/settings.json: Claude Code asks before it starts a server of
//     .mcp.json ("New MCP server found") unless enabledMcpjsonServers names
//     it, and before each tool call unless permissions.allow does. Its
//     PreToolUse hook runs `exe hook claude` before every tool call, which
//     asks the supervisor to decide by config/policy.yaml (ClaudeHook).
//   - .codex/config.toml: Codex's project configuration, read once the
//     project is trusted. Codex starts servers with a few variables of its
//     own (HOME, PATH …); env_vars passes on the two shogun needs.
//   - .gemini/settings.json: Gemini CLI's project settings, read in a
//     trusted folder; it starts servers with its whole environment, and
//     trust skips the confirmation of each tool call. adminPolicyPaths names
//     GeminiPolicyFile, config/policy.yaml's shell deny rules in Gemini
//     CLI's policy engine (GeminiPolicy; a path relative to the CLI's cwd).
//     Its BeforeTool hook runs `exe hook gemini` (time limit in ms), the
//     same as in the system settings CLIEnforcement gives where Gemini CLI
//     reads them (it runs an identical hook once).
//
// A role whose program is the CLI itself gets its hook and server from
// outside the workspace instead where the CLI allows it (CLIEnforcement);
// these files serve the rest: a CLI run by a wrapper, Copilot CLI, and
// Gemini CLI where it does not read shogun's system settings.
func MCPClientFiles(exe string) ([]MCPClientFile, error) {
	if exe == "" {
		exe = "shogun"
	}
	type server struct {
		Type    string   `json:"type,omitempty"`
		Command string   `json:"command"`
		Args    []string `json:"args"`
		Trust   bool     `json:"trust,omitempty"`
	}
	type servers struct {
		MCPServers map[string]server `json:"mcpServers"`
	}
	args := []string{"mcp"}
	mcpJSON, err := jsonFile(servers{map[string]server{MCPServerName: {Type: "stdio", Command: exe, Args: args}}})
	if err != nil {
		return nil, err
	}
	gemini, err := jsonFile(struct {
		servers
		AdminPolicyPaths []string       `json:"adminPolicyPaths"`
		Hooks            map[string]any `json:"hooks"`
	}{servers{map[string]server{MCPServerName: {Command: exe, Args: args, Trust: true}}}, []string{GeminiPolicyFile},
		hooksFor(exe, "gemini", "BeforeTool", ClaudeHookTimeout*1000)})
	if err != nil {
		return nil, err
	}
	claude, err := jsonFile(map[string]any{
		"enabledMcpjsonServers": []string{MCPServerName},
		"permissions":           map[string]any{"allow": []string{"mcp__" + MCPServerName}},
		"hooks":                 claudeHooks(exe),
	})
	if err != nil {
		return nil, err
	}
	codex, err := codexTOML(exe, args)
	if err != nil {
		return nil, err
	}
	return []MCPClientFile{
		{Path: workspace.MCPJSONFile, CLIs: []string{roles.CLIClaude, roles.CLICopilot}, Content: mcpJSON},
		{Path: workspace.ClaudeSettingsFile, CLIs: []string{roles.CLIClaude}, Content: claude},
		{Path: workspace.CodexConfigFile, CLIs: []string{roles.CLICodex}, Content: codex},
		{Path: workspace.GeminiSettingsFile, CLIs: []string{roles.CLIGemini}, Content: gemini},
	}, nil
}

// ClaudeHookTimeout is the time limit the hook configuration gives `shogun
// hook claude`, in seconds: longer than any approvals.timeout, so that the
// supervisor's time-out, which is recorded, comes first.
const ClaudeHookTimeout = int(MaxApprovalTimeout/time.Second) + 60

// claudeHooks is the hooks key of .claude/settings.json: one PreToolUse
// hook for every tool ("*", which the pinned Claude Code 2.1.197 treats as
// match-all), so that the policy sees every call and the hook itself says
// which ones it governs.
func claudeHooks(exe string) map[string]any {
	return map[string]any{
		"PreToolUse": []any{map[string]any{
			"matcher": "*",
			"hooks": []any{map[string]any{
				"type":    "command",
				"command": shellQuote(exe) + " hook claude",
				"timeout": ClaudeHookTimeout,
			}},
		}},
	}
}

// shellQuote quotes a program path for the shell Claude Code runs hook
// commands with, when it needs quoting.
func shellQuote(s string) string {
	plain := s != ""
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("_-./:\\", c)) {
			plain = false
		}
	}
	if plain {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func jsonFile(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("mcp client files: %w", err)
	}
	return buf.Bytes(), nil
}

// codexTOML is Codex's [mcp_servers.shogun] table, with comments. A JSON
// string is a TOML basic string (the escapes Go's encoder writes, \" \\ \n
// \r \t \uXXXX, are TOML's too), so paths with backslashes or quotes come
// out right.
func codexTOML(exe string, args []string) ([]byte, error) {
	str := func(s string) (string, error) {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		err := enc.Encode(s)
		return strings.TrimSuffix(buf.String(), "\n"), err
	}
	list := func(vs []string) (string, error) {
		q := make([]string, len(vs))
		for i, v := range vs {
			var err error
			if q[i], err = str(v); err != nil {
				return "", err
			}
		}
		return "[" + strings.Join(q, ", ") + "]", nil
	}
	cmd, err := str(exe)
	if err != nil {
		return nil, fmt.Errorf("mcp client files: %w", err)
	}
	argList, _ := list(args)
	envList, _ := list(MCPEnv)
	return []byte(`# shogun's MCP server for Codex, which reads this file in a trusted project.
# Codex starts MCP servers with only a few variables of its environment:
# env_vars passes on the two that name the workspace and the role.
# Run codex with --no-daemon: a shared app-server daemon starts every
# session's servers with the environment of the role that started it.
[mcp_servers.` + MCPServerName + `]
command = ` + cmd + `
args = ` + argList + `
env_vars = ` + envList + `
# The tools only touch the task queue; do not ask before each call.
default_tools_approval_mode = "approve"
`), nil
}
