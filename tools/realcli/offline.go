package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Dummy credentials. They are not secrets: they only get a CLI past its
// "no key" screen. Every request made with them fails, offline or not.
const (
	dummyAnthropicKey = "sk-ant-api03-shogun-offline-dummy-0123456789abcdefghij"
	dummyOpenAIKey    = "sk-shogun-offline-dummy-0000000000000000"
	dummyGeminiKey    = "shogun-offline-dummy-gemini-key"
	dummyProviderKey  = "shogun-offline-dummy-provider-key"
	// unreachableURL is where Copilot CLI's own-provider mode (and Claude
	// Code with Setup.FailFast) sends its requests: the discard port on
	// loopback, which refuses at once.
	unreachableURL = "http://127.0.0.1:9/v1"
	// runMarker is put into every CLI's environment with a per-run value,
	// so that processes a CLI leaves behind (Codex's app-server daemon runs
	// in a session of its own) can be found by it and nothing else.
	runMarker = "SHOGUN_REALCLI_RUN"
)

// Setup says how far a CLI's first run is taken care of in its throwaway
// home, in the order each CLI asks. The zero value is a fresh home: the CLI
// shows its first-run screens.
type Setup struct {
	// Onboarded: Claude Code's onboarding is done; Codex is logged in with an
	// API key; Gemini CLI has its auth type chosen and a key; Copilot CLI
	// runs in offline mode with its own (unreachable) model provider.
	Onboarded bool
	// Trusted: the project folder is trusted.
	Trusted bool
	// KeyApproved: Claude Code's "use this API key?" answer is recorded.
	KeyApproved bool
	// FailFast: Claude Code sends its requests to a port that refuses and
	// does not retry, so a request fails at once and the composer is back
	// (offline it retries ten times, for over three minutes). Codex has no
	// such switch: offline it waits for the network until interrupted.
	FailFast bool
	// Model, when set, is the base URL of a scripted model server
	// (tools/fakemodel, http://127.0.0.1:PORT) that the CLI sends its model
	// requests to; the tools a scripted task uses are allowed without
	// asking (see modelEnv and the prepare functions), anything else
	// still asks. Set Onboarded with it.
	Model string
	// NoKey: Claude Code gets no ANTHROPIC_API_KEY, as for a person who
	// never signed in.
	NoKey bool
	// AsNewUser: with Model, nothing is allowed in the CLI's own settings
	// beyond what a new user's allow: what runs unasked is up to the CLI's
	// defaults and shogun's approvals hook, as in a user's team.
	AsNewUser bool
}

// Ready is a setup with which each CLI starts offline to its composer.
var Ready = Setup{Onboarded: true, Trusted: true, KeyApproved: true}

// baseEnv is the environment every CLI gets: none of the caller's own, so
// that a developer's real keys, tokens and config never reach a test, and
// everything a CLI writes stays in home. The XDG cache is shared, in the
// realcli cache: Copilot CLI unpacks 235 MB of itself there on its first
// run, and only once per version this way.
func baseEnv(home, cache string) []string {
	env := []string{
		"HOME=" + home,
		"USER=" + userName(),
		"TERM=xterm-256color",
		"LANG=C.UTF-8",
		"PATH=" + os.Getenv("PATH"),
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"),
		"XDG_CACHE_HOME=" + filepath.Join(cache, "xdg-cache"),
		"TMPDIR=" + os.TempDir(),
	}
	return env
}

func userName() string {
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	return "shogun"
}

// cliEnv is what one CLI needs in its environment besides baseEnv, for a
// setup: the dummy key it reads, and its self-update switched off (Claude
// Code would update itself in the cache, Gemini CLI installed from npm
// outside a project runs `npm install -g` on its own when the registry has a
// newer version, Copilot CLI downloads a newer build into its cache).
func cliEnv(c CLI, s Setup, cache, home string) []string {
	switch c.Name {
	case "claude":
		env := []string{"DISABLE_AUTOUPDATER=1"}
		if !s.NoKey {
			env = append(env, "ANTHROPIC_API_KEY="+dummyAnthropicKey)
		}
		if s.Model != "" {
			env = append(env, "ANTHROPIC_BASE_URL="+s.Model)
		}
		if s.FailFast {
			env = append(env, "ANTHROPIC_BASE_URL="+strings.TrimSuffix(unreachableURL, "/v1"), "CLAUDE_CODE_MAX_RETRIES=0")
		}
		return env
	case "codex":
		env := []string{"CODEX_HOME=" + filepath.Join(home, ".codex")}
		if s.Model != "" {
			env = append(env, codexModelKey+"="+dummyOpenAIKey)
		}
		return env
	case "gemini":
		env := []string{"GEMINI_CLI_SYSTEM_DEFAULTS_PATH=" + geminiDefaults(cache)}
		if s.Onboarded {
			env = append(env, "GEMINI_API_KEY="+dummyGeminiKey)
		}
		if s.Model != "" {
			env = append(env, "GOOGLE_GEMINI_BASE_URL="+s.Model)
		}
		return env
	case "copilot":
		env := []string{"COPILOT_AUTO_UPDATE=false"}
		if s.Onboarded {
			provider := unreachableURL
			if s.Model != "" {
				provider = s.Model + "/v1"
			}
			env = append(env, "COPILOT_OFFLINE=true", "COPILOT_PROVIDER_BASE_URL="+provider,
				"COPILOT_PROVIDER_API_KEY="+dummyProviderKey, "COPILOT_PROVIDER_MODEL_ID=gpt-4o")
		}
		return env
	}
	return nil
}

