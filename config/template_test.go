package config

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/shogun-dev/shogun/roles"
	"github.com/shogun-dev/shogun/workspace"
)

// Every template of a role gets the same values, and its files are named as
// the agent sees them from its working directory: a role working in a
// subfolder is pointed at files that exist from there.
func TestTemplateVarsFollowTheRolesWorkingDirectory(t *testing.T) {
	ws := testWorkspace(t, map[string]string{
		"config/roles.yaml": `roles:
  - id: here
    prompt_path: roles/a.md
    command: {exec: codex, cwd: "."}
  - id: below
    prompt_path: roles/a.md
    command: {exec: codex, cwd: "app"}
`,
		"roles/a.md":  "# a\n",
		"app/main.go": "package main\n",
	})
	cfg, err := Load(ws, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	l := workspace.New(ws)
	cases := []struct {
		role                 string
		prompt, task, report string
	}{
		{"here", "roles/a.md", "runtime/queue/tasks/here.yaml", "runtime/queue/reports/here.yaml"},
		{"below", filepath.Join(ws, "roles", "a.md"), l.TaskFile("below"), l.ReportFile("below")},
	}
	for _, c := range cases {
		r, _ := cfg.Role(c.role)
		vars := r.TemplateVars(l)
		got := []string{vars[roles.VarPromptPath], vars[roles.VarTaskFile], vars[roles.VarReportFile]}
		want := []string{c.prompt, c.task, c.report}
		for i := range got {
			if filepath.FromSlash(got[i]) != filepath.FromSlash(want[i]) {
				t.Errorf("%s: value %d = %q, want %q", c.role, i, got[i], want[i])
			}
		}
		// What the agent is told to read exists from where it works.
		p := filepath.FromSlash(vars[roles.VarPromptPath])
		if !filepath.IsAbs(p) {
			p = filepath.Join(r.Command.Cwd, p)
		}
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s: the prompt path %q does not exist from its working directory: %v", c.role, vars[roles.VarPromptPath], err)
		}
		if vars[roles.VarID] != c.role || vars[roles.VarName] != c.role {
			t.Errorf("%s: id/name = %q/%q", c.role, vars[roles.VarID], vars[roles.VarName])
		}
	}
}
