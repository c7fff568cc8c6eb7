package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/shogun-dev/shogun/atomicfile"
	"github.com/shogun-dev/shogun/roles"
	"github.com/shogun-dev/shogun/workspace"
)

// Enforcement is what a role's CLI is started with so that shogun's
// approvals hook and MCP server reach it from outside the role's folder:
// arguments and variables the agent cannot change, and files under
// runtime/state/cli/ (workspace.Layout.CLIState). A role with `worktree:
// true` gets the same as any other, since none of it is in the folder the
// CLI runs in.
type Enforcement struct {
	// Args go before the role's own arguments.
	Args []string
	// Env are KEY=VALUE, over the role's environment.
	Env []string
	// Files are written (absolute path → content) before the CLI starts.
	Files map[string][]byte
}

// Write writes e's files, each only when its content changed.
func (e Enforcement) Write() error {
	for path, content := range e.Files {
		if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, content) {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return fmt.Errorf("enforcement: %w", err)
		}
		if err := atomicfile.Write(path, content, 0o600); err != nil {
			return fmt.Errorf("enforcement: %w", err)
		}
	}
	return nil
}

// CLIEnforcement returns the Enforcement of a role of preset cli whose
// program is exec, run in the folder cwd of the workspace l, with exe the
// shogun executable the hooks and the MCP server run ("" means "shogun" in
// PATH). ok is false when
// shogun has none to give: a preset it does not know, or a program that is
// not the CLI itself (a wrapper script, `sh -c …`), whose arguments shogun
// cannot know the meaning of. How each pinned CLI takes it:
//
//   - Claude Code 2.1.197: the PreToolUse hook from --settings (a file under
//     runtime/state), --setting-sources user so that the project's and local
//     settings files, which the agent can write, are not read (neither a
//     disableAllHooks there nor the workspace's own copy of the hook, which
//     would run it twice), and shogun's MCP server alone from --mcp-config
//     with --strict-mcp-config, so .mcp.json is not read. A disableAllHooks
//     in the user's ~/.claude/settings.json still turns the hook off.
//     (--managed-settings, the policy tier, would not be: but Claude Code
//     takes only a few restrictive keys from it, not hooks.)
//   - Codex 0.169.0: -c overrides, which come before every config file: the
//     PreToolUse and SessionStart hooks, the MCP server, and the hooks
//     feature on (a project's config.toml could switch it off); --dangerously-bypass-hook-trust runs
//     the hook without the review Codex asks for a new hook on its screen
//     (shogun wrote it; Codex keeps trust in the user's config.toml, by a
//     hash of the hook). A role that runs outside the workspace (a
//     worktree) gets the queue's reports/ and commands/ folders as
//     writable roots of its sandbox (--add-dir).
//   - Gemini CLI 0.61.0: the system settings file
//     (GEMINI_CLI_SYSTEM_SETTINGS_PATH), whose values a project's
//     settings cannot override, with the BeforeTool hook, the MCP server and
//     the native deny rules. Gemini CLI reads it only when the file and every
//     folder above it belong to root and are writable by no one else; where
//     they do not, ok is false and the hook comes from the workspace's
//     .gemini/settings.json (MCPClientFiles), which the agent can write.
//     Either way, where shogun's hook guards it (the system file, or a
//     .gemini/settings.json in cwd that runs `hook gemini` before every
//     tool), Gemini CLI runs with --approval-mode yolo: its hook can only
//     refuse or ask, never skip Gemini CLI's own confirmation, so without
//     it every write and shell command the policy allows would wait on its
//     screen for a person. The hook runs before Gemini CLI's policy in
//     every mode: a deny is still refused, an ask still asks on its screen,
//     and the native deny rules (a tier above yolo's allow-all) still hold.
//     Where no hook is found (a worktree role of a user other than root),
//     Gemini CLI keeps its own default mode.
//   - Copilot CLI 1.0.102 has no such flag: ok is false, and its hook comes
//     from the workspace's .claude/settings.json.
func CLIEnforcement(l workspace.Layout, cli, exec, cwd, exe string) (e Enforcement, ok bool, err error) {
	if exe == "" {
		exe = "shogun"
	}
	name := strings.TrimSuffix(strings.TrimSuffix(strings.ToLower(filepath.Base(exec)), ".exe"), ".cmd")
	if name != cli {
		return Enforcement{}, false, nil
	}
	switch cli {
	case roles.CLIClaude:
		settings, err := jsonFile(map[string]any{
			// SessionStart too (at start, resume and /clear), so the
			// hook tells the session a wake resumes before any tool call.
			"hooks": mergeHooks(hooksFor(exe, "claude", "PreToolUse", ClaudeHookTimeout),
				hooksFor(exe, "claude", "SessionStart", sessionHookTimeout)),
			"permissions": map[string]any{"allow": []string{"mcp__" + MCPServerName}},
		})
		if err != nil {
			return Enforcement{}, false, err
		}
		mcp, err := jsonFile(map[string]any{"mcpServers": map[string]any{
			MCPServerName: map[string]any{"type": "stdio", "command": exe, "args": []string{"mcp"}}}})
		if err != nil {
			return Enforcement{}, false, err
		}
		settingsFile, mcpFile := l.CLIState("claude-settings.json"), l.CLIState("claude-mcp.json")
		return Enforcement{
			Args:  []string{"--mcp-config", mcpFile, "--strict-mcp-config", "--setting-sources", "user", "--settings", settingsFile},
			Files: map[string][]byte{settingsFile: settings, mcpFile: mcp},
		}, true, nil
	case roles.CLICodex:
		hook := fmt.Sprintf(`[{hooks=[{type="command", command=%s, timeout=%d}]}]`,
			tomlString(shellQuote(exe)+" hook codex"), ClaudeHookTimeout)
		server := fmt.Sprintf(`{command=%s, args=["mcp"], env_vars=[%s], default_tools_approval_mode="approve"}`,
			tomlString(exe), tomlString(MCPEnv[0])+", "+tomlString(MCPEnv[1]))
		args := []string{
			// A project's or the user's config.toml can switch hooks off
			// ([features] hooks = false, or its old name codex_hooks): -c wins.
			"-c", "features.hooks=true",
			"-c", "hooks.PreToolUse=" + hook,
			// At start and on /new: the session a wake resumes.
			"-c", "hooks.SessionStart=" + fmt.Sprintf(`[{hooks=[{type="command", command=%s, timeout=%d}]}]`,
				tomlString(shellQuote(exe)+" hook codex"), sessionHookTimeout),
			"-c", "mcp_servers." + MCPServerName + "=" + server,
			"--dangerously-bypass-hook-trust",
		}
		if cwd != "" && !within(filepath.Clean(cwd), filepath.Clean(l.Reports())) {
			// A role in a folder of its own (a worktree) writes its report
			// and its commands into the workspace's queue, outside the
			// folder Codex's workspace-write sandbox lets it write: each
			// would wait on a person for an approval the policy does not ask.
			args = append(args, "--add-dir", l.Reports(), "--add-dir", l.Commands())
		}
		return Enforcement{Args: args}, true, nil
	case roles.CLIGemini:
		var queue []string
		if cwd != "" && !within(filepath.Clean(cwd), filepath.Clean(l.Path(workspace.QueueDir))) {
			// A role in a folder of its own (a worktree, a cwd below the
			// workspace) reads its task and writes its report in the
			// workspace's queue, which Gemini CLI's file tools refuse
			// outside its workspace directories ("Path not in workspace").
			queue = []string{"--include-directories", l.Path(workspace.QueueDir)}
		}
		file := l.CLIState("gemini-system-settings.json")
		if !geminiTrustsSystemFile(filepath.Dir(file)) {
			if !geminiProjectHooked(filepath.Join(cwd, filepath.FromSlash(workspace.GeminiSettingsFile))) {
				return Enforcement{Args: queue}, len(queue) > 0, nil
			}
			return Enforcement{Args: append(queue, GeminiUnattendedArgs...)}, true, nil
		}
		settings, err := jsonFile(map[string]any{
			"hooks":            hooksFor(exe, "gemini", "BeforeTool", ClaudeHookTimeout*1000),
			"hooksConfig":      map[string]any{"enabled": true},
			"mcpServers":       map[string]any{MCPServerName: map[string]any{"command": exe, "args": []string{"mcp"}, "trust": true}},
			"adminPolicyPaths": []string{l.Path(GeminiPolicyFile)},
		})
		if err != nil {
			return Enforcement{}, false, err
		}
		return Enforcement{Args: append(queue, GeminiUnattendedArgs...), Env: []string{"GEMINI_CLI_SYSTEM_SETTINGS_PATH=" + file},
			Files: map[string][]byte{file: settings}}, true, nil
	}
	return Enforcement{}, false, nil
}

