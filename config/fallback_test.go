package config

import (
	"strings"
	"testing"
)

// The fallback key names another role of the file, which takes the role's
// tasks at a usage limit; two roles may name each other. A fallback that is
// the role itself, or no role of the file, is refused with its line.
func TestFallbackKey(t *testing.T) {
	entry := func(id, fallback string) string {
		s := "  - id: " + id + "\n    prompt_path: roles/a.md\n    command: {exec: codex}\n"
		if fallback != "" {
			s += "    fallback: " + fallback + "\n"
		}
		return s
	}
	cfg := mustLoad(t, testWorkspace(t, map[string]string{"roles/a.md": "a",
		RolesFile: "roles:\n" + entry("codex", "claude") + entry("claude", "codex") + entry("gemini", "")}), nil)
	for id, want := range map[string]string{"codex": "claude", "claude": "codex", "gemini": ""} {
		if r, _ := cfg.Role(id); r.Fallback != want {
			t.Errorf("role %s: fallback %q, want %q", id, r.Fallback, want)
		}
	}

	for _, c := range []struct{ roles, want string }{
		{entry("codex", "codex"), `config/roles.yaml:5:15: fallback "codex" is the role itself`},
		{entry("codex", "claude"), `config/roles.yaml:5:15: fallback "claude" is not a role of this file`},
		{entry("codex", `""`), `config/roles.yaml:5:15: "fallback" must name a role`},
		{entry("codex", "[claude]"), `config/roles.yaml:5:15: "fallback" must be a string`},
	} {
		ws := testWorkspace(t, map[string]string{"roles/a.md": "a", RolesFile: "roles:\n" + c.roles})
		if _, err := Load(ws, env(nil)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Load with\n%s: %v, want %s", c.roles, err, c.want)
		}
	}
}
