package control_test

import (
	"strings"
	"testing"

	"github.com/shogun-dev/shogun/control"
)

// A role's hook tells its CLI's session from inside the role's process
// tree; an agent cannot set another role's session (which would steer that
// role's wake into the agent's conversation), and only a UUID is taken.
func TestARoleTellsOnlyItsOwnSession(t *testing.T) {
	r := runTeam(t, shellRole("dev"), shellRole("lead"))
	const id = "0f8e3c1a-6b2d-4c11-9a7e-2d5b8f10c3aa"
	tell := func(role, session string) string {
		return `curl -sS --unix-socket '` + control.Endpoint(r.ws) + `' -d '{"session_id":"` + session + `"}' http://shogun/v1/roles/` + role + `/session >OUT 2>&1; echo rc=$? >>OUT`
	}
	if out := r.inRole(t, "dev", tell("dev", id)); !strings.Contains(out, `"session_id":"`+id+`"`) {
		t.Errorf("the role telling its own session got %q", out)
	}
	dev, _ := r.team.Supervisor().Role("dev")
	if got := dev.SessionID(); got != id {
		t.Errorf("dev's session = %q, want %s", got, id)
	}
	if out := r.inRole(t, "dev", tell("lead", id)); !strings.Contains(out, "may not tell the session of role lead") {
		t.Errorf("telling another role's session got %q; want a refusal", out)
	}
	if out := r.inRole(t, "dev", tell("dev", "--continue")); !strings.Contains(out, "not a UUID") {
		t.Errorf("telling a session that is not a UUID got %q; want a refusal", out)
	}
	lead, _ := r.team.Supervisor().Role("lead")
	if lead.SessionID() != "" || dev.SessionID() != id {
		t.Errorf("sessions after the refusals: dev %q, lead %q; want %s and none", dev.SessionID(), lead.SessionID(), id)
	}
}
