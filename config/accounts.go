package config

import (
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/shogun-dev/shogun/internal/yamlstrict"
)

// An account is what signs a role's CLI in: the environment that selects
// it (a config folder such as CLAUDE_CONFIG_DIR or CODEX_HOME, an API key's
// variable, or both). A role names its accounts in roles.yaml, either a
// list of its own or the name of a pool of settings.yaml that several roles
// share:
//
//	# settings.yaml
//	accounts:
//	  pools:
//	    claude-team:
//	      - {name: a, env: {CLAUDE_CONFIG_DIR: ~/.claude-a}}
//	      - {name: b, env: {CLAUDE_CONFIG_DIR: ~/.claude-b, ANTHROPIC_API_KEY: "${TEAM_B_KEY}"}}
//	# roles.yaml, on a role
//	accounts: claude-team
//
// When the account a role runs on hits a usage limit, the supervisor moves
// the role to the next account that is not limited (package supervisor).

// Account is one account of a role, resolved.
type Account struct {
	// Key names the account in the history and in `shogun accounts`: the
	// pool and the name ("claude-team/a"), or for a role's own account
	// the role id and the name ("karo/a").
	Key string
	// Name is the account's name, unique in its list.
	Name string
	// Pool is the settings.yaml pool the account comes from; "" for a
	// role's own.
	Pool string
	// Env is put in the role's environment over its command's env, ${VAR}
	// expanded, a leading ~/ made the home folder. Never empty.
	Env map[string]string
	// From are the variables of shogun's environment Env takes values
	// from (its ${VAR} references): only a program running on this
	// account gets them (package supervisor), so that no role reads
	// another account's key from its environment.
	From []string
}

// AccountSettings are settings.yaml's accounts: the pools roles share.
type AccountSettings struct {
	// Pools are the named lists of accounts (accounts.pools).
	Pools map[string][]Account
	// SwitchAt is the share of its usage window, in percent (1 to 100),
	// at or over which a role with another free account moves to it
	// between tasks, before it meets the limit (accounts.switch_at; 0,
	// the default: only at the limit). A role's accounts_switch_at
	// overrides it.
	SwitchAt int
}

// accountNamePattern keeps account and pool names safe in keys and on a
// command line.
var accountNamePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]{0,31}$`)

// secretVar is a variable name that holds a secret: its value in the
// configuration must name the variable of shogun's environment that holds
// it (${VAR}), so that no key is ever written into a file.
var secretVar = regexp.MustCompile(`(?i)(KEY|TOKEN|SECRET|PASSWORD)`)

// onlyReference is a value that is one ${VAR} and nothing else.
var onlyReference = regexp.MustCompile(`^\$\{[A-Za-z_][A-Za-z0-9_]*\}$`)

// accountList decodes a list of accounts; owner is the pool or role id
// their keys start with.
func (d *decoder) accountList(n *yaml.Node, owner, pool string, lookup func(string) (string, bool)) []Account {
	n = yamlstrict.Resolve(n)
	if n.Kind != yaml.SequenceNode {
		d.errorf(n, "%q must be a list of accounts, each {name: …, env: {…}}, or the name of a pool, got %s", "accounts", yamlstrict.Describe(n))
		return nil
	}
	if len(n.Content) == 0 {
		d.errorf(n, "%q must list at least one account", "accounts")
		return nil
	}
	var out []Account
	seen := map[string]int{}
	for _, item := range n.Content {
		m := d.mapping(item, "accounts", "account")
		if m == nil {
			continue
		}
		a := Account{Pool: pool, Env: map[string]string{}}
		if v := m.require("name"); v != nil {
			if s, ok := d.str(v, "name"); ok {
				switch line, dup := seen[s]; {
				case !accountNamePattern.MatchString(s):
					d.errorf(v, "invalid account name %q: use 1 to 32 lowercase letters, digits, \".\", \"_\" or \"-\", starting with a letter or digit", s)
				case dup:
					d.errorf(v, "duplicate account name %q (first at line %d)", s, line)
				default:
					seen[s] = v.Line
					a.Name, a.Key = s, owner+"/"+s
				}
			}
		}
		if v := m.require("env"); v != nil {
			a.From = d.accountEnv(v, a.Env, lookup)
		}
		m.done()
		if a.Name != "" && len(a.Env) > 0 {
			out = append(out, a)
		}
	}
	return out
}

// accountEnv decodes an account's env into dst and returns the variables
// its values take from shogun's environment. A variable that holds a
// secret must be given as ${VAR}.
func (d *decoder) accountEnv(n *yaml.Node, dst map[string]string, lookup func(string) (string, bool)) (from []string) {
	em := d.mapping(n, "env", "account env")
	if em == nil {
		return nil
	}
	if len(em.order) == 0 {
		d.errorf(n, "account %q must set at least one variable: the config folder (CLAUDE_CONFIG_DIR, CODEX_HOME …) or the API key's variable", "env")
	}
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
		if secretVar.MatchString(name) && !onlyReference.MatchString(val.Value) {
			d.errorf(val, "env %q holds a secret: write the variable of shogun's environment that holds it, as \"${VARIABLE}\", never the key itself", name)
			continue
		}
		for _, m := range varReference.FindAllStringSubmatch(strings.ReplaceAll(val.Value, "$${", ""), -1) {
			if !slices.Contains(from, m[1]) {
				from = append(from, m[1])
			}
		}
		v, _ := d.expand(val, "env "+name, val.Value, lookup)
		if rest, ok := strings.CutPrefix(v, "~/"); ok {
			if home, _ := lookup("HOME"); home != "" {
				v = filepath.Join(home, filepath.FromSlash(rest))
			} else if home, _ := lookup("USERPROFILE"); home != "" {
				v = filepath.Join(home, filepath.FromSlash(rest))
			}
		}
		dst[name] = v
	}
	return from
}

// varReference is a ${VAR} or ${VAR:-…} reference (ExpandEnv), nested
// ones in a default included.
var varReference = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)`)

