package roles

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

func TestPresetForChoosesByCLIThenExecName(t *testing.T) {
	tests := []struct {
		cli, exec string
		want      string
	}{
		{"", "codex", CLICodex},
		{"", `C:\tools\codex.exe`, CLICodex},
		{"", `C:\Program Files\nodejs\Codex.CMD`, CLICodex},
		{"", "/usr/bin/claude", CLIClaude},
		{"", "gemini.cmd", CLIGemini},
		{"", "./bin/copilot.ps1", CLICopilot},
		{"", `D:/npm/copilot.bat`, CLICopilot},
		{"", "bash", CLIGeneric},
		{"", "", CLIGeneric},
		{"", "codex-wrapper", CLIGeneric},
		{"claude", "/usr/local/bin/my-agent", CLIClaude},
		{"Gemini", "codex", CLIGemini},
		{"generic", "claude", CLIGeneric},
		{"nonsense", "claude", CLIClaude},
	}
	for _, tt := range tests {
		if got := PresetFor(tt.cli, tt.exec).CLI; got != tt.want {
			t.Errorf("PresetFor(%q, %q).CLI = %q, want %q", tt.cli, tt.exec, got, tt.want)
		}
	}
}

func TestLookupPresetRejectsUnknownNames(t *testing.T) {
	for _, name := range PresetNames() {
		if _, ok := LookupPreset(name); !ok {
			t.Errorf("LookupPreset(%q) not found", name)
		}
	}
	for _, name := range []string{"", "codex.exe", "gpt"} {
		if _, ok := LookupPreset(name); ok {
			t.Errorf("LookupPreset(%q) found, want not found", name)
		}
	}
	if got, want := strings.Join(PresetNames(), ","), "claude,codex,copilot,gemini,generic"; got != want {
		t.Errorf("PresetNames() = %s, want %s", got, want)
	}
}

func TestPresetsHaveSafeTypingDefaults(t *testing.T) {
	stopKeys := map[string]string{
		CLICodex: "/quit\r", CLIClaude: "\x03\x03/exit\r", CLIGemini: "/quit\r", CLICopilot: "\x03\x03/exit\r", CLIGeneric: "",
	}
	for _, name := range PresetNames() {
		p, _ := LookupPreset(name)
		if p.CLI != name {
			t.Errorf("%s: CLI = %q", name, p.CLI)
		}
		if p.Submit != "\r" || p.ClearInput != "\x15" || p.SubmitDelay <= 0 {
			t.Errorf("%s: submit %q clear %q delay %v", name, p.Submit, p.ClearInput, p.SubmitDelay)
		}
		if p.Terminal != (TerminalSize{Cols: 120, Rows: 40}) {
			t.Errorf("%s: terminal %+v", name, p.Terminal)
		}
		if p.Restart != (RestartPolicy{Policy: RestartOnFailure, MaxRestarts: 5, Window: 10 * time.Minute}) {
			t.Errorf("%s: restart %+v", name, p.Restart)
		}
		if p.Stop.Keys != stopKeys[name] || p.Stop.Timeout != 10*time.Second {
			t.Errorf("%s: stop %+v", name, p.Stop)
		}
		for _, tmpl := range []string{p.StartupPrompt, p.Nudge, p.Notify} {
			if tmpl == "" || strings.ContainsAny(tmpl, "\r\n") {
				t.Errorf("%s: template %q must be one non-empty line", name, tmpl)
			}
		}
		for _, pat := range []string{p.ReadyPattern, p.BusyPattern, p.AttentionPattern} {
			if _, err := regexp.Compile(pat); err != nil {
				t.Errorf("%s: pattern %q: %v", name, pat, err)
			}
		}
	}
}

