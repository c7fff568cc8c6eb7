package control

import (
	"errors"
	"regexp"
	"strings"
	"time"

	"github.com/shogun-dev/shogun/config"
)

// The JSON of the live configuration: the roles as configured (GET
// /v1/roles, `shogun roles --json`), the files (GET /v1/config), a reload
// and the role edits (docs/api.md, "Live configuration").

// RolesReply is GET /v1/roles, and what `shogun roles --json` prints.
type RolesReply struct {
	// Roles are every role of config/roles.yaml, enabled or not, in file
	// order.
	Roles []RoleConfig `json:"roles"`
	// ConfigError, when set, says why the files as they are now are not in
	// effect: the roles listed are the ones in effect.
	ConfigError *ConfigErrorReply `json:"config_error,omitempty"`
}

// RoleConfig is one role with its effective settings: each key as the file
// sets it, or as its CLI preset (or settings.yaml) gives it. The keys are
// roles.yaml's, so a value can be sent back in a role edit as it is.
type RoleConfig struct {
	ID         string         `json:"id"`
	Name       string         `json:"name"`
	PromptPath string         `json:"prompt_path"`
	Enabled    bool           `json:"enabled"`
	CLI        string         `json:"cli"`
	Command    CommandConfig  `json:"command"`
	Terminal   TerminalConfig `json:"terminal"`
	// Worktree is the role's git worktree key, when it has one: it then
	// works in a worktree of its own (command.cwd is there).
	Worktree         *WorktreeConfig `json:"worktree,omitempty"`
	StartupPrompt    string          `json:"startup_prompt"`
	Nudge            string          `json:"nudge"`
	Notify           string          `json:"notify"`
	Remind           string          `json:"remind"`
	Submit           string          `json:"submit"`
	SubmitDelay      string          `json:"submit_delay"`
	ClearInput       string          `json:"clear_input"`
	InputMarker      string          `json:"input_marker"`
	ReadyPattern     string          `json:"ready_pattern"`
	BusyPattern      string          `json:"busy_pattern"`
	AttentionPattern string          `json:"attention_pattern"`
	LimitPattern     string          `json:"limit_pattern"`
	ReadyQuiet       string          `json:"ready_quiet"`
	LimitWait        string          `json:"limit_wait"`
	AckTimeout       string          `json:"ack_timeout"`
	StallAfter       string          `json:"stall_after"`
	InterruptKeys    string          `json:"interrupt_keys"`
	BetweenTasks     string          `json:"between_tasks"`
	StartTimeout     string          `json:"start_timeout"`
	Restart          RestartConfig   `json:"restart"`
	Stop             StopConfig      `json:"stop"`
	// IdleAfter is how long the role stays ready and idle before it is
	// put to sleep ("0s": never), agent.idle_after's default included.
	IdleAfter string `json:"idle_after"`
	// MemoryMax bounds the memory of the role's process tree ("512MiB",
	// "2GB"), agent.memory_max's default included; "" for no bound.
	MemoryMax string `json:"memory_max"`
	// ResumeArgs are appended to the command when the role wakes from
	// sleep, so its CLI continues its last conversation (role or preset).
	ResumeArgs []string `json:"resume_args"`
	// Sandbox is the role's sandbox mode; "" for none.
	Sandbox string `json:"sandbox"`
	// Fallback is the role that takes its tasks when it cannot; "" for
	// none.
	Fallback string `json:"fallback"`
	// Accounts are the accounts the role moves between, in order (their
	// env is left out: it may hold secrets), and AccountsSwitchAt the
	// share of a usage window at which it moves (0: only at a limit).
	Accounts         []AccountConfig `json:"accounts"`
	AccountsSwitchAt int             `json:"accounts_switch_at"`
	// MaxRunningPerCLI is agent.max_running_per_cli's bound for the
	// role's CLI (settings.yaml, not a roles.yaml key); 0 for none.
	MaxRunningPerCLI int `json:"max_running_per_cli"`
	// Set are the keys the role's entry in roles.yaml writes; the others
	// have their defaults.
	Set []string `json:"set"`
	// Runtime is the role's status when it runs in this supervisor (as
	// in GET /v1/status); left out when it does not, and always by
	// `shogun roles` without a supervisor.
	Runtime *RoleReply `json:"runtime,omitempty"`
}