// prepare writes what the setup asks for into home, for a CLI that will run
// in project, and returns the CLI's complete environment.
func prepare(c CLI, s Setup, cache, home, project string) ([]string, error) {
	if strings.ContainsAny(project, "\"\\\n\r\t") {
		return nil, fmt.Errorf("prepare %s: project path %q has characters the config files cannot hold", c.Name, project)
	}
	env := append(baseEnv(home, cache), cliEnv(c, s, cache, home)...)
	var err error
	switch c.Name {
	case "claude":
		err = prepareClaude(s, home, project)
		if err == nil && s.Model != "" && !s.AsNewUser {
			err = allowClaude(home)
		}
	case "codex":
		err = prepareCodex(c, s, cache, env, home, project)
	case "gemini":
		err = prepareGemini(s, cache, home, project)
	case "copilot":
		err = prepareCopilot(s, home, project)
	default:
		err = fmt.Errorf("no such CLI %q", c.Name)
	}
	if err != nil {
		return nil, fmt.Errorf("prepare %s: %w", c.Name, err)
	}
	return env, nil
}

// prepareClaude writes ~/.claude.json. Without hasCompletedOnboarding Claude
// Code 2.1.197 checks its connection to api.anthropic.com, says "Unable to
// connect to Anthropic services" and exits 1. The API-key answer is stored
// as the key's last 20 characters.
func prepareClaude(s Setup, home, project string) error {
	if !s.Onboarded && !s.Trusted && !s.KeyApproved {
		return nil
	}
	cfg := map[string]any{}
	if s.Onboarded {
		cfg["hasCompletedOnboarding"] = true
	}
	if s.Trusted {
		cfg["projects"] = map[string]any{project: map[string]any{"hasTrustDialogAccepted": true}}
	}
	if s.KeyApproved {
		cfg["customApiKeyResponses"] = map[string]any{
			"approved": []string{dummyAnthropicKey[len(dummyAnthropicKey)-20:]}, "rejected": []string{},
		}
	}
	return writeJSON(filepath.Join(home, ".claude.json"), cfg)
}

// claudeAllowed are the tools a scripted task uses, allowed in
// ~/.claude/settings.json. In the default mode Claude Code 2.1.197 asks
// before a shell command writes a file in the project (echo hi > f, cat >
// report <<EOF), so the mode is acceptEdits, which also lets touch, rm,
// mkdir, mv and read-only commands run; python3, node, git init, curl
// still ask ("This command requires approval").
var claudeAllowed = []string{"Read", "Write", "Edit", "Bash(cat:*)", "Bash(mv:*)", "Bash(echo:*)", "mcp__shogun"}

func allowClaude(home string) error {
	return writeJSON(filepath.Join(home, ".claude", "settings.json"), map[string]any{
		"permissions": map[string]any{"defaultMode": "acceptEdits", "allow": claudeAllowed}})
}

// codexModel points Codex at a fake model (Setup.Model) as a provider of
// its own. The model's name is one Codex does not know, so it offers its
// generic tools (exec_command and no apply_patch; a name it knows, such as
// gpt-5.5, brings a model-migration screen and another tool set). In the
// workspace-write sandbox commands that stay in the project run without
// asking; approval_policy on-request asks when one wants out of it.
const codexModel = `
model = "fake-model"
model_provider = "fakemodel"
approval_policy = "on-request"
sandbox_mode = "workspace-write"

[model_providers.fakemodel]
name = "fakemodel"
base_url = "%s/v1"
env_key = "` + codexModelKey + `"
wire_api = "responses"
`

// codexModelKey is the variable that holds the fake model's dummy key.
const codexModelKey = "SHOGUN_FAKEMODEL_KEY"