// The patterns are checked against excerpts of what the pinned real CLIs
// show (the full screens are raw captures in supervisor/testdata/screens,
// checked by supervisor/screens_test.go), so a preset edit that stops
// recognising them, or takes a dialog's cursor for a prompt, fails here.
func TestPresetPatternsMatchRealScreens(t *testing.T) {
	const rule = "────────────────────────────────────────"
	tests := []struct {
		cli, kind, screen string
		want              bool
	}{
		// Codex 0.169.0
		{CLICodex, "ready", "› Ask Codex to do anything\n\n  GPT-6.1-Sol default · /w\n  ← for agents · ? for shortcuts", true},
		{CLICodex, "ready", "› Say hello\n\n  GPT-6.1-Sol default · /w", true},
		{CLICodex, "ready", "› 1. Trust and continue\n  2. Back to Agent Command Center", false},
		{CLICodex, "busy", "› Ask Codex to do anything\n\n  ? for shortcuts", true}, // drawn before the session is up
		{CLICodex, "busy", "› Say hello\n\n  Waiting for startup  · esc cancel", true},
		{CLICodex, "busy", "• Working (0s • esc to interrupt)", true},
		{CLICodex, "busy", "› Ask Codex to do anything\n\n  GPT-6.1-Sol default · /w\n  ← for agents · ? for shortcuts", false},
		{CLICodex, "attention", "  Trust this folder? Codex can read, edit, and run files here\n\n› 1. Trust and continue", true},
		{CLICodex, "attention", "> 1. Sign in with ChatGPT\n  2. Sign in with Device Code\n  3. Sign in another way", true},
		{CLICodex, "attention", "› Ask Codex to do anything\n  ← for agents · ? for shortcuts", false},
		{CLICodex, "attention", "Your access token could not be refreshed because your refresh token has expired. Please log out and sign in again.", true},
		{CLICodex, "attention", "no Codex credentials were found\nRun codex login or provide an API key through a supported auth env var.", true},
		{CLICodex, "attention", "  Account: API key configured (run codex login to use ChatGPT)", false}, // /status, signed in
		// Claude Code 2.1.197: a no-break space follows the composer's ❯
		{CLIClaude, "ready", rule + "\n❯\u00a0\n" + rule + "\n  ? for shortcuts · ← for agents", true},
		{CLIClaude, "ready", rule + "\n❯\u00a0Say hello\n" + rule, true},
		{CLIClaude, "ready", " Security guide\n\n ❯ 1. Yes, I trust this folder\n   2. No, exit", false},
		{CLIClaude, "ready", "  ❯ 1. No, exit\n    2. Yes, I accept", false},
		{CLIClaude, "busy", "✻ Unable to connect to API (ConnectionRefused) · Retrying in 1s · attempt 1/10\n  esc to interrupt · ← for agents", true},
		{CLIClaude, "attention", " Quick safety check: Is this a project you created or one you trust?\n ❯ 1. Yes, I trust this folder\n   2. No, exit", true},
		{CLIClaude, "attention", "  Detected a custom API key in your environment\n  Do you want to use this API key?\n    1. Yes\n  ❯ 2. No (recommended)", true},
		{CLIClaude, "attention", "  WARNING: Claude Code running in Bypass Permissions mode\n  ❯ 1. No, exit\n    2. Yes, I accept", true},
		{CLIClaude, "attention", " Do you want to proceed?\n ❯ 1. Yes", true},
		{CLIClaude, "attention", rule + "\n❯\u00a0\n" + rule + "\n  ? for shortcuts", false},
		// Signed out or with a bad credential the composer is drawn as
		// usual: the footer or the answer says what is missing.
		{CLIClaude, "attention", rule + "\n❯\u00a0\n" + rule + "\n  ? for shortcuts · ← for agents          Not logged in · Run /login", true},
		{CLIClaude, "attention", "❯ Say hello\n  ⎿  Not logged in · Please run /login", true},
		{CLIClaude, "attention", "  ⎿  API Error: 401 Invalid API key · Please run /login", true},
		{CLIClaude, "attention", "  ⎿  Invalid API key · Fix external API key", true},
		{CLIClaude, "attention", "  ⎿  API Error: 401 OAuth token has expired", true},
		{CLIClaude, "attention", "  ⎿  OAuth token revoked · Please run /login", true},
		{CLIClaude, "attention", "  ⎿  Your session has expired. Please run /login to sign in again.", true},
		// A transcript about an app's own login is not Claude's.
		{CLIClaude, "attention", "● The page now shows \"Not logged in\" until the user signs in.\n" + rule + "\n❯\u00a0\n" + rule, false},
		// Gemini CLI 0.61.0
		{CLIGemini, "ready", " Shift+Tab to accept edits\n >   Type your message or @path/to/file", true},
		{CLIGemini, "ready", "│ ● 1. Trust folder (proj)", false},
		{CLIGemini, "busy", " ⠴ Thinking... (esc to cancel, 0s)", true},
		{CLIGemini, "attention", "│ Do you trust the files in this folder?\n│ ● 1. Trust folder (proj)", true},
		{CLIGemini, "attention", "│   How would you like to authenticate for this project?\n│   ● 1. Sign in with Google", true},
		{CLIGemini, "attention", " >   Type your message or @path/to/file", false},
		{CLIGemini, "attention", "Please set an Auth method in your /home/u/.gemini/settings.json or specify one of the following environment variables before running: GEMINI_API_KEY", true},
		{CLIGemini, "attention", "│ You must select an auth method to proceed. Press Ctrl+C twice to exit.", true},
		{CLIGemini, "attention", "│ When using Gemini API, you must specify the GEMINI_API_KEY environment variable.", true},
		{CLIGemini, "attention", "│ ⠋ Waiting for authentication... (Press Esc or Ctrl+C to cancel)", true},
		{CLIGemini, "attention", "  ▗▟▀    Authenticated with gemini-api-key /auth\n >   Type your message or @path/to/file", false},
		// Copilot CLI 1.0.102
		{CLICopilot, "ready", rule + "\n❯\n" + rule + "\n ← open sidebar · Interactive · Manual Approval · / commands · ? help", true},
		{CLICopilot, "ready", "│ ❯ 1. Yes\n│   2. Yes, and remember this folder for future sessions", false},
		{CLICopilot, "busy", " ● Working esc esc edit prompt", true},
		{CLICopilot, "busy", rule + "\n❯\n" + rule + "\n ← open sidebar · Interactive", false},
		{CLICopilot, "attention", "│ Confirm folder trust\n│ Do you trust the files in this folder?\n│ ❯ 1. Yes", true},
		{CLICopilot, "attention", "Please use /login to sign in to use Copilot\n /w\n" + rule + "\n❯", true},
		{CLICopilot, "attention", " ❯ Say hello\n /w\n" + rule + "\n❯", false},
		{CLIGeneric, "attention", "Do you trust the files in this folder?", false},
	}
	for _, tt := range tests {
		p, _ := LookupPreset(tt.cli)
		pat := map[string]string{"ready": p.ReadyPattern, "busy": p.BusyPattern, "attention": p.AttentionPattern}[tt.kind]
		got := pat != "" && regexp.MustCompile(pat).MatchString(tt.screen)
		if got != tt.want {
			t.Errorf("%s %s pattern %q on %q = %v, want %v", tt.cli, tt.kind, pat, tt.screen, got, tt.want)
		}
	}
}

