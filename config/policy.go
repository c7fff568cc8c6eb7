package config

import (
	"fmt"
	"slices"

	"gopkg.in/yaml.v3"

	"github.com/shogun-dev/shogun/internal/yamlstrict"
	"github.com/shogun-dev/shogun/policy"
	"github.com/shogun-dev/shogun/workspace"
)

// PolicyFile is the approvals policy, relative to the workspace.
const PolicyFile = workspace.PolicyFile

// loadPolicy reads config/policy.yaml strictly, as the other files are
// read. A workspace without the file (one made before approvals existed)
// has no policy: nil, and the CLIs' own permission settings decide alone.
// A file that cannot be read is an error, recorded by read.
func loadPolicy(files fileReader, roleList []Role) *policy.Policy {
	data, err := files.read(PolicyFile)
	if err != nil {
		return nil // absent, or recorded by read
	}
	errs := files.errs
	start := len(errs.List)
	defer errs.sortFrom(start)
	d := &decoder{file: PolicyFile, errs: errs}
	root := d.parse(data)
	if root == nil {
		return nil
	}
	if root.Kind != yaml.MappingNode {
		d.errorf(root, "expected a mapping with \"default\" and \"rules\" at the top, got %s", yamlstrict.Describe(root))
		return nil
	}
	known := map[string]bool{}
	for _, r := range roleList {
		known[r.ID] = true
	}
	pd := policyDecoder{decoder: d, roles: known}
	m := d.mapping(root, "", "policy file")
	defer m.done()
	p := &policy.Policy{Default: policy.Ask, RoleDefaults: map[string]policy.Decision{}}
	if v := m.take("default"); v != nil {
		if dec, ok := d.enum(v, "default", policy.Decisions...); ok {
			p.Default = policy.Decision(dec)
		}
	}
	if v := m.take("role_defaults"); v != nil {
		if rd := d.mapping(v, "role_defaults", "role_defaults"); rd != nil {
			for _, id := range rd.all() {
				pd.roleID(rd.keys[id], id)
				if dec, ok := d.enum(rd.vals[id], id, policy.Decisions...); ok {
					p.RoleDefaults[id] = policy.Decision(dec)
				}
			}
			rd.done()
		}
	}
	if v := m.take("rules"); v != nil {
		if v.Kind != yaml.SequenceNode {
			d.errorf(v, "\"rules\" must be a list of rules, got %s", yamlstrict.Describe(v))
			return p
		}
		for _, item := range v.Content {
			if r, ok := pd.rule(item); ok {
				p.Rules = append(p.Rules, r)
			}
		}
	}
	return p
}

// policyDecoder decodes the rules of one policy file.
type policyDecoder struct {
	*decoder
	roles map[string]bool // the roles of roles.yaml
}

// roleID checks a role id named in the policy: its form is an error, a
// role roles.yaml does not have only a warning (the role may be added
// later, and the rule is then ready).
func (d policyDecoder) roleID(n *yaml.Node, id string) {
	switch {
	case !ValidRoleID(id):
		d.errorf(n, "%q is not a role id ([a-z0-9][a-z0-9_-]{0,31})", id)
	case !d.roles[id]:
		d.errs.warn(d.file, n.Line, n.Column, "role %q is not in %s; the policy's entry for it applies once it is", id, RolesFile)
	}
}

// rule decodes one entry of rules.
func (d policyDecoder) rule(n *yaml.Node) (policy.Rule, bool) {
	m := d.mapping(n, "rules", "policy rule")
	if m == nil {
		return policy.Rule{}, false
	}
	defer m.done()
	r := policy.Rule{Where: fmt.Sprintf("%s:%d", d.file, n.Line)}
	ok := true
	if v := m.require("decision"); v != nil {
		dec, good := d.enum(v, "decision", policy.Decisions...)
		r.Decision, ok = policy.Decision(dec), ok && good
	} else {
		ok = false
	}
	if v := m.require("kind"); v != nil {
		k, good := d.enum(v, "kind", policy.Kinds...)
		r.Kind, ok = policy.Kind(k), ok && good
	} else {
		ok = false
	}
	// Each condition belongs to some kinds; one set on another kind
	// could never match, which is a mistake worth saying.
	only := func(key string, v *yaml.Node, kinds ...policy.Kind) bool {
		if r.Kind != "" && !slices.Contains(kinds, r.Kind) {
			d.errorf(v, "%q does not apply to kind %s (only to %v)", key, r.Kind, kinds)
			return false
		}
		return true
	}
	if v := m.take("command"); v != nil && only("command", v, policy.Shell) {
		for _, s := range d.oneOrMore(v, "command") {
			p, err := policy.ParsePattern(s)
			if err != nil {
				d.errorf(v, "%q: %v", "command", err)
				ok = false
				continue
			}
			r.Commands = append(r.Commands, p)
		}
	}
	if v := m.take("path"); v != nil && only("path", v, policy.Shell, policy.Read, policy.Write) {
		for _, s := range d.oneOrMore(v, "path") {
			c, err := policy.ParsePathCond(s)
			if err != nil {
				d.errorf(v, "%q: %v", "path", err)
				ok = false
				continue
			}
			r.Paths = append(r.Paths, c)
		}
	}
	if v := m.take("host"); v != nil && only("host", v, policy.Fetch) {
		r.Hosts = d.oneOrMore(v, "host")
	}
	if v := m.take("tool"); v != nil && only("tool", v, policy.MCP) {
		r.Tools = d.oneOrMore(v, "tool")
	}
	if v := m.take("branch"); v != nil {
		if _, good := d.enum(v, "branch", "base"); good {
			r.BaseBranch = true
		}
	}
	if v := m.take("roles"); v != nil {
		ids, _ := d.strList(v, "roles")
		for i, id := range ids {
			d.roleID(v.Content[i], id)
		}
		r.Roles = ids
	}
	if v := m.take("note"); v != nil {
		r.Note, _ = d.str(v, "note")
	}
	return r, ok
}

// oneOrMore reads a string or a list of strings, none empty.
func (d policyDecoder) oneOrMore(n *yaml.Node, key string) []string {
	n = yamlstrict.Resolve(n)
	if n.Kind == yaml.ScalarNode {
		if n.Value == "" {
			d.errorf(n, "%q must not be empty", key)
			return nil
		}
		return []string{n.Value}
	}
	list, _ := d.strList(n, key)
	out := list[:0]
	for i, s := range list {
		if s == "" {
			d.errorf(n.Content[i], "%q items must not be empty", key)
			continue
		}
		out = append(out, s)
	}
	return out
}
