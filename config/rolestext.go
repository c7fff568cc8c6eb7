package config

// The text surgery behind RoleEdit: roles.yaml is changed line by line
// where the edited tree allows it, so a person's comments, order and
// spacing survive an edit made from the console or the API.

import (
	"bytes"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/shogun-dev/shogun/internal/yamlstrict"
)

// rolesText is roles.yaml being edited: its lines and its node tree.
type rolesText struct {
	lines []string   // each with its line end; the last may have none
	eol   string     // "\r\n" when the file uses CRLF
	doc   *yaml.Node // the document
	list  *yaml.Node // the roles sequence
	step  int        // indentation of a nested mapping's keys
	// out is the edited text, once an operation has spliced it; nil
	// means the operation changed only the tree.
	out []string
}

// editText parses data, runs op on it, and returns the new text: the
// splice op made if it means what the edited tree means, else the tree
// written out whole.
func editText(data []byte, op func(*rolesText) error) ([]byte, error) {
	t, err := parseRolesText(data)
	if err != nil {
		return nil, err
	}
	if err := op(t); err != nil {
		return nil, err
	}
	if t.out != nil {
		spliced := []byte(strings.Join(t.out, ""))
		if sameMeaning(spliced, t.doc) {
			return spliced, nil
		}
	} else if sameMeaning(data, t.doc) {
		return data, nil // nothing to change
	}
	out, err := t.encodeWhole()
	if err != nil {
		return nil, err
	}
	// An edit can break what YAML itself needs: a role deleted with the
	// anchor another role's alias names.
	if _, perr := yamlstrict.Parse(out, yamlstrict.DefaultMaxNodes); perr != nil {
		errs := &Errors{}
		errs.add(RolesFile, perr.Line, perr.Column, "the edit would leave the file unreadable: %s", perr.Message)
		return nil, errs
	}
	return out, nil
}

func parseRolesText(data []byte) (*rolesText, error) {
	if _, perr := yamlstrict.Parse(data, yamlstrict.DefaultMaxNodes); perr != nil {
		errs := &Errors{}
		errs.add(RolesFile, perr.Line, perr.Column, "%s", perr.Message)
		return nil, errs
	}
	t := &rolesText{lines: splitLines(string(data)), eol: "\n", step: 2, doc: &yaml.Node{}}
	if bytes.Contains(data, []byte("\r\n")) {
		t.eol = "\r\n"
	}
	if err := yaml.Unmarshal(data, t.doc); err != nil || len(t.doc.Content) == 0 {
		return nil, editError("cannot read the file to edit it: %v", err)
	}
	root := t.doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, locatedError(root, "expected a mapping with a \"roles\" list at the top, got %s", yamlstrict.Describe(root))
	}
	if _, v := pair(root, "roles"); v != nil {
		t.list = v
	}
	if t.list == nil || t.list.Kind != yaml.SequenceNode {
		return nil, locatedError(root, "expected a \"roles\" list at the top")
	}
	t.step = indentStep(t.list)
	return t, nil
}

// locatedError is a problem at a node of the file.
func locatedError(n *yaml.Node, format string, args ...any) error {
	errs := &Errors{}
	errs.add(RolesFile, n.Line, n.Column, format, args...)
	return errs
}

// splitLines cuts s into lines that keep their ends.
func splitLines(s string) []string {
	var out []string
	for s != "" {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

// indentStep finds how far the file indents a nested mapping's keys from
// their parent key, so new keys look like the others; 2 when it has none.
func indentStep(list *yaml.Node) int {
	for _, item := range list.Content {
		if item.Kind != yaml.MappingNode || item.Style&yaml.FlowStyle != 0 {
			continue
		}
		for i := 0; i+1 < len(item.Content); i += 2 {
			k, v := item.Content[i], item.Content[i+1]
			if v.Kind == yaml.MappingNode && v.Style&yaml.FlowStyle == 0 && len(v.Content) > 0 && v.Line > k.Line {
				if step := v.Column - k.Column; step >= 2 && step <= 8 {
					return step
				}
			}
		}
	}
	return 2
}

// pair returns the key and value nodes of key in mapping m, or nils.
func pair(m *yaml.Node, key string) (k, v *yaml.Node) {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i], m.Content[i+1]
		}
	}
	return nil, nil
}

// sameMeaning reports whether text decodes to what the tree decodes to.
func sameMeaning(text []byte, doc *yaml.Node) bool {
	var want, got any
	if err := doc.Decode(&want); err != nil {
		return false
	}
	if err := yaml.Unmarshal(text, &got); err != nil {
		return false
	}
	return reflect.DeepEqual(want, got)
}

