package config

import (
	"fmt"
	"reflect"
	"regexp"
	"strings"
)

// Action is what taking a new configuration into use does to one role.
type Action string

// The actions of a RoleChange.
const (
	// ActionStart starts a role that was added or enabled.
	ActionStart Action = "start"
	// ActionStop stops a role that was removed or disabled.
	ActionStop Action = "stop"
	// ActionRestart restarts a role whose program or terminal changed:
	// the running program cannot take those on.
	ActionRestart Action = "restart"
	// ActionUpdate gives a running role its new settings (patterns,
	// delays, templates …) without touching its program.
	ActionUpdate Action = "update"
)

// RoleChange is one role's part of a new configuration.
type RoleChange struct {
	Role   string `json:"role"`
	Action Action `json:"action"`
	// Keys are the roles.yaml keys whose values changed (restart, update),
	// or why the role starts or stops ("added", "enabled", "removed",
	// "disabled").
	Keys []string `json:"keys"`
}

// String says what happens, for the log and the CLI.
func (c RoleChange) String() string {
	return fmt.Sprintf("%s %s (%s)", c.Action, c.Role, strings.Join(c.Keys, ", "))
}

// Diff says what taking next into use instead of cur does to each role,
// in next's file order with the stopped roles last. Only enabled roles
// run, so a disabled role that changed needs nothing.
func Diff(cur, next *Config) []RoleChange {
	var out []RoleChange
	for _, n := range next.Roles {
		c, had := cur.Role(n.ID)
		switch {
		case !n.Enabled:
		case !had:
			out = append(out, RoleChange{Role: n.ID, Action: ActionStart, Keys: []string{"added"}})
		case !c.Enabled:
			out = append(out, RoleChange{Role: n.ID, Action: ActionStart, Keys: []string{"enabled"}})
		default:
			restart, update := changedKeys(c, n)
			switch {
			case len(restart) > 0:
				out = append(out, RoleChange{Role: n.ID, Action: ActionRestart, Keys: append(restart, update...)})
			case len(update) > 0:
				out = append(out, RoleChange{Role: n.ID, Action: ActionUpdate, Keys: update})
			}
		}
	}
	for _, c := range cur.Roles {
		if !c.Enabled {
			continue
		}
		switch n, has := next.Role(c.ID); {
		case !has:
			out = append(out, RoleChange{Role: c.ID, Action: ActionStop, Keys: []string{"removed"}})
		case !n.Enabled:
			out = append(out, RoleChange{Role: c.ID, Action: ActionStop, Keys: []string{"disabled"}})
		}
	}
	return out
}

// roleKeys are the keys of a role compared by Diff, each with the value it
// compares. restart marks what the running program cannot take on: how it
// was started (command, args, env, cwd) and its terminal's size.
var roleKeys = []struct {
	key     string
	restart bool
	value   func(Role) any
}{
	{"command.exec", true, func(r Role) any { return r.Command.Exec }},
	{"command.args", true, func(r Role) any { return r.Command.Args }},
	{"command.env", true, func(r Role) any { return r.Command.Env }},
	{"command.cwd", true, func(r Role) any { return r.Command.Cwd }},
	{"terminal", true, func(r Role) any { return r.Terminal }},
	{"worktree", true, func(r Role) any { return r.Worktree }},
	{"sandbox", true, func(r Role) any { return r.Sandbox }},
	{"name", false, func(r Role) any { return r.Name }},
	{"prompt_path", false, func(r Role) any { return r.PromptPath }},
	{"cli", false, func(r Role) any { return r.CLI }},
	{"startup_prompt", false, func(r Role) any { return r.StartupPrompt }},
	{"nudge", false, func(r Role) any { return r.Nudge }},
	{"notify", false, func(r Role) any { return r.Notify }},
	{"submit", false, func(r Role) any { return r.Submit }},
	{"submit_delay", false, func(r Role) any { return r.SubmitDelay }},
	{"clear_input", false, func(r Role) any { return r.ClearInput }},
	{"input_marker", false, func(r Role) any { return r.InputMarker }},
	{"ready_pattern", false, func(r Role) any { return patternText(r.ReadyPattern) }},
	{"busy_pattern", false, func(r Role) any { return patternText(r.BusyPattern) }},
	{"attention_pattern", false, func(r Role) any { return patternText(r.AttentionPattern) }},
	{"limit_pattern", false, func(r Role) any { return patternText(r.LimitPattern) }},
	{"ready_quiet", false, func(r Role) any { return r.ReadyQuiet }},
	{"limit_wait", false, func(r Role) any { return r.LimitWait }},
	{"interrupt_keys", false, func(r Role) any { return r.InterruptKeys }},
	{"between_tasks", false, func(r Role) any { return r.BetweenTasks }},
	{"remind", false, func(r Role) any { return r.Remind }},
	{"ack_timeout", false, func(r Role) any { return r.AckTimeout }},
	{"stall_after", false, func(r Role) any { return r.StallAfter }},
	{"start_timeout", false, func(r Role) any { return r.StartTimeout }},
	{"restart", false, func(r Role) any { return r.Restart }},
	{"stop", false, func(r Role) any { return r.Stop }},
	{"memory_max", false, func(r Role) any { return r.MemoryMax }},
	// Read by the running role each time it asks whether it has been
	// idle long enough.
	{"idle_after", false, func(r Role) any { return r.IdleAfter }},
	{"fallback", false, func(r Role) any { return r.Fallback }},
	// A new list takes effect at the program's next start: a running CLI
	// keeps the account it was started on.
	{"accounts", false, func(r Role) any { return r.Accounts }},
	{"accounts_switch_at", false, func(r Role) any { return r.AccountsSwitchAt }},
}

