package config

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// The worktree key: true takes the defaults, a mapping sets base and
// branch ({id} expanded), false or no key means none.
func TestWorktreeKey(t *testing.T) {
	ws := testWorkspace(t, map[string]string{"roles/a.md": "a", RolesFile: `roles:
  - id: a1
    prompt_path: roles/a.md
    command: {exec: codex}
    worktree: true
  - id: a2
    prompt_path: roles/a.md
    command: {exec: codex}
    worktree: {base: develop, branch: "agents/{id}-work"}
  - id: a3
    prompt_path: roles/a.md
    command: {exec: codex}
    worktree: false
  - id: a4
    prompt_path: roles/a.md
    command: {exec: codex}
    worktree: {base: main}
  - id: a5
    prompt_path: roles/a.md
    command: {exec: codex}
`})
	cfg := mustLoad(t, ws, nil)
	want := map[string]*Worktree{
		"a1": {Branch: "shogun/a1"},
		"a2": {Base: "develop", Branch: "agents/a2-work"},
		"a3": nil,
		"a4": {Base: "main", Branch: "shogun/a4"},
		"a5": nil,
	}
	for id, w := range want {
		r, _ := cfg.Role(id)
		if !reflect.DeepEqual(r.Worktree, w) {
			t.Errorf("%s: worktree %+v, want %+v", id, r.Worktree, w)
		}
	}
}

// Every mistake in a worktree key is reported with its line, all at once.
func TestWorktreeKeyErrors(t *testing.T) {
	ws := testWorkspace(t, map[string]string{"roles/a.md": "a", RolesFile: `roles:
  - id: a1
    prompt_path: roles/a.md
    command: {exec: codex}
    worktree: "yes"
  - id: a2
    prompt_path: roles/a.md
    command: {exec: codex}
    worktree: {base: "my base", branch: "x/{name}", bsae: main}
  - id: a3
    prompt_path: roles/a.md
    command: {exec: codex}
    worktree: {branch: "../up"}
  - id: a4
    prompt_path: roles/a.md
    command: {exec: codex}
    worktree: {branch: "shared"}
  - id: a5
    prompt_path: roles/a.md
    command: {exec: codex}
    worktree: {branch: "shared"}
  - id: a6
    prompt_path: roles/a.md
    command: {exec: codex}
    worktree: {branch: "-x", base: "main.lock"}
`})
	_, err := Load(ws, env(nil))
	var errs *Errors
	if !errors.As(err, &errs) {
		t.Fatalf("Load: %v, want *Errors", err)
	}
	want := []string{
		`config/roles.yaml:5:15: "worktree" must be true, false, or a mapping with base and branch, got string "yes"`,
		`config/roles.yaml:9:22: worktree "base" "my base": must not contain ' ' (git refuses spaces, control characters and ~ ^ : ? * [ \ in branch names)`,
		`config/roles.yaml:9:41: worktree branch "x/{name}": unknown placeholder {name} (only {id} is known)`,
		`config/roles.yaml:9:53: unknown key "bsae" in role worktree (did you mean "base"?)`,
		`config/roles.yaml:13:24: worktree branch "../up": must not contain ".."`,
		`config/roles.yaml:21:24: worktree branch "shared" is already the branch of the role at line 17: a branch can be checked out in one worktree only`,
		`config/roles.yaml:25:24: worktree branch "-x": must not start with "-"`,
		`config/roles.yaml:25:36: worktree "base" "main.lock": part "main.lock" must not start with "." or end with ".lock"`,
	}
	if got := strings.Split(err.Error(), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestCheckBranchName(t *testing.T) {
	for name, ok := range map[string]bool{
		"shogun/ashigaru1": true, "main": true, "feature/a-b_c.d": true, "日本語": true,
		"": false, "HEAD": false, "@": false, "a b": false, "a..b": false, "a/": false, "/a": false,
		"a//b": false, "a.": false, "a@{1}": false, "a~1": false, "a^": false, "a:b": false,
		"a?": false, "a*": false, "a[": false, `a\b`: false, "a/.b": false, "a.lock": false, "a\x01": false,
	} {
		if got := CheckBranchName(name) == ""; got != ok {
			t.Errorf("CheckBranchName(%q) accepted = %v, want %v (%s)", name, got, ok, CheckBranchName(name))
		}
	}
}