// Codex 0.169 words its usage limit per plan and wraps it at the
// terminal's width wherever the words fall; the reset it names is read
// when it is a time of day (supervisor/testdata/screens/codex-limit.raw is
// the whole screen).
func TestCodexLimitPatternReadsItsReset(t *testing.T) {
	p, _ := LookupPreset(CLICodex)
	re := regexp.MustCompile(p.LimitPattern)
	tests := []struct {
		screen string
		limits int
		reset  string
	}{
		{"■ You’ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), visit https://chatgpt.com/settings/\n" +
			"usage to purchase more credits or try again at 2:32 AM.\n\n› Ask Codex to do anything", 1, "2:32 AM"},
		{"■ You’ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), visit https://chatgpt.com/settings/usage to purchase more credits or\n" +
			"try again at 12:24 AM.", 1, "12:24 AM"},
		{"■ You've hit your usage limit. Try again at 3:05\nPM.", 1, "3:05\nPM"},
		{"■ You’ve hit your usage limit. Try again later.\n\n› Ask Codex to do anything", 1, ""},
		// Another day: not a time of day; limit_wait applies.
		{"■ You’ve hit your usage limit. Visit https://chatgpt.com/codex/settings/usage to purchase more credits or try again at Nov 28th, 2026 2:22 AM.", 1, ""},
		// One message's span ends at the next message or the composer.
		{"■ You’ve hit your usage limit. Try again later.\n› go on\n■ You’ve hit your usage limit. Try again at 1:00 PM.", 2, "1:00 PM"},
		{"› Ask Codex to do anything", 0, ""},
	}
	for _, tt := range tests {
		all := re.FindAllStringSubmatch(tt.screen, -1)
		reset := ""
		if len(all) > 0 {
			reset = all[len(all)-1][re.SubexpIndex("reset")]
		}
		if len(all) != tt.limits || reset != tt.reset {
			t.Errorf("on %q: %d limit message(s), reset %q; want %d, %q", tt.screen, len(all), reset, tt.limits, tt.reset)
		}
	}
}