// prepareCodex logs in with `codex login --with-api-key` (the key on
// standard input) and trusts the project in config.toml. Codex 0.169 asks
// about trust only for a folder inside a git repository.
func prepareCodex(c CLI, s Setup, cache string, env []string, home, project string) error {
	codexHome := filepath.Join(home, ".codex")
	if err := os.MkdirAll(codexHome, 0o700); err != nil {
		return err
	}
	var toml strings.Builder
	// Offline the update check only fails; keep it from adding a screen.
	toml.WriteString("check_for_update_on_startup = false\n")
	if s.Model != "" {
		fmt.Fprintf(&toml, codexModel, s.Model)
	}
	if s.Trusted {
		fmt.Fprintf(&toml, "\n[projects.%q]\ntrust_level = \"trusted\"\n", project)
	}
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(toml.String()), 0o600); err != nil {
		return err
	}
	if !s.Onboarded {
		return nil
	}
	cmd := exec.Command(c.Path(cache), "login", "--with-api-key")
	cmd.Env, cmd.Dir = env, home
	cmd.Stdin = strings.NewReader(dummyOpenAIKey + "\n")
	if out, err := runWithin(cmd, 60*time.Second); err != nil {
		return fmt.Errorf("codex login --with-api-key: %w\n%s", err, out)
	}
	return nil
}

// geminiDefaults is Gemini CLI's system-defaults file. It lives in the
// cache, not in the throwaway home: Gemini CLI skips the file, with a
// warning on screen, when a folder above it is writable by others, as /tmp
// is.
func geminiDefaults(cache string) string { return filepath.Join(cache, "gemini-system-defaults.json") }

// prepareGemini switches self-update off in the system-defaults file (so
// the user's own ~/.gemini stays fresh), trusts the folder in
// ~/.gemini/trustedFolders.json and picks API-key auth in settings.json.
func prepareGemini(s Setup, cache, home, project string) error {
	defaults := map[string]any{"general": map[string]any{"enableAutoUpdate": false, "enableAutoUpdateNotification": false}}
	if err := writeJSON(geminiDefaults(cache), defaults); err != nil {
		return err
	}
	if s.Trusted {
		if err := writeJSON(filepath.Join(home, ".gemini", "trustedFolders.json"), map[string]string{project: "TRUST_FOLDER"}); err != nil {
			return err
		}
	}
	if s.Onboarded {
		settings := map[string]any{"security": map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}}}
		if s.Model != "" && !s.AsNewUser {
			if err := os.MkdirAll(filepath.Join(home, ".gemini", "policies"), 0o700); err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(home, ".gemini", "policies", "fakemodel.toml"), []byte(geminiPolicy), 0o600); err != nil {
				return err
			}
		}
		if err := writeJSON(filepath.Join(home, ".gemini", "settings.json"), settings); err != nil {
			return err
		}
	}
	return nil
}

// geminiPolicy allows the tools a scripted task uses, in Gemini CLI's
// policy engine (~/.gemini/policies/*.toml; settings.json tools.allowed
// works too but puts a deprecation warning on the screen). Other shell
// commands ask ("Allow execution of [Shell]?"); without allowRedirection
// a command with > asks too ("Redirection detected").
const geminiPolicy = `[[rule]]
toolName = "read_file"
decision = "allow"
priority = 100

[[rule]]
toolName = "write_file"
decision = "allow"
priority = 100

[[rule]]
toolName = "run_shell_command"
commandPrefix = ["cat", "mv", "echo"]
allowRedirection = true
decision = "allow"
priority = 100
`

// modelArgs are the command-line arguments a CLI needs besides its
// environment to run a scripted task of a fake model (Setup.Model)
// unattended. Copilot CLI 1.0.102 takes its allowed tools only as flags:
// cat, mv and echo, file writes (its apply_patch tool) and the shogun MCP
// server; other commands ask ("Do you want to run this command?"). Shell
// redirections (> file) are allowed for allowed commands.
func modelArgs(c CLI, s Setup) []string {
	if s.Model == "" || s.AsNewUser || c.Name != "copilot" {
		return nil
	}
	return []string{"--allow-tool=shell(cat)", "--allow-tool=shell(mv)", "--allow-tool=shell(echo)",
		"--allow-tool=write", "--allow-tool=shogun"}
}

// prepareCopilot trusts the folder in ~/.copilot/config.json (its
// "trustedFolders", where answering "Yes, and remember this folder" saves
// it). Sign-in is replaced by the offline own-provider mode of cliEnv.
func prepareCopilot(s Setup, home, project string) error {
	if !s.Trusted {
		return nil
	}
	return writeJSON(filepath.Join(home, ".copilot", "config.json"), map[string]any{"trustedFolders": []string{project}})
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o600)
}
