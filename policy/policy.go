// Package policy is the approvals policy of a workspace: the ordered rules
// of config/policy.yaml (allow, ask or deny, by kind of action) and the
// decision they give for one action an agent wants to take. It knows no
// CLI and no file format: package config reads the file into a Policy,
// package approvals records and waits for the decisions, and package hooks
// turns each CLI's own description of a tool call into an Action.
//
// The actions come from agents, whose input is hostile: a command is split
// the way a shell would split it, so "ls; rm -rf /" is judged as two
// commands, each read as it will run (shell.go: quoting and here-documents;
// command.go: base names, shells; wrappers.go: sudo, env, xargs, find …;
// git.go: git's options and aliases), and a path is judged where it really
// leads, after "..", the command's own "cd", symbolic links and the files
// a glob would name (words.go, match.go). A deny or ask applies when one
// reading and one path match it, an allow only when all do.
package policy

import (
	"fmt"
	"slices"
)

// Decision is what a rule says about an action.
type Decision string

// The decisions, from the most permissive to the strictest.
const (
	// Allow lets the action run without asking anyone.
	Allow Decision = "allow"
	// Ask waits for a person's answer (approvals.timeout; unanswered is
	// denied).
	Ask Decision = "ask"
	// Deny refuses the action.
	Deny Decision = "deny"
)

// Decisions lists the valid decisions, for messages and validation.
var Decisions = []string{string(Allow), string(Ask), string(Deny)}

// strictness orders decisions: a compound action gets the strictest of
// its parts' decisions.
func (d Decision) strictness() int {
	switch d {
	case Allow:
		return 0
	case Ask:
		return 1
	}
	return 2 // Deny, and anything unknown
}

// Stricter returns the stricter of d and e.
func (d Decision) Stricter(e Decision) Decision {
	if e.strictness() > d.strictness() {
		return e
	}
	return d
}

// Kind is a kind of action.
type Kind string

// The kinds of action a policy governs. A tool call of any other kind (a
// to-do list, a sub-agent) is left to the CLI's own settings.
const (
	// Shell runs a command line.
	Shell Kind = "shell"
	// Read reads a file or lists a folder.
	Read Kind = "read"
	// Write creates, edits or deletes a file.
	Write Kind = "write"
	// Fetch reaches the network (a URL, a web search).
	Fetch Kind = "fetch"
	// MCP calls a tool of an MCP server.
	MCP Kind = "mcp"
)

// Kinds lists the kinds, in the order the documentation gives them.
var Kinds = []string{string(Shell), string(Read), string(Write), string(Fetch), string(MCP)}

// Action is one thing an agent asks to do.
type Action struct {
	Kind Kind
	// Command is the command line of a Shell action, as the agent wrote it.
	Command string
	// Path is the file of a Read or Write action: absolute, or relative to
	// the role's working directory.
	Path string
	// URL is the address of a Fetch action; "" for a web search.
	URL string
	// Tool is an MCP tool as "server/tool".
	Tool string
	// Cwd is the folder the CLI is in when it acts, which relative paths
	// are taken from (a CLI's shell keeps the folder an earlier "cd" went
	// to); "" or a relative one means the role's working directory.
	Cwd string
}

// Subject is what the action is about, in one string: the command, the
// path, the URL or the tool. It is what the history records and a person
// is shown (escaped: it comes from an agent).
func (a Action) Subject() string {
	switch a.Kind {
	case Shell:
		return a.Command
	case Read, Write:
		return a.Path
	case Fetch:
		return a.URL
	case MCP:
		return a.Tool
	}
	return ""
}

// Validate checks that the action is one a policy can judge.
func (a Action) Validate() error {
	if !slices.Contains(Kinds, string(a.Kind)) {
		return fmt.Errorf("action: unknown kind %q (want one of %v)", a.Kind, Kinds)
	}
	if len(a.Subject()) > MaxSubject {
		return fmt.Errorf("action: %s of %d bytes is over the limit of %d", a.Kind, len(a.Subject()), MaxSubject)
	}
	switch {
	case a.Kind == Shell && a.Command == "":
		return fmt.Errorf("action: shell without a command")
	case (a.Kind == Read || a.Kind == Write) && a.Path == "":
		return fmt.Errorf("action: %s without a path", a.Kind)
	case a.Kind == MCP && a.Tool == "":
		return fmt.Errorf("action: mcp without a tool")
	}
	return nil
}

