package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// The files are decoded by walking yaml.Node trees rather than with
// yaml.Unmarshal into structs: Unmarshal stops at the first type error and
// reports no column, while a person fixing a config wants every problem with
// its line and column at once. The walker also tells "key absent" from "key
// set to an empty string", which the preset overrides need.

// decoder walks one file and records problems in errs.
type decoder struct {
	file string // relative to the workspace, for messages
	errs *Errors
}

func (d *decoder) errorf(n *yaml.Node, format string, args ...any) {
	d.errs.add(d.file, n.Line, n.Column, format, args...)
}

// parse reads a single YAML document and returns its root node, or nil after
// recording why there is none.
func (d *decoder) parse(data []byte) *yaml.Node {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	err := dec.Decode(&doc)
	if errors.Is(err, io.EOF) {
		d.errs.add(d.file, 0, 0, "file is empty")
		return nil
	}
	if err != nil {
		line, msg := syntaxError(err)
		d.errs.add(d.file, line, 0, "%s", msg)
		return nil
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		if err != nil {
			line, msg := syntaxError(err)
			d.errs.add(d.file, line, 0, "%s", msg)
		} else {
			d.errorf(&extra, "only one YAML document is allowed, found a second one")
		}
		return nil
	}
	root := resolve(doc.Content[0])
	if isNull(root) {
		d.errs.add(d.file, 0, 0, "file is empty")
		return nil
	}
	return root
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// syntaxError takes the line out of a yaml.v3 parse error; the parser gives
// no column.
func syntaxError(err error) (line int, msg string) {
	s := err.Error()
	if m := yamlLine.FindStringSubmatch(s); m != nil {
		line, _ = strconv.Atoi(m[1])
		return line, "invalid YAML: " + m[2]
	}
	return 0, "invalid YAML: " + strings.TrimPrefix(s, "yaml: ")
}

// resolve follows aliases, so that anchors work everywhere a value does.
func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 100; i++ {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n == nil || n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// DescribeNode names what a YAML node holds, for "must be X, got Y"
// messages: "a list", "string \"yes\"", "number 3". The queue's file formats
// use it too, so every strict decoder words its errors alike.
func DescribeNode(n *yaml.Node) string {
	n = resolve(n)
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		v := n.Value
		if utf8.RuneCountInString(v) > 40 {
			v = string([]rune(v)[:37]) + "..."
		}
		switch tag := n.ShortTag(); tag {
		case "!!null":
			return "null"
		case "!!bool":
			return "boolean " + v
		case "!!int", "!!float":
			return "number " + v
		case "!!str":
			return fmt.Sprintf("string %q", v)
		default:
			return fmt.Sprintf("%s %q", tag, v)
		}
	}
	return "an unsupported value"
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
	n = resolve(n)
	if n.Kind != yaml.MappingNode {
		d.errorf(n, "%q must be a mapping, got %s", key, DescribeNode(n))
		return nil
	}
	m := &mapping{d: d, node: n, where: where, keys: map[string]*yaml.Node{}, vals: map[string]*yaml.Node{}}
	m.collect(n, 0)
	return m
}

// collect indexes the keys of n, then the keys merged in with "<<", which
// never override keys written out.
func (m *mapping) collect(n *yaml.Node, depth int) {
	var merges []*yaml.Node
	own := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.ShortTag() == "!!merge" {
			merges = append(merges, v)
			continue
		}
		if k.Kind != yaml.ScalarNode {
			m.d.errorf(k, "keys must be plain strings, got %s", DescribeNode(k))
			continue
		}
		if first, dup := own[k.Value]; dup && depth == 0 {
			m.d.errorf(k, "duplicate key %q (first at line %d)", k.Value, first.Line)
			continue
		}
		own[k.Value] = k
		if _, seen := m.vals[k.Value]; seen {
			continue
		}
		m.order = append(m.order, k.Value)
		m.keys[k.Value] = k
		m.vals[k.Value] = resolve(v)
	}
	if depth > 10 {
		return
	}
	for _, v := range merges {
		v = resolve(v)
		switch v.Kind {
		case yaml.MappingNode:
			m.collect(v, depth+1)
		case yaml.SequenceNode:
			for _, item := range v.Content {
				if item = resolve(item); item.Kind == yaml.MappingNode {
					m.collect(item, depth+1)
				} else {
					m.d.errorf(item, "\"<<\" must merge mappings, got %s", DescribeNode(item))
				}
			}
		default:
			m.d.errorf(v, "\"<<\" must merge a mapping, got %s", DescribeNode(v))
		}
	}
}

// take returns the value of key, or nil when the key is absent or null: a
// null value ("key:" with nothing after it) means "not set" everywhere.
func (m *mapping) take(key string) *yaml.Node {
	m.known = append(m.known, key)
	if v := m.vals[key]; !isNull(v) {
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
		if s := closest(key, m.known); s != "" {
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

// closest suggests a known key within two edits of a misspelt one.
func closest(key string, known []string) string { return SuggestKey(key, known) }

// SuggestKey returns the known key within two edits of a misspelt one, for
// "did you mean" in error messages; "" when none is that close. The queue's
// file formats use it too, so every strict decoder suggests alike.
func SuggestKey(key string, known []string) string {
	if len(key) > 64 {
		return "" // not a typo of a short key; skip the quadratic work
	}
	best, bestDist := "", 3
	cands := append([]string(nil), known...)
	sort.Strings(cands)
	for _, k := range cands {
		if d := editDistance(strings.ToLower(key), k); d < bestDist {
			best, bestDist = k, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// The value readers below return ok=false after recording an error, so
// callers keep the default and go on to find the next problem.

// str reads any scalar as its text: `name: 42` or `env: {DEBUG: 1}` mean
// the strings a person would expect.
func (d *decoder) str(n *yaml.Node, key string) (string, bool) {
	if n.Kind != yaml.ScalarNode {
		d.errorf(n, "%q must be a string, got %s", key, DescribeNode(n))
		return "", false
	}
	return n.Value, true
}

func (d *decoder) boolean(n *yaml.Node, key string) (bool, bool) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" {
		d.errorf(n, "%q must be a boolean (true or false), got %s", key, DescribeNode(n))
		return false, false
	}
	return strings.EqualFold(n.Value, "true"), true
}

// integer reads an integer and checks it lies in [lo, hi].
func (d *decoder) integer(n *yaml.Node, key string, lo, hi int64) (int64, bool) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" {
		d.errorf(n, "%q must be an integer, got %s", key, DescribeNode(n))
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
		d.errorf(n, "%q must be a number, got %s", key, DescribeNode(n))
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
		d.errorf(n, "%q must be a duration with a unit, such as \"300ms\", got %s", key, DescribeNode(n))
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

// strList reads a list of scalars. The result has one entry per item, ""
// for the bad ones, so callers can still check the good ones by index.
func (d *decoder) strList(n *yaml.Node, key string) ([]string, bool) {
	if n.Kind != yaml.SequenceNode {
		d.errorf(n, "%q must be a list of strings, got %s", key, DescribeNode(n))
		return nil, false
	}
	out := make([]string, len(n.Content))
	ok := true
	for i, item := range n.Content {
		item = resolve(item)
		if item.Kind != yaml.ScalarNode || isNull(item) {
			d.errorf(item, "%q items must be strings, got %s", key, DescribeNode(item))
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
