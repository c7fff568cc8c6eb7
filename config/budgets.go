package config

import (
	"math"
	"strconv"

	"gopkg.in/yaml.v3"

	"github.com/shogun-dev/shogun/internal/yamlstrict"
	"github.com/shogun-dev/shogun/usage"
)

// budgets reads usage.budgets: the team's daily budget (team) and each
// role's (roles: role id → budget), each a mapping of tokens and cost_usd.
// It returns the key node of each role named, so that names no role has
// can be pointed at once roles.yaml is read (checkBudgetRoles).
func (d *decoder) budgets(n *yaml.Node) (usage.Budgets, map[string]*yaml.Node) {
	var out usage.Budgets
	m := d.mapping(n, "budgets", "usage.budgets")
	if m == nil {
		return out, nil
	}
	defer m.done()
	if v := m.take("team"); v != nil {
		out.Team = d.budget(v, "team", "usage.budgets.team")
	}
	v := m.take("roles")
	if v == nil {
		return out, nil
	}
	rm := d.mapping(v, "roles", "usage.budgets.roles")
	if rm == nil {
		return out, nil
	}
	at := map[string]*yaml.Node{}
	out.Roles = map[string]usage.Budget{}
	for _, id := range rm.all() {
		at[id] = rm.keys[id]
		out.Roles[id] = d.budget(rm.vals[id], id, "usage.budgets.roles."+id)
	}
	return out, at
}

// budget reads one budget; a budget that bounds nothing is a mistake.
func (d *decoder) budget(n *yaml.Node, key, where string) usage.Budget {
	var b usage.Budget
	m := d.mapping(n, key, where)
	if m == nil {
		return b
	}
	defer m.done()
	bad := false
	if v := m.take("tokens"); v != nil {
		tokens, err := usage.ParseTokens(v.Value)
		if v.Kind != yaml.ScalarNode || err != nil {
			d.errorf(v, "%q must be a count of tokens above 0 such as 1000000, 500k or 1.5M, got %s", "tokens", yamlstrict.Describe(v))
			bad = true
		}
		b.Tokens = tokens
	}
	if v := m.take("cost_usd"); v != nil {
		tag := v.ShortTag()
		x, err := strconv.ParseFloat(v.Value, 64)
		if v.Kind != yaml.ScalarNode || tag != "!!float" && tag != "!!int" || err != nil || math.IsNaN(x) || math.IsInf(x, 0) || x <= 0 {
			d.errorf(v, "%q must be a number of US dollars above 0, got %s", "cost_usd", yamlstrict.Describe(v))
			bad = true
		} else {
			b.CostUSD = x
		}
	}
	if b.IsZero() && !bad {
		d.errorf(n, "%s must set tokens, cost_usd or both", where)
	}
	return b
}

// checkBudgetRoles warns about budgets of roles roles.yaml does not have:
// they bound nothing (a typo, or a role removed since).
func checkBudgetRoles(errs *Errors, at map[string]*yaml.Node, roles []Role) {
	for id, key := range at {
		found := false
		for _, r := range roles {
			found = found || r.ID == id
		}
		if !found {
			errs.warn(SettingsFile, key.Line, key.Column, "usage.budgets.roles: no role %q in %s: its budget bounds nothing", id, RolesFile)
		}
	}
}