func TestCLIFromExec(t *testing.T) {
	tests := map[string]string{
		`C:\tools\codex.exe`:  "codex",
		"/usr/bin/claude":     "claude",
		"gemini.cmd":          "gemini",
		"COPILOT.PS1":         "copilot",
		"script.sh":           "script.sh",
		"  /opt/x/Claude.Bat": "claude",
		"":                    "",
	}
	for in, want := range tests {
		if got := CLIFromExec(in); got != want {
			t.Errorf("CLIFromExec(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestExpand(t *testing.T) {
	vars := map[string]string{"id": "ashigaru1", "name": "足軽1", "task_file": "runtime/queue/tasks/ashigaru1.yaml", "title": "{id}"}
	tests := []struct{ in, want string }{
		{"", ""},
		{"You are {name} ({id}).", "You are 足軽1 (ashigaru1)."},
		{"Read {task_file}", "Read runtime/queue/tasks/ashigaru1.yaml"},
		{"{unknown} stays", "{unknown} stays"},
		{"on '{title}'", "on '{id}'"}, // values are never expanded again
		{"json {\"a\": 1} and {} and {", "json {\"a\": 1} and {} and {"},
		{"{{id}}", "{ashigaru1}"},
		{"}{id}{", "}ashigaru1{"},
	}
	for _, tt := range tests {
		if got := Expand(tt.in, vars); got != tt.want {
			t.Errorf("Expand(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestFileServesEveryKindInEveryLanguage(t *testing.T) {
	for _, lang := range append(Languages(), "") {
		for _, kind := range Kinds() {
			b, err := File(lang, kind)
			if err != nil {
				t.Fatal(err)
			}
			if len(b) < 500 {
				t.Errorf("File(%q, %q) is only %d bytes", lang, kind, len(b))
			}
		}
	}
	if _, err := File("fr", KindKaro); err == nil || !strings.Contains(err.Error(), `"fr"`) {
		t.Errorf("File(fr) error = %v", err)
	}
	if _, err := File("en", "daimyo"); err == nil || !strings.Contains(err.Error(), `"daimyo"`) {
		t.Errorf("File(daimyo) error = %v", err)
	}
}

// The embedded files are the repository workspace's role files; reading them
// from disk proves the embed list and the folder agree.
func TestEmbeddedFilesAreTheWorkspaceFiles(t *testing.T) {
	for _, lang := range Languages() {
		for _, kind := range Kinds() {
			p := kind + ".md"
			if lang == LangJapanese {
				p = filepath.Join("ja", p)
			}
			disk, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			emb, _ := File(lang, kind)
			if string(disk) != string(emb) {
				t.Errorf("%s differs from its embedded copy", p)
			}
		}
	}
}

var yamlBlock = regexp.MustCompile("(?s)```yaml\r?\n(.*?)```")

// An agent copies the examples, so every example must be valid YAML with the
// keys the protocol requires.
func TestRoleFilesTeachTheProtocol(t *testing.T) {
	for _, lang := range Languages() {
		for _, kind := range Kinds() {
			b, _ := File(lang, kind)
			text := string(b)
			for _, must := range []string{
				"runtime/queue/tasks/", "SHOGUN_TASK_FILE", "SHOGUN_REPORT_FILE", "report_to",
				"runtime/dashboard.md", "tmux", ".tmp", "done | failed | blocked", "skill_candidate",
			} {
				if !strings.Contains(text, must) {
					t.Errorf("%s/%s does not mention %q", lang, kind, must)
				}
			}
			if kind != KindAshigaru && !strings.Contains(text, "runtime/queue/commands/") {
				t.Errorf("%s/%s does not say where commands go", lang, kind)
			}
			// The MCP tools of `shogun mcp`, with the files as the fallback.
			for _, tool := range []string{"`my_task`", "`send_task`", "`report`", "`list_tasks`", "`team_status`", "mcp__shogun__"} {
				if !strings.Contains(text, tool) {
					t.Errorf("%s/%s does not mention the tool %s", lang, kind, tool)
				}
			}
			blocks := yamlBlock.FindAllStringSubmatch(text, -1)
			if len(blocks) < 2 {
				t.Errorf("%s/%s has %d yaml examples", lang, kind, len(blocks))
			}
			var sawReport bool
			for _, m := range blocks {
				var doc map[string]any
				if err := yaml.Unmarshal([]byte(m[1]), &doc); err != nil {
					t.Errorf("%s/%s: example does not parse: %v\n%s", lang, kind, err, m[1])
					continue
				}
				if _, ok := doc["status"]; ok {
					sawReport = true
					for _, k := range []string{"task_id", "status", "summary", "details", "files", "skill_candidate"} {
						if _, ok := doc[k]; !ok {
							t.Errorf("%s/%s: report example lacks %q", lang, kind, k)
						}
					}
				}
				if _, ok := doc["to"]; ok {
					for _, k := range []string{"id", "to", "from", "title", "body", "tags", "priority"} {
						if _, ok := doc[k]; !ok {
							t.Errorf("%s/%s: command example lacks %q", lang, kind, k)
						}
					}
				}
			}
			if !sawReport {
				t.Errorf("%s/%s has no report example", lang, kind)
			}
		}
	}
}