// CommandConfig is a role's command, ${VAR} expanded and cwd absolute.
type CommandConfig struct {
	Exec string            `json:"exec"`
	Args []string          `json:"args"`
	Env  map[string]string `json:"env"`
	Cwd  string            `json:"cwd"`
}

// WorktreeConfig is a role's worktree key.
type WorktreeConfig struct {
	// Base is the branch the worktree starts from; "" for the main
	// checkout's branch when the worktree is made.
	Base string `json:"base"`
	// Branch is the role's branch.
	Branch string `json:"branch"`
}

// AccountConfig is one of a role's accounts.
type AccountConfig struct {
	// Key names the account in the history and `shogun accounts`.
	Key  string `json:"key"`
	Name string `json:"name"`
	// Pool is the settings.yaml pool it comes from; "" for the role's own.
	Pool string `json:"pool"`
}

// TerminalConfig is a role's terminal size.
type TerminalConfig struct {
	Cols int `json:"cols"`
	Rows int `json:"rows"`
}

// RestartConfig is a role's restart policy.
type RestartConfig struct {
	Policy      string `json:"policy"`
	MaxRestarts int    `json:"max_restarts"`
	Window      string `json:"window"`
}

// StopConfig is how a role's program is asked to quit.
type StopConfig struct {
	Keys    string `json:"keys"`
	Timeout string `json:"timeout"`
}

// RoleConfigFrom is r as RoleConfig shows it, without Runtime.
func RoleConfigFrom(r config.Role) RoleConfig {
	set := r.Set
	if set == nil {
		set = []string{}
	}
	var wt *WorktreeConfig
	if r.Worktree != nil {
		wt = &WorktreeConfig{Base: r.Worktree.Base, Branch: r.Worktree.Branch}
	}
	accounts := []AccountConfig{}
	for _, a := range r.Accounts {
		accounts = append(accounts, AccountConfig{Key: a.Key, Name: a.Name, Pool: a.Pool})
	}
	return RoleConfig{
		Worktree: wt,
		ID:       r.ID, Name: r.Name, PromptPath: r.PromptPath, Enabled: r.Enabled, CLI: r.CLI,
		Command:       CommandConfig{Exec: r.Command.Exec, Args: nonNilList(r.Command.Args), Env: nonNilMap(r.Command.Env), Cwd: r.Command.Cwd},
		Terminal:      TerminalConfig{Cols: r.Terminal.Cols, Rows: r.Terminal.Rows},
		StartupPrompt: r.StartupPrompt, Nudge: r.Nudge, Notify: r.Notify, Remind: r.Remind,
		Submit: r.Submit, SubmitDelay: Duration(r.SubmitDelay), ClearInput: r.ClearInput, InputMarker: r.InputMarker,
		ReadyPattern:     pattern(r.ReadyPattern),
		BusyPattern:      pattern(r.BusyPattern),
		AttentionPattern: pattern(r.AttentionPattern),
		LimitPattern:     pattern(r.LimitPattern),
		ReadyQuiet:       Duration(r.ReadyQuiet), LimitWait: Duration(r.LimitWait),
		AckTimeout: Duration(r.AckTimeout), StallAfter: Duration(r.StallAfter),
		InterruptKeys: r.InterruptKeys, BetweenTasks: r.BetweenTasks,
		Restart: RestartConfig{Policy: r.Restart.Policy, MaxRestarts: r.Restart.MaxRestarts, Window: Duration(r.Restart.Window)},
		Stop:    StopConfig{Keys: r.Stop.Keys, Timeout: Duration(r.Stop.Timeout)},
		Set:     set,

		StartTimeout: Duration(r.StartTimeout),
		IdleAfter:    Duration(r.IdleAfter), MemoryMax: memorySize(r.MemoryMax),
		ResumeArgs: nonNilList(r.ResumeArgs), Sandbox: string(r.Sandbox), Fallback: r.Fallback,
		Accounts: accounts, AccountsSwitchAt: r.AccountsSwitchAt,
	}
}

// RoleConfigsFrom is every role of cfg as RoleConfig shows it, in file
// order, without Runtime, each with its CLI's agent.max_running_per_cli.
func RoleConfigsFrom(cfg *config.Config) []RoleConfig {
	out := []RoleConfig{}
	for _, r := range cfg.Roles {
		rc := RoleConfigFrom(r)
		rc.MaxRunningPerCLI = cfg.Settings.Agent.MaxRunningPerCLI[r.CLI]
		out = append(out, rc)
	}
	return out
}

