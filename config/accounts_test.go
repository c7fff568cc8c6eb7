package config

import (
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// A pool of settings.yaml is shared by the roles that name it; a role may
// also list accounts of its own. Keys say where each account comes from,
// secrets come from shogun's environment and ~/ is the home folder.
func TestAccountsFromAPoolAndOfARoleOwn(t *testing.T) {
	dir := testWorkspace(t, map[string]string{
		"roles/a.md": "x", "roles/b.md": "x",
		"config/settings.yaml": `accounts:
  pools:
    claude-team:
      - name: a
        env: {CLAUDE_CONFIG_DIR: ~/.claude-a}
      - name: b
        env: {CLAUDE_CONFIG_DIR: ~/.claude-b, ANTHROPIC_API_KEY: "${TEAM_B_KEY}"}
`,
		"config/roles.yaml": `roles:
  - id: karo
    prompt_path: roles/a.md
    command: {exec: claude}
    accounts: claude-team
  - id: coder
    prompt_path: roles/b.md
    command: {exec: codex}
    accounts:
      - {name: work, env: {CODEX_HOME: /srv/codex-work}}
`,
	})
	cfg := mustLoad(t, dir, env(map[string]string{"HOME": "/home/u", "TEAM_B_KEY": "sk-secret"}))
	karo, _ := cfg.Role("karo")
	want := []Account{
		{Key: "claude-team/a", Name: "a", Pool: "claude-team", Env: map[string]string{"CLAUDE_CONFIG_DIR": filepath.Join("/home/u", ".claude-a")}},
		{Key: "claude-team/b", Name: "b", Pool: "claude-team", Env: map[string]string{
			"CLAUDE_CONFIG_DIR": filepath.Join("/home/u", ".claude-b"), "ANTHROPIC_API_KEY": "sk-secret"}, From: []string{"TEAM_B_KEY"}},
	}
	if !reflect.DeepEqual(karo.Accounts, want) {
		t.Errorf("karo's accounts = %+v, want %+v", karo.Accounts, want)
	}
	coder, _ := cfg.Role("coder")
	if len(coder.Accounts) != 1 || coder.Accounts[0].Key != "coder/work" || coder.Accounts[0].Env["CODEX_HOME"] != "/srv/codex-work" {
		t.Errorf("coder's accounts = %+v, want coder/work with CODEX_HOME", coder.Accounts)
	}
}

// Mistakes in accounts are errors with their line, and a key written into
// the file is refused.
func TestAccountMistakesAreReported(t *testing.T) {
	dir := testWorkspace(t, map[string]string{
		"roles/a.md": "x",
		"config/settings.yaml": `accounts:
  pools:
    team:
      - {name: a, env: {ANTHROPIC_API_KEY: sk-ant-literal}}
      - {name: a, env: {CLAUDE_CONFIG_DIR: /x}}
      - {name: Bad Name, env: {CLAUDE_CONFIG_DIR: /y}}
      - {name: c, env: {}}
`,
		"config/roles.yaml": `roles:
  - id: karo
    prompt_path: roles/a.md
    accounts: nosuch
  - id: two
    prompt_path: roles/a.md
    accounts: []
`,
	})
	_, err := Load(dir, env(nil))
	var errs *Errors
	if !errors.As(err, &errs) {
		t.Fatalf("Load = %v, want *Errors", err)
	}
	got := err.Error()
	for _, want := range []string{
		`settings.yaml:4:`, `env "ANTHROPIC_API_KEY" holds a secret: write the variable of shogun's environment that holds it, as "${VARIABLE}"`,
		`settings.yaml:5:`, `duplicate account name "a" (first at line 4)`,
		`settings.yaml:6:`, `invalid account name "Bad Name"`,
		`settings.yaml:7:`, `must set at least one variable`,
		`roles.yaml:4:`, `accounts "nosuch" is not a pool of config/settings.yaml accounts.pools (pools: team)`,
		`roles.yaml:7:`, `"accounts" must list at least one account`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("errors lack %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "sk-ant-literal") {
		t.Errorf("an error repeats the key written into the file:\n%s", got)
	}
}

// accounts.switch_at is every role's, a role's accounts_switch_at its own;
// both are percentages from 1 to 100.
func TestAccountsSwitchAt(t *testing.T) {
	dir := testWorkspace(t, map[string]string{
		"roles/a.md":           "x",
		"config/settings.yaml": "accounts:\n  switch_at: 90\n",
		"config/roles.yaml": `roles:
  - id: karo
    prompt_path: roles/a.md
  - id: coder
    prompt_path: roles/a.md
    accounts_switch_at: 75
`,
	})
	cfg, err := Load(dir, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	karo, _ := cfg.Role("karo")
	coder, _ := cfg.Role("coder")
	if karo.AccountsSwitchAt != 90 || coder.AccountsSwitchAt != 75 {
		t.Errorf("switch_at: karo %d, coder %d; want 90 and 75", karo.AccountsSwitchAt, coder.AccountsSwitchAt)
	}

	bad := testWorkspace(t, map[string]string{
		"roles/a.md":           "x",
		"config/settings.yaml": "accounts:\n  switch_at: 0\n",
		"config/roles.yaml":    "roles:\n  - id: karo\n    prompt_path: roles/a.md\n    accounts_switch_at: 101\n",
	})
	_, err = Load(bad, env(nil))
	if err == nil {
		t.Fatal("Load accepted switch_at 0 and accounts_switch_at 101")
	}
	for _, want := range []string{`settings.yaml:2:`, `"switch_at" must be between 1 and 100, got 0`,
		`roles.yaml:4:`, `"accounts_switch_at" must be between 1 and 100, got 101`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("errors lack %q:\n%s", want, err)
		}
	}
}
