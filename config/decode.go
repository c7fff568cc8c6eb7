package config

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/shogun-dev/shogun/internal/yamlstrict"
)

// The files are decoded by walking yaml.Node trees rather than with
// yaml.Unmarshal into structs: Unmarshal stops at the first type error and
// reports no column, while a person fixing a config wants every problem with
// its line and column at once. The walker also tells "key absent" from "key
// set to an empty string", which the preset overrides need. The YAML rules
// themselves (one document, aliases, merge keys, nulls, the node bound) are
// internal/yamlstrict's, shared with the queue's file formats.

// decoder walks one file and records problems in errs.
type decoder struct {
	file string // relative to the workspace, for messages
	errs *Errors
}

func (d *decoder) errorf(n *yaml.Node, format string, args ...any) {
	d.errs.add(d.file, n.Line, n.Column, format, args...)
}

// report records problems found by yamlstrict.
func (d *decoder) report(problems ...*yamlstrict.Error) {
	for _, p := range problems {
		d.errs.add(d.file, p.Line, p.Column, "%s", p.Message)
	}
}

// parse reads a single YAML document and returns its root node, or nil after
// recording why there is none. A configuration is written by a person, but
// it may be copied from anywhere: the node bound stops an alias bomb just
// as it does for the queue's files.
func (d *decoder) parse(data []byte) *yaml.Node {
	root, err := yamlstrict.Parse(data, yamlstrict.DefaultMaxNodes)
	if err != nil {
		d.report(err)
		return nil
	}
	return root
}

// mapping is one YAML mapping being decoded. Callers take the keys they know;
// done reports the rest as unknown. Keeping the known keys in the calling
// code, not in a separate list, means a new key cannot be added to one place
// and forgotten in the other.
type mapping struct {
	d     *decoder
	node  *yaml.Node
	where string                // "role", "role command", "settings skills"
	order []string              // keys in document order, merged keys last
	keys  map[string]*yaml.Node // key name → key node
	vals  map[string]*yaml.Node // key name → value node (aliases resolved)
	known []string
}

// mapping starts decoding n as a mapping. It returns nil, after recording an
// error naming key, when n is something else.
func (d *decoder) mapping(n *yaml.Node, key, where string) *mapping {
	n = yamlstrict.Resolve(n)
	if n.Kind != yaml.MappingNode {
		d.errorf(n, "%q must be a mapping, got %s", key, yamlstrict.Describe(n))
		return nil
	}
	fields, problems := yamlstrict.Fields(n)
	d.report(problems...)
	m := &mapping{d: d, node: n, where: where, keys: map[string]*yaml.Node{}, vals: map[string]*yaml.Node{}}
	for _, f := range fields {
		m.order = append(m.order, f.Name)
		m.keys[f.Name] = f.Key
		m.vals[f.Name] = f.Value
	}
	return m
}

// take returns the value of key, or nil when the key is absent or null: a
// null value ("key:" with nothing after it) means "not set" everywhere.
func (m *mapping) take(key string) *yaml.Node {
	m.known = append(m.known, key)
	if v := m.vals[key]; !yamlstrict.IsNull(v) {
		return v
	}
	return nil
}

// require is take for keys that must be set.
func (m *mapping) require(key string) *yaml.Node {
	v := m.take(key)
	if v == nil {
		if k, ok := m.keys[key]; ok {
			m.d.errorf(k, "%q must not be empty", key)
		} else {
			m.d.errorf(m.node, "missing required key %q in %s", key, m.where)
		}
	}
	return v
}

// all returns every key in document order, for mappings whose keys are data
// (env).
func (m *mapping) all() []string {
	m.known = append(m.known, m.order...)
	return m.order
}

// done reports the keys nobody took.
func (m *mapping) done() {
	for _, key := range m.order {
		if contains(m.known, key) {
			continue
		}
		msg := fmt.Sprintf("unknown key %q in %s", key, m.where)
		if s := yamlstrict.SuggestKey(key, m.known); s != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", s)
		}
		m.d.errorf(m.keys[key], "%s", msg)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// The value readers below return ok=false after recording an error, so
// callers keep the default and go on to find the next problem.

// str reads any scalar as its text: `name: 42` or `env: {DEBUG: 1}` mean
// the strings a person would expect.
func (d *decoder) str(n *yaml.Node, key string) (string, bool) {
	if n.Kind != yaml.ScalarNode {
		d.errorf(n, "%q must be a string, got %s", key, yamlstrict.Describe(n))
		return "", false
	}
	return n.Value, true
}

func (d *decoder) boolean(n *yaml.Node, key string) (bool, bool) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" {
		d.errorf(n, "%q must be a boolean (true or false), got %s", key, yamlstrict.Describe(n))
		return false, false
	}
	return strings.EqualFold(n.Value, "true"), true
}

// integer reads an integer and checks it lies in [lo, hi].
func (d *decoder) integer(n *yaml.Node, key string, lo, hi int64) (int64, bool) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" {
		d.errorf(n, "%q must be an integer, got %s", key, yamlstrict.Describe(n))
		return 0, false
	}
	v, err := strconv.ParseInt(n.Value, 0, 64)
	if err != nil || v < lo || v > hi {
		d.errorf(n, "%q must be between %d and %d, got %s", key, lo, hi, n.Value)
		return 0, false
	}
	return v, true
}