// GeminiUnattendedArgs are the arguments Gemini CLI runs with where
// shogun's hook guards it: it then asks only when the hook says so.
var GeminiUnattendedArgs = []string{"--approval-mode", "yolo"}

// geminiProjectHooked reports whether the Gemini CLI settings file at path
// runs shogun's hook (`… hook gemini`) before every tool call: a
// BeforeTool entry with no matcher, or the match-all "*". A file the agent
// emptied, or a tool it left out, means no.
func geminiProjectHooked(path string) bool {
	b, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	var s struct {
		Hooks struct {
			BeforeTool []struct {
				Matcher string `json:"matcher"`
				Hooks   []struct {
					Type    string `json:"type"`
					Command string `json:"command"`
				} `json:"hooks"`
			} `json:"BeforeTool"`
		} `json:"hooks"`
		HooksConfig struct {
			Enabled  *bool    `json:"enabled"`
			Disabled []string `json:"disabled"`
		} `json:"hooksConfig"`
	}
	if json.Unmarshal(b, &s) != nil || (s.HooksConfig.Enabled != nil && !*s.HooksConfig.Enabled) {
		return false
	}
	for _, e := range s.Hooks.BeforeTool {
		if e.Matcher != "" && e.Matcher != "*" {
			continue
		}
		for _, h := range e.Hooks {
			if h.Type == "command" && strings.HasSuffix(h.Command, " hook gemini") && !slices.Contains(s.HooksConfig.Disabled, h.Command) {
				return true
			}
		}
	}
	return false
}

