//go:build unix

package main

import (
	"strings"
	"testing"

	"github.com/shogun-dev/shogun/control"
)

// idle_after is taken on as the role runs, as docs/configuration.md says:
// a role's own key, and agent.idle_after for the roles without one, each
// put an idle ready role to sleep once written, without a restart.
func TestAChangedIdleAfterIsAppliedLive(t *testing.T) {
	ws := teamWorkspace(t, simEntry("a")+"    idle_after: 1h\n", simEntry("b"))
	startBackground(t, ws)
	waitStatus(t, ws, "a and b ready", func(s control.StatusReply) bool {
		return stateOf(s, "a") == "ready" && stateOf(s, "b") == "ready"
	})

	writeRoles(t, ws, false, simEntry("a")+"    idle_after: 1s\n", simEntry("b"))
	waitStatus(t, ws, "a asleep after its idle_after became 1s", func(s control.StatusReply) bool {
		return s.ConfigError == "" && stateOf(s, "a") == "sleeping"
	})

	setAgent(t, ws, "  idle_after: 1s\n")
	st := waitStatus(t, ws, "b asleep after agent.idle_after became 1s", func(s control.StatusReply) bool {
		return s.ConfigError == "" && stateOf(s, "b") == "sleeping"
	})
	if stateOf(st, "a") != "sleeping" {
		t.Errorf("a woke: %s", stateOf(st, "a"))
	}
	// --json says why a role sleeps, as the log does.
	for _, r := range st.Roles {
		if r.ID == "b" && !strings.Contains(r.SleepReason, "idle_after 1s") {
			t.Errorf("b's sleep_reason %q does not say it slept after idle_after 1s", r.SleepReason)
		}
	}
}
