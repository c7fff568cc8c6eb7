package config

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/shogun-dev/shogun/internal/yamlstrict"
	"github.com/shogun-dev/shogun/ptyhost"
	"github.com/shogun-dev/shogun/roles"
	"github.com/shogun-dev/shogun/sandbox"
	"github.com/shogun-dev/shogun/workspace"
)

// roleIDPattern keeps role ids usable as file names on every OS and as
// command-line arguments without quoting.
var roleIDPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,31}$`)

// ValidRoleID reports whether id is a valid role id, one that is safe in
// file names on every system: what a request naming a role is checked
// against before a path is made of it.
func ValidRoleID(id string) bool { return roleIDPattern.MatchString(id) }

// roleDecoder decodes the entries of roles.yaml; it carries what a single
// role needs from outside its own mapping.
type roleDecoder struct {
	*decoder
	workspace      string
	lookup         func(string) (string, bool)
	defaultCommand Command
	pools          map[string][]Account // settings.yaml accounts.pools
	seen           map[string]int       // role id → line of its first definition
	branches       map[string]int       // worktree branch → line of the role that asked first
	// fallbacks are the fallback keys read, checked once every role is
	// known (checkFallbacks).
	fallbacks []fallbackKey
}

// fallbackKey is one role's fallback key, as read.
type fallbackKey struct {
	role, to string
	node     *yaml.Node
}

// role decodes one entry. Every problem is recorded; the returned Role is
// only used when there were none.
func (rd *roleDecoder) role(n *yaml.Node) (Role, bool) {
	n = yamlstrict.Resolve(n)
	if n.Kind != yaml.MappingNode {
		rd.errorf(n, "each role must be a mapping, got %s", yamlstrict.Describe(n))
		return Role{}, false
	}
	m := rd.mapping(n, "", "role")
	defer m.done()

	r := Role{Enabled: true, Set: m.order}
	if v := m.require("id"); v != nil {
		if id, ok := rd.str(v, "id"); ok {
			r.ID = id
			if !roleIDPattern.MatchString(id) {
				rd.errorf(v, "invalid role id %q: use 1 to 32 lowercase letters, digits, \"_\" or \"-\", starting with a letter or digit", id)
			} else if line, dup := rd.seen[id]; dup {
				rd.errorf(v, "duplicate role id %q (first defined at line %d)", id, line)
			} else {
				rd.seen[id] = v.Line
			}
		}
	}
	if v := m.take("name"); v != nil {
		r.Name, _ = rd.str(v, "name")
	}
	if r.Name == "" {
		r.Name = r.ID
	}
	if v := m.take("enabled"); v != nil {
		if b, ok := rd.boolean(v, "enabled"); ok {
			r.Enabled = b
		}
	}
	if v := m.require("prompt_path"); v != nil {
		r.PromptPath, r.PromptFile = rd.promptPath(v, r.Enabled)
	}
	if v := m.take("command"); v != nil {
		r.Command, _ = rd.command(v, "command", "role command", rd.workspace, rd.lookup)
	} else {
		r.Command = rd.defaultCommand.clone()
	}

	cli := ""
	if v := m.take("cli"); v != nil {
		if s, ok := rd.str(v, "cli"); ok && s != "" {
			if _, known := roles.LookupPreset(s); known {
				cli = s
			} else {
				rd.errorf(v, "%q must be one of %s; got %q", "cli", strings.Join(roles.PresetNames(), ", "), s)
			}
		}
	}
	if v := m.take("worktree"); v != nil {
		r.Worktree = rd.worktree(v, r.ID)
	}
	if v := m.take("sandbox"); v != nil {
		r.Sandbox = rd.sandbox(v)
	}
	if v := m.take("fallback"); v != nil {
		if s, ok := rd.str(v, "fallback"); ok {
			r.Fallback = s
			rd.fallbacks = append(rd.fallbacks, fallbackKey{role: r.ID, to: s, node: v})
		}
	}
	if v := m.take("accounts"); v != nil {
		r.Accounts = rd.accounts(v, r.ID)
	}
	rd.applyPreset(&r, m, roles.PresetFor(cli, r.Command.Exec))
	return r, true
}

// sandbox decodes the sandbox key: true (the same as "required"), false,
// "required" or "preferred" (see sandbox.Mode).
func (rd *roleDecoder) sandbox(v *yaml.Node) sandbox.Mode {
	v = yamlstrict.Resolve(v)
	if v.Kind == yaml.ScalarNode && v.ShortTag() == "!!bool" {
		if b, ok := rd.boolean(v, "sandbox"); ok && b {
			return sandbox.Required
		}
		return sandbox.Off
	}
	s, _ := rd.enum(v, "sandbox", string(sandbox.Required), string(sandbox.Preferred))
	return sandbox.Mode(s)
}

// checkFallbacks checks each fallback key against the roles of the whole
// file: it must name another role that is there. Two roles that name each
// other are allowed; the queue guards against a hand-over back and forth.
func (rd *roleDecoder) checkFallbacks() {
	for _, f := range rd.fallbacks {
		switch to := f.to; {
		case to == "":
			rd.errorf(f.node, "%q must name a role, got an empty string", "fallback")
		case to == f.role:
			rd.errorf(f.node, "fallback %q is the role itself: name another role to take its tasks at a usage limit", to)
		default:
			if _, known := rd.seen[to]; !known {
				rd.errorf(f.node, "fallback %q is not a role of this file", to)
			}
		}
	}
}

// DefaultWorktreeBranch is the branch of a role's worktree when the
// worktree key names none; {id} is the role id.
const DefaultWorktreeBranch = "shogun/{id}"

// placeholderPattern finds a {key} left in a branch name after expansion.
var placeholderPattern = regexp.MustCompile(`\{[A-Za-z0-9_]+\}`)

// worktree decodes the worktree key: true (a worktree on the default
// branch), false (none), or a mapping with base and branch. Branch names
// are checked here, where the line is known, rather than when git refuses
// them at start.
func (rd *roleDecoder) worktree(v *yaml.Node, id string) *Worktree {
	v = yamlstrict.Resolve(v)
	w := &Worktree{Branch: DefaultWorktreeBranch}
	branchNode := v
	switch {
	case v.Kind == yaml.ScalarNode && v.ShortTag() == "!!bool":
		if !strings.EqualFold(v.Value, "true") {
			return nil
		}
	case v.Kind == yaml.MappingNode:
		m := rd.mapping(v, "worktree", "role worktree")
		defer m.done()
		if x := m.take("base"); x != nil {
			if s, ok := rd.str(x, "base"); ok {
				if problem := CheckBranchName(s); problem != "" {
					rd.errorf(x, "worktree %q %q: %s", "base", s, problem)
				} else {
					w.Base = s
				}
			}
		}
		if x := m.take("branch"); x != nil {
			if s, ok := rd.str(x, "branch"); ok {
				w.Branch, branchNode = s, x
			}
		}
	default:
		rd.errorf(v, "%q must be true, false, or a mapping with base and branch, got %s", "worktree", yamlstrict.Describe(v))
		return nil
	}
	template := w.Branch
	w.Branch = roles.Expand(template, map[string]string{roles.VarID: id})
	if left := placeholderPattern.FindString(w.Branch); left != "" {
		rd.errorf(branchNode, "worktree branch %q: unknown placeholder %s (only {id} is known)", template, left)
		return nil
	}
	if problem := CheckBranchName(w.Branch); problem != "" {
		rd.errorf(branchNode, "worktree branch %q: %s", w.Branch, problem)
		return nil
	}
	if line, dup := rd.branches[w.Branch]; dup {
		rd.errorf(branchNode, "worktree branch %q is already the branch of the role at line %d: a branch can be checked out in one worktree only", w.Branch, line)
		return nil
	}
	rd.branches[w.Branch] = branchNode.Line
	return w
}

// CheckBranchName returns why name cannot be a git branch, or "": the
// rules of git check-ref-format --branch, so that a bad name is reported
// with its line before git is ever run. Package gitwork holds the names it
// reads back from git (a recorded base, the branches of worktrees) to the
// same rules, since an agent can edit the repository's configuration.
func CheckBranchName(name string) string {
	switch {
	case name == "":
		return "must not be empty"
	case name == "@" || name == "HEAD":
		return "is not a branch name git accepts"
	case strings.HasPrefix(name, "-"):
		return "must not start with \"-\""
	case strings.HasPrefix(name, "/") || strings.HasSuffix(name, "/") || strings.Contains(name, "//"):
		return "must not start or end with \"/\" or contain \"//\""
	case strings.HasSuffix(name, "."):
		return "must not end with \".\""
	case strings.Contains(name, ".."):
		return "must not contain \"..\""
	case strings.Contains(name, "@{"):
		return "must not contain \"@{\""
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f || strings.ContainsRune(" ~^:?*[\\", r) {
			return fmt.Sprintf("must not contain %q (git refuses spaces, control characters and ~ ^ : ? * [ \\ in branch names)", r)
		}
	}
	for _, part := range strings.Split(name, "/") {
		if strings.HasPrefix(part, ".") || strings.HasSuffix(part, ".lock") {
			return fmt.Sprintf("part %q must not start with \".\" or end with \".lock\"", part)
		}
	}
	return ""
}

// promptPath checks the instruction file. A disabled role's file may be
// missing: disabling a role is how one keeps an unfinished role in the file.
func (rd *roleDecoder) promptPath(v *yaml.Node, enabled bool) (rel, abs string) {
	s, ok := rd.str(v, "prompt_path")
	if !ok {
		return "", ""
	}
	rel, problem := checkRelPath("prompt_path", s)
	if problem != "" {
		rd.errorf(v, "%s", problem)
		return "", ""
	}
	abs = absPath(rd.workspace, rel)
	if real, err := escapesByLink(rd.workspace, abs); err != nil {
		rd.errorf(v, "prompt file %q: %v", rel, err)
		return "", ""
	} else if real != "" {
		rd.errorf(v, "prompt file %q leaves the workspace through a symbolic link (it leads to %q)", rel, real)
		return "", ""
	}
	if !enabled {
		return rel, abs
	}
	fi, err := os.Stat(abs)
	switch {
	case os.IsNotExist(err):
		rd.errorf(v, "prompt file %q does not exist", rel)
	case err != nil:
		rd.errorf(v, "prompt file %q: %v", rel, err)
	case fi.IsDir():
		rd.errorf(v, "prompt file %q is a folder, not a file", rel)
	}
	return rel, abs
}

// applyPreset fills r from the preset, then lets every optional key that is
// set in the file override it. Unset and "" differ: clear_input: "" means
// "send nothing", while no clear_input means the preset's Ctrl-U.
func (rd *roleDecoder) applyPreset(r *Role, m *mapping, p roles.Preset) {
	r.CLI = p.CLI
	r.Terminal = p.Terminal
	r.StartupPrompt, r.Nudge, r.Notify = p.StartupPrompt, p.Nudge, p.Notify
	r.Submit, r.SubmitDelay, r.ClearInput = p.Submit, p.SubmitDelay, p.ClearInput
	r.InputMarker = p.InputMarker
	r.ReadyQuiet, r.Restart, r.Stop = p.ReadyQuiet, p.Restart, p.Stop
	r.LimitPattern = regexp.MustCompile(p.LimitPattern)
	r.LimitWait, r.AckTimeout, r.StallAfter, r.StartTimeout = p.LimitWait, p.AckTimeout, p.StallAfter, p.StartTimeout
	r.InterruptKeys, r.BetweenTasks, r.Remind = p.InterruptKeys, p.BetweenTasks, p.Remind
	r.ResumeArgs = slices.Clone(p.ResumeArgs)
	r.ReadyPattern = regexp.MustCompile(p.ReadyPattern)
	r.BusyPattern = regexp.MustCompile(p.BusyPattern)
	r.AttentionPattern = regexp.MustCompile(p.AttentionPattern)

	if v := m.take("terminal"); v != nil {
		if t := rd.mapping(v, "terminal", "role terminal"); t != nil {
			if c := t.take("cols"); c != nil {
				if n, ok := rd.integer(c, "cols", ptyhost.MinCols, ptyhost.MaxCols); ok {
					r.Terminal.Cols = int(n)
				}
			}
			if c := t.take("rows"); c != nil {
				if n, ok := rd.integer(c, "rows", ptyhost.MinRows, ptyhost.MaxRows); ok {
					r.Terminal.Rows = int(n)
				}
			}
			t.done()
		}
	}
	for _, f := range []struct {
		key      string
		dst      *string
		nonEmpty bool
	}{
		{"startup_prompt", &r.StartupPrompt, false},
		{"nudge", &r.Nudge, true},
		{"notify", &r.Notify, false},
		{"submit", &r.Submit, true},
		{"clear_input", &r.ClearInput, false},
		{"input_marker", &r.InputMarker, false},
		{"interrupt_keys", &r.InterruptKeys, false},
		{"between_tasks", &r.BetweenTasks, false},
		{"remind", &r.Remind, false},
	} {
		if v := m.take(f.key); v != nil {
			if s, ok := rd.str(v, f.key); ok {
				if s == "" && f.nonEmpty {
					rd.errorf(v, "%q must not be empty", f.key)
				}
				*f.dst = s
			}
		}
	}
	if v := m.take("submit_delay"); v != nil {
		if d, ok := rd.duration(v, "submit_delay", true); ok {
			r.SubmitDelay = d
		}
	}
	if v := m.take("ready_quiet"); v != nil {
		if d, ok := rd.duration(v, "ready_quiet", false); ok {
			r.ReadyQuiet = d
		}
	}
	for _, f := range []struct {
		key string
		dst *time.Duration
	}{
		{"limit_wait", &r.LimitWait},
		{"ack_timeout", &r.AckTimeout},
		{"stall_after", &r.StallAfter},
		{"start_timeout", &r.StartTimeout},
	} {
		if v := m.take(f.key); v != nil {
			if d, ok := rd.duration(v, f.key, false); ok {
				*f.dst = d
			}
		}
	}
	for _, f := range []struct {
		key string
		dst **regexp.Regexp
	}{
		{"ready_pattern", &r.ReadyPattern},
		{"busy_pattern", &r.BusyPattern},
		{"attention_pattern", &r.AttentionPattern},
		{"limit_pattern", &r.LimitPattern},
	} {
		if v := m.take(f.key); v != nil {
			if re, ok := rd.pattern(v, f.key); ok {
				*f.dst = re
			}
		}
	}
	// The preset's empty patterns compile to a regexp matching everything;
	// nil is what "no pattern" means to the supervisor.
	for _, p := range []**regexp.Regexp{&r.ReadyPattern, &r.BusyPattern, &r.AttentionPattern, &r.LimitPattern} {
		if *p != nil && (*p).String() == "" {
			*p = nil
		}
	}
	if v := m.take("idle_after"); v != nil {
		if d, ok := rd.idleAfter(v, "idle_after"); ok {
			r.IdleAfter = d
		}
	}
	if v := m.take("accounts_switch_at"); v != nil {
		if n, ok := rd.integer(v, "accounts_switch_at", 1, 100); ok {
			r.AccountsSwitchAt = int(n)
		}
	}
	if v := m.take("memory_max"); v != nil {
		if n, ok := rd.memoryMax(v, "memory_max"); ok {
			r.MemoryMax = n
		}
	}
	if v := m.take("resume_args"); v != nil {
		if args, ok := rd.strList(v, "resume_args"); ok {
			r.ResumeArgs = args
		}
	}
	if v := m.take("restart"); v != nil {
		if rm := rd.mapping(v, "restart", "role restart"); rm != nil {
			if x := rm.take("policy"); x != nil {
				if s, ok := rd.enum(x, "policy", roles.RestartAlways, roles.RestartOnFailure, roles.RestartNever); ok {
					r.Restart.Policy = s
				}
			}
			if x := rm.take("max_restarts"); x != nil {
				if n, ok := rd.integer(x, "max_restarts", 0, 1_000_000); ok {
					r.Restart.MaxRestarts = int(n)
				}
			}
			if x := rm.take("window"); x != nil {
				if d, ok := rd.duration(x, "window", false); ok {
					r.Restart.Window = d
				}
			}
			rm.done()
		}
	}
	if v := m.take("stop"); v != nil {
		if sm := rd.mapping(v, "stop", "role stop"); sm != nil {
			if x := sm.take("keys"); x != nil {
				if s, ok := rd.str(x, "keys"); ok {
					r.Stop.Keys = s
				}
			}
			if x := sm.take("timeout"); x != nil {
				if d, ok := rd.duration(x, "timeout", true); ok {
					r.Stop.Timeout = d
				}
			}
			sm.done()
		}
	}
}

// command decodes a command mapping and expands ${VAR} in it. exec is
// required: a command without a program is always a mistake.
func (d *decoder) command(n *yaml.Node, key, where, workspace string, lookup func(string) (string, bool)) (Command, bool) {
	c := Command{Args: []string{}, Env: map[string]string{}, Cwd: workspace}
	m := d.mapping(n, key, where)
	if m == nil {
		return c, false
	}
	defer m.done()
	start := len(d.errs.List)
	if v := m.require("exec"); v != nil {
		if s, ok := d.str(v, "exec"); ok {
			var expanded bool
			var unset []string
			c.Exec, expanded, unset = d.expandWith(v, "exec", s, lookup)
			switch {
			case !expanded:
			case s == "":
				d.errorf(v, "%q must not be empty", "exec")
			case c.Exec == "" && len(unset) > 0:
				verb := "is"
				if len(unset) > 1 {
					verb = "are"
				}
				d.errorf(v, "%q is empty after expanding %q: ${%s} %s not set", "exec", s, strings.Join(unset, "}, ${"), verb)
			case c.Exec == "":
				d.errorf(v, "%q is empty after expanding %q", "exec", s)
			default:
				d.warnUnset(v, "exec", unset)
			}
		}
	}
	if v := m.take("args"); v != nil {
		args, ok := d.strList(v, "args")
		for i, a := range args {
			args[i], _ = d.expand(yamlstrict.Resolve(v.Content[i]), "args", a, lookup)
		}
		if ok {
			c.Args = args
		}
	}
	if v := m.take("env"); v != nil {
		if em := d.mapping(v, "env", where+" env"); em != nil {
			for _, name := range em.all() {
				k, val := em.keys[name], em.vals[name]
				if name == "" || strings.ContainsAny(name, "=\x00") {
					d.errorf(k, "invalid environment variable name %q", name)
					continue
				}
				if yamlstrict.IsNull(val) || val.Kind != yaml.ScalarNode {
					d.errorf(val, "env %q must be a string, got %s", name, yamlstrict.Describe(val))
					continue
				}
				c.Env[name], _ = d.expand(val, "env "+name, val.Value, lookup)
			}
		}
	}
	if v := m.take("cwd"); v != nil {
		if s, ok := d.str(v, "cwd"); ok {
			dir, _ := d.expand(v, "cwd", s, lookup)
			if dir == "" {
				dir = "."
			}
			if !filepath.IsAbs(dir) {
				dir = filepath.Join(workspace, filepath.FromSlash(dir))
			}
			c.Cwd = filepath.Clean(dir)
			// A folder outside the workspace is the owner's explicit
			// choice; one inside it must not lead out through a link
			// that an agent could have made.
			if real, err := escapesByLink(workspace, c.Cwd); err != nil {
				d.errorf(v, "%q %q: %v", "cwd", s, err)
			} else if real != "" {
				d.errorf(v, "%q %q leaves the workspace through a symbolic link (it leads to %q)", "cwd", s, real)
			}
		}
	}
	return c, len(d.errs.List) == start
}

// expand runs ExpandEnv, records a failure at n, and warns about every
// variable that is not set and so expanded to "".
func (d *decoder) expand(n *yaml.Node, key, s string, lookup func(string) (string, bool)) (string, bool) {
	out, ok, unset := d.expandWith(n, key, s, lookup)
	d.warnUnset(n, key, unset)
	return out, ok
}

// expandWith is expand that returns the unset variables instead of warning.
func (d *decoder) expandWith(n *yaml.Node, key, s string, lookup func(string) (string, bool)) (string, bool, []string) {
	var unset []string
	out, err := expandEnv(s, lookup, &unset)
	if err != nil {
		d.errorf(n, "%q: %v", key, err)
		return "", false, nil
	}
	return out, true, unset
}

// warnUnset records a warning for each variable of key that is not set.
func (d *decoder) warnUnset(n *yaml.Node, key string, unset []string) {
	for _, name := range unset {
		d.errs.warn(d.file, n.Line, n.Column, "${%s} is not set: %q gets \"\" in its place (write ${%s:-default} to give a default)", name, key, name)
	}
}

func (c Command) clone() Command {
	out := c
	out.Args = append([]string{}, c.Args...)
	out.Env = make(map[string]string, len(c.Env))
	for k, v := range c.Env {
		out.Env[k] = v
	}
	return out
}

// String shows a command the way a person would type it, for status output.
func (c Command) String() string {
	parts := append([]string{c.Exec}, c.Args...)
	for i, p := range parts {
		if p == "" || strings.ContainsAny(p, " \t\"'") {
			parts[i] = fmt.Sprintf("%q", p)
		}
	}
	return strings.Join(parts, " ")
}

// TemplateVars are the values of the placeholders that every template of
// the role (startup_prompt, nudge, notify) may use: its names, and its
// files as its agent sees them from its working directory (relative there
// when inside it). The one place they are built; notify adds the values
// that describe the incoming report.
func (r Role) TemplateVars(l workspace.Layout) map[string]string {
	return map[string]string{
		roles.VarPromptPath: workspace.RelTo(r.Command.Cwd, r.PromptFile),
		roles.VarName:       r.Name,
		roles.VarID:         r.ID,
		roles.VarTaskFile:   workspace.RelTo(r.Command.Cwd, l.TaskFile(r.ID)),
		roles.VarReportFile: workspace.RelTo(r.Command.Cwd, l.ReportFile(r.ID)),
	}
}
