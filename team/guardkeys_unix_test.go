//go:build !windows

package team

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/shogun-dev/shogun/notify"
	"github.com/shogun-dev/shogun/shoguntest"
	"github.com/shogun-dev/shogun/workspace"
)

// An unsandboxed agent edits the configuration to loosen what bounds it:
// it deletes its role's memory_max, points another role's fallback at
// itself and gives the team a budget of its choosing. The live reload
// applies each, and a person hears of each as of a new command: a
// config-changed notification, a line under attention and an event, each
// naming the keys. A change of a template stays an info line.
func TestReloadThatChangesWhatBoundsARoleIsTold(t *testing.T) {
	srv := notifySink(t)
	settings := "notify:\n  webhook: " + srv.URL + "\nkeep_awake: false\n"
	tm := runTeam(t, "roles:\n"+shRole("a")+"    memory_max: 1GB\n"+shRole("b")+shRole("c"), settings, func(o *Options) {
		o.Logger = zerolog.Nop()
		o.ConfigSettle, o.ConfigPoll = 50*time.Millisecond, 100*time.Millisecond
	})
	waitRunning(t, tm, "a", "b", "c")
	ws := tm.Config().Workspace

	roles := "roles:\n" + shRole("a") + shRole("b") + "    fallback: a\n" + shRole("c") + "    nudge: \"Read {task_file} now.\"\n"
	if err := os.WriteFile(filepath.Join(ws, filepath.FromSlash(workspace.RolesFile)), []byte(roles), 0o644); err != nil {
		t.Fatal(err)
	}
	shoguntest.WaitFor(t, "config-changed notifications for a and b", 15*time.Second, func() bool {
		_, a := srv.last(notify.KindConfigChanged, "a")
		_, b := srv.last(notify.KindConfigChanged, "b")
		return a && b
	})
	budget := settings + "usage:\n  budgets:\n    team: {tokens: 900M}\n"
	if err := os.WriteFile(filepath.Join(ws, filepath.FromSlash(workspace.SettingsFile)), []byte(budget), 0o644); err != nil {
		t.Fatal(err)
	}
	shoguntest.WaitFor(t, "a config-changed notification for the budget", 15*time.Second, func() bool {
		_, ok := srv.last(notify.KindConfigChanged, "")
		return ok
	})

	want := map[string]string{
		"a": "role a's memory_max changed in config/roles.yaml; if you did not make this change, an agent may have",
		"b": "role b's fallback changed in config/roles.yaml; if you did not make this change, an agent may have",
		"":  "usage.budgets changed in config/settings.yaml; if you did not make this change, an agent may have",
	}
	for role, w := range want {
		if e, _ := srv.last(notify.KindConfigChanged, role); !strings.HasPrefix(e.Message, w) {
			t.Errorf("notification for %q: %q; want it to start %q", role, e.Message, w)
		}
	}
	if e, ok := srv.last(notify.KindConfigChanged, "c"); ok {
		t.Errorf("a new nudge was notified as a change of what bounds a role: %+v", e)
	}

	st, err := tm.Queue().Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	evs, err := tm.Store().Events(0)
	if err != nil {
		t.Fatal(err)
	}
	for role, w := range want {
		var inAttention, inEvents bool
		for _, a := range st.Attention {
			inAttention = inAttention || strings.HasPrefix(a, w)
		}
		for _, e := range evs {
			inEvents = inEvents || (e.Kind == notify.KindConfigChanged && e.Role == role && strings.HasPrefix(e.Message, w))
		}
		if !inAttention || !inEvents {
			t.Errorf("%q: under attention %v, in the events %v; want both\nattention: %q", w, inAttention, inEvents, st.Attention)
		}
	}
}

// agent.max_running raised while the team runs is read only at start: the
// line under attention says so (it said only "changed", and the person
// waited for more programs to start), and still warns that an agent may
// have made the change.
func TestMaxRunningChangedLiveSaysItWaitsForTheNextStart(t *testing.T) {
	settings := "keep_awake: false\nagent:\n  max_running: 2\n"
	tm := runTeam(t, "roles:\n"+shRole("a")+shRole("b"), settings, func(o *Options) {
		o.Logger = zerolog.Nop()
		o.ConfigSettle, o.ConfigPoll = 50*time.Millisecond, 100*time.Millisecond
	})
	waitRunning(t, tm, "a", "b")
	ws := tm.Config().Workspace
	raised := strings.Replace(settings, "max_running: 2", "max_running: 5", 1)
	if err := os.WriteFile(filepath.Join(ws, filepath.FromSlash(workspace.SettingsFile)), []byte(raised), 0o644); err != nil {
		t.Fatal(err)
	}
	want := "agent.max_running changed in config/settings.yaml; agent.max_running takes effect at the next shogun start; if you did not make this change, an agent may have"
	var attention []string
	shoguntest.WaitFor(t, "the change under attention", 15*time.Second, func() bool {
		st, err := tm.Queue().Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		attention = st.Attention
		for _, a := range attention {
			if strings.Contains(a, "agent.max_running") {
				return true
			}
		}
		return false
	})
	found := false
	for _, a := range attention {
		found = found || strings.HasPrefix(a, want)
	}
	if !found {
		t.Errorf("attention: %q\nwant a line starting %q", attention, want)
	}
}
