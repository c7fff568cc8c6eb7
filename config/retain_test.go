package config

import (
	"strings"
	"testing"
	"time"
)

// data.retain takes days ("90d") or a Go duration; 0 keeps everything; a
// bad value is an error at its position and nothing loads.
func TestDataRetain(t *testing.T) {
	roles := "roles:\n  - {id: a, prompt_path: roles/a.md, command: {exec: codex}}\n"
	for _, tc := range []struct {
		value string
		want  time.Duration
		err   string
	}{
		{"", 90 * 24 * time.Hour, ""},
		{`"30d"`, 30 * 24 * time.Hour, ""},
		{"7d", 7 * 24 * time.Hour, ""},
		{`"720h"`, 720 * time.Hour, ""},
		{"0", 0, ""},
		{`"0d"`, 0, ""},
		{`"-3d"`, 0, `config/settings.yaml:2:11: "retain" is not a valid number of days: "-3d" (use a whole number with d, such as "90d", or a duration such as "720h")`},
		{"ninety", 0, `config/settings.yaml:2:11: "retain" is not a valid duration: "ninety" (use a number with a unit, such as "300ms", "2s" or "10m")`},
		{"3w", 0, `config/settings.yaml:2:11: "retain" is not a valid duration: "3w" (use a number with a unit, such as "300ms", "2s" or "10m")`},
		{"90", 0, `config/settings.yaml:2:11: "retain" needs a unit: "90d" for days, or a duration such as "720h"`},
	} {
		t.Run(tc.value, func(t *testing.T) {
			files := map[string]string{RolesFile: roles, "roles/a.md": "a"}
			if tc.value != "" {
				files[SettingsFile] = "data:\n  retain: " + tc.value + "\n"
			}
			cfg, err := Load(testWorkspace(t, files), env(nil))
			if tc.err != "" {
				if err == nil || strings.TrimSpace(err.Error()) != tc.err {
					t.Fatalf("retain: %s: error %v\nwant %s", tc.value, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Settings.Data.Retain != tc.want {
				t.Errorf("retain: %s = %v, want %v", tc.value, cfg.Settings.Data.Retain, tc.want)
			}
		})
	}
}