// sessionHookTimeout bounds, in seconds, a SessionStart hook, which only
// tells the supervisor the CLI's session id (hooks.noteSession).
const sessionHookTimeout = 10

// mergeHooks is the hooks of every map, by event.
func mergeHooks(maps ...map[string]any) map[string]any {
	out := map[string]any{}
	for _, m := range maps {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// hooksFor is a hooks key in the format Claude Code, Copilot CLI and
// Gemini CLI share: one hook for every tool (no matcher), running `exe
// hook cli`, with the time limit in the CLI's unit.
func hooksFor(exe, cli, event string, timeout int) map[string]any {
	return map[string]any{
		event: []any{map[string]any{
			"hooks": []any{map[string]any{
				"type":    "command",
				"command": shellQuote(exe) + " hook " + cli,
				"timeout": timeout,
			}},
		}},
	}
}

// geminiTrustsSystemFile reports whether Gemini CLI 0.61.0 reads a system
// settings file in dir: on Unix it skips one (with a warning on its screen)
// unless the folder and every folder above it belong to root and are
// writable by neither group nor others. On Windows it asks PowerShell about
// the ACLs, which shogun does not try to predict: it is not used there.
func geminiTrustsSystemFile(dir string) bool {
	if runtime.GOOS == "windows" {
		return false
	}
	for {
		fi, err := os.Stat(dir)
		if err != nil {
			// Not made yet: judged as its parent made it, by this process.
			if !os.IsNotExist(err) || os.Getuid() != 0 {
				return false
			}
		} else if !ownedByRoot(fi) || fi.Mode().Perm()&0o022 != 0 {
			return false
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return true
		}
		dir = parent
	}
}