// encodeWhole writes the edited tree out as the whole file.
func (t *rolesText) encodeWhole() ([]byte, error) {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(t.step)
	if err := enc.Encode(t.doc); err != nil {
		return nil, fmt.Errorf("edit roles: write the file: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("edit roles: write the file: %w", err)
	}
	out := b.String()
	if t.eol != "\n" {
		out = strings.ReplaceAll(out, "\n", t.eol)
	}
	return []byte(out), nil
}

// item finds the role with the given id: its index in the list.
func (t *rolesText) item(id string) (int, error) {
	for i, it := range t.list.Content {
		if _, v := pair(it, "id"); v != nil && v.Kind == yaml.ScalarNode && v.Value == id {
			return i, nil
		}
	}
	return -1, fmt.Errorf("edit roles: %q: %w", id, ErrRoleNotFound)
}

// splice replaces lines [from, to) of the current text with repl.
func (t *rolesText) splice(from, to int, repl []string) {
	lines := slices.Clone(t.lines)
	if from > 0 && from == len(lines) && !strings.HasSuffix(lines[from-1], "\n") {
		lines[from-1] += t.eol // the file ended without a line end
	}
	t.out = slices.Concat(lines[:from], repl, lines[to:])
}

// render writes n (a mapping of one pair, or a list of one item) with
// every line indented by indent spaces.
func (t *rolesText) render(n *yaml.Node, indent int) ([]string, error) {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(t.step)
	if err := enc.Encode(n); err != nil {
		return nil, fmt.Errorf("edit roles: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("edit roles: %w", err)
	}
	pad := strings.Repeat(" ", indent)
	out := splitLines(b.String())
	for i, l := range out {
		out[i] = pad + strings.TrimSuffix(l, "\n") + t.eol
	}
	return out, nil
}

// trimTail moves end back over blank lines and over comment lines whose
// "#" is at column col (0-based) or further left: those belong to what
// follows (a head comment), while comments further right and every line of
// a block scalar stay with what precedes.
func (t *rolesText) trimTail(start, end, col int) int {
	for end > start+1 {
		l := strings.TrimRight(t.lines[end-1], "\r\n")
		body := strings.TrimLeft(l, " \t")
		if body != "" && !(strings.HasPrefix(body, "#") && len(l)-len(body) <= col) {
			break
		}
		end--
	}
	return end
}

func blank(line string) bool { return strings.TrimSpace(line) == "" }

// dash finds the "-" that starts list item n: its line and column (0-based).
func (t *rolesText) dash(n *yaml.Node) (line, col int, ok bool) {
	line, col = n.Line-1, n.Column-2
	for line >= 0 && line < len(t.lines) {
		l := t.lines[line]
		if col >= len(l) {
			col = len(l) - 1
		}
		for ; col >= 0; col-- {
			switch l[col] {
			case ' ', '\t', '\r', '\n':
				continue
			case '-':
				return line, col, true
			}
			return 0, 0, false
		}
		line--
		if line >= 0 {
			col = len(t.lines[line]) - 1
		}
	}
	return 0, 0, false
}

// itemSpan is the lines [start, end) of list item i, from its "-" to its
// last line, and the column of its "-".
func (t *rolesText) itemSpan(i int) (start, end, col int, ok bool) {
	start, col, ok = t.dash(t.list.Content[i])
	if !ok {
		return 0, 0, 0, false
	}
	end = len(t.lines)
	if i+1 < len(t.list.Content) {
		next, _, ok := t.dash(t.list.Content[i+1])
		if !ok {
			return 0, 0, 0, false
		}
		end = next
	} else if root := t.doc.Content[0]; root.Kind == yaml.MappingNode {
		// The list ends where the next top-level key starts.
		for j := 0; j+1 < len(root.Content); j += 2 {
			if root.Content[j+1] == t.list && j+2 < len(root.Content) {
				end = root.Content[j+2].Line - 1
			}
		}
	}
	return start, t.trimTail(start, end, col), col, true
}

// headLines counts the comment lines right above line that belong to the
// node starting there (its head comment), to remove with it.
func (t *rolesText) headLines(n *yaml.Node, line int) int {
	if n.HeadComment == "" {
		return 0
	}
	k := strings.Count(n.HeadComment, "\n") + 1
	for i := 1; i <= k; i++ {
		if line-i < 0 || !strings.HasPrefix(strings.TrimLeft(t.lines[line-i], " \t"), "#") {
			return 0 // not where expected: keep whatever is there
		}
	}
	return k
}

// block is a block mapping of the text: the node, its lines [start, end)
// and the column of its keys (0-based).
type block struct {
	m          *yaml.Node
	start, end int
	col        int
	// dashLine is the line whose "-" starts the mapping (a role), or -1.
	dashLine int
}

// pairSpan is the lines [start, end) of pair j of b.
func (t *rolesText) pairSpan(b block, j int) (start, end int) {
	start = b.m.Content[2*j].Line - 1
	end = b.end
	if 2*j+2 < len(b.m.Content) {
		end = b.m.Content[2*j+2].Line - 1
	}
	return start, t.trimTail(start, end, b.col)
}

// roleBlock is role i as a block, or ok false when it is written in flow
// style or its lines cannot be found.
func (t *rolesText) roleBlock(i int) (block, bool) {
	it := t.list.Content[i]
	start, end, _, ok := t.itemSpan(i)
	if !ok || it.Kind != yaml.MappingNode || it.Style&yaml.FlowStyle != 0 || len(it.Content) == 0 {
		return block{}, false
	}
	return block{m: it, start: start, end: end, col: it.Column - 1, dashLine: start}, true
}

// pairLines renders key: value at col, keeping the line comments of the
// pair it replaces (old key and value, nil for a new pair).
func (t *rolesText) pairLines(key string, value, oldKey, oldValue *yaml.Node, col int) ([]string, error) {
	k := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}
	if oldKey != nil {
		k.LineComment = oldKey.LineComment
		k.Style = oldKey.Style
	}
	if oldValue != nil && value.LineComment == "" && value.Kind == yaml.ScalarNode {
		value.LineComment = oldValue.LineComment
	}
	return t.render(&yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: []*yaml.Node{k, value}}, col)
}

