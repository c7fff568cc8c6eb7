package config

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// Diff names what a new configuration does to each role: roles added or
// enabled start, removed or disabled ones stop, a changed command or
// terminal restarts the program, anything else is given to it as it runs,
// and a disabled role's changes need nothing.
func TestDiffSaysWhatEachRoleNeeds(t *testing.T) {
	ws := testWorkspace(t, map[string]string{"roles/a.md": "a", "roles/b.md": "b", RolesFile: ""})
	load := func(roles string) *Config {
		if err := os.WriteFile(filepath.Join(ws, RolesFile), []byte(roles), 0o644); err != nil {
			t.Fatal(err)
		}
		return mustLoad(t, ws, nil)
	}
	cur := load(`roles:
  - {id: keep, prompt_path: roles/a.md, command: {exec: codex}}
  - {id: pattern, prompt_path: roles/a.md, command: {exec: codex}}
  - {id: args, prompt_path: roles/a.md, command: {exec: codex}}
  - {id: size, prompt_path: roles/a.md, command: {exec: codex}}
  - {id: gone, prompt_path: roles/a.md, command: {exec: codex}}
  - {id: off, prompt_path: roles/a.md, command: {exec: codex}}
  - {id: on, prompt_path: roles/a.md, command: {exec: codex}, enabled: false}
  - {id: sleeping, prompt_path: roles/a.md, command: {exec: codex}, enabled: false}
  - {id: idle, prompt_path: roles/a.md, command: {exec: codex}, idle_after: 20s}
`)
	next := load(`roles:
  - {id: new, prompt_path: roles/b.md, command: {exec: claude}}
  - {id: keep, prompt_path: roles/a.md, command: {exec: codex}}
  - {id: pattern, prompt_path: roles/a.md, command: {exec: codex}, ready_pattern: "> $", submit_delay: 1s}
  - {id: args, prompt_path: roles/a.md, command: {exec: codex, args: [--fast]}, nudge: "Do {task_file}."}
  - {id: size, prompt_path: roles/a.md, command: {exec: codex}, terminal: {cols: 100}}
  - {id: off, prompt_path: roles/a.md, command: {exec: codex}, enabled: false}
  - {id: on, prompt_path: roles/a.md, command: {exec: codex}}
  - {id: sleeping, prompt_path: roles/b.md, command: {exec: claude}, enabled: false}
  - {id: idle, prompt_path: roles/a.md, command: {exec: codex}, idle_after: 0}
`)
	want := []RoleChange{
		{Role: "new", Action: ActionStart, Keys: []string{"added"}},
		{Role: "pattern", Action: ActionUpdate, Keys: []string{"submit_delay", "ready_pattern"}},
		{Role: "args", Action: ActionRestart, Keys: []string{"command.args", "nudge"}},
		{Role: "size", Action: ActionRestart, Keys: []string{"terminal"}},
		{Role: "on", Action: ActionStart, Keys: []string{"enabled"}},
		{Role: "idle", Action: ActionUpdate, Keys: []string{"idle_after"}},
		{Role: "gone", Action: ActionStop, Keys: []string{"removed"}},
		{Role: "off", Action: ActionStop, Keys: []string{"disabled"}},
	}
	if got := Diff(cur, next); !reflect.DeepEqual(got, want) {
		t.Errorf("Diff:\n got %v\nwant %v", got, want)
	}
	if got := Diff(next, next); len(got) != 0 {
		t.Errorf("Diff of a configuration with itself: %v", got)
	}
}

// SettingsChanges tells the settings a running supervisor takes on from
// those read once at start.
func TestSettingsChangesTellLiveFromNextStart(t *testing.T) {
	a := defaultSettings()
	b := defaultSettings()
	b.Queue.MaxHops = 3
	b.Skills.Similarity = 0.9
	b.Logs.MaxFiles = 9
	b.UI.Port = 8080
	b.Agent.IdleAfter = 5 * time.Second
	live, atStart := SettingsChanges(a, b)
	if !reflect.DeepEqual(live, []string{"agent.idle_after", "queue", "skills"}) || !reflect.DeepEqual(atStart, []string{"ui", "logs"}) {
		t.Errorf("live %v, at start %v", live, atStart)
	}
}
