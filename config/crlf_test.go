package config

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// A workspace checked out on Windows with git's core.autocrlf, or edited in
// Notepad, has CRLF line ends in its YAML. It loads exactly as the LF files
// do: no carriage return ends up in a prompt, a nudge or an argument, where
// it would be typed into an agent as an extra Enter.
func TestCRLFConfigLoadsLikeLF(t *testing.T) {
	const rolesYAML = `roles:
  - id: karo
    name: "家老"
    prompt_path: roles/karo.md
    command:
      exec: codex
      args: ["--model", "x"]
      env: {TEAM: "a b"}
    startup_prompt: |
      Read {prompt_path}.
      You are {name}.
    nudge: >
      Read {task_file}
      and do it.
    submit_delay: 250ms
  - id: ashigaru1
    prompt_path: roles/ashigaru1.md
    enabled: false
`
	const settingsYAML = "data:\n  sqlite_path: data/app.db\nskills:\n  auto_candidate_threshold: 3\n"
	for _, lang := range []string{"en", "ja"} {
		for _, name := range []string{"roles.yaml", "roles-demo.yaml"} {
			b, err := DefaultFile(lang, name)
			if err != nil {
				t.Fatal(err)
			}
			settings, err := DefaultFile(lang, "settings.yaml")
			if err != nil {
				t.Fatal(err)
			}
			compareCRLF(t, fmt.Sprintf("default %s/%s", lang, name), string(b), string(settings))
		}
	}
	compareCRLF(t, "hand-written", rolesYAML, settingsYAML)
}

func compareCRLF(t *testing.T, what, rolesYAML, settingsYAML string) {
	t.Helper()
	load := func(conv func(string) string) *Config {
		files := map[string]string{RolesFile: conv(rolesYAML), SettingsFile: conv(settingsYAML)}
		for _, kind := range []string{"shogun", "karo", "ashigaru", "ashigaru1"} {
			files["roles/"+kind+".md"] = conv("# " + kind + "\n")
		}
		ws := testWorkspace(t, files)
		cfg, err := Load(ws, env(map[string]string{"SHOGUN_EXE": "shogun"}))
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		cfg.Workspace = ""
		return cfg
	}
	lf := load(func(s string) string { return strings.ReplaceAll(s, "\r\n", "\n") })
	cr := load(func(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\n", "\r\n") })
	for i := range lf.Roles {
		// Absolute paths differ with the temporary folder.
		lf.Roles[i].PromptFile, cr.Roles[i].PromptFile = "", ""
		lf.Roles[i].Command.Cwd, cr.Roles[i].Command.Cwd = "", ""
		r := cr.Roles[i]
		for _, s := range append([]string{r.Name, r.StartupPrompt, r.Nudge, r.Notify, r.Command.Exec}, r.Command.Args...) {
			if strings.Contains(s, "\r") {
				t.Errorf("%s: role %s keeps a carriage return in %q", what, r.ID, s)
			}
		}
	}
	for _, s := range []*Settings{&lf.Settings, &cr.Settings} {
		s.Data.SQLitePath, s.Skills.CodexPath, s.Skills.CopilotPath, s.Agent.DefaultCommand.Cwd = "", "", "", ""
	}
	if !reflect.DeepEqual(lf.Roles, cr.Roles) {
		t.Errorf("%s: CRLF roles load differently:\n LF   %+v\n CRLF %+v", what, lf.Roles, cr.Roles)
	}
	if !reflect.DeepEqual(lf.Settings, cr.Settings) {
		t.Errorf("%s: CRLF settings load differently:\n LF   %+v\n CRLF %+v", what, lf.Settings, cr.Settings)
	}
}
