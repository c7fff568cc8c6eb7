//go:build unix

package main

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// shogun roles --json shows each role's effective settings, what bounds it
// included: memory_max, idle_after, resume_args, its accounts (not their
// env), fallback, and its CLI's agent.max_running_per_cli, with the
// settings' defaults where the role sets none.
func TestRolesJSONShowsWhatBoundsEachRole(t *testing.T) {
	ws := teamWorkspace(t,
		simEntry("a")+`    memory_max: 512MiB
    idle_after: 5s
    resume_args: ["--again"]
    fallback: b
    accounts:
      - {name: work, env: {CLAUDE_CONFIG_DIR: /tmp/hush}}
      - {name: spare, env: {CLAUDE_CONFIG_DIR: /tmp/hush2}}
    accounts_switch_at: 85
`, simEntry("b"))
	setAgent(t, ws, "  idle_after: 1m\n  memory_max: 2GB\n  max_running_per_cli: {generic: 2}\n")
	out, errOut, code := shogun(t, "roles", "--json", "-w", ws)
	if code != 0 {
		t.Fatalf("roles --json: exit %d %s", code, errOut)
	}
	if strings.Contains(out, "hush") {
		t.Errorf("roles --json shows an account's env: %s", out)
	}
	var reply struct {
		Roles []map[string]any `json:"roles"`
	}
	if err := json.Unmarshal([]byte(out), &reply); err != nil || len(reply.Roles) != 2 {
		t.Fatalf("roles --json: %v\n%s", err, out)
	}
	want := map[string]map[string]any{
		"a": {"memory_max": "512MiB", "idle_after": "5s", "resume_args": []any{"--again"}, "fallback": "b",
			"accounts":           []any{map[string]any{"key": "a/work", "name": "work", "pool": ""}, map[string]any{"key": "a/spare", "name": "spare", "pool": ""}},
			"accounts_switch_at": 85.0, "max_running_per_cli": 2.0},
		"b": {"memory_max": "2GB", "idle_after": "1m", "resume_args": []any{}, "fallback": "", "accounts": []any{}, "max_running_per_cli": 2.0},
	}
	for _, r := range reply.Roles {
		id, _ := r["id"].(string)
		for k, v := range want[id] {
			if !reflect.DeepEqual(r[k], v) {
				t.Errorf("roles --json, role %s: %s = %#v, want %#v", id, k, r[k], v)
			}
		}
	}
}
