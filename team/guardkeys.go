package team

import (
	"fmt"
	"slices"
	"strings"

	"github.com/shogun-dev/shogun/config"
	"github.com/shogun-dev/shogun/notify"
	"github.com/shogun-dev/shogun/textsafe"
)

// guardRoleKeys are the roles.yaml keys, besides its command (told by
// programChanged), that bound or watch a role: the accounts it runs on,
// its memory ceiling, its sandbox and working folder, the role its tasks
// fall back to, and its CLI (which hook asks for approvals). An
// unsandboxed agent writes config/roles.yaml as easily as a person, and a
// live reload applies it within a second, so a change of one of them is
// told as a change of command is.
var guardRoleKeys = []string{"accounts", "memory_max", "sandbox", "worktree", "fallback", "cli"}

// guardSettingKeys are the settings.yaml keys that bound the team alike.
var guardSettingKeys = []string{"usage.budgets", "agent.memory_max", "agent.max_running", "agent.max_running_per_cli"}

// guardsChanged tells a person of the guard keys a reload from cur to
// next changed (res.Changes, apart from those changesProgram already
// told, and the settings): a warning in the log, a config-changed
// notification, a line under attention and an event, each naming the keys.
func (t *Team) guardsChanged(res config.Reload, cur, next *config.Config) {
	for _, c := range res.Changes {
		if c.Action != config.ActionUpdate && c.Action != config.ActionRestart || changesProgram(c) {
			continue
		}
		keys := within(c.Keys, guardRoleKeys)
		if len(keys) == 0 {
			continue
		}
		t.guardChanged(c.Role, fmt.Sprintf("role %s's %s changed in %s", c.Role, strings.Join(keys, ", "), config.RolesFile), config.RolesFile)
	}
	live, atStart := config.SettingsChanges(cur.Settings, next.Settings)
	if keys := within(append(live, atStart...), guardSettingKeys); len(keys) > 0 {
		what := fmt.Sprintf("%s changed in %s", strings.Join(keys, ", "), config.SettingsFile)
		// A person who raised agent.max_running and sees nothing change
		// must read here, not only in the log, that it waits for a start.
		if later := within(atStart, guardSettingKeys); len(later) > 0 {
			what += fmt.Sprintf("; %s %s effect at the next shogun start", strings.Join(later, ", "), plural(len(later), "takes", "take"))
		}
		t.guardChanged("", what, config.SettingsFile)
	}
}

// plural is one when n is 1, else many.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// guardChanged tells what, a guard change of role ("" for the team's
// settings) in file.
func (t *Team) guardChanged(role, what, file string) {
	msg := fmt.Sprintf("%s; if you did not make this change, an agent may have: check %s", what, file)
	t.log.Warn().Str("role", role).Msg("configuration changed what bounds a role: " + msg)
	t.notifier.Send(notify.Event{Kind: notify.KindConfigChanged, Role: role, Message: textsafe.Escape(msg)})
	t.q.AddAttention(msg)
	t.recordEvent(role, notify.KindConfigChanged, msg)
}

// within are the keys of keys that are in set, in keys' order.
func within(keys, set []string) []string {
	var out []string
	for _, k := range keys {
		if slices.Contains(set, k) {
			out = append(out, k)
		}
	}
	return out
}
