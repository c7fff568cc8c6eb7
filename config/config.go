// Package config reads a workspace's config/settings.yaml, config/roles.yaml
// and config/policy.yaml (the approvals policy, policy.go) into resolved
// values: every role carries its command with ${VAR} expanded, its CLI
// preset's defaults filled in, its patterns compiled and its paths made
// absolute, so that the supervisor never interprets YAML itself.
//
// The files are read strictly. Any unknown key, wrong type, missing or
// invalid value is an Error naming file, line and column, and Load reports all
// of them at once as *Errors. The package also holds the default files that
// `shogun init` writes (see Scaffold).
package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/shogun-dev/shogun/internal/yamlstrict"
	"github.com/shogun-dev/shogun/policy"
	"github.com/shogun-dev/shogun/roles"
	"github.com/shogun-dev/shogun/sandbox"
)

// The configuration files, relative to the workspace.
const (
	SettingsFile = "config/settings.yaml"
	RolesFile    = "config/roles.yaml"
)

// Config is a workspace's loaded configuration.
type Config struct {
	// Workspace is the absolute path of the workspace root.
	Workspace string
	// Settings are the values of config/settings.yaml, defaults filled in.
	Settings Settings
	// Roles are all roles of config/roles.yaml in file order, disabled ones
	// included so that status can list them.
	Roles []Role
	// Policy is config/policy.yaml, the approvals policy; nil when the
	// workspace has no such file.
	Policy *policy.Policy
	// Warnings are things that load but are probably mistakes, located like
	// errors: a ${VAR} that is not set and became "". `shogun start
	// --dry-run` prints them and `shogun start` logs them.
	Warnings []Error
}

// Enabled returns the roles that are started, in file order.
func (c *Config) Enabled() []Role {
	var out []Role
	for _, r := range c.Roles {
		if r.Enabled {
			out = append(out, r)
		}
	}
	return out
}

// EnabledIDs lists the ids of the enabled roles in file order, for a
// message about a role that is not one of them.
func (c *Config) EnabledIDs() []string {
	var ids []string
	for _, r := range c.Enabled() {
		ids = append(ids, r.ID)
	}
	return ids
}

// Role returns the role with the given id, enabled or not.
func (c *Config) Role(id string) (Role, bool) {
	for _, r := range c.Roles {
		if r.ID == id {
			return r, true
		}
	}
	return Role{}, false
}

// Command is a program to run: a role's command, or agent.default_command.
type Command struct {
	// Exec is the program, ${VAR} expanded. Without a path separator it is
	// looked up in PATH when started.
	Exec string
	// Args are the arguments, ${VAR} expanded; never nil after Load.
	Args []string
	// Env is added to the environment the supervisor gives the role; values
	// are ${VAR} expanded. Never nil after Load.
	Env map[string]string
	// Cwd is the working directory, absolute after Load (a relative cwd is
	// taken from the workspace root, not from where shogun was started).
	Cwd string
}

// Role is one agent, resolved: every optional key holds either the value
// from roles.yaml or the value of the role's CLI preset.
type Role struct {
	// ID names the role in commands, file names and the CLI; it matches
	// [a-z0-9][a-z0-9_-]{0,31} so it is safe in paths on every OS.
	ID string
	// Name is for people; it defaults to ID.
	Name string
	// PromptPath is the instruction file as written in roles.yaml, slash
	// separated and relative to the workspace: the form to show an agent,
	// whose working directory is normally the workspace.
	PromptPath string
	// PromptFile is PromptPath made absolute.
	PromptFile string
	// Enabled roles are started; disabled ones are only listed.
	Enabled bool
	// Command is what runs in the role's pseudo-terminal. A role without a
	// command key runs the settings' agent.default_command.
	Command Command
	// CLI is the name of the preset that supplied the defaults below.
	CLI string
	// Terminal is the pseudo-terminal size.
	Terminal roles.TerminalSize
	// StartupPrompt, Nudge and Notify are templates for roles.Expand.
	StartupPrompt, Nudge, Notify string
	// Submit is the key sent on its own after typed text.
	Submit string
	// SubmitDelay is the pause between the text and Submit.
	SubmitDelay time.Duration
	// ClearInput is sent before a nudge; "" sends nothing.
	ClearInput string
	// InputMarker starts the composer's first row; see roles.Preset.
	InputMarker string
	// ReadyPattern, BusyPattern and AttentionPattern are matched against
	// the screen text; nil means the role has no such pattern.
	ReadyPattern, BusyPattern, AttentionPattern *regexp.Regexp
	// ReadyQuiet is how long without output counts as ready.
	ReadyQuiet time.Duration
	// LimitPattern matches a usage or rate limit on the screen (a "reset"
	// group may say when it ends); nil means none. LimitWait is how long
	// a limit without a reset time lasts.
	LimitPattern *regexp.Regexp
	LimitWait    time.Duration
	// InterruptKeys, BetweenTasks and Remind: see roles.Preset.
	InterruptKeys, BetweenTasks, Remind string
	// AckTimeout, StallAfter and StartTimeout: see roles.Preset.
	AckTimeout, StallAfter, StartTimeout time.Duration
	// Restart says when an exited program is started again.
	Restart roles.RestartPolicy
	// Stop says how the program is asked to quit.
	Stop roles.StopSequence
	// IdleAfter puts the role to sleep (its CLI ended, its conversation
	// kept) once it has been idle this long with nothing queued; 0 never
	// (idle_after, default agent.idle_after).
	IdleAfter time.Duration
	// ResumeArgs are appended to Command.Args when a sleeping role wakes,
	// so that its CLI resumes its conversation (resume_args, default the
	// preset's); none: the CLI starts afresh and gets its startup prompt.
	ResumeArgs []string
	// MemoryMax bounds the memory of the role's whole process tree; over
	// it the role is restarted and its task delivered again (memory_max,
	// default agent.memory_max; 0 no bound).
	MemoryMax ByteSize
	// Set are the keys written in the role's entry of roles.yaml, in file
	// order; every other key has its preset's default.
	Set []string
	// Worktree, when set, runs the role in a git worktree of its own (the
	// worktree key; package gitwork makes it at start); nil runs it in
	// Command.Cwd itself.
	Worktree *Worktree
	// Sandbox says whether the role's process tree runs confined to its
	// own files (the sandbox key; package sandbox): Off, Required or
	// Preferred.
	Sandbox sandbox.Mode
	// Fallback is the role that takes this role's open tasks while it is
	// at a usage limit with no free account (the fallback key; package
	// queue hands them over); "" for none. It names another role of the
	// file; two roles may name each other, the queue keeps them from
	// handing tasks back and forth.
	Fallback string
	// Accounts are the accounts the role's CLI may run on, in order (the
	// accounts key: a list of its own or a pool of settings.yaml); none:
	// it runs on whatever its environment selects. See Account.
	Accounts []Account
	// AccountsSwitchAt is the share of its usage window, in percent, at or
	// over which the role moves to another free account between tasks
	// (accounts_switch_at, default accounts.switch_at; 0: only at the
	// limit). Only CLIs that record their window's use are read (Codex).
	AccountsSwitchAt int
}

