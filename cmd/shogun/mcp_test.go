package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The MCP server configuration each CLI accepts for a local (stdio) server,
// as Go types decoded strictly: a key the CLI does not know, or a value of
// the wrong type, fails the decoding. Written from the pinned CLIs: `copilot
// mcp get --json` and `codex mcp get --json` on the files, Claude Code's and
// Gemini CLI's documented keys, and each CLI starting the server in a real
// run (docs/worktrees-and-mcp.md, "MCP tools").
type (
	// claudeServer is an entry of .mcp.json's mcpServers for Claude Code.
	claudeServer struct {
		Type    string            `json:"type"` // "stdio" or absent
		Command string            `json:"command"`
		Args    []string          `json:"args"`
		Env     map[string]string `json:"env"`
	}
	// copilotServer is the same entry as Copilot CLI reads it.
	copilotServer struct {
		Type    string            `json:"type"` // "local", "stdio" or absent
		Command string            `json:"command"`
		Args    []string          `json:"args"`
		Env     map[string]string `json:"env"`
		Tools   []string          `json:"tools"`
		Cwd     string            `json:"cwd"`
		Timeout int               `json:"timeout"`
	}
	// claudeSettings are the keys of .claude/settings.json shogun writes.
	claudeSettings struct {
		EnabledMcpjsonServers []string `json:"enabledMcpjsonServers"`
		Permissions           struct {
			Allow []string `json:"allow"`
			Deny  []string `json:"deny"`
		} `json:"permissions"`
		Hooks struct {
			PreToolUse []struct {
				Matcher string `json:"matcher"`
				Hooks   []struct {
					Type    string `json:"type"`
					Command string `json:"command"`
					Timeout int    `json:"timeout"`
				} `json:"hooks"`
			} `json:"PreToolUse"`
		} `json:"hooks"`
	}
	// geminiServer is an entry of .gemini/settings.json's mcpServers.
	geminiServer struct {
		Command      string            `json:"command"`
		Args         []string          `json:"args"`
		Env          map[string]string `json:"env"`
		Cwd          string            `json:"cwd"`
		Timeout      int               `json:"timeout"`
		Trust        bool              `json:"trust"`
		Description  string            `json:"description"`
		IncludeTools []string          `json:"includeTools"`
		ExcludeTools []string          `json:"excludeTools"`
	}
	// codexServer is a [mcp_servers.NAME] table of Codex's config.toml.
	codexServer struct {
		Command                  string            `toml:"command"`
		Args                     []string          `toml:"args"`
		Env                      map[string]string `toml:"env"`
		EnvVars                  []string          `toml:"env_vars"`
		Cwd                      string            `toml:"cwd"`
		Enabled                  *bool             `toml:"enabled"`
		StartupTimeoutSec        float64           `toml:"startup_timeout_sec"`
		ToolTimeoutSec           float64           `toml:"tool_timeout_sec"`
		EnabledTools             []string          `toml:"enabled_tools"`
		DisabledTools            []string          `toml:"disabled_tools"`
		DefaultToolsApprovalMode string            `toml:"default_tools_approval_mode"`
	}
)

// strictJSON decodes data into v, refusing keys v does not have.
func strictJSON(t *testing.T, name string, data []byte, v any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s does not match the CLI's schema: %v\n%s", name, err, data)
	}
}

// mcpServers decodes a file whose servers are under "mcpServers" and
// returns shogun's entry, checked strictly against server's type.
func mcpServers[S any](t *testing.T, name string, data []byte) S {
	t.Helper()
	var top struct {
		MCPServers map[string]json.RawMessage `json:"mcpServers"`
		// Gemini CLI's settings name the policy files of the admin tier
		// (its settings schema, 0.61.0); checked in the Gemini part.
		AdminPolicyPaths []string `json:"adminPolicyPaths"`
		// And its hooks (BeforeTool), checked in the Gemini part too.
		Hooks map[string]json.RawMessage `json:"hooks"`
	}
	strictJSON(t, name, data, &top)
	raw, ok := top.MCPServers["shogun"]
	if !ok {
		t.Fatalf("%s has no mcpServers.shogun:\n%s", name, data)
	}
	var s S
	strictJSON(t, name+" mcpServers.shogun", raw, &s)
	return s
}

