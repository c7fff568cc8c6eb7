package config

import (
	"strings"
	"testing"

	"github.com/shogun-dev/shogun/sandbox"
)

// The sandbox key: true means required, "preferred" and "required" as
// written, false or no key none; anything else is refused with its line.
func TestSandboxKey(t *testing.T) {
	roles := "roles:\n"
	for _, r := range []struct{ id, line string }{
		{"a1", "    sandbox: true\n"}, {"a2", "    sandbox: preferred\n"}, {"a3", "    sandbox: required\n"},
		{"a4", "    sandbox: false\n"}, {"a5", ""},
	} {
		roles += "  - id: " + r.id + "\n    prompt_path: roles/a.md\n    command: {exec: codex}\n" + r.line
	}
	cfg := mustLoad(t, testWorkspace(t, map[string]string{"roles/a.md": "a", RolesFile: roles}), nil)
	want := map[string]sandbox.Mode{"a1": sandbox.Required, "a2": sandbox.Preferred, "a3": sandbox.Required, "a4": sandbox.Off, "a5": sandbox.Off}
	for id, mode := range want {
		if r, _ := cfg.Role(id); r.Sandbox != mode {
			t.Errorf("role %s: sandbox %q, want %q", id, r.Sandbox, mode)
		}
	}

	ws := testWorkspace(t, map[string]string{"roles/a.md": "a", RolesFile: "roles:\n  - id: a1\n    prompt_path: roles/a.md\n    command: {exec: codex}\n    sandbox: strict\n"})
	_, err := Load(ws, env(nil))
	if want := `config/roles.yaml:5:14: "sandbox" must be one of required, preferred; got "strict"`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Load: %v, want %s", err, want)
	}
}
