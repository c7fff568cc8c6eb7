package queue

import (
	"fmt"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/shogun-dev/shogun/internal/yamlstrict"
)

// Files are decoded by walking the yaml.Node tree rather than with
// yaml.Decoder.KnownFields(true) (internal/yamlstrict says why), which
// gives each problem its line and column. The struct tags stay the
// reference for key names; the tests check that the two agree.

// parseDocument checks the size limit, then parses data as one YAML
// document within the node limit, returning a root that is neither an alias
// nor null.
func parseDocument(name string, data []byte, limits Limits) (*yaml.Node, error) {
	limits = limits.withDefaults()
	if err := limits.CheckSize(name, int64(len(data))); err != nil {
		return nil, err
	}
	root, perr := yamlstrict.Parse(data, limits.MaxNodes)
	if perr != nil {
		return nil, located(name, "", perr)
	}
	return root, nil
}

// located puts a problem yamlstrict found into a FormatError.
func located(file, prefix string, p *yamlstrict.Error) *FormatError {
	return &FormatError{File: file, Line: p.Line, Column: p.Column, Message: prefix + p.Message}
}

// formatDecoder decodes one command or report from a checked tree and
// remembers where each field was, so that problems found afterwards on the
// decoded struct point at the right line.
type formatDecoder struct {
	file   string
	prefix string                // "commands[1]: " for list items
	maps   map[string]*yaml.Node // mapping path ("" for the top) → node
	fields map[string]yamlField  // field path ("title", "skill_candidate.name") → where
}

// yamlField is one key of a mapping, with its value's aliases resolved.
type yamlField struct {
	name     string
	path     string
	key, val *yaml.Node
}

func newFormatDecoder(file, prefix string) *formatDecoder {
	return &formatDecoder{file: file, prefix: prefix, maps: map[string]*yaml.Node{}, fields: map[string]yamlField{}}
}

func (d *formatDecoder) errAt(n *yaml.Node, format string, args ...any) *FormatError {
	e := &FormatError{File: d.file, Message: d.prefix + fmt.Sprintf(format, args...)}
	if n != nil {
		e.Line, e.Column = n.Line, n.Column
	}
	return e
}

// fieldErr locates a problem found on a decoded struct.
func (d *formatDecoder) fieldErr(p *fieldError) *FormatError {
	f, present := d.fields[strings.SplitN(p.field, "[", 2)[0]]
	switch {
	case p.missing && present:
		return d.errAt(f.key, "%q must not be empty", p.field)
	case p.missing:
		parent := ""
		if i := strings.LastIndexByte(p.field, '.'); i >= 0 {
			parent = p.field[:i]
		}
		return d.errAt(d.maps[parent], "%s", p.msg)
	case present:
		n := f.val
		if i := strings.IndexByte(p.field, '['); i >= 0 && n.Kind == yaml.SequenceNode {
			if k, err := strconv.Atoi(strings.TrimSuffix(p.field[i+1:], "]")); err == nil && k < len(n.Content) {
				n = yamlstrict.Resolve(n.Content[k])
			}
		}
		return d.errAt(n, "%s", p.msg)
	}
	return d.errAt(nil, "%s", p.msg)
}

// mapping lists the keys of n as yamlstrict.Fields does, stopping at the
// first problem, and remembers where each is for fieldErr.
func (d *formatDecoder) mapping(n *yaml.Node, path string) ([]yamlField, error) {
	d.maps[path] = n
	fields, problems := yamlstrict.Fields(n)
	if len(problems) > 0 {
		return nil, located(d.file, d.prefix, problems[0])
	}
	out := make([]yamlField, 0, len(fields))
	for _, f := range fields {
		fp := f.Name
		if path != "" {
			fp = path + "." + f.Name
		}
		yf := yamlField{name: f.Name, path: fp, key: f.Key, val: f.Value}
		d.fields[fp] = yf
		out = append(out, yf)
	}
	return out, nil
}

// text reads a free-text field. Any scalar reads as the text written
// (`title: 42` is the title "42", as a person means it); null reads as "",
// which the checks then call missing.
func (d *formatDecoder) text(f yamlField) (string, error) {
	n := f.val
	if n.Kind == yaml.ScalarNode {
		switch n.ShortTag() {
		case "!!null":
			return "", nil
		case "!!str", "!!int", "!!float", "!!bool", "!!timestamp":
			return n.Value, nil
		}
	}
	return "", d.errAt(n, "%q must be a string, got %s", f.path, yamlstrict.Describe(n))
}

// word reads an enumerated field, which must be one of choices written as a
// string.
func (d *formatDecoder) word(f yamlField, choices []string) (string, error) {
	n := f.val
	if yamlstrict.IsNull(n) {
		return "", nil
	}
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str" {
		for _, c := range choices {
			if n.Value == c {
				return c, nil
			}
		}
	}
	return "", d.errAt(n, "%q must be one of %s; got %s", f.path, strings.Join(choices, ", "), yamlstrict.Describe(n))
}

func (d *formatDecoder) textList(f yamlField) ([]string, error) {
	n := f.val
	if yamlstrict.IsNull(n) {
		return nil, nil
	}
	if n.Kind != yaml.SequenceNode {
		return nil, d.errAt(n, "%q must be a list of strings, got %s", f.path, yamlstrict.Describe(n))
	}
	out := make([]string, 0, len(n.Content))
	for i, item := range n.Content {
		item = yamlstrict.Resolve(item)
		s, err := d.text(yamlField{path: fmt.Sprintf("%s[%d]", f.path, i), val: item})
		if err == nil && yamlstrict.IsNull(item) {
			err = d.errAt(item, "%q must be a string, got null", fmt.Sprintf("%s[%d]", f.path, i))
		}
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

func (d *formatDecoder) unknownKey(f yamlField, where string, known []string) error {
	msg := fmt.Sprintf("unknown key %q", f.name)
	if where != "" {
		msg += fmt.Sprintf(" in %q", where)
	}
	if s := yamlstrict.SuggestKey(f.name, known); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	return d.errAt(f.key, "%s", msg)
}