// `shogun init` writes each CLI's MCP configuration; each file holds what
// that CLI requires and nothing it does not know, names this shogun, and
// the server it describes answers a client with the tools.
func TestInitWritesEachCLIsMCPConfiguration(t *testing.T) {
	ws := t.TempDir()
	if _, errOut, code := shogun(t, "init", ws); code != 0 {
		t.Fatalf("init: %s", errOut)
	}
	read := func(rel string) []byte {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(ws, filepath.FromSlash(rel)))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	type launch struct {
		cli, file string
		command   string
		args      []string
	}
	var launches []launch

	// Claude Code: .mcp.json, enabled and allowed in .claude/settings.json.
	claude := mcpServers[claudeServer](t, ".mcp.json", read(".mcp.json"))
	if claude.Type != "" && claude.Type != "stdio" {
		t.Errorf("Claude Code: type %q, want stdio", claude.Type)
	}
	launches = append(launches, launch{"claude", ".mcp.json", claude.Command, claude.Args})
	var settings claudeSettings
	strictJSON(t, ".claude/settings.json", read(".claude/settings.json"), &settings)
	if !slices.Contains(settings.EnabledMcpjsonServers, "shogun") || !slices.Contains(settings.Permissions.Allow, "mcp__shogun") {
		t.Errorf("Claude Code settings neither enable the server nor allow its tools: %+v", settings)
	}
	// The approvals hook: every tool call goes through `shogun hook claude`.
	if pre := settings.Hooks.PreToolUse; len(pre) != 1 || pre[0].Matcher != "*" || len(pre[0].Hooks) != 1 ||
		pre[0].Hooks[0].Type != "command" || !strings.HasSuffix(pre[0].Hooks[0].Command, " hook claude") || pre[0].Hooks[0].Timeout < 60 {
		t.Errorf("Claude Code settings have no PreToolUse hook running shogun hook claude: %+v", settings.Hooks)
	}

	// Copilot CLI: the same .mcp.json, as a workspace server.
	copilot := mcpServers[copilotServer](t, ".mcp.json", read(".mcp.json"))
	if !slices.Contains([]string{"", "local", "stdio"}, copilot.Type) {
		t.Errorf("Copilot CLI: type %q, want local or stdio", copilot.Type)
	}
	launches = append(launches, launch{"copilot", ".mcp.json", copilot.Command, copilot.Args})

	// Gemini CLI: .gemini/settings.json, trusted so tool calls need no answer.
	gemini := mcpServers[geminiServer](t, ".gemini/settings.json", read(".gemini/settings.json"))
	if !gemini.Trust {
		t.Error("Gemini CLI: the server is not trusted: every tool call would wait for a person")
	}
	launches = append(launches, launch{"gemini", ".gemini/settings.json", gemini.Command, gemini.Args})
	var geminiTop struct {
		AdminPolicyPaths []string `json:"adminPolicyPaths"`
		Hooks            struct {
			BeforeTool []struct {
				Hooks []struct {
					Type    string `json:"type"`
					Command string `json:"command"`
					Timeout int    `json:"timeout"`
				} `json:"hooks"`
			} `json:"BeforeTool"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(read(".gemini/settings.json"), &geminiTop); err != nil ||
		len(geminiTop.AdminPolicyPaths) != 1 || geminiTop.AdminPolicyPaths[0] != ".gemini/shogun-policy.toml" {
		t.Errorf("Gemini CLI: adminPolicyPaths = %q (%v), want the policy's deny rules", geminiTop.AdminPolicyPaths, err)
	}
	// Its BeforeTool hook runs `shogun hook gemini`, the time limit in ms.
	if bt := geminiTop.Hooks.BeforeTool; len(bt) != 1 || len(bt[0].Hooks) != 1 || bt[0].Hooks[0].Type != "command" ||
		!strings.HasSuffix(bt[0].Hooks[0].Command, " hook gemini") || bt[0].Hooks[0].Timeout < 60_000 {
		t.Errorf("Gemini CLI: hooks.BeforeTool = %+v", bt)
	}
	if b := read(".gemini/shogun-policy.toml"); !strings.HasPrefix(string(b), "# Written by shogun") {
		t.Errorf("Gemini CLI: the policy file adminPolicyPaths names:\n%s", b)
	}

	// Codex: [mcp_servers.shogun] in .codex/config.toml, with the variables
	// shogun needs passed on and no approval asked.
	var codexConf struct {
		MCPServers map[string]codexServer `toml:"mcp_servers"`
	}
	md, err := toml.Decode(string(read(".codex/config.toml")), &codexConf)
	if err != nil {
		t.Fatalf(".codex/config.toml: %v", err)
	}
	if extra := md.Undecoded(); len(extra) > 0 {
		t.Errorf(".codex/config.toml has keys Codex does not know: %v", extra)
	}
	codex, ok := codexConf.MCPServers["shogun"]
	if !ok {
		t.Fatal(".codex/config.toml has no [mcp_servers.shogun]")
	}
	envVars := append([]string(nil), codex.EnvVars...)
	sort.Strings(envVars)
	if !slices.Equal(envVars, []string{"SHOGUN_ROLE", "SHOGUN_WORKSPACE"}) {
		t.Errorf("Codex: env_vars = %v, want SHOGUN_WORKSPACE and SHOGUN_ROLE passed on", codex.EnvVars)
	}
	// Codex 0.169 takes auto, prompt, writes or approve.
	if codex.DefaultToolsApprovalMode != "approve" {
		t.Errorf("Codex: default_tools_approval_mode = %q, want approve", codex.DefaultToolsApprovalMode)
	}
	launches = append(launches, launch{"codex", ".codex/config.toml", codex.Command, codex.Args})

	// Each names this shogun, absolute, with `mcp`; started as the CLI would
	// start it inside a role, it serves the role's tools.
	for _, l := range launches {
		if !filepath.IsAbs(l.command) || !sameFile(l.command, bin) || !slices.Equal(l.args, []string{"mcp"}) {
			t.Errorf("%s (%s) starts %q %v, want %s mcp", l.cli, l.file, l.command, l.args, bin)
		}
	}
	l := launches[0]
	cmd := exec.Command(l.command, l.args...)
	cmd.Env = append(os.Environ(), "SHOGUN_WORKSPACE="+ws, "SHOGUN_ROLE=karo")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to %s: %v", l.command, err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	sort.Strings(names)
	if want := []string{"list_tasks", "my_task", "report", "send_task", "team_status"}; !slices.Equal(names, want) {
		t.Errorf("tools %v, want %v", names, want)
	}
}

func sameFile(a, b string) bool {
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}

// `shogun mcp` outside a role says what is missing and serves nothing.
func TestMCPWithoutItsEnvironment(t *testing.T) {
	ws := t.TempDir()
	if _, errOut, code := shogun(t, "init", ws); code != 0 {
		t.Fatalf("init: %s", errOut)
	}
	var base []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SHOGUN_") {
			base = append(base, kv)
		}
	}
	for _, c := range []struct {
		env  []string
		want string
	}{
		{nil, "mcp: SHOGUN_WORKSPACE is not set"},
		{[]string{"SHOGUN_WORKSPACE=" + ws}, "mcp: SHOGUN_ROLE is not set"},
		{[]string{"SHOGUN_WORKSPACE=" + ws, "SHOGUN_ROLE=nobody"}, `mcp: SHOGUN_ROLE: role "nobody" is not in config/roles.yaml (roles: shogun, karo, ashigaru1, ashigaru2, ashigaru3)`},
		{[]string{"SHOGUN_WORKSPACE=" + filepath.Join(ws, "missing"), "SHOGUN_ROLE=karo"}, "mcp: workspace " + filepath.Join(ws, "missing")},
	} {
		cmd := exec.Command(bin, "mcp")
		cmd.Env = append(append([]string(nil), base...), c.env...)
		cmd.Stdin = strings.NewReader("")
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		if err == nil || !strings.Contains(errOut.String(), c.want) || out.Len() != 0 {
			t.Errorf("env %v: err %v, stdout %q, stderr %q; want exit 1 and %q", c.env, err, out.String(), errOut.String(), c.want)
		}
	}
}