// Worktree is a role's worktree key: the role works in a git worktree of
// its own, on Branch, made from Base of the repository that holds its
// command's cwd.
type Worktree struct {
	// Base is the branch the worktree starts from and is merged into; ""
	// means the branch the main checkout is on when the worktree is made
	// (remembered from then on).
	Base string
	// Branch is the role's branch, {id} expanded (DefaultWorktreeBranch
	// unless set).
	Branch string
}

// Load reads and validates the workspace's configuration. lookup supplies
// the variables for ${VAR} expansion (os.LookupEnv when nil); SHOGUN_EXE and
// SHOGUN_WORKSPACE fall back to the running executable and the workspace when
// lookup does not know them, so a demo roles.yaml that runs "${SHOGUN_EXE}
// agent-sim" loads the same from `shogun start` and from tests.
//
// A missing settings.yaml means all defaults; a missing roles.yaml is an
// error. Problems in the files are returned together as *Errors.
func Load(workspace string, lookup func(string) (string, bool)) (*Config, error) {
	return load(workspace, lookup, nil)
}

// load is Load with the text of some files given instead of read from disk
// (file name relative to the workspace → content): how an edit of
// roles.yaml is checked before it is saved.
func load(workspace string, lookup func(string) (string, bool), given map[string][]byte) (*Config, error) {
	return loadFiles(workspace, lookup, given, false)
}