// fraction reads a number in (0, 1].
func (d *decoder) fraction(n *yaml.Node, key string) (float64, bool) {
	tag := n.ShortTag()
	if n.Kind != yaml.ScalarNode || tag != "!!float" && tag != "!!int" {
		d.errorf(n, "%q must be a number, got %s", key, yamlstrict.Describe(n))
		return 0, false
	}
	v, err := strconv.ParseFloat(n.Value, 64)
	if err != nil || math.IsNaN(v) || v <= 0 || v > 1 {
		d.errorf(n, "%q must be a number greater than 0 and at most 1, got %s", key, n.Value)
		return 0, false
	}
	return v, true
}

// duration reads a Go duration ("300ms", "2s", "10m"). A bare number other
// than 0 is refused because "300" could mean seconds or milliseconds.
func (d *decoder) duration(n *yaml.Node, key string, allowZero bool) (time.Duration, bool) {
	var v time.Duration
	switch {
	case n.Kind == yaml.ScalarNode && n.ShortTag() == "!!int" && n.Value == "0":
	case n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str":
		var err error
		if v, err = time.ParseDuration(strings.TrimSpace(n.Value)); err != nil {
			d.errorf(n, "%q is not a valid duration: %q (use a number with a unit, such as \"300ms\", \"2s\" or \"10m\")", key, n.Value)
			return 0, false
		}
	default:
		d.errorf(n, "%q must be a duration with a unit, such as \"300ms\", got %s", key, yamlstrict.Describe(n))
		return 0, false
	}
	switch {
	case v < 0:
		d.errorf(n, "%q must not be negative, got %q", key, n.Value)
		return 0, false
	case v == 0 && !allowZero:
		d.errorf(n, "%q must be longer than 0, got %q", key, n.Value)
		return 0, false
	}
	return v, true
}

// idleAfter reads idle_after: a duration, 0, or "off" or "never" for 0
// (the docs write its default as "off", and people copy that).
func (d *decoder) idleAfter(n *yaml.Node, key string) (time.Duration, bool) {
	if n.Kind == yaml.ScalarNode {
		switch strings.ToLower(strings.TrimSpace(n.Value)) {
		case "off", "never":
			return 0, true
		}
	}
	return d.duration(n, key, true)
}

// days reads a duration that may also be a whole number of days ("90d"),
// for spans too long to write in hours; 0 is allowed.
func (d *decoder) days(n *yaml.Node, key string) (time.Duration, bool) {
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!int" && n.Value != "0" {
		d.errorf(n, "%q needs a unit: \"%sd\" for days, or a duration such as \"720h\"", key, n.Value)
		return 0, false
	}
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str" {
		v := strings.TrimSpace(n.Value)
		if num, ok := strings.CutSuffix(v, "d"); ok {
			days, err := strconv.Atoi(num)
			if err != nil || days < 0 || days > 100*365 {
				d.errorf(n, "%q is not a valid number of days: %q (use a whole number with d, such as \"90d\", or a duration such as \"720h\")", key, n.Value)
				return 0, false
			}
			return time.Duration(days) * 24 * time.Hour, true
		}
	}
	return d.duration(n, key, true)
}

// strList reads a list of scalars. The result has one entry per item, ""
// for the bad ones, so callers can still check the good ones by index.
func (d *decoder) strList(n *yaml.Node, key string) ([]string, bool) {
	if n.Kind != yaml.SequenceNode {
		d.errorf(n, "%q must be a list of strings, got %s", key, yamlstrict.Describe(n))
		return nil, false
	}
	out := make([]string, len(n.Content))
	ok := true
	for i, item := range n.Content {
		item = yamlstrict.Resolve(item)
		if item.Kind != yaml.ScalarNode || yamlstrict.IsNull(item) {
			d.errorf(item, "%q items must be strings, got %s", key, yamlstrict.Describe(item))
			ok = false
			continue
		}
		out[i] = item.Value
	}
	return out, ok
}

// enum reads a string that must be one of choices.
func (d *decoder) enum(n *yaml.Node, key string, choices ...string) (string, bool) {
	s, ok := d.str(n, key)
	if !ok {
		return "", false
	}
	if !contains(choices, s) {
		d.errorf(n, "%q must be one of %s; got %q", key, strings.Join(choices, ", "), s)
		return "", false
	}
	return s, true
}

// pattern compiles a regular expression; "" means no pattern (nil).
func (d *decoder) pattern(n *yaml.Node, key string) (*regexp.Regexp, bool) {
	s, ok := d.str(n, key)
	if !ok {
		return nil, false
	}
	if s == "" {
		return nil, true
	}
	re, err := regexp.Compile(s)
	if err != nil {
		d.errorf(n, "%q is not a valid regular expression: %s", key, strings.TrimPrefix(err.Error(), "error parsing regexp: "))
		return nil, false
	}
	return re, true
}