// create appends a role.
func (t *rolesText) create(id string, fields []field) error {
	if _, err := t.item(id); err == nil {
		return fmt.Errorf("edit roles: %q: %w", id, ErrRoleExists)
	}
	it := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	it.Content = append(it.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "id"},
		&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: id})
	for _, f := range fields {
		setIn(it, f.path, f.value)
	}
	n := len(t.list.Content)
	if n == 0 || t.list.Style&yaml.FlowStyle != 0 {
		t.list.Content = append(t.list.Content, it)
		return nil // written whole
	}
	_, end, col, ok := t.itemSpan(n - 1)
	t.list.Content = append(t.list.Content, it)
	if !ok {
		return nil
	}
	lines, err := t.render(&yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Content: []*yaml.Node{it}}, col)
	if err != nil {
		return err
	}
	t.splice(end, end, lines)
	return nil
}

// remove deletes a role, with its head comment.
func (t *rolesText) remove(id string) error {
	i, err := t.item(id)
	if err != nil {
		return err
	}
	start, end, _, ok := t.itemSpan(i)
	if ok {
		start -= t.headLines(t.list.Content[i], start)
		// The blank lines that set the role apart go with it, unless
		// they are all that sets its neighbours apart.
		if i == 0 || start > 0 && blank(t.lines[start-1]) {
			for end < len(t.lines) && blank(t.lines[end]) {
				end++
			}
		}
	}
	t.list.Content = slices.Delete(t.list.Content, i, i+1)
	if ok && t.list.Style&yaml.FlowStyle == 0 {
		t.splice(start, end, nil)
	}
	return nil
}

// set gives key path of role id the value v.
func (t *rolesText) set(id string, path []string, v *yaml.Node) error {
	i, err := t.item(id)
	if err != nil {
		return err
	}
	b, isBlock := t.roleBlock(i)
	if !isBlock {
		setIn(t.list.Content[i], path, v)
		return t.rewriteItem(i)
	}
	for {
		k, old := pair(b.m, path[0])
		switch {
		case k == nil:
			// A new key: after the mapping's last pair.
			if b.m.Kind != yaml.MappingNode {
				return nil
			}
			val := v
			if len(path) > 1 {
				val = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
				setIn(val, path[1:], v)
			}
			at := b.end
			if n := len(b.m.Content); n > 0 {
				_, at = t.pairSpan(b, n/2-1)
			}
			lines, err := t.pairLines(path[0], val, nil, nil, b.col)
			if err != nil {
				return err
			}
			b.m.Content = append(b.m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: path[0]}, val)
			t.splice(at, at, lines)
			return nil
		case len(path) > 1 && old.Kind == yaml.MappingNode && old.Style&yaml.FlowStyle == 0 && len(old.Content) > 0 && old.Line > k.Line:
			// Into a nested block mapping.
			_, end := t.pairSpan(b, pairIndex(b.m, k))
			b = block{m: old, start: old.Line - 1, end: end, col: old.Column - 1, dashLine: -1}
			path = path[1:]
		default:
			j := pairIndex(b.m, k)
			start, end := t.pairSpan(b, j)
			val := v
			if len(path) > 1 {
				val = cloneNode(old)
				if val.Kind != yaml.MappingNode {
					val = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Style: yaml.FlowStyle}
				}
				setIn(val, path[1:], v)
			}
			lines, err := t.pairLines(path[0], val, k, old, b.col)
			if err != nil {
				return err
			}
			b.m.Content[2*j+1] = val
			if start == b.dashLine {
				// The role's first key shares its line with the "-".
				lines[0] = t.lines[start][:b.col] + lines[0][b.col:]
			}
			t.splice(start, end, lines)
			return nil
		}
	}
}