// changedKeys lists the keys whose values differ between a and b.
func changedKeys(a, b Role) (restart, update []string) {
	for _, k := range roleKeys {
		if reflect.DeepEqual(k.value(a), k.value(b)) {
			continue
		}
		if k.restart {
			restart = append(restart, k.key)
		} else {
			update = append(update, k.key)
		}
	}
	return restart, update
}

// patternText is a pattern as written; "" for none.
func patternText(re *regexp.Regexp) string {
	if re == nil {
		return ""
	}
	return re.String()
}

// settingKeys are the settings compared by SettingsChanges. live marks the
// ones a running supervisor takes on at once; the others are read once, at
// start. agent.default_command is live through the roles that run it,
// which Diff sees changed.
var settingKeys = []struct {
	key   string
	live  bool
	value func(Settings) any
}{
	{"agent.default_command", true, func(s Settings) any { return s.Agent.DefaultCommand }},
	// Live through the roles that take it, which Diff sees changed.
	{"agent.memory_max", true, func(s Settings) any { return s.Agent.MemoryMax }},
	// Live through the roles that take it, which Diff sees changed.
	{"agent.idle_after", true, func(s Settings) any { return s.Agent.IdleAfter }},
	{"agent.max_running", false, func(s Settings) any { return s.Agent.MaxRunning }},
	{"agent.max_running_per_cli", false, func(s Settings) any { return s.Agent.MaxRunningPerCLI }},
	{"queue", true, func(s Settings) any { return s.Queue }},
	{"skills", true, func(s Settings) any { return s.Skills }},
	{"terminal.windows_terminal", true, func(s Settings) any { return s.Terminal }},
	{"pty.backend", false, func(s Settings) any { return s.PTY }},
	{"ui", false, func(s Settings) any { return s.UI }},
	{"data.sqlite_path", false, func(s Settings) any { return s.Data }},
	{"logs", false, func(s Settings) any { return s.Logs }},
	{"notify", false, func(s Settings) any { return s.Notify }},
	{"keep_awake", false, func(s Settings) any { return s.KeepAwake }},
	{"usage.prices", true, func(s Settings) any { return s.Usage.Prices }},
	{"usage.budgets", true, func(s Settings) any { return s.Usage.Budgets }},
}

// SettingsChanges lists the settings that differ between a and b: live,
// the ones a running supervisor takes on at once, and atStart, the ones
// that take effect at the next `shogun start`.
func SettingsChanges(a, b Settings) (live, atStart []string) {
	for _, k := range settingKeys {
		if reflect.DeepEqual(k.value(a), k.value(b)) {
			continue
		}
		if k.live {
			live = append(live, k.key)
		} else {
			atStart = append(atStart, k.key)
		}
	}
	if len(live)+len(atStart) == 0 && !reflect.DeepEqual(a, b) {
		// A section added to Settings since this table was written.
		atStart = append(atStart, "settings")
	}
	return live, atStart
}

// Reload is what taking a configuration into use did.
type Reload struct {
	// Changes are what happened to each role that changed.
	Changes []RoleChange
	// AtNextStart are the settings that changed but take effect only at
	// the next `shogun start` (data.sqlite_path, logs …).
	AtNextStart []string
}