// MaxSubject bounds an action's command, path, URL or tool: an agent's
// input is recorded and matched, and a megabyte of it is an attack, not
// a command.
const MaxSubject = 64 << 10

// Place is where a role works, the frame for "inside" and "outside".
type Place struct {
	// Dir is the role's working directory: its worktree with worktree:
	// true, else its command's cwd. Absolute.
	Dir string
	// Workspace is the workspace root, absolute: path patterns such as
	// "config/**" are relative to it as well as to Dir.
	Workspace string
	// OnBaseBranch is true when Dir has the base branch checked out (a
	// role without a worktree works in the main checkout), for rules
	// with branch: base.
	OnBaseBranch bool
	// Home is the home folder "~" stands for; "" leaves "~" unknown.
	Home string
}

// Rule is one entry of config/policy.yaml's rules. Every condition that
// is set must hold for the rule to apply; the first rule that applies
// decides.
type Rule struct {
	Decision Decision
	Kind     Kind
	// Commands are word patterns for Shell (Pattern), tried on each
	// simple command of the line: a deny or ask applies when one pattern
	// matches one reading of the command (as written, normalized, with
	// its wrappers), an allow only when every reading is matched.
	Commands []Pattern
	// Paths are PathConds: for Read and Write the file, for Shell the
	// command's arguments and redirections. A deny applies when one
	// path matches one of them, an allow or ask only when every path
	// does.
	Paths []PathCond
	// Hosts are globs on a Fetch's host name.
	Hosts []string
	// Tools are globs on an MCP tool, "server/tool".
	Tools []string
	// BaseBranch, when set, applies the rule only while the role's
	// working directory is on the base branch.
	BaseBranch bool
	// Roles limits the rule to these role ids; empty means every role.
	Roles []string
	// Note is told to the agent and recorded with a decision the rule
	// makes.
	Note string
	// Where locates the rule for messages: "config/policy.yaml:12".
	Where string
}

// Policy is a workspace's approvals policy.
type Policy struct {
	// Default is the decision for an action no rule matches (ask unless
	// set).
	Default Decision
	// RoleDefaults override Default for some roles, by role id.
	RoleDefaults map[string]Decision
	// Rules are tried in order.
	Rules []Rule
}

// Verdict is a policy's decision on one action, with why.
type Verdict struct {
	Decision Decision
	// Rule is the rule that decided ("config/policy.yaml:12"); "" when
	// the default did.
	Rule string
	// Reason says why in one line, for the agent and the history.
	Reason string
}

// Decide judges a for role working at place. A shell line is judged one
// simple command at a time and gets the strictest of their decisions; a
// command the policy cannot see through (a $(…) substitution, eval) is
// never allowed by a rule, only asked or denied.
func (p *Policy) Decide(role string, place Place, a Action) Verdict {
	if err := a.Validate(); err != nil {
		return Verdict{Decision: Deny, Reason: err.Error()}
	}
	cwd := place.Dir
	if a.Cwd != "" {
		// Where the CLI says it is, rooted paths included (\src on Windows).
		if pa := resolvePath(place, place.Dir, a.Cwd); pa.known {
			cwd = pa.abs
		}
	}
	if a.Kind != Shell {
		return p.decideOne(role, place, a, subject{paths: []pathArg{resolvePath(place, cwd, a.Path)}})
	}
	cmds := splitDepth(a.Command, place, cwd, 0)
	if len(cmds) == 0 {
		return p.decideOne(role, place, a, subject{})
	}
	var worst Verdict
	for i, c := range cmds {
		v := p.decideOne(role, place, a, c)
		if i == 0 || v.Decision.strictness() > worst.Decision.strictness() {
			worst = v
		}
	}
	return worst
}