// unset removes key path from role id; a key that is not set is no error.
func (t *rolesText) unset(id string, path []string) error {
	i, err := t.item(id)
	if err != nil {
		return err
	}
	b, isBlock := t.roleBlock(i)
	if !isBlock {
		if unsetIn(t.list.Content[i], path) {
			return t.rewriteItem(i)
		}
		return nil
	}
	for {
		k, old := pair(b.m, path[0])
		switch {
		case k == nil:
			return nil
		case len(path) > 1 && old.Kind == yaml.MappingNode && old.Style&yaml.FlowStyle == 0 && len(old.Content) > 0 && old.Line > k.Line:
			_, end := t.pairSpan(b, pairIndex(b.m, k))
			b = block{m: old, start: old.Line - 1, end: end, col: old.Column - 1, dashLine: -1}
			path = path[1:]
		case len(path) > 1:
			// Inside a flow mapping: write the pair again without the key.
			j := pairIndex(b.m, k)
			start, end := t.pairSpan(b, j)
			val := cloneNode(old)
			if !unsetIn(val, path[1:]) {
				return nil
			}
			lines, err := t.pairLines(path[0], val, k, old, b.col)
			if err != nil {
				return err
			}
			b.m.Content[2*j+1] = val
			if start == b.dashLine {
				lines[0] = t.lines[start][:b.col] + lines[0][b.col:]
			}
			t.splice(start, end, lines)
			return nil
		default:
			j := pairIndex(b.m, k)
			start, end := t.pairSpan(b, j)
			b.m.Content = slices.Delete(b.m.Content, 2*j, 2*j+2)
			if start == b.dashLine {
				// The first key of a role: the next one must take its
				// place after the "-", so the role is written again.
				return t.rewriteItem(i)
			}
			t.splice(start-t.headLines(k, start), end, nil)
			return nil
		}
	}
}

// rewriteItem writes role i again from its (edited) node, in place of its
// lines. Its own foot comment is dropped: it lies below the lines
// replaced, where it stays.
func (t *rolesText) rewriteItem(i int) error {
	start, end, col, ok := t.itemSpan(i)
	if !ok || t.list.Style&yaml.FlowStyle != 0 {
		return nil // written whole
	}
	it := cloneNode(t.list.Content[i])
	it.HeadComment, it.FootComment = "", ""
	lines, err := t.render(&yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Content: []*yaml.Node{it}}, col)
	if err != nil {
		return err
	}
	t.splice(start, end, lines)
	return nil
}

func pairIndex(m, key *yaml.Node) int {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i] == key {
			return i / 2
		}
	}
	return -1
}

// setIn sets path in mapping m to v, creating mappings on the way.
func setIn(m *yaml.Node, path []string, v *yaml.Node) {
	for {
		k, old := pair(m, path[0])
		if len(path) == 1 {
			if k != nil {
				m.Content[2*pairIndex(m, k)+1] = v
			} else {
				m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: path[0]}, v)
			}
			return
		}
		if k == nil || old.Kind != yaml.MappingNode {
			next := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
			if k != nil {
				m.Content[2*pairIndex(m, k)+1] = next
			} else {
				m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: path[0]}, next)
			}
			old = next
		}
		m, path = old, path[1:]
	}
}

// unsetIn removes path from mapping m and reports whether it was there.
func unsetIn(m *yaml.Node, path []string) bool {
	for {
		k, v := pair(m, path[0])
		if k == nil {
			return false
		}
		if len(path) == 1 {
			j := pairIndex(m, k)
			m.Content = slices.Delete(m.Content, 2*j, 2*j+2)
			return true
		}
		m, path = v, path[1:]
	}
}

// cloneNode copies a node tree, so an edit of the copy leaves the
// original (whose positions the splice uses) as it was.
func cloneNode(n *yaml.Node) *yaml.Node {
	c := *n
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, x := range n.Content {
		c.Content[i] = cloneNode(x)
	}
	return &c
}
