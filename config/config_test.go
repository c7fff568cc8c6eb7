package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/roles"
	"github.com/shogun-dev/shogun/usage"
)

// workspace writes files (slash-separated relative path → content) into a
// fresh folder and returns it.
func testWorkspace(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for rel, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// env is a lookup over a fixed map, so tests never depend on the machine.
func env(vars map[string]string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		v, ok := vars[name]
		return v, ok
	}
}

func mustLoad(t *testing.T, dir string, lookup func(string) (string, bool)) *Config {
	t.Helper()
	if lookup == nil {
		lookup = env(nil)
	}
	cfg, err := Load(dir, lookup)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return cfg
}

// The seed design's example files, copied verbatim
// (reference/004_2e8049bc48a47214.txt, "roles.yaml（例）" and
// "設定ファイル（settings.yaml 例）").
const seedRoles = `roles:
  - id: shogun
    name: "将軍"
    prompt_path: "roles/shogun.md"
    enabled: true
    command:
      exec: "codex"
      args: []
      env: {}
      cwd: "."
  - id: ashigaru1
    name: "足軽1"
    prompt_path: "roles/ashigaru1.md"
    enabled: true
    command:
      exec: "claude"
      args: ["--dangerously-skip-permissions"]
      env: {}
      cwd: "."
`

const seedSettings = `pty:
  backend: "conpty"

agent:
  default_command:
    exec: "codex"
    args: []
    env: {}
    cwd: "."

ui:
  host: "localhost"
  port: 5173
  enabled: false
  allow_remote: true

data:
  sqlite_path: "data/app.db"

terminal:
  windows_terminal:
    enabled: true

skills:
  enabled: true
  codex_path: "skills/codex"
  copilot_path: "skills/copilot"
  auto_candidate_threshold: 2
`

func TestSeedExampleFilesLoadUnchanged(t *testing.T) {
	dir := testWorkspace(t, map[string]string{
		"config/roles.yaml":    seedRoles,
		"config/settings.yaml": seedSettings,
		"roles/shogun.md":      "# shogun\n",
		"roles/ashigaru1.md":   "# ashigaru1\n",
	})
	cfg := mustLoad(t, dir, nil)

	if len(cfg.Roles) != 2 || len(cfg.Enabled()) != 2 {
		t.Fatalf("roles = %d, enabled = %d, want 2 and 2", len(cfg.Roles), len(cfg.Enabled()))
	}
	shogun, ok := cfg.Role("shogun")
	if !ok {
		t.Fatal(`Role("shogun") not found`)
	}
	if shogun.Name != "将軍" || shogun.PromptPath != "roles/shogun.md" || shogun.CLI != roles.CLICodex {
		t.Errorf("shogun = %q %q %q", shogun.Name, shogun.PromptPath, shogun.CLI)
	}
	if shogun.PromptFile != filepath.Join(cfg.Workspace, "roles", "shogun.md") {
		t.Errorf("PromptFile = %q", shogun.PromptFile)
	}
	wantCmd := Command{Exec: "codex", Args: []string{}, Env: map[string]string{}, Cwd: cfg.Workspace}
	if !reflect.DeepEqual(shogun.Command, wantCmd) {
		t.Errorf("shogun command = %#v, want %#v", shogun.Command, wantCmd)
	}
	ashigaru, _ := cfg.Role("ashigaru1")
	if ashigaru.CLI != roles.CLIClaude || !reflect.DeepEqual(ashigaru.Command.Args, []string{"--dangerously-skip-permissions"}) {
		t.Errorf("ashigaru1 = %q %q", ashigaru.CLI, ashigaru.Command.Args)
	}
	claude, _ := roles.LookupPreset(roles.CLIClaude)
	if ashigaru.Stop.Keys != claude.Stop.Keys || ashigaru.BusyPattern.String() != "esc to interrupt" {
		t.Errorf("ashigaru1 preset not applied: stop %q busy %v", ashigaru.Stop.Keys, ashigaru.BusyPattern)
	}
	if _, ok := cfg.Role("karo"); ok {
		t.Error(`Role("karo") found in a file without it`)
	}

	s := cfg.Settings
	if s.PTY.Backend != BackendConPTY || s.UI.Host != "localhost" || s.UI.Port != 5173 || s.UI.Enabled || !s.UI.AllowRemote {
		t.Errorf("pty/ui = %+v %+v", s.PTY, s.UI)
	}
	if s.Data.SQLitePath != filepath.Join(cfg.Workspace, "data", "app.db") {
		t.Errorf("sqlite_path = %q", s.Data.SQLitePath)
	}
	if !s.Terminal.WindowsTerminal.Enabled || !s.Skills.Enabled || s.Skills.AutoCandidateThreshold != 2 {
		t.Errorf("terminal/skills = %+v %+v", s.Terminal, s.Skills)
	}
	if s.Skills.CodexPath != filepath.Join(cfg.Workspace, "skills", "codex") || s.Skills.CopilotPath != filepath.Join(cfg.Workspace, "skills", "copilot") {
		t.Errorf("skills paths = %q %q", s.Skills.CodexPath, s.Skills.CopilotPath)
	}
	// Keys the seed does not have take their defaults.
	if s.Logs != (LogSettings{MaxSizeMB: 20, MaxFiles: 5, ScrollbackKB: 1024}) {
		t.Errorf("logs = %+v", s.Logs)
	}
	if s.Queue != (QueueSettings{Settle: 25 * time.Millisecond, ReportGrace: 10 * time.Second, MaxFileBytes: 1 << 20, Rescan: 3 * time.Second, MaxHops: 8, MaxExchanges: 300}) {
		t.Errorf("queue = %+v", s.Queue)
	}
	if !s.KeepAwake || len(s.Notify.Command) != 0 || s.Notify.Webhook != "" {
		t.Errorf("keep_awake %v, notify %+v: want awake and no hooks", s.KeepAwake, s.Notify)
	}
	if s.Skills.Similarity != 0.6 {
		t.Errorf("similarity = %v", s.Skills.Similarity)
	}
}

