package main

import (
	"testing"

	"github.com/shogun-dev/shogun/control"
)

// shogun status says how many slots are in use, per bound, and names the
// roles that wait for one.
func TestStatusShowsSlotsAndTheRolesWaitingForOne(t *testing.T) {
	for _, c := range []struct {
		st   control.StatusReply
		want string
	}{
		{control.StatusReply{Roles: []control.RoleReply{{ID: "a", State: "ready"}}}, ""},
		{control.StatusReply{MaxRunning: 8, SlotsInUse: 5, Roles: []control.RoleReply{{ID: "a", State: "ready"}}},
			"slots 5/8 in use (agent.max_running)"},
		{control.StatusReply{MaxRunning: 2, SlotsInUse: 2, CLISlots: map[string]control.CLISlots{"codex": {InUse: 1, Max: 3}, "claude": {InUse: 1, Max: 1}},
			Roles: []control.RoleReply{{ID: "a", State: "busy"}, {ID: "b", State: "waiting-slot"}, {ID: "c", State: "sleeping"}, {ID: "d", State: "waiting-slot"}}},
			"slots 2/2 in use (agent.max_running), claude 1/1, codex 1/3; waiting for a slot: b, d"},
		{control.StatusReply{CLISlots: map[string]control.CLISlots{"claude": {InUse: 2, Max: 2}}, Roles: []control.RoleReply{{ID: "b", State: "waiting-slot"}}},
			"slots in use (agent.max_running_per_cli): claude 2/2; waiting for a slot: b"},
	} {
		if got := slotsLine(c.st); got != c.want {
			t.Errorf("slots line\n got %q\nwant %q", got, c.want)
		}
	}
}

// shogun stop says how many programs it waits for: all the roles', or,
// with roles asleep, how many of how many roles.
func TestStopSaysHowManyProgramsRun(t *testing.T) {
	roles := func(states ...string) []control.RoleReply {
		out := make([]control.RoleReply, len(states))
		for i, s := range states {
			out[i] = control.RoleReply{ID: string(rune('a' + i)), State: s}
		}
		return out
	}
	for _, c := range []struct {
		states []string
		want   string
	}{
		{[]string{"ready", "busy"}, "shogun: stopping the supervisor (pid 7) and its 2 roles: each program is asked to quit, then its process tree is ended…"},
		{[]string{"ready", "busy", "waking", "sleeping", "sleeping", "waiting-slot", "sleeping", "stopped"},
			"shogun: stopping the supervisor (pid 7): 3 programs running of 8 roles (the roles asleep or stopped have none): each is asked to quit, then its process tree is ended…"},
		{[]string{"sleeping", "sleeping"}, "shogun: stopping the supervisor (pid 7): none of its 2 roles runs a program (asleep or stopped)…"},
	} {
		if got := stoppingLine(control.StatusReply{Pid: 7, Roles: roles(c.states...)}); got != c.want {
			t.Errorf("%v:\n got %q\nwant %q", c.states, got, c.want)
		}
	}
}