// memorySize is a memory_max as roles.yaml takes it; "" for none.
func memorySize(b config.ByteSize) string {
	if b == 0 {
		return ""
	}
	return strings.ReplaceAll(b.String(), " ", "")
}

// pattern is a pattern as written; "" for none.
func pattern(re *regexp.Regexp) string {
	if re == nil {
		return ""
	}
	return re.String()
}

// Duration writes d as roles.yaml does: "300ms", "2s", "10m", "1h30m".
func Duration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

func nonNilList(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func nonNilMap(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// ConfigReply is GET /v1/config: the configuration files as they are on
// disk now, which may not be in effect (Error says why).
type ConfigReply struct {
	RolesYAML    string `json:"roles_yaml"`
	SettingsYAML string `json:"settings_yaml"`
	// RolesVersion identifies roles_yaml; sent back with a role edit, it
	// makes the edit fail (409) if the file changed meanwhile.
	RolesVersion string            `json:"roles_version"`
	Error        *ConfigErrorReply `json:"error,omitempty"`
}

// ConfigErrorReply is a configuration that was not taken into use: the
// body of a 422 answer, and the error of ConfigReply and RolesReply.
type ConfigErrorReply struct {
	// Error is every problem, one per line ("file:line:col: message").
	Error string `json:"error"`
	// Errors are the problems one by one, located.
	Errors []ConfigProblem `json:"errors"`
}

// ConfigProblem is one problem in a configuration file; line and column
// are 1-based, 0 when unknown.
type ConfigProblem struct {
	File    string `json:"file"`
	Line    int    `json:"line"`
	Column  int    `json:"column"`
	Message string `json:"message"`
}

// ConfigErrorFrom is err as ConfigErrorReply shows it: each problem of a
// *config.Errors, or err as one problem without a place.
func ConfigErrorFrom(err error) *ConfigErrorReply {
	if err == nil {
		return nil
	}
	out := &ConfigErrorReply{Error: err.Error(), Errors: []ConfigProblem{}}
	var errs *config.Errors
	if errors.As(err, &errs) {
		for _, e := range errs.List {
			out.Errors = append(out.Errors, ConfigProblem{File: e.File, Line: e.Line, Column: e.Column, Message: e.Message})
		}
	} else {
		out.Errors = append(out.Errors, ConfigProblem{File: config.RolesFile, Message: err.Error()})
	}
	return out
}

// ReloadReply is the answer to POST /v1/reload and to every role edit:
// what taking the configuration into use did.
type ReloadReply struct {
	// Applied is true: a configuration that was not applied is a 422
	// answer with ConfigErrorReply.
	Applied bool `json:"applied"`
	// Changes are what happened to each role that changed.
	Changes []RoleChangeReply `json:"changes"`
	// AtNextStart are the settings that changed but take effect at the
	// next `shogun start`.
	AtNextStart []string `json:"at_next_start"`
}

// RoleChangeReply is one role in ReloadReply.
type RoleChangeReply struct {
	Role string `json:"role"`
	// Action is start, stop, restart or update.
	Action string `json:"action"`
	// Keys are the roles.yaml keys that changed (restart, update), or why
	// the role starts or stops: added, enabled, removed, disabled.
	Keys []string `json:"keys"`
}

// ReloadReplyFrom is res as ReloadReply shows it.
func ReloadReplyFrom(res config.Reload) ReloadReply {
	out := ReloadReply{Applied: true, Changes: []RoleChangeReply{}, AtNextStart: nonNilList(res.AtNextStart)}
	for _, c := range res.Changes {
		out.Changes = append(out.Changes, RoleChangeReply{Role: c.Role, Action: string(c.Action), Keys: nonNilList(c.Keys)})
	}
	return out
}

// RoleEditRequest is the body of POST /v1/config/roles (create: ID and
// Fields) and PUT /v1/config/roles/{id} (update: Fields); the other role
// edits take no body, or only Version.
type RoleEditRequest struct {
	// ID is the new role's id (create only).
	ID string `json:"id,omitempty"`
	// Fields are the keys to set, by roles.yaml's names; "command.exec"
	// sets one key of a mapping. In an update, null removes a key.
	Fields map[string]any `json:"fields"`
	// Version, when set, is the roles_version the edit was made on (GET
	// /v1/config): if the file changed since, nothing is saved (409).
	Version string `json:"version,omitempty"`
}