// loadFiles is load; with partial, a configuration with errors comes back
// as far as it parses, with the errors (LoadPartial).
func loadFiles(workspace string, lookup func(string) (string, bool), given map[string][]byte, partial bool) (*Config, error) {
	abs, err := filepath.Abs(workspace)
	if err != nil {
		return nil, fmt.Errorf("config: workspace %q: %w", workspace, err)
	}
	if fi, err := os.Stat(abs); err != nil {
		return nil, fmt.Errorf("config: workspace: %w", err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("config: workspace %s is not a folder", abs)
	}
	if lookup == nil {
		lookup = os.LookupEnv
	}
	lookup = withShogunVars(lookup, abs)

	errs := &Errors{}
	files := fileReader{workspace: abs, given: given, errs: errs}
	settings, budgetRoles := loadSettings(files, lookup)
	roleList := loadRoles(files, lookup, settings.Agent.DefaultCommand, settings.Accounts.Pools)
	checkBudgetRoles(errs, budgetRoles, roleList)
	for i := range roleList {
		if !slices.Contains(roleList[i].Set, "idle_after") {
			roleList[i].IdleAfter = settings.Agent.IdleAfter
		}
		if !slices.Contains(roleList[i].Set, "memory_max") {
			roleList[i].MemoryMax = settings.Agent.MemoryMax
		}
		if !slices.Contains(roleList[i].Set, "accounts_switch_at") {
			roleList[i].AccountsSwitchAt = settings.Accounts.SwitchAt
		}
	}
	pol := loadPolicy(files, roleList)
	cfg := &Config{Workspace: abs, Settings: settings, Roles: roleList, Policy: pol, Warnings: errs.warnings}
	if err := errs.err(); err != nil {
		if partial {
			cfg.Roles = parsedRoles(roleList)
			return cfg, err
		}
		return nil, err
	}
	return cfg, nil
}

// LoadPartial is Load for commands that read, never run: when the files
// have errors it returns, with the *Errors, the configuration as far as it
// parses (the roles whose id is valid and not a duplicate, each with what
// of it parsed; settings with their defaults where a value is wrong), so
// that `shogun tasks` or `shogun send` keep working while a running
// supervisor carries on with its last good configuration. The partial
// configuration must not start anything. Other errors (no workspace) come
// with a nil Config, as from Load.
func LoadPartial(workspace string, lookup func(string) (string, bool)) (*Config, error) {
	return loadFiles(workspace, lookup, nil, true)
}

// parsedRoles are the roles of a configuration with errors that can still
// be named: a valid id, the first of its name.
func parsedRoles(roles []Role) []Role {
	var out []Role
	seen := map[string]bool{}
	for _, r := range roles {
		if ValidRoleID(r.ID) && !seen[r.ID] {
			seen[r.ID] = true
			out = append(out, r)
		}
	}
	return out
}

// withShogunVars gives the variables the supervisor sets for its children a
// value before the supervisor exists.
func withShogunVars(lookup func(string) (string, bool), workspace string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		if v, ok := lookup(name); ok {
			return v, true
		}
		switch name {
		case "SHOGUN_EXE":
			if exe, err := os.Executable(); err == nil {
				return exe, true
			}
		case "SHOGUN_WORKSPACE":
			return workspace, true
		}
		return "", false
	}
}

// fileReader reads the configuration files of one load, recording
// problems in errs; a file in given is taken from there instead of disk.
type fileReader struct {
	workspace string
	given     map[string][]byte
	errs      *Errors
}

// read reads one file. Absence is returned as fs.ErrNotExist so that each
// caller decides what it means; other failures are recorded.
func (f fileReader) read(rel string) ([]byte, error) {
	if data, ok := f.given[rel]; ok {
		return data, nil
	}
	data, err := os.ReadFile(absPath(f.workspace, rel))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		f.errs.add(rel, 0, 0, "cannot read: %v", err)
	}
	return data, err
}

func loadRoles(files fileReader, lookup func(string) (string, bool), defaultCommand Command, pools map[string][]Account) []Role {
	workspace, errs := files.workspace, files.errs
	data, err := files.read(RolesFile)
	if errors.Is(err, fs.ErrNotExist) {
		errs.add(RolesFile, 0, 0, "file not found (run \"shogun init\" to create a workspace)")
	}
	if err != nil {
		return nil
	}
	start := len(errs.List)
	defer errs.sortFrom(start)
	d := &decoder{file: RolesFile, errs: errs}
	root := d.parse(data)
	if root == nil {
		return nil
	}
	if root.Kind != yaml.MappingNode {
		d.errorf(root, "expected a mapping with a \"roles\" list at the top, got %s", yamlstrict.Describe(root))
		return nil
	}
	m := d.mapping(root, "", "roles file")
	defer m.done()
	list := m.require("roles")
	if list == nil {
		return nil
	}
	if list.Kind != yaml.SequenceNode {
		d.errorf(list, "\"roles\" must be a list of roles, got %s", yamlstrict.Describe(list))
		return nil
	}
	if len(list.Content) == 0 {
		d.errorf(list, "\"roles\" must list at least one role")
		return nil
	}
	rd := roleDecoder{decoder: d, workspace: workspace, lookup: lookup, defaultCommand: defaultCommand, pools: pools,
		seen: map[string]int{}, branches: map[string]int{}}
	var out []Role
	for _, item := range list.Content {
		if r, ok := rd.role(item); ok {
			out = append(out, r)
		}
	}
	rd.checkFallbacks()
	return out
}

// checkRelPath returns p cleaned and slash-separated, or a problem when p is
// absolute or climbs out of the workspace. Both slash kinds count, whatever
// the OS, because the same roles.yaml is used on Windows and Unix.
func checkRelPath(key, p string) (string, string) {
	if p == "" {
		return "", fmt.Sprintf("%q must not be empty", key)
	}
	slashed := strings.ReplaceAll(p, `\`, "/")
	if filepath.IsAbs(p) || strings.HasPrefix(slashed, "/") || len(p) >= 2 && p[1] == ':' && isLetter(p[0]) {
		return "", fmt.Sprintf("%q must be relative to the workspace, got %q", key, p)
	}
	clean := path.Clean(slashed)
	if clean == ".." || strings.HasPrefix(clean, "../") {
		return "", fmt.Sprintf("%q leaves the workspace: %q", key, p)
	}
	return clean, ""
}

func isLetter(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// absPath joins a checked relative path to the workspace.
func absPath(workspace, rel string) string {
	p := filepath.FromSlash(rel)
	if filepath.IsAbs(p) {
		return p // already resolved (Settings paths are absolute after Load)
	}
	return filepath.Join(workspace, p)
}