// accountSettings decodes settings.yaml's accounts section.
func (d *decoder) accountSettings(sec *mapping, lookup func(string) (string, bool)) AccountSettings {
	var s AccountSettings
	if v := sec.take("switch_at"); v != nil {
		if n, ok := d.integer(v, "switch_at", 1, 100); ok {
			s.SwitchAt = int(n)
		}
	}
	v := sec.take("pools")
	if v == nil {
		return s
	}
	pm := d.mapping(v, "pools", "accounts.pools")
	if pm == nil {
		return s
	}
	s.Pools = map[string][]Account{}
	for _, name := range pm.all() {
		if !accountNamePattern.MatchString(name) {
			d.errorf(pm.keys[name], "invalid pool name %q: use 1 to 32 lowercase letters, digits, \".\", \"_\" or \"-\", starting with a letter or digit", name)
			continue
		}
		// Kept even when none of its accounts loads: the roles that name
		// it are not told it does not exist.
		s.Pools[name] = d.accountList(pm.vals[name], name, name, lookup)
	}
	return s
}

// accounts decodes a role's accounts key: a list of its own, or the name
// of a pool of settings.yaml.
func (rd *roleDecoder) accounts(v *yaml.Node, id string) []Account {
	v = yamlstrict.Resolve(v)
	if v.Kind == yaml.ScalarNode {
		pool, ok := rd.pools[v.Value]
		if !ok {
			names := make([]string, 0, len(rd.pools))
			for n := range rd.pools {
				names = append(names, n)
			}
			known := "settings.yaml has no accounts.pools"
			if len(names) > 0 {
				slices.Sort(names)
				known = "pools: " + strings.Join(names, ", ")
			}
			rd.errorf(v, "accounts %q is not a pool of config/settings.yaml accounts.pools (%s)", v.Value, known)
			return nil
		}
		return cloneAccounts(pool)
	}
	return rd.accountList(v, id, "", rd.lookup)
}

func cloneAccounts(list []Account) []Account {
	out := make([]Account, len(list))
	for i, a := range list {
		out[i] = a
		out[i].From = slices.Clone(a.From)
		out[i].Env = make(map[string]string, len(a.Env))
		for k, v := range a.Env {
			out[i].Env[k] = v
		}
	}
	return out
}