// decideOne applies the rules to one simple command (or to a non-shell
// action, whose file is the subject's one path).
func (p *Policy) decideOne(role string, place Place, a Action, s subject) Verdict {
	for _, r := range p.Rules {
		if !r.applies(role, place, a, s) {
			continue
		}
		if r.Decision == Allow && s.opaque {
			// A rule may not allow what it cannot see; asking is the
			// most that is left.
			return Verdict{Decision: Ask, Rule: r.Where, Reason: fmt.Sprintf("%s would allow it, but the command holds a substitution or eval that a rule cannot see through", r.Where)}
		}
		reason := fmt.Sprintf("%s: %s %s", r.Where, r.Decision, r.describe())
		if r.Note != "" {
			// The note first: a CLI may show only the start of the line.
			reason = fmt.Sprintf("%s (%s)", r.Note, reason)
		}
		return Verdict{Decision: r.Decision, Rule: r.Where, Reason: reason}
	}
	d := p.Default
	if rd, ok := p.RoleDefaults[role]; ok {
		d = rd
	}
	if d == "" {
		d = Ask
	}
	if d == Allow && s.opaque {
		d = Ask
	}
	return Verdict{Decision: d, Reason: fmt.Sprintf("no rule matches: the default for %s is %s", role, d)}
}

// applies reports whether every condition of r holds.
func (r *Rule) applies(role string, place Place, a Action, s subject) bool {
	if r.Kind != a.Kind {
		return false
	}
	if len(r.Roles) > 0 && !slices.Contains(r.Roles, role) {
		return false
	}
	if r.BaseBranch && !place.OnBaseBranch {
		return false
	}
	if len(r.Commands) > 0 && !r.commandsMatch(s) {
		return false
	}
	if len(r.Paths) > 0 && !r.pathsMatch(role, place, s) {
		return false
	}
	if len(r.Hosts) > 0 && !slices.ContainsFunc(r.Hosts, func(g string) bool { return Glob(g, hostOf(a.URL)) }) {
		return false
	}
	if len(r.Tools) > 0 && !slices.ContainsFunc(r.Tools, func(g string) bool { return Glob(g, a.Tool) }) {
		return false
	}
	return true
}

// commandsMatch reports whether r's command patterns match s: for a
// deny or an ask, one pattern matching one reading of the command is
// enough (git push --forc is asked by "git push * --force"); an allow
// needs every reading matched, so that it cannot allow a command that
// runs as another (sudo git is not allowed by "git *" alone).
func (r *Rule) commandsMatch(s subject) bool {
	if len(s.views) == 0 {
		return false
	}
	matched := func(view []string) bool {
		return slices.ContainsFunc(r.Commands, func(p Pattern) bool { return p.Match(view) })
	}
	if r.Decision != Allow {
		return slices.ContainsFunc(s.views, matched) || slices.ContainsFunc(s.wrapped, matched)
	}
	return !slices.ContainsFunc(s.views, func(v []string) bool { return !matched(v) })
}

// pathsMatch reports whether r's path conditions hold for s's paths: a
// deny needs one path to match, an allow or ask every one (cp inside
// /etc/cron.d/x is not inside).
func (r *Rule) pathsMatch(role string, place Place, s subject) bool {
	if len(s.paths) == 0 {
		return false
	}
	matched := func(pa pathArg) bool {
		return slices.ContainsFunc(r.Paths, func(c PathCond) bool { return c.match(place, role, pa) })
	}
	if r.Decision == Deny {
		return slices.ContainsFunc(s.paths, matched)
	}
	return !slices.ContainsFunc(s.paths, func(pa pathArg) bool { return !matched(pa) })
}

// maxDescribed is how many command patterns a reason line names.
const maxDescribed = 4

// describe is the rule's conditions in a few words, for a reason line.
func (r *Rule) describe() string {
	s := string(r.Kind)
	for i, c := range r.Commands {
		if i == maxDescribed {
			// A long list of programs says nothing more in a reason.
			s += fmt.Sprintf(" (and %d more)", len(r.Commands)-i)
			break
		}
		s += fmt.Sprintf(" %q", c.String())
	}
	for _, c := range r.Paths {
		s += " " + c.String()
	}
	for _, h := range r.Hosts {
		s += " " + h
	}
	for _, t := range r.Tools {
		s += " " + t
	}
	return s
}
