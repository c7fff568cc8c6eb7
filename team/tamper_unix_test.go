//go:build !windows

package team

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/notify"
	"github.com/shogun-dev/shogun/shoguntest"
	"github.com/shogun-dev/shogun/store"
	"github.com/shogun-dev/shogun/workspace"
)

// An agent switches its Claude Code hook off the way issue 32 saw it done
// ({"disableAllHooks": true} in .claude/settings.local.json) and rewrites
// the CLI configuration shogun keeps under runtime/state/cli. The person
// hears of both (attention lines, config-changed notifications, events
// naming the files); shogun's own file is back as shogun wrote it; the
// Claude role gets no new task while another role does, until a person
// releases it.
func TestTamperingIsToldPutBackAndTheRoleHeld(t *testing.T) {
	srv := notifySink(t)
	record := filepath.Join(t.TempDir(), "claude1.jsonl")
	roles := `roles:
  - id: claude1
    prompt_path: roles/ashigaru.md
    command: {exec: "${SHOGUN_EXE}", args: ["agent-sim", "--work-time", "100ms", "--record", "` + record + `"]}
    cli: claude
    startup_prompt: ""
    ready_pattern: "› "
    busy_pattern: "esc to interrupt"
    submit_delay: 50ms
  - id: plain
    prompt_path: roles/ashigaru.md
    command: {exec: "${SHOGUN_EXE}", args: ["agent-sim", "--work-time", "100ms"]}
    cli: generic
    ready_pattern: "› "
    submit_delay: 50ms
`
	var owned, ws string
	wrote := []byte(`{"hooks": {"PreToolUse": [{"command": "shogun hook claude"}]}}` + "\n")
	tm := runTeam(t, roles, "notify:\n  webhook: "+srv.URL+"\nkeep_awake: false\n", func(o *Options) {
		ws = o.Config.Workspace
		owned = filepath.Join(ws, "runtime", "state", "cli", "claude-settings.json")
		if err := os.MkdirAll(filepath.Dir(owned), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(owned, wrote, 0o600); err != nil {
			t.Fatal(err)
		}
	})
	claude, _ := tm.Supervisor().Role("claude1")
	shoguntest.WaitFor(t, "both roles ready", 20*time.Second, func() bool {
		_, a := claude.Workable()
		p, _ := tm.Supervisor().Role("plain")
		_, b := p.Workable()
		return a && b
	})

	// Past the time when a change of runtime/state/cli is the supervisor's
	// own, writing it as the roles started.
	shoguntest.WaitFor(t, "the roles' start settled", 20*time.Second, func() bool { return !tm.startedWithin(ownedGrace) })

	// The agent's two moves.
	if err := os.WriteFile(filepath.Join(ws, ".claude", "settings.local.json"), []byte(`{"disableAllHooks": true}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(owned, []byte(`{}`), 0o600); err != nil {
		t.Fatal(err)
	}

	shoguntest.WaitFor(t, "the role held and shogun's file put back", 20*time.Second, func() bool {
		b, _ := os.ReadFile(owned)
		return claude.Status().Held != "" && string(b) == string(wrote)
	})
	st, err := tm.Queue().Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	attention := strings.Join(st.Attention, "\n")
	for _, want := range []string{
		".claude/settings.local.json was created, not by shogun",
		"runtime/state/cli/claude-settings.json was changed, not by shogun; shogun put back what it wrote",
		"role claude1 is held",
	} {
		if !strings.Contains(attention, want) {
			t.Errorf("attention does not say %q:\n%s", want, attention)
		}
	}
	evs, err := tm.Store().Events(50)
	if err != nil {
		t.Fatal(err)
	}
	var named []string
	for _, e := range evs {
		if e.Kind == notify.KindConfigChanged {
			named = append(named, e.Message)
		}
	}
	if s := strings.Join(named, "\n"); !strings.Contains(s, ".claude/settings.local.json") || !strings.Contains(s, "runtime/state/cli/claude-settings.json") {
		t.Errorf("the history's config-changed events do not name both files:\n%s", s)
	}
	shoguntest.WaitFor(t, "a config-changed notification", 20*time.Second, func() bool {
		return srv.has(func(e notify.Event) bool {
			return e.Kind == notify.KindConfigChanged && strings.Contains(e.Message, "settings")
		})
	})

	// Held: plain does its task, claude1 is not given one.
	send := func(name, to string) {
		dir := workspace.New(ws).Commands()
		body := "to: " + to + "\ntitle: Work for " + to + "\nbody: work\n"
		if err := os.WriteFile(filepath.Join(dir, "."+name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(filepath.Join(dir, "."+name), filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	send("a.yaml", "claude1")
	send("b.yaml", "plain")
	shoguntest.WaitFor(t, "plain's report", 30*time.Second, func() bool {
		return archivedDone(tm, "plain")
	})
	if recs := shoguntest.Kinds(shoguntest.Records(t, record), "task"); len(recs) != 0 {
		t.Fatalf("the held role was given a task: %+v", recs)
	}
	if !claude.Release() {
		t.Fatal("Release: the role was not held")
	}
	shoguntest.WaitFor(t, "claude1's task once released", 30*time.Second, func() bool {
		return archivedDone(tm, "claude1")
	})
}

// archivedDone reports whether role has a task that is done.
func archivedDone(tm *Team, role string) bool {
	tasks, err := tm.Store().Tasks(store.TaskFilter{Role: role, Status: store.StatusDone})
	return err == nil && len(tasks) > 0
}

// Claude Code reads its user's settings besides the hook shogun gives it,
// and an agent may write its CLI's home even in the sandbox: a
// disableAllHooks there holds the role as well, named in the attention.
func TestUserSettingsDisablingHooksHoldsTheRole(t *testing.T) {
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".claude"), 0o700); err != nil {
		t.Fatal(err)
	}
	roles := `roles:
  - id: claude1
    prompt_path: roles/ashigaru.md
    command: {exec: "${SHOGUN_EXE}", args: ["agent-sim"], env: {HOME: "` + home + `"}}
    cli: claude
    startup_prompt: ""
    ready_pattern: "› "
    submit_delay: 50ms
`
	tm := runTeam(t, roles, "keep_awake: false\n", nil)
	claude, _ := tm.Supervisor().Role("claude1")
	shoguntest.WaitFor(t, "the role ready", 20*time.Second, func() bool { _, ok := claude.Workable(); return ok })
	settings := filepath.Join(home, ".claude", "settings.json")
	if err := os.WriteFile(settings, []byte(`{"disableAllHooks": true}`), 0o600); err != nil {
		t.Fatal(err)
	}
	shoguntest.WaitFor(t, "the role held", 20*time.Second, func() bool { return claude.Status().Held != "" })
	st, err := tm.Queue().Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if a := strings.Join(st.Attention, "\n"); !strings.Contains(a, "role claude1 is held") || !strings.Contains(a, settings+" sets disableAllHooks") {
		t.Errorf("attention does not name the role and %s:\n%s", settings, a)
	}
}

// A rewrite of config/policy.yaml while the team runs (a person's edit,
// or an agent's through a command the policy allows, such as a Makefile's
// recipe under make) is told: an attention line and a config-changed
// event naming the file. It is applied all the same: a person edits it.
func TestAPolicyRewriteIsTold(t *testing.T) {
	roles := `roles:
  - id: plain
    prompt_path: roles/ashigaru.md
    command: {exec: "${SHOGUN_EXE}", args: ["agent-sim", "--work-time", "100ms"]}
    cli: generic
    ready_pattern: "› "
    submit_delay: 50ms
`
	var ws string
	tm := runTeam(t, roles, "keep_awake: false\n", func(o *Options) { ws = o.Config.Workspace })
	p, _ := tm.Supervisor().Role("plain")
	shoguntest.WaitFor(t, "the role ready", 20*time.Second, func() bool { _, ok := p.Workable(); return ok })
	shoguntest.WaitFor(t, "the start settled", 20*time.Second, func() bool { return !tm.startedWithin(ownedGrace) })
	if err := os.WriteFile(filepath.Join(ws, "config", "policy.yaml"), []byte("default: allow\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	shoguntest.WaitFor(t, "an attention line naming config/policy.yaml", 20*time.Second, func() bool {
		st, err := tm.Queue().Snapshot()
		return err == nil && strings.Contains(strings.Join(st.Attention, "\n"), "config/policy.yaml was changed, not by shogun")
	})
	evs, err := tm.Store().Events(50)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(evs, func(e store.Event) bool {
		return e.Kind == notify.KindConfigChanged && strings.Contains(e.Message, "config/policy.yaml")
	}) {
		t.Errorf("no config-changed event names config/policy.yaml")
	}
}

// Hooks are off when Claude Code reads them off: its exact key, the last
// of repeated keys; another case of the key is another key to it.
func TestDisablesHooksReadsTheKeyAsClaudeCodeDoes(t *testing.T) {
	for _, c := range []struct {
		json string
		want bool
	}{
		{`{"disableAllHooks": true}`, true},
		{`{"disableAllHooks": true, "DisableAllHooks": false}`, true},
		{`{"DISABLEALLHOOKS": false, "disableAllHooks": true}`, true},
		{`{"disableAllHooks": false, "disableAllHooks": true}`, true},
		{`{"DisableAllHooks": true}`, false},
		{`{"disableAllHooks": "true"}`, false},
		{`{"disableAllHooks": false}`, false},
		{`not json`, false},
	} {
		if got := disablesHooks([]byte(c.json)); got != c.want {
			t.Errorf("%s: hooks off %v, want %v", c.json, got, c.want)
		}
	}
}
