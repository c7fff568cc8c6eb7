package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/policy"
)

const policyRoles = `roles:
  - id: dev
    prompt_path: roles/dev.md
    command: {exec: claude}
`

// The policy `shogun init` writes loads, and decides as the issue asks:
// reads and edits inside the working folder allowed; destructive commands
// and shogun's own files denied; everything else asked.
func TestDefaultPolicyDecides(t *testing.T) {
	dir := t.TempDir()
	if _, err := Scaffold(dir, ScaffoldOptions{}); err != nil {
		t.Fatal(err)
	}
	cfg := mustLoad(t, dir, nil)
	if cfg.Policy == nil {
		t.Fatal("the default workspace has no policy")
	}
	if cfg.Settings.Approvals.Timeout != 2*time.Minute {
		t.Errorf("approvals.timeout = %v, want 2m", cfg.Settings.Approvals.Timeout)
	}
	place := policy.Place{Dir: cfg.Workspace, Workspace: cfg.Workspace, OnBaseBranch: true, Home: t.TempDir()}
	for _, tc := range []struct {
		a    policy.Action
		want policy.Decision
	}{
		{policy.Action{Kind: policy.Read, Path: "src/main.go"}, policy.Allow},
		{policy.Action{Kind: policy.Write, Path: filepath.Join(cfg.Workspace, "src/main.go")}, policy.Allow},
		{policy.Action{Kind: policy.Write, Path: "runtime/queue/reports/dev.yaml"}, policy.Allow},
		{policy.Action{Kind: policy.Write, Path: "/etc/hosts"}, policy.Ask},
		{policy.Action{Kind: policy.Write, Path: "config/roles.yaml"}, policy.Deny},
		{policy.Action{Kind: policy.Write, Path: "runtime/state/status.yaml"}, policy.Deny},
		{policy.Action{Kind: policy.Write, Path: ".git/config"}, policy.Deny},
		{policy.Action{Kind: policy.Shell, Command: "rm -rf build"}, policy.Ask},
		{policy.Action{Kind: policy.Shell, Command: "rm -rf ~/src"}, policy.Deny},
		{policy.Action{Kind: policy.Shell, Command: "git push --force origin main"}, policy.Deny},
		{policy.Action{Kind: policy.Shell, Command: "git push origin +main"}, policy.Deny},
		{policy.Action{Kind: policy.Shell, Command: "git reset --hard HEAD~3"}, policy.Deny},
		{policy.Action{Kind: policy.Shell, Command: "sed -i s/a/b/ config/settings.yaml"}, policy.Deny},
		{policy.Action{Kind: policy.Shell, Command: "go test ./..."}, policy.Ask},
		{policy.Action{Kind: policy.Fetch, URL: "https://example.com"}, policy.Ask},
		{policy.Action{Kind: policy.MCP, Tool: "shogun/report"}, policy.Allow},
		{policy.Action{Kind: policy.MCP, Tool: "github/create_pr"}, policy.Ask},
	} {
		if v := cfg.Policy.Decide("ashigaru1", place, tc.a); v.Decision != tc.want {
			t.Errorf("%s %q = %s (%s), want %s", tc.a.Kind, tc.a.Subject(), v.Decision, v.Reason, tc.want)
		}
	}
	// In its own worktree a role may reset its branch.
	wt := place
	wt.OnBaseBranch = false
	if v := cfg.Policy.Decide("ashigaru1", wt, policy.Action{Kind: policy.Shell, Command: "git reset --hard HEAD~3"}); v.Decision != policy.Ask {
		t.Errorf("reset --hard off the base branch = %s (%s), want ask", v.Decision, v.Reason)
	}
}

// policy.yaml is read as strictly as the other files: every problem at
// once, each with file, line and column.
func TestPolicyFileIsStrict(t *testing.T) {
	dir := testWorkspace(t, map[string]string{
		"config/roles.yaml": policyRoles,
		"roles/dev.md":      "x",
		"config/policy.yaml": `default: maybe
role_defaults:
  Dev!: allow
rules:
  - decision: allow
    kind: shell
    comand: "ls"
  - decision: deny
    kind: write
    host: "*.example"
  - decision: allow
    kind: telnet
  - kind: read
  - decision: deny
    kind: read
    path: "../x"
  - decision: allow
    kind: shell
    command: ""
extra: 1
`,
	})
	_, err := Load(dir, env(nil))
	var errs *Errors
	if !errors.As(err, &errs) {
		t.Fatalf("Load = %v, want *Errors", err)
	}
	want := []string{
		`config/policy.yaml:1:10: "default" must be one of allow, ask, deny; got "maybe"`,
		`config/policy.yaml:3:3: "Dev!" is not a role id`,
		`config/policy.yaml:7:5: unknown key "comand" in policy rule (did you mean "command"?)`,
		`config/policy.yaml:10:11: "host" does not apply to kind write`,
		`config/policy.yaml:12:11: "kind" must be one of shell, read, write, fetch, mcp; got "telnet"`,
		`config/policy.yaml:13:5: missing required key "decision" in policy rule`,
		`config/policy.yaml:16:11: "path": path pattern "../x"`,
		`config/policy.yaml:19:14: "command" must not be empty`,
		`config/policy.yaml:20:1: unknown key "extra" in policy file`,
	}
	if len(errs.List) != len(want) {
		t.Errorf("%d problems, want %d:\n%v", len(errs.List), len(want), err)
	}
	for i, w := range want {
		if i >= len(errs.List) || !strings.HasPrefix(errs.List[i].Error(), w) {
			t.Errorf("problem %d = %q, want it to start with %q", i+1, at(errs.List, i), w)
		}
	}
}

func at(list []Error, i int) string {
	if i < len(list) {
		return list[i].Error()
	}
	return ""
}

// A workspace made before approvals has no policy.yaml: no policy, and a
// role named in the policy that roles.yaml lacks is a warning, not an
// error.
func TestPolicyAbsentAndUnknownRoles(t *testing.T) {
	dir := testWorkspace(t, map[string]string{"config/roles.yaml": policyRoles, "roles/dev.md": "x"})
	if cfg := mustLoad(t, dir, nil); cfg.Policy != nil {
		t.Errorf("no policy.yaml: Policy = %+v, want nil", cfg.Policy)
	}
	if err := os.WriteFile(filepath.Join(dir, "config", "policy.yaml"), []byte("role_defaults: {qa: deny}\nrules:\n  - {decision: allow, kind: mcp, tool: x/*, roles: [dev, qa]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := mustLoad(t, dir, nil)
	if len(cfg.Warnings) != 2 || !strings.Contains(cfg.Warnings[0].Error(), `role "qa" is not in config/roles.yaml`) {
		t.Errorf("warnings = %v, want two about qa", cfg.Warnings)
	}
	if cfg.Policy.RoleDefaults["qa"] != policy.Deny || len(cfg.Policy.Rules) != 1 || cfg.Policy.Rules[0].Where != "config/policy.yaml:3" {
		t.Errorf("policy = %+v", cfg.Policy)
	}
}