func TestMissingSettingsMeansDefaults(t *testing.T) {
	dir := testWorkspace(t, map[string]string{"config/roles.yaml": seedRoles, "roles/shogun.md": "x", "roles/ashigaru1.md": "x"})
	cfg := mustLoad(t, dir, nil)
	want := defaultSettings()
	want.resolve(cfg.Workspace)
	if !reflect.DeepEqual(cfg.Settings, want) {
		t.Errorf("settings = %+v\nwant %+v", cfg.Settings, want)
	}
	if cfg.Settings.Data.SQLitePath != filepath.Join(cfg.Workspace, "data", "shogun.db") {
		t.Errorf("sqlite_path = %q", cfg.Settings.Data.SQLitePath)
	}
}

// The repository root is a workspace: its own config must load.
func TestRepositoryWorkspaceLoads(t *testing.T) {
	cfg := mustLoad(t, "..", nil)
	var ids []string
	for _, r := range cfg.Enabled() {
		ids = append(ids, r.ID)
	}
	if got := strings.Join(ids, ","); got != "shogun,karo,ashigaru1,ashigaru2,ashigaru3" {
		t.Errorf("enabled roles = %s", got)
	}
}

func TestBadFilesReportEveryErrorWithItsPosition(t *testing.T) {
	prompts := map[string]string{"roles/a.md": "a", "roles/b.md": "b"}
	tests := []struct {
		name     string
		roles    string // "" means no roles.yaml at all
		settings string // "" means no settings.yaml
		want     []string
	}{
		{
			name: "unknown key, wrong type and missing prompt_path together",
			roles: `roles:
  - id: a
    enabled: "yes"
    foo: 1
    promt_path: roles/a.md
    command: {exec: codex}
`,
			want: []string{
				`config/roles.yaml:2:5: missing required key "prompt_path" in role`,
				`config/roles.yaml:3:14: "enabled" must be a boolean (true or false), got string "yes"`,
				`config/roles.yaml:4:5: unknown key "foo" in role`,
				`config/roles.yaml:5:5: unknown key "promt_path" in role (did you mean "prompt_path"?)`,
			},
		},
		{
			name: "missing id and command.exec, empty exec after expansion",
			roles: `roles:
  - name: nobody
    prompt_path: roles/a.md
    command: {args: [x]}
  - id: b
    prompt_path: roles/b.md
    command:
      exec: "${NOT_SET}"
      cwd: [x]
`,
			want: []string{
				`config/roles.yaml:2:5: missing required key "id" in role`,
				`config/roles.yaml:4:14: missing required key "exec" in role command`,
				`config/roles.yaml:8:13: "exec" is empty after expanding "${NOT_SET}": ${NOT_SET} is not set`,
				`config/roles.yaml:9:12: "cwd" must be a string, got a list`,
			},
		},
		{
			name: "usage prices",
			settings: `usage:
  prices:
    my-model: {input: 1, outptu: 2}
    other: {input: -1, output: lots}
  price: 1
`,
			roles: "roles:\n  - {id: a, prompt_path: roles/a.md, command: {exec: codex}}\n",
			want: []string{
				`config/settings.yaml:3:26: unknown key "outptu" in usage.prices.my-model (did you mean "output"?)`,
				`config/settings.yaml:4:20: "input" must be a number of dollars per million tokens, 0 or more, got number -1`,
				`config/settings.yaml:4:32: "output" must be a number of dollars per million tokens, 0 or more, got string "lots"`,
				`config/settings.yaml:5:3: unknown key "price" in usage (did you mean "prices"?)`,
			},
		},
		{
			name: "usage budgets",
			settings: `usage:
  budgets:
    team: {tokens: lots, cost_usd: 0}
    roles:
      a: {}
      b: {tokens: 2M, cost: 3}
    role: {}
`,
			roles: "roles:\n  - {id: a, prompt_path: roles/a.md, command: {exec: codex}}\n  - {id: b, prompt_path: roles/b.md, command: {exec: codex}}\n",
			want: []string{
				`config/settings.yaml:3:20: "tokens" must be a count of tokens above 0 such as 1000000, 500k or 1.5M, got string "lots"`,
				`config/settings.yaml:3:36: "cost_usd" must be a number of US dollars above 0, got number 0`,
				`config/settings.yaml:5:10: usage.budgets.roles.a must set tokens, cost_usd or both`,
				`config/settings.yaml:6:23: unknown key "cost" in usage.budgets.roles.b`,
				`config/settings.yaml:7:5: unknown key "role" in usage.budgets (did you mean "roles"?)`,
			},
		},
		{
			name: "left-running keys: hooks, limits, timings",
			settings: `notify:
  command: []
  webhook: ftp://example
queue:
  max_hops: 0
keep_awake: "yes"
`,
			roles: `roles:
  - id: a
    prompt_path: roles/a.md
    command: {exec: codex}
    limit_pattern: "(?P<reset"
    ack_timeout: soon
    stall_after: 0
`,
			want: []string{
				`config/settings.yaml:2:12: "command" needs a program: a list like ["/usr/local/bin/tell-me", "--json"]`,
				`config/settings.yaml:3:12: "webhook" must be an http or https URL, got "ftp://example"`,
				`config/settings.yaml:5:13: "max_hops" must be between 1 and 10000, got 0`,
				`config/settings.yaml:6:13: "keep_awake" must be a boolean (true or false), got string "yes"`,
				`config/roles.yaml:5:20: "limit_pattern" is not a valid regular expression: invalid named capture: ` + "`(?P<reset`",
				`config/roles.yaml:6:18: "ack_timeout" is not a valid duration: "soon" (use a number with a unit, such as "300ms", "2s" or "10m")`,
				`config/roles.yaml:7:18: "stall_after" must be longer than 0, got "0"`,
			},
		},
		{
			name: "duplicate and invalid role ids",
			roles: `roles:
  - {id: a, prompt_path: roles/a.md, command: {exec: codex}}
  - {id: b, prompt_path: roles/b.md, command: {exec: codex}}
  - {id: a, prompt_path: roles/b.md, command: {exec: codex}}
  - {id: Karo, prompt_path: roles/b.md, command: {exec: codex}}
  - {id: -x, prompt_path: roles/b.md, command: {exec: codex}}
  - {id: abcdefghijklmnopqrstuvwxyz0123456, prompt_path: roles/b.md, command: {exec: codex}}
`,
			want: []string{
				`config/roles.yaml:4:10: duplicate role id "a" (first defined at line 2)`,
				`config/roles.yaml:5:10: invalid role id "Karo": use 1 to 32 lowercase letters, digits, "_" or "-", starting with a letter or digit`,
				`config/roles.yaml:6:10: invalid role id "-x": use 1 to 32 lowercase letters, digits, "_" or "-", starting with a letter or digit`,
				`config/roles.yaml:7:10: invalid role id "abcdefghijklmnopqrstuvwxyz0123456": use 1 to 32 lowercase letters, digits, "_" or "-", starting with a letter or digit`,
			},
		},
		{
			name: "prompt paths that are missing or leave the workspace",
			roles: `roles:
  - {id: a, prompt_path: /etc/passwd, command: {exec: codex}}
  - {id: b, prompt_path: ../outside.md, command: {exec: codex}}
  - {id: c, prompt_path: roles/../../x.md, command: {exec: codex}}
  - {id: d, prompt_path: 'C:\roles\d.md', command: {exec: codex}}
  - {id: e, prompt_path: roles/missing.md, command: {exec: codex}}
  - {id: f, prompt_path: roles, command: {exec: codex}}
  - {id: g, prompt_path: "", command: {exec: codex}}
  - {id: h, prompt_path: roles/missing.md, enabled: false, command: {exec: codex}}
`,
			want: []string{
				`config/roles.yaml:2:26: "prompt_path" must be relative to the workspace, got "/etc/passwd"`,
				`config/roles.yaml:3:26: "prompt_path" leaves the workspace: "../outside.md"`,
				`config/roles.yaml:4:26: "prompt_path" leaves the workspace: "roles/../../x.md"`,
				`config/roles.yaml:5:26: "prompt_path" must be relative to the workspace, got "C:\\roles\\d.md"`,
				`config/roles.yaml:6:26: prompt file "roles/missing.md" does not exist`,
				`config/roles.yaml:7:26: prompt file "roles" is a folder, not a file`,
				`config/roles.yaml:8:26: "prompt_path" must not be empty`,
			},
		},
		{
			name: "bad durations, regexes, enums and terminal sizes",
			roles: `roles:
  - id: a
    prompt_path: roles/a.md
    command: {exec: claude}
    cli: gpt
    submit_delay: fast
    ready_quiet: 300
    busy_pattern: "(unclosed"
    restart: {policy: sometimes, max_restarts: -1, window: 0s}
    terminal: {cols: 0, rows: 32768}
    stop: {keys: [q], timeout: -1s, signal: TERM}
    submit: ""
`,
			want: []string{
				`config/roles.yaml:5:10: "cli" must be one of claude, codex, copilot, gemini, generic; got "gpt"`,
				`config/roles.yaml:6:19: "submit_delay" is not a valid duration: "fast" (use a number with a unit, such as "300ms", "2s" or "10m")`,
				`config/roles.yaml:7:18: "ready_quiet" must be a duration with a unit, such as "300ms", got number 300`,
				"config/roles.yaml:8:19: \"busy_pattern\" is not a valid regular expression: missing closing ): `(unclosed`",
				`config/roles.yaml:9:23: "policy" must be one of always, on-failure, never; got "sometimes"`,
				`config/roles.yaml:9:48: "max_restarts" must be between 0 and 1000000, got -1`,
				`config/roles.yaml:9:60: "window" must be longer than 0, got "0s"`,
				`config/roles.yaml:10:22: "cols" must be between 20 and 1000, got 0`,
				`config/roles.yaml:10:31: "rows" must be between 5 and 500, got 32768`,
				`config/roles.yaml:11:18: "keys" must be a string, got a list`,
				`config/roles.yaml:11:32: "timeout" must not be negative, got "-1s"`,
				`config/roles.yaml:11:37: unknown key "signal" in role stop`,
				`config/roles.yaml:12:13: "submit" must not be empty`,
			},
		},
		{
			name: "terminal sizes that would exhaust memory or cannot show a prompt",
			roles: `roles:
  - id: a
    prompt_path: roles/a.md
    command: {exec: claude}
    terminal: {cols: 32767, rows: 32767}
  - id: b
    prompt_path: roles/a.md
    command: {exec: claude}
    terminal: {cols: 19, rows: 4}
  - id: c
    prompt_path: roles/a.md
    command: {exec: claude}
    terminal: {cols: 1001, rows: 501}
`,
			want: []string{
				`config/roles.yaml:5:22: "cols" must be between 20 and 1000, got 32767`,
				`config/roles.yaml:5:35: "rows" must be between 5 and 500, got 32767`,
				`config/roles.yaml:9:22: "cols" must be between 20 and 1000, got 19`,
				`config/roles.yaml:9:32: "rows" must be between 5 and 500, got 4`,
				`config/roles.yaml:13:22: "cols" must be between 20 and 1000, got 1001`,
				`config/roles.yaml:13:34: "rows" must be between 5 and 500, got 501`,
			},
		},
		{
			name:  "malformed YAML",
			roles: "roles:\n  - id: a\n    name: x: y\n",
			want:  []string{`config/roles.yaml:3: invalid YAML: mapping values are not allowed in this context`},
		},
		{
			// The shape of a roles.yaml a person broke: yaml.v3 blames
			// line 11 (roles:), the block the misindented name: breaks.
			name: "a key one column left of its siblings names its own line",
			roles: strings.Repeat("# the team\n", 10) + `roles:
  - id: shogun
    name: "Shogun"
    prompt_path: "roles/shogun.md"
    enabled: true
    command:
      exec: "codex"
      # --no-daemon: each Codex role runs its own app-server, so the tools of
      # shogun mcp know which role calls them.
      args: ["--no-daemon"]
      env: {}
      cwd: "."
    cli: codex
    submit_delay: 300ms
    stop: {keys: "/exit\r", timeout: 10s}
  - id: karo
   name: "Karo"
    prompt_path: "roles/karo.md"
    command: {exec: claude}
`,
			want: []string{`config/roles.yaml:27:4: invalid YAML: did not find expected '-' indicator in the block that starts on line 11 (check the indentation of line 27)`},
		},
		{
			name:  "tab indentation",
			roles: "roles:\n\t- id: a\n",
			want:  []string{`config/roles.yaml:2: invalid YAML: found character that cannot start any token`},
		},
		{
			name:  "control character, located",
			roles: "roles:\n  - id: a\x07\n",
			want:  []string{`config/roles.yaml:2:10: invalid YAML: control characters are not allowed`},
		},
		{
			name:  "alias bomb",
			roles: "a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\nroles: *d\n",
			want:  []string{`config/roles.yaml: document has more than 10000 YAML nodes once aliases are expanded (an alias bomb?)`},
		},
		{
			name: "a duplicate key in an anchor merged twice is one problem",
			roles: `roles:
  - &base
    id: a
    prompt_path: roles/a.md
    prompt_path: roles/b.md
    command: {exec: codex}
  - <<: *base
    id: b
  - <<: *base
    id: c
`,
			want: []string{`config/roles.yaml:5:5: duplicate key "prompt_path" (first at line 4)`},
		},
		{
			name:  "a duplicate key in an anchor that is only merged",
			roles: "x-base: &base {prompt_path: roles/a.md, prompt_path: roles/b.md}\nroles:\n  - {<<: *base, id: a, command: {exec: codex}}\n",
			want: []string{
				`config/roles.yaml:1:1: unknown key "x-base" in roles file`,
				`config/roles.yaml:1:41: duplicate key "prompt_path" (first at line 1)`,
			},
		},
		{
			name:  "a key that is not a string",
			roles: "roles:\n  - {id: a, prompt_path: roles/a.md, command: {exec: codex}, [x]: 1}\n",
			want:  []string{`config/roles.yaml:2:62: keys must be strings, got a list`},
		},
		{
			name:  "empty file",
			roles: "# nothing yet\n",
			want:  []string{`config/roles.yaml: file is empty`},
		},
		{
			name:  "wrong shapes at the top",
			roles: "- id: a\n",
			want:  []string{`config/roles.yaml:1:1: expected a mapping with a "roles" list at the top, got a list`},
		},
		{
			name:  "roles key missing and unknown top-level key",
			roles: "role:\n  - id: a\n",
			want: []string{
				`config/roles.yaml:1:1: missing required key "roles" in roles file`,
				`config/roles.yaml:1:1: unknown key "role" in roles file (did you mean "roles"?)`,
			},
		},
		{
			name:  "empty list and scalar role",
			roles: "roles: []\n",
			want:  []string{`config/roles.yaml:1:8: "roles" must list at least one role`},
		},
		{
			name:  "role that is not a mapping, duplicate key",
			roles: "roles:\n  - shogun\n  - id: a\n    id: b\n    prompt_path: roles/a.md\n    command: {exec: x}\n",
			want: []string{
				`config/roles.yaml:2:5: each role must be a mapping, got string "shogun"`,
				`config/roles.yaml:4:5: duplicate key "id" (first at line 3)`,
			},
		},
		{
			name: "bad expansions and env",
			roles: `roles:
  - id: a
    prompt_path: roles/a.md
    command:
      exec: codex
      args: ["${UNCLOSED", {x: 1}]
      env: {"${1BAD}": x, GOOD: "${1X}", EMPTY: }
`,
			want: []string{
				`config/roles.yaml:6:14: "args": cannot expand "${UNCLOSED": "${" at offset 0 has no closing "}"`,
				`config/roles.yaml:6:28: "args" items must be strings, got a mapping`,
				`config/roles.yaml:7:33: "env GOOD": cannot expand "${1X}": "1X" is not a variable name (letters, digits and _, not starting with a digit)`,
				`config/roles.yaml:7:49: env "EMPTY" must be a string, got null`,
			},
		},
		{
			name:  "missing roles.yaml",
			roles: "",
			want:  []string{`config/roles.yaml: file not found (run "shogun init" to create a workspace)`},
		},
		{
			name: "settings problems, reported with the roles problems",
			settings: `pty:
  backend: winpty
ui:
  port: "80"
  hots: localhost
data:
  sqlite_path: /var/lib/shogun.db
skills:
  codex_path: ../codex
  similarity: 2
  auto_candidate_threshold: 0
queue:
  settle: soon
  rescan: 0
logs: 20
colour: true
`,
			roles: "roles:\n  - {id: a, prompt_path: roles/a.md, command: {exec: codex}, colour: red}\n",
			want: []string{
				`config/settings.yaml:2:12: "backend" must be one of auto, conpty, unix; got "winpty"`,
				`config/settings.yaml:4:9: "port" must be an integer, got string "80"`,
				`config/settings.yaml:5:3: unknown key "hots" in ui (did you mean "host"?)`,
				`config/settings.yaml:7:16: "sqlite_path" must be relative to the workspace, got "/var/lib/shogun.db"`,
				`config/settings.yaml:9:15: "codex_path" leaves the workspace: "../codex"`,
				`config/settings.yaml:10:15: "similarity" must be a number greater than 0 and at most 1, got 2`,
				`config/settings.yaml:11:29: "auto_candidate_threshold" must be between 1 and 2147483647, got 0`,
				`config/settings.yaml:13:11: "settle" is not a valid duration: "soon" (use a number with a unit, such as "300ms", "2s" or "10m")`,
				`config/settings.yaml:14:11: "rescan" must be longer than 0, got "0"`,
				`config/settings.yaml:15:7: "logs" must be a mapping, got number 20`,
				`config/settings.yaml:16:1: unknown key "colour" in settings`,
				`config/roles.yaml:2:62: unknown key "colour" in role`,
			},
		},
		{
			name:     "empty settings file and a second document",
			settings: "\n",
			roles:    "roles:\n  - {id: a, prompt_path: roles/a.md, command: {exec: codex}}\n---\nroles: []\n",
			want: []string{
				`config/settings.yaml: file is empty`,
				`config/roles.yaml:3:1: only one YAML document is allowed, found a second one`,
			},
		},
		{
			name: "settings default command",
			settings: `agent:
  default_command:
    exec: ""
    args: x
`,
			roles: "roles:\n  - {id: a, prompt_path: roles/a.md}\n",
			want: []string{
				`config/settings.yaml:3:11: "exec" must not be empty`,
				`config/settings.yaml:4:11: "args" must be a list of strings, got string "x"`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{}
			for k, v := range prompts {
				files[k] = v
			}
			if tt.roles != "" {
				files[RolesFile] = tt.roles
			}
			if tt.settings != "" {
				files[SettingsFile] = tt.settings
			}
			cfg, err := Load(testWorkspace(t, files), env(nil))
			if err == nil {
				t.Fatalf("Load succeeded with %d roles, want errors", len(cfg.Roles))
			}
			var errs *Errors
			if !errors.As(err, &errs) {
				t.Fatalf("error is %T, want *Errors: %v", err, err)
			}
			got := strings.Split(err.Error(), "\n")
			if len(got) != len(errs.List) {
				t.Errorf("Error() has %d lines for %d errors", len(got), len(errs.List))
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// An agent can plant symbolic links in the workspace: a prompt_path or cwd
// that is inside the workspace as written but leads out through a link is
// refused, naming where it leads; the largest accepted size loads.
func TestPathsThatLeaveTheWorkspaceThroughSymlinks(t *testing.T) {
	if runtime.GOOS == "windows" {
		// Symbolic links need a privilege on Windows (and Wine resolves
		// them differently); junctions are another kind of file.
		t.Skip("symbolic links to files need the SeCreateSymbolicLink privilege on Windows")
	}
	outside := t.TempDir()
	secret := filepath.Join(outside, "passwd")
	if err := os.WriteFile(secret, []byte("root:x:0:0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := testWorkspace(t, map[string]string{
		"roles/a.md": "# a\n",
		"work/x":     "",
		RolesFile: `roles:
  - id: a
    prompt_path: roles/x.md
    command: {exec: codex}
  - id: b
    prompt_path: roles/a.md
    command: {exec: codex, cwd: linked/sub}
  - id: c
    prompt_path: roles/a.md
    command: {exec: codex, cwd: work}
    terminal: {cols: 1000, rows: 500}
  - id: d
    prompt_path: roles/inner.md
    command: {exec: codex, cwd: "${OUT}"}
`,
	})
	for link, target := range map[string]string{
		"roles/x.md":     secret,
		"linked":         outside,
		"roles/inner.md": filepath.Join(dir, "roles", "a.md"),
	} {
		if err := os.Symlink(target, filepath.Join(dir, filepath.FromSlash(link))); err != nil {
			t.Skipf("cannot create symbolic links here: %v", err)
		}
	}
	realOut, err := filepath.EvalSymlinks(outside)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Load(dir, env(map[string]string{"OUT": outside}))
	var errs *Errors
	if !errors.As(err, &errs) {
		t.Fatalf("Load = %v, want *Errors", err)
	}
	want := []string{
		fmt.Sprintf(`config/roles.yaml:3:18: prompt file "roles/x.md" leaves the workspace through a symbolic link (it leads to %q)`, filepath.Join(realOut, "passwd")),
		fmt.Sprintf(`config/roles.yaml:7:33: "cwd" "linked/sub" leaves the workspace through a symbolic link (it leads to %q)`, filepath.Join(realOut, "sub")),
	}
	if got := err.Error(); got != strings.Join(want, "\n") {
		t.Errorf("errors:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
}

// An unset ${VAR} silently became "": now every one is a warning with its
// position, and an exec that ends up empty says which variable was missing.
func TestUnsetVariablesAreReported(t *testing.T) {
	dir := testWorkspace(t, map[string]string{
		"roles/a.md": "# a\n",
		RolesFile: `roles:
  - id: a
    prompt_path: roles/a.md
    command:
      exec: codex
      args: ["--model", "${MODEL}", "${EFFORT:-high}"]
      env: {API_KEY: "${API_KEY}"}
`,
	})
	cfg := mustLoad(t, dir, env(map[string]string{}))
	var got []string
	for _, w := range cfg.Warnings {
		got = append(got, w.Error())
	}
	want := []string{
		`config/roles.yaml:6:25: ${MODEL} is not set: "args" gets "" in its place (write ${MODEL:-default} to give a default)`,
		`config/roles.yaml:7:22: ${API_KEY} is not set: "env API_KEY" gets "" in its place (write ${API_KEY:-default} to give a default)`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if a := cfg.Roles[0].Command.Args; len(a) != 3 || a[1] != "" || a[2] != "high" {
		t.Errorf("args = %q", a)
	}
}

func TestErrorsCarryFileLineAndColumn(t *testing.T) {
	dir := testWorkspace(t, map[string]string{RolesFile: "roles:\n  - id: a\n    prompt_path: roles/nope.md\n    command: {exec: codex}\n"})
	_, err := Load(dir, env(nil))
	var errs *Errors
	if !errors.As(err, &errs) || len(errs.List) != 1 {
		t.Fatalf("err = %v", err)
	}
	want := Error{File: "config/roles.yaml", Line: 3, Column: 18, Message: `prompt file "roles/nope.md" does not exist`}
	if errs.List[0] != want {
		t.Errorf("error = %+v, want %+v", errs.List[0], want)
	}
}

func TestCommandExpansion(t *testing.T) {
	dir := testWorkspace(t, map[string]string{
		"roles/a.md": "a",
		RolesFile: `roles:
  - id: a
    prompt_path: roles/a.md
    command:
      exec: "${AGENT_BIN:-claude}"
      args: ["--model", "${MODEL}", "--dir=${HOME}/x", "$HOME", "$${LITERAL}", 8080]
      env: {API_KEY: "${SECRET}", DEBUG: 1, MODE: "${MODE:-${FALLBACK:-safe}}"}
      cwd: "${SUBDIR:-work}"
  - id: b
    prompt_path: roles/a.md
    command: {exec: "${SHOGUN_EXE}", args: [agent-sim], cwd: "${ABS}"}
    cli: generic
`,
	})
	abs := filepath.Join(dir, "elsewhere")
	cfg := mustLoad(t, dir, env(map[string]string{"HOME": "/home/me", "SECRET": "s3", "MODEL": "", "FALLBACK": "", "ABS": abs}))
	a, _ := cfg.Role("a")
	want := Command{
		Exec: "claude",
		Args: []string{"--model", "", "--dir=/home/me/x", "$HOME", "${LITERAL}", "8080"},
		Env:  map[string]string{"API_KEY": "s3", "DEBUG": "1", "MODE": "safe"},
		Cwd:  filepath.Join(cfg.Workspace, "work"),
	}
	if !reflect.DeepEqual(a.Command, want) {
		t.Errorf("command = %#v\nwant %#v", a.Command, want)
	}
	if a.CLI != roles.CLIClaude {
		t.Errorf("preset from expanded exec = %q, want claude", a.CLI)
	}
	b, _ := cfg.Role("b")
	exe, _ := os.Executable()
	if b.Command.Exec != exe || b.Command.Cwd != abs {
		t.Errorf("b: exec %q (want the running executable %q), cwd %q", b.Command.Exec, exe, b.Command.Cwd)
	}
	cfg = mustLoad(t, dir, env(map[string]string{"SHOGUN_EXE": "/opt/shogun", "AGENT_BIN": "/usr/bin/gemini"}))
	b, _ = cfg.Role("b")
	a, _ = cfg.Role("a")
	if b.Command.Exec != "/opt/shogun" || a.Command.Exec != "/usr/bin/gemini" || a.CLI != roles.CLIGemini {
		t.Errorf("exec = %q and %q (%s)", b.Command.Exec, a.Command.Exec, a.CLI)
	}
}

func TestExpandEnv(t *testing.T) {
	lookup := env(map[string]string{"A": "alpha", "EMPTY": "", "B_2": "beta", "BRACE": "}"})
	tests := []struct {
		in, want, err string
	}{
		{in: "", want: ""},
		{in: "plain $A and $ and {A}", want: "plain $A and $ and {A}"},
		{in: "${A}", want: "alpha"},
		{in: "x${A}y${B_2}z", want: "xalphaybetaz"},
		{in: "${UNSET}", want: ""},
		{in: "${UNSET:-def}", want: "def"},
		{in: "${EMPTY:-def}", want: "def"},
		{in: "${A:-def}", want: "alpha"},
		{in: "${UNSET:-}", want: ""},
		{in: "${UNSET:-a:-b}", want: "a:-b"},
		{in: "${UNSET:-${A}-${UNSET2:-z}}", want: "alpha-z"},
		{in: "${BRACE}${A}", want: "}alpha"},
		{in: "$${A}", want: "${A}"},
		{in: "$$A", want: "$$A"},
		{in: `C:\${A}\bin`, want: `C:\alpha\bin`},
		{in: "${A", err: `cannot expand "${A": "${" at offset 0 has no closing "}"`},
		{in: "${}", err: `cannot expand "${}": "" is not a variable name (letters, digits and _, not starting with a digit)`},
		{in: "${A-B}", err: `cannot expand "${A-B}": "A-B" is not a variable name (letters, digits and _, not starting with a digit)`},
	}
	for _, tt := range tests {
		got, err := ExpandEnv(tt.in, lookup)
		if tt.err != "" {
			if err == nil || err.Error() != tt.err {
				t.Errorf("ExpandEnv(%q) error = %v, want %s", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ExpandEnv(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	t.Setenv("SHOGUN_TEST_EXPAND", "from-os")
	if got, _ := ExpandEnv("${SHOGUN_TEST_EXPAND}", nil); got != "from-os" {
		t.Errorf("nil lookup = %q, want the process environment", got)
	}
}

func TestPresetChosenByCLIOrExecutableName(t *testing.T) {
	dir := testWorkspace(t, map[string]string{
		"roles/a.md": "a",
		RolesFile: `roles:
  - {id: win, prompt_path: roles/a.md, command: {exec: 'C:\tools\codex.exe'}}
  - {id: unix, prompt_path: roles/a.md, command: {exec: /usr/bin/claude}}
  - {id: cmd, prompt_path: roles/a.md, command: {exec: gemini.cmd}}
  - {id: ps, prompt_path: roles/a.md, command: {exec: 'D:\bin\Copilot.PS1'}}
  - {id: shell, prompt_path: roles/a.md, command: {exec: bash}}
  - {id: forced, prompt_path: roles/a.md, command: {exec: /opt/wrapper}, cli: claude}
  - {id: over, prompt_path: roles/a.md, command: {exec: codex}, cli: generic}
`,
	})
	cfg := mustLoad(t, dir, nil)
	want := map[string]string{
		"win": roles.CLICodex, "unix": roles.CLIClaude, "cmd": roles.CLIGemini, "ps": roles.CLICopilot,
		"shell": roles.CLIGeneric, "forced": roles.CLIClaude, "over": roles.CLIGeneric,
	}
	for id, cli := range want {
		r, _ := cfg.Role(id)
		if r.CLI != cli {
			t.Errorf("%s: CLI = %q, want %q", id, r.CLI, cli)
		}
		p, _ := roles.LookupPreset(cli)
		if r.Stop != p.Stop || r.Submit != p.Submit || r.Terminal != p.Terminal {
			t.Errorf("%s: preset %s not applied: %+v", id, cli, r)
		}
	}
	shell, _ := cfg.Role("shell")
	if shell.ReadyPattern != nil || shell.BusyPattern != nil || shell.AttentionPattern != nil {
		t.Errorf("generic role has patterns: %v %v %v", shell.ReadyPattern, shell.BusyPattern, shell.AttentionPattern)
	}
}

func TestOptionalKeysOverrideThePresetOnlyWhenSet(t *testing.T) {
	dir := testWorkspace(t, map[string]string{
		"roles/a.md": "a",
		RolesFile: `roles:
  - id: unset
    prompt_path: roles/a.md
    command: {exec: codex}
  - id: empty
    prompt_path: roles/a.md
    command: {exec: codex}
    clear_input: ""
    ready_pattern: ""
    attention_pattern: ""
    startup_prompt: ""
    notify: ""
    stop: {keys: ""}
  - id: set
    prompt_path: roles/a.md
    command: {exec: codex}
    clear_input: "\x1b"
    busy_pattern: "(?i)thinking"
    submit: "\n"
    submit_delay: 0
    ready_quiet: 1500ms
    nudge: "Do {task_file} now"
    terminal: {cols: 200}
    restart: {policy: always}
    stop: {timeout: 3s}
  - id: nulls
    prompt_path: roles/a.md
    command: {exec: codex}
    clear_input:
    terminal:
`,
	})
	cfg := mustLoad(t, dir, nil)
	codex, _ := roles.LookupPreset(roles.CLICodex)

	unset, _ := cfg.Role("unset")
	if unset.ClearInput != "\x15" || unset.ReadyPattern.String() != codex.ReadyPattern || unset.StartupPrompt != codex.StartupPrompt {
		t.Errorf("unset keys did not take the preset: %q %v", unset.ClearInput, unset.ReadyPattern)
	}
	nulls, _ := cfg.Role("nulls")
	if nulls.ClearInput != "\x15" || nulls.Terminal != codex.Terminal {
		t.Errorf("null keys did not take the preset: %q %+v", nulls.ClearInput, nulls.Terminal)
	}

	empty, _ := cfg.Role("empty")
	if empty.ClearInput != "" || empty.ReadyPattern != nil || empty.AttentionPattern != nil || empty.StartupPrompt != "" || empty.Notify != "" || empty.Stop.Keys != "" {
		t.Errorf("empty values did not override: %+v", empty)
	}
	if empty.BusyPattern.String() != codex.BusyPattern || empty.Stop.Timeout != codex.Stop.Timeout {
		t.Errorf("keys left out changed: busy %v stop %+v", empty.BusyPattern, empty.Stop)
	}

	set, _ := cfg.Role("set")
	if set.ClearInput != "\x1b" || set.Submit != "\n" || set.SubmitDelay != 0 || set.ReadyQuiet != 1500*time.Millisecond || set.Nudge != "Do {task_file} now" {
		t.Errorf("set values: %q %q %v %v %q", set.ClearInput, set.Submit, set.SubmitDelay, set.ReadyQuiet, set.Nudge)
	}
	if !set.BusyPattern.MatchString("THINKING…") {
		t.Errorf("busy pattern %v", set.BusyPattern)
	}
	if set.Terminal != (roles.TerminalSize{Cols: 200, Rows: 40}) {
		t.Errorf("terminal = %+v, want cols from the file and rows from the preset", set.Terminal)
	}
	if set.Restart != (roles.RestartPolicy{Policy: roles.RestartAlways, MaxRestarts: 5, Window: 10 * time.Minute}) {
		t.Errorf("restart = %+v", set.Restart)
	}
	if set.Stop != (roles.StopSequence{Keys: "/quit\r", Timeout: 3 * time.Second}) {
		t.Errorf("stop = %+v", set.Stop)
	}
}

func TestRolesWithoutCommandRunTheDefaultCommand(t *testing.T) {
	dir := testWorkspace(t, map[string]string{
		"roles/a.md": "a",
		SettingsFile: `agent:
  default_command: {exec: "${BIN:-claude}", args: [--verbose], env: {X: "1"}, cwd: sub}
`,
		RolesFile: "roles:\n  - {id: a, prompt_path: roles/a.md}\n  - {id: b, prompt_path: roles/a.md}\n",
	})
	cfg := mustLoad(t, dir, nil)
	a, _ := cfg.Role("a")
	b, _ := cfg.Role("b")
	want := Command{Exec: "claude", Args: []string{"--verbose"}, Env: map[string]string{"X": "1"}, Cwd: filepath.Join(cfg.Workspace, "sub")}
	if !reflect.DeepEqual(a.Command, want) || a.CLI != roles.CLIClaude {
		t.Errorf("a.Command = %#v (%s), want %#v", a.Command, a.CLI, want)
	}
	a.Command.Args[0] = "changed"
	if b.Command.Args[0] != "--verbose" || cfg.Settings.Agent.DefaultCommand.Args[0] != "--verbose" {
		t.Error("roles share the default command's slices")
	}
}

func TestAnchorsAndMergeKeys(t *testing.T) {
	dir := testWorkspace(t, map[string]string{
		"roles/a.md": "a",
		RolesFile: `x-claude: &claude
  exec: claude
  args: [--dangerously-skip-permissions]
roles:
  - &base
    id: a
    prompt_path: roles/a.md
    command: *claude
    submit_delay: 50ms
  - <<: *base
    id: b
    submit_delay: 70ms
`,
	})
	_, err := Load(dir, env(nil))
	// x-claude is not a known key: anchors are welcome, stray keys are not.
	if err == nil || err.Error() != `config/roles.yaml:1:1: unknown key "x-claude" in roles file` {
		t.Fatalf("err = %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config", "roles.yaml"), []byte(`roles:
  - &base
    id: a
    prompt_path: roles/a.md
    command: &claude {exec: claude, args: [--dangerously-skip-permissions]}
    submit_delay: 50ms
  - <<: *base
    id: b
    submit_delay: 70ms
  - {id: c, prompt_path: roles/a.md, command: *claude}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := mustLoad(t, dir, nil)
	b, _ := cfg.Role("b")
	c, _ := cfg.Role("c")
	if b.SubmitDelay != 70*time.Millisecond || b.Command.Exec != "claude" || b.PromptPath != "roles/a.md" || c.Command.Args[0] != "--dangerously-skip-permissions" {
		t.Errorf("b = %+v, c = %+v", b, c)
	}
}

// The configuration follows the queue's rule for document separators: a
// "---" that starts or ends a file (editors and generators add them) holds
// nothing and is not a second document.
func TestStrayDocumentSeparatorsAreHarmless(t *testing.T) {
	dir := testWorkspace(t, map[string]string{
		"roles/a.md": "a",
		RolesFile:    "---\nroles:\n  - {id: a, prompt_path: roles/a.md, command: {exec: codex}}\n---\n",
		SettingsFile: "---\n---\nui:\n  port: 6000\n--- ~\n",
	})
	cfg := mustLoad(t, dir, nil)
	if len(cfg.Roles) != 1 || cfg.Settings.UI.Port != 6000 {
		t.Errorf("roles %+v, port %d", cfg.Roles, cfg.Settings.UI.Port)
	}
}

func TestLoadRejectsAMissingWorkspace(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "nope"), nil)
	if err == nil || !strings.Contains(err.Error(), "config: workspace") {
		t.Errorf("err = %v", err)
	}
	var errs *Errors
	if errors.As(err, &errs) {
		t.Error("a missing workspace is not a file problem")
	}
}

// idle_after comes from agent.idle_after unless a role sets its own (0
// included); resume_args from the preset unless the role sets them;
// agent.max_running is read as written.
func TestIdleAfterResumeArgsAndMaxRunning(t *testing.T) {
	dir := testWorkspace(t, map[string]string{
		"roles/a.md": "a",
		SettingsFile: "agent:\n  idle_after: 10m\n  max_running: 3\n",
		RolesFile: "roles:\n" +
			"  - {id: a, prompt_path: roles/a.md, command: {exec: claude}}\n" +
			"  - {id: b, prompt_path: roles/a.md, command: {exec: codex}, idle_after: 0}\n" +
			"  - {id: c, prompt_path: roles/a.md, command: {exec: gemini}, idle_after: 30s, resume_args: [--resume, \"3\"]}\n" +
			"  - {id: d, prompt_path: roles/a.md, command: {exec: my-agent}}\n",
	})
	cfg := mustLoad(t, dir, nil)
	if cfg.Settings.Agent.MaxRunning != 3 {
		t.Errorf("max_running = %d, want 3", cfg.Settings.Agent.MaxRunning)
	}
	for _, c := range []struct {
		id     string
		idle   time.Duration
		resume []string
	}{
		{"a", 10 * time.Minute, []string{"--resume", "{session}"}},
		{"b", 0, []string{"resume", "{session}"}},
		{"c", 30 * time.Second, []string{"--resume", "3"}},
		{"d", 10 * time.Minute, nil},
	} {
		r, _ := cfg.Role(c.id)
		if r.IdleAfter != c.idle || !reflect.DeepEqual(r.ResumeArgs, c.resume) {
			t.Errorf("%s: idle_after %v, resume_args %q; want %v, %q", c.id, r.IdleAfter, r.ResumeArgs, c.idle, c.resume)
		}
	}
}

func TestBudgetsLoad(t *testing.T) {
	dir := testWorkspace(t, map[string]string{
		"config/roles.yaml": "roles:\n  - {id: a, prompt_path: roles/a.md, command: {exec: codex}}\n",
		"roles/a.md":        "a",
		"config/settings.yaml": `usage:
  budgets:
    team: {tokens: 5M, cost_usd: 40}
    roles:
      a: {tokens: 1_500_000}
      gone: {cost_usd: 2.5}
`,
	})
	cfg := mustLoad(t, dir, nil)
	want := usage.Budgets{Team: usage.Budget{Tokens: 5_000_000, CostUSD: 40},
		Roles: map[string]usage.Budget{"a": {Tokens: 1_500_000}, "gone": {CostUSD: 2.5}}}
	if !reflect.DeepEqual(cfg.Settings.Usage.Budgets, want) {
		t.Errorf("budgets = %+v, want %+v", cfg.Settings.Usage.Budgets, want)
	}
	var warned []string
	for _, w := range cfg.Warnings {
		warned = append(warned, w.Error())
	}
	if len(warned) != 1 || warned[0] != `config/settings.yaml:6:7: usage.budgets.roles: no role "gone" in config/roles.yaml: its budget bounds nothing` {
		t.Errorf("warnings = %q", warned)
	}
}

// agent.max_running_per_cli is read per CLI preset, whatever its case; a
// name that is no preset, or a bound below 1, is an error naming it.
func TestMaxRunningPerCLI(t *testing.T) {
	roles := "roles:\n  - {id: a, prompt_path: roles/a.md, command: {exec: claude}}\n"
	dir := testWorkspace(t, map[string]string{
		"roles/a.md": "a",
		SettingsFile: "agent:\n  max_running: 8\n  max_running_per_cli: {claude: 2, Codex: 1}\n",
		RolesFile:    roles,
	})
	cfg := mustLoad(t, dir, nil)
	if want := map[string]int{"claude": 2, "codex": 1}; !reflect.DeepEqual(cfg.Settings.Agent.MaxRunningPerCLI, want) {
		t.Errorf("max_running_per_cli = %v, want %v", cfg.Settings.Agent.MaxRunningPerCLI, want)
	}
	for _, c := range []struct{ settings, want string }{
		{"agent:\n  max_running_per_cli: {clade: 2}\n", `unknown CLI "clade" in agent.max_running_per_cli`},
		{"agent:\n  max_running_per_cli: {claude: 0}\n", `"claude"`},
	} {
		dir := testWorkspace(t, map[string]string{"roles/a.md": "a", SettingsFile: c.settings, RolesFile: roles})
		if _, err := Load(dir, env(nil)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("settings %q: error %v, want one naming %s", c.settings, err, c.want)
		}
	}
}

// docs/configuration.md writes idle_after's default as "(off)", and a
// person copies that: off and never mean 0, in the settings and in a
// role, and a word that is not a duration is still refused.
func TestIdleAfterOffMeansNever(t *testing.T) {
	dir := testWorkspace(t, map[string]string{
		"roles/a.md": "a",
		SettingsFile: "agent:\n  idle_after: off\n",
		RolesFile: "roles:\n" +
			"  - {id: a, prompt_path: roles/a.md, command: {exec: claude}, idle_after: never}\n" +
			"  - {id: b, prompt_path: roles/a.md, command: {exec: claude}, idle_after: \"Off\"}\n" +
			"  - {id: c, prompt_path: roles/a.md, command: {exec: claude}}\n",
	})
	cfg := mustLoad(t, dir, nil)
	if cfg.Settings.Agent.IdleAfter != 0 {
		t.Errorf("agent.idle_after off = %v, want 0", cfg.Settings.Agent.IdleAfter)
	}
	for _, r := range cfg.Roles {
		if r.IdleAfter != 0 {
			t.Errorf("role %s idle_after = %v, want 0", r.ID, r.IdleAfter)
		}
	}
	bad := testWorkspace(t, map[string]string{SettingsFile: "agent:\n  idle_after: sometimes\n",
		"roles/a.md": "a", RolesFile: "roles:\n  - {id: a, prompt_path: roles/a.md, command: {exec: claude}}\n"})
	if _, err := Load(bad, nil); err == nil || !strings.Contains(err.Error(), `"idle_after" is not a valid duration`) {
		t.Errorf("idle_after: sometimes: %v, want it refused", err)
	}
}
