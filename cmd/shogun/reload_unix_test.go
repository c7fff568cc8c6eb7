//go:build !windows

package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/control"
	"github.com/shogun-dev/shogun/shoguntest"
)

// writeRoles replaces config/roles.yaml with "roles:\n" and the entries,
// the way an editor saves: by writing a new file and renaming it over the
// old one (rename), or by writing into the file in place.
func writeRoles(t *testing.T, ws string, rename bool, entries ...string) {
	t.Helper()
	path := filepath.Join(ws, "config", "roles.yaml")
	data := []byte("roles:\n" + strings.Join(entries, ""))
	if !rename {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	tmp := filepath.Join(ws, "config", ".roles.yaml.swp")
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func pidOf(st control.StatusReply, id string) int {
	for _, r := range st.Roles {
		if r.ID == id {
			return r.Pid
		}
	}
	return 0
}

func running(st control.StatusReply, id string) bool {
	for _, r := range st.Roles {
		if r.ID == id {
			return true
		}
	}
	return false
}

// rolesJSON is what `shogun roles --json` prints.
func rolesJSON(t *testing.T, ws string) control.RolesReply {
	t.Helper()
	out, errOut, code := shogun(t, "roles", "--json", "-w", ws)
	if code != 0 {
		t.Fatalf("roles --json: exit %d: %s", code, errOut)
	}
	var r control.RolesReply
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("roles --json: %v\n%s", err, out)
	}
	return r
}

func roleIn(r control.RolesReply, id string) (control.RoleConfig, bool) {
	for _, x := range r.Roles {
		if x.ID == id {
			return x, true
		}
	}
	return control.RoleConfig{}, false
}

// A running supervisor follows config/roles.yaml as a person edits it: an
// added role starts, a disabled one stops and its task waits in its queue,
// a changed pattern reaches a role without a restart, a changed command
// restarts one, and a file with an error changes nothing but is reported
// with its line and column everywhere a person looks, until it is fixed.
func TestLiveConfigurationFollowsTheFiles(t *testing.T) {
	a := simEntry("a")
	b := simEntry("b", "--work-time", "60s")
	ws := teamWorkspace(t, a, b)
	startBackground(t, ws)
	st := waitStatus(t, ws, "a and b ready", func(s control.StatusReply) bool {
		return stateOf(s, "a") == "ready" && stateOf(s, "b") == "ready"
	})
	pidA := pidOf(st, "a")
	if _, errOut, code := shogun(t, "send", "-w", ws, "--to", "b", "--title", "Long job", "--body", "take your time"); code != 0 {
		t.Fatalf("send: %s", errOut)
	}
	waitTaskStatus(t, ws, "Long job", "delivered")

	// Saved by rename: c added, b disabled, a given a new submit delay.
	faster := func(entry string) string {
		return strings.Replace(entry, "submit_delay: 80ms", "submit_delay: 120ms", 1)
	}
	writeRoles(t, ws, true, faster(a), b+"    enabled: false\n", simEntry("c"))
	st = waitStatus(t, ws, "c running, b stopped", func(s control.StatusReply) bool {
		return stateOf(s, "c") == "ready" && !running(s, "b")
	})
	if pidOf(st, "a") != pidA {
		t.Errorf("role a was restarted for a new submit delay (pid %d, was %d)", pidOf(st, "a"), pidA)
	}
	for _, r := range st.Roles {
		if r.ID == "a" && r.SubmitDelayMS < 120 {
			t.Errorf("role a's submit delay in effect = %d ms, want 120 or more", r.SubmitDelayMS)
		}
	}
	task := waitTaskStatus(t, ws, "Long job", "queued")
	if task.Attempts != 1 {
		t.Errorf("the disabled role's task: attempts %d, want 1", task.Attempts)
	}
	shoguntest.WaitFor(t, "status saying the task waits for the disabled role", 15*time.Second, func() bool {
		out, _, _ := shogun(t, "status", "-w", ws)
		return strings.Contains(out, "1 task(s) wait for b, which is disabled in config/roles.yaml")
	})
	roles := rolesJSON(t, ws)
	if rb, ok := roleIn(roles, "b"); !ok || rb.Enabled || rb.Runtime != nil {
		t.Errorf("roles --json, b = %+v (listed %v), want disabled without runtime", rb, ok)
	}
	if ra, _ := roleIn(roles, "a"); ra.SubmitDelay != "120ms" || ra.Runtime == nil || ra.Runtime.State != "ready" {
		t.Errorf("roles --json, a = %+v", ra)
	}

	// Written in place with a mistake: nothing changes, and the mistake
	// is shown with its line and column.
	writeRoles(t, ws, false, faster(a)+"    terminal: {cols: wide}\n", b+"    enabled: false\n", simEntry("c"))
	const where = `config/roles.yaml:10:22: "cols" must be an integer`
	st = waitStatus(t, ws, "the configuration error", func(s control.StatusReply) bool { return s.ConfigError != "" })
	if !strings.Contains(st.ConfigError, where) {
		t.Errorf("status --json config_error = %q, want %q", st.ConfigError, where)
	}
	if pidOf(st, "a") != pidA || stateOf(st, "c") != "ready" {
		t.Errorf("a configuration with an error changed the roles: %+v", st.Roles)
	}
	out, _, _ := shogun(t, "status", "-w", ws)
	if !strings.Contains(out, "CONFIGURATION NOT APPLIED") || !strings.Contains(out, where) {
		t.Errorf("status does not show the error:\n%s", out)
	}
	shoguntest.WaitFor(t, "the dashboard showing the error", 15*time.Second, func() bool {
		b, _ := os.ReadFile(filepath.Join(ws, "runtime", "dashboard.md"))
		return strings.Contains(string(b), "The configuration files were not applied") && strings.Contains(string(b), where)
	})
	if _, errOut, code := shogun(t, "reload", "-w", ws); code != 1 || !strings.Contains(errOut, where) {
		t.Errorf("reload of a configuration with an error: exit %d, %q", code, errOut)
	}
	if r := rolesJSON(t, ws); r.ConfigError == nil || r.ConfigError.Errors[0].Line != 10 || r.ConfigError.Errors[0].Column != 22 {
		t.Errorf("roles --json config_error = %+v", r.ConfigError)
	}

	// Fixed, with b enabled again (now quick) and a's command changed: the
	// error is gone, a restarts, and b takes its task again and does it.
	writeRoles(t, ws, false, faster(simEntry("a", "--transcript")), simEntry("b", "--work-time", "100ms"), simEntry("c"))
	st = waitStatus(t, ws, "the error gone, a restarted and b back", func(s control.StatusReply) bool {
		return s.ConfigError == "" && stateOf(s, "b") != "" && pidOf(s, "a") != 0 && pidOf(s, "a") != pidA
	})
	done := waitTaskStatus(t, ws, "Long job", "done")
	if done.Attempts != 2 {
		t.Errorf("the task done after b came back: attempts %d, want 2", done.Attempts)
	}
	out, _, code := shogun(t, "reload", "-w", ws)
	if code != 0 || !strings.Contains(out, "no role changed") {
		t.Errorf("reload of the files in effect: exit %d, %q", code, out)
	}
}

// The API edits roles.yaml, keeping what a person wrote in it, and the
// supervisor applies each edit at once: a role created starts, a bad value
// is refused with its line and column and saves nothing, a removed role
// stops and its open task is blocked; one role stops and starts without a
// configuration change.
func TestRoleEditsOverTheSocket(t *testing.T) {
	ws := teamWorkspace(t, "  # The one who plans.\n"+simEntry("a"))
	rolesPath := filepath.Join(ws, "config", "roles.yaml")

	// Without a supervisor, `shogun roles` reads the files.
	out, _, code := shogun(t, "roles", "-w", ws)
	if code != 0 || !strings.Contains(out, "a ") || !strings.Contains(out, "no supervisor is running") {
		t.Errorf("roles without a supervisor: exit %d\n%s", code, out)
	}
	if r := rolesJSON(t, ws); len(r.Roles) != 1 || r.Roles[0].CLI != "generic" || r.Roles[0].Runtime != nil {
		t.Errorf("roles --json without a supervisor: %+v", r)
	}
	rolesDoc := shoguntest.ReadDocShape(t, "api.md", "## GET /v1/roles — `RolesReply`")
	shoguntest.CheckOutput(t, rolesDoc, control.RolesReply{}, jsonOutput(t, "roles", "--json", "-w", ws))
	if _, _, code := shogun(t, "reload", "-w", ws); code != 3 {
		t.Errorf("reload without a supervisor: exit %d, want 3", code)
	}

	startBackground(t, ws)
	waitStatus(t, ws, "a ready", func(s control.StatusReply) bool { return stateOf(s, "a") == "ready" })
	code, body := apiCall(t, ws, "GET", "/v1/roles", "")
	if code != http.StatusOK {
		t.Fatalf("GET /v1/roles: %d %s", code, body)
	}
	shoguntest.CheckOutput(t, rolesDoc, control.RolesReply{}, body)
	shoguntest.CheckOutput(t, rolesDoc, control.RolesReply{}, jsonOutput(t, "roles", "--json", "-w", ws))
	shoguntest.CheckOutput(t, shoguntest.ReadDocShape(t, "api.md", "## POST /v1/reload — `ReloadReply`"), control.ReloadReply{},
		jsonOutput(t, "reload", "--json", "-w", ws))
	code, body = apiCall(t, ws, "GET", "/v1/config", "")
	var files control.ConfigReply
	if code != http.StatusOK || json.Unmarshal(body, &files) != nil || !strings.Contains(files.RolesYAML, "# The one who plans.") {
		t.Fatalf("GET /v1/config: %d %s", code, body)
	}
	shoguntest.CheckOutput(t, shoguntest.ReadDocShape(t, "api.md", "## GET /v1/config — `ConfigReply`"), control.ConfigReply{}, body)

	create := `{"id": "b", "fields": {"prompt_path": "roles/ashigaru.md", "cli": "generic",
		"command": {"exec": "${SHOGUN_EXE}", "args": ["agent-sim", "--work-time", "60s"]},
		"ready_pattern": "› ", "busy_pattern": "esc to interrupt", "submit_delay": "80ms",
		"stop": {"keys": "/exit\r", "timeout": "5s"}}, "version": "` + files.RolesVersion + `"}`
	code, body = apiCall(t, ws, "POST", "/v1/config/roles", create)
	if code != http.StatusOK || !strings.Contains(string(body), `{"role":"b","action":"start","keys":["added"]}`) {
		t.Fatalf("create b: %d %s", code, body)
	}
	shoguntest.CheckOutput(t, shoguntest.ReadDocShape(t, "api.md", "## POST /v1/reload — `ReloadReply`"), control.ReloadReply{}, body)
	waitStatus(t, ws, "b ready", func(s control.StatusReply) bool { return stateOf(s, "b") == "ready" })
	saved, _ := os.ReadFile(rolesPath)
	if !strings.HasPrefix(string(saved), "roles:\n  # The one who plans.\n"+simEntry("a")+"  - id: b\n") {
		t.Errorf("roles.yaml after the create does not keep what was there:\n%s", saved)
	}

	// The same role again, an edit on the old version, a bad value.
	if code, body := apiCall(t, ws, "POST", "/v1/config/roles", create); code != http.StatusConflict {
		t.Errorf("create b again: %d %s, want 409", code, body)
	}
	if code, body := apiCall(t, ws, "POST", "/v1/config/roles/a/disable", `{"version": "`+files.RolesVersion+`"}`); code != http.StatusConflict || !strings.Contains(string(body), "changed meanwhile") {
		t.Errorf("an edit on an old version: %d %s, want 409", code, body)
	}
	code, body = apiCall(t, ws, "PUT", "/v1/config/roles/b", `{"fields": {"terminal.cols": "wide", "name": "Bee"}}`)
	var refused control.ConfigErrorReply
	if code != http.StatusUnprocessableEntity || json.Unmarshal(body, &refused) != nil || len(refused.Errors) != 1 ||
		refused.Errors[0].Line != 25 || refused.Errors[0].Column != 13 || !strings.Contains(refused.Errors[0].Message, `"cols" must be an integer`) {
		t.Errorf("a bad value: %d %s, want 422 at 25:13 (the new cols key, after the new name)", code, body)
	}
	shoguntest.CheckOutput(t, shoguntest.ReadDocShape(t, "api.md", "## Configuration errors — `ConfigErrorReply`"), control.ConfigErrorReply{}, body)
	if now, _ := os.ReadFile(rolesPath); string(now) != string(saved) {
		t.Errorf("a refused edit changed roles.yaml:\n%s", now)
	}
	if code, body := apiCall(t, ws, "DELETE", "/v1/config/roles/nobody", ""); code != http.StatusNotFound {
		t.Errorf("delete an unknown role: %d %s, want 404", code, body)
	}

	// A role removed with a task in flight: it stops, the task is blocked.
	if _, errOut, code := shogun(t, "send", "-w", ws, "--to", "b", "--title", "Unfinished", "--body", "work"); code != 0 {
		t.Fatalf("send: %s", errOut)
	}
	waitTaskStatus(t, ws, "Unfinished", "delivered")
	pidB := pidOf(waitStatus(t, ws, "b's pid", func(s control.StatusReply) bool { return pidOf(s, "b") != 0 }), "b")
	code, body = apiCall(t, ws, "DELETE", "/v1/config/roles/b", "")
	if code != http.StatusOK || !strings.Contains(string(body), `{"role":"b","action":"stop","keys":["removed"]}`) {
		t.Fatalf("delete b: %d %s", code, body)
	}
	blocked := waitTaskStatus(t, ws, "Unfinished", "blocked")
	if !strings.Contains(blocked.Summary, "role b was removed from config/roles.yaml") {
		t.Errorf("the removed role's task: summary %q", blocked.Summary)
	}
	waitGone(t, pidB, 30*time.Second)
	if now, _ := os.ReadFile(rolesPath); string(now) != "roles:\n  # The one who plans.\n"+simEntry("a") {
		t.Errorf("roles.yaml after create and delete:\n%s", now)
	}

	// Stop and start one role without a configuration change.
	if code, body := apiCall(t, ws, "POST", "/v1/roles/a/stop", ""); code != http.StatusOK || !strings.Contains(string(body), `"stopping"`) {
		t.Fatalf("stop a: %d %s", code, body)
	}
	waitStatus(t, ws, "a stopped", func(s control.StatusReply) bool { return stateOf(s, "a") == "stopped" && pidOf(s, "a") == 0 })
	if code, body := apiCall(t, ws, "POST", "/v1/roles/a/start", ""); code != http.StatusOK || !strings.Contains(string(body), `"starting"`) {
		t.Fatalf("start a: %d %s", code, body)
	}
	waitStatus(t, ws, "a ready again", func(s control.StatusReply) bool { return stateOf(s, "a") == "ready" })
	if code, body := apiCall(t, ws, "POST", "/v1/roles/nobody/start", ""); code != http.StatusNotFound {
		t.Errorf("start an unknown role: %d %s, want 404", code, body)
	}

	// Disabled and enabled through the API.
	if code, body := apiCall(t, ws, "POST", "/v1/config/roles/a/disable", ""); code != http.StatusOK || !strings.Contains(string(body), `"disabled"`) {
		t.Fatalf("disable a: %d %s", code, body)
	}
	waitStatus(t, ws, "a gone", func(s control.StatusReply) bool { return !running(s, "a") })
	if code, body := apiCall(t, ws, "POST", "/v1/roles/a/start", ""); code != http.StatusConflict || !strings.Contains(string(body), "disabled") {
		t.Errorf("start a disabled role: %d %s, want 409", code, body)
	}
	if code, body := apiCall(t, ws, "POST", "/v1/config/roles/a/enable", ""); code != http.StatusOK || !strings.Contains(string(body), `"enabled"`) {
		t.Fatalf("enable a: %d %s", code, body)
	}
	waitStatus(t, ws, "a back", func(s control.StatusReply) bool { return stateOf(s, "a") == "ready" })
}
