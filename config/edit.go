package config

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/shogun-dev/shogun/atomicfile"
	"github.com/shogun-dev/shogun/internal/yamlstrict"
)

// Editing roles.yaml from a program (the Roles page, the API) must not
// undo what a person wrote there: the comments, the order, the quoting and
// the blank lines of every role the edit does not touch stay byte for
// byte. The file is therefore changed as text, a key or a role at a time,
// at the places the yaml.v3 node tree gives; only the keys that change are
// written by the YAML encoder. Each such splice is checked by parsing the
// result again: should it not mean exactly what the edited node tree means
// (a layout the splicing does not know), the whole file is written from
// the edited tree instead, which keeps the comments and the order but not
// every blank line. Whatever the way, the result is read by the same strict
// decoder as at start, and nothing is saved unless it loads.

// Errors of a RoleEdit, for errors.Is. A result that does not load is
// *Errors, every problem located in the file as it would have been saved.
var (
	// ErrRoleNotFound: no role with the edit's id is in roles.yaml.
	ErrRoleNotFound = errors.New("no such role in " + RolesFile)
	// ErrRoleDisabled: the role is in roles.yaml with enabled: false, so
	// it does not run until it is enabled.
	ErrRoleDisabled = errors.New("the role is disabled in " + RolesFile)
	// ErrRoleExists: a role to create has the id of one that exists.
	ErrRoleExists = errors.New("a role with this id already exists in " + RolesFile)
	// ErrChanged: roles.yaml changed between the reading the edit was made
	// on and the saving; nothing was saved.
	ErrChanged = errors.New(RolesFile + " changed meanwhile; nothing was saved (load it again and redo the change)")
)

// EditOp is the kind of a RoleEdit.
type EditOp string

// The kinds of edits.
const (
	EditCreate  EditOp = "create"  // append a new role
	EditUpdate  EditOp = "update"  // set or remove keys of a role
	EditDelete  EditOp = "delete"  // remove a role
	EditEnable  EditOp = "enable"  // set enabled: true
	EditDisable EditOp = "disable" // set enabled: false
)

// RoleEdit is one change to config/roles.yaml.
type RoleEdit struct {
	Op EditOp
	// ID is the role to change, or to create.
	ID string
	// Fields are the keys to set (create, update) by their roles.yaml
	// names; a dotted name ("command.exec", "terminal.cols") sets one key
	// inside a mapping and leaves its other keys alone. Values are what
	// encoding/json decodes: strings, numbers (json.Number too), booleans,
	// lists and objects. In an update, a nil value removes the key, so the
	// role takes its preset's default again.
	Fields map[string]any
	// Version, when set, is the FileVersion of roles.yaml the edit was
	// made on; if the file is not that any more, nothing is saved
	// (ErrChanged).
	Version string
}

// Edited is the outcome of a saved RoleEdit.
type Edited struct {
	// Config is the configuration as the saved files make it.
	Config *Config
	// Version is the FileVersion of the saved roles.yaml.
	Version string
}

// FileVersion identifies a file's content, for RoleEdit.Version.
func FileVersion(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:12])
}

// CreateRole appends a role with the given id and keys to roles.yaml.
func CreateRole(workspace string, lookup func(string) (string, bool), id string, fields map[string]any) (*Edited, error) {
	return RoleEdit{Op: EditCreate, ID: id, Fields: fields}.Apply(workspace, lookup)
}

// UpdateRole sets the keys of a role that have values and removes those
// that are nil.
func UpdateRole(workspace string, lookup func(string) (string, bool), id string, fields map[string]any) (*Edited, error) {
	return RoleEdit{Op: EditUpdate, ID: id, Fields: fields}.Apply(workspace, lookup)
}

// DeleteRole removes a role from roles.yaml.
func DeleteRole(workspace string, lookup func(string) (string, bool), id string) (*Edited, error) {
	return RoleEdit{Op: EditDelete, ID: id}.Apply(workspace, lookup)
}

// EnableRole sets a role's enabled key.
func EnableRole(workspace string, lookup func(string) (string, bool), id string, enabled bool) (*Edited, error) {
	op := EditDisable
	if enabled {
		op = EditEnable
	}
	return RoleEdit{Op: op, ID: id}.Apply(workspace, lookup)
}

// Apply makes the edit in the workspace's roles.yaml: the new text is
// loaded with the workspace's settings.yaml by the same strict decoder as
// Load (every problem as *Errors, located in the text that would have been
// saved; nothing is saved then) and replaces the file atomically. lookup is
// as for Load.
func (e RoleEdit) Apply(workspace string, lookup func(string) (string, bool)) (*Edited, error) {
	return e.apply(workspace, lookup, nil)
}

// apply is Apply with a hook called just before the file is replaced, for
// the test of a file changed meanwhile.
func (e RoleEdit) apply(workspace string, lookup func(string) (string, bool), beforeSave func()) (*Edited, error) {
	path := absPath(workspace, RolesFile)
	old, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("edit roles: %s does not exist (run \"shogun init\")", RolesFile)
		}
		return nil, fmt.Errorf("edit roles: %w", err)
	}
	if e.Version != "" && FileVersion(old) != e.Version {
		return nil, fmt.Errorf("edit roles: %w", ErrChanged)
	}
	if e.Op == EditCreate && !roleIDPattern.MatchString(e.ID) {
		return nil, e.badIDErrors(workspace, lookup, old)
	}
	next, err := EditRolesText(old, e)
	if err != nil {
		return nil, err
	}
	cfg, err := load(workspace, lookup, map[string][]byte{RolesFile: next})
	if err != nil {
		return nil, err
	}
	if bytes.Equal(next, old) {
		return &Edited{Config: cfg, Version: FileVersion(old)}, nil // nothing to save
	}
	mode := fs.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	if beforeSave != nil {
		beforeSave()
	}
	// Read once more right before replacing: a person's editor or another
	// client may have saved while this edit was checked.
	if now, err := os.ReadFile(path); err != nil || !bytes.Equal(now, old) {
		return nil, fmt.Errorf("edit roles: %w", ErrChanged)
	}
	if err := atomicfile.Write(path, next, mode); err != nil {
		return nil, fmt.Errorf("edit roles: %w", err)
	}
	return &Edited{Config: cfg, Version: FileVersion(next)}, nil
}

// badIDErrors are the problems of a new role whose id is not one: that,
// at the line the id would have, and every other problem of the role, found
// by making it under a valid stand-in id (the file is not written), so that
// a person fixes the whole form at once rather than one error at a time.
func (e RoleEdit) badIDErrors(workspace string, lookup func(string) (string, bool), old []byte) error {
	errs := &Errors{}
	idErr := func(line, col int) {
		errs.add(RolesFile, line, col, "invalid role id %q: use 1 to 32 lowercase letters, digits, \"_\" or \"-\", starting with a letter or digit", e.ID)
	}
	stand := e
	stand.ID = "new-role"
	for n := 2; bytes.Contains(old, []byte(stand.ID)); n++ {
		stand.ID = fmt.Sprintf("new-role-%d", n)
	}
	if id, ok := e.Fields["id"]; ok && id == e.ID {
		stand.Fields = maps.Clone(e.Fields)
		stand.Fields["id"] = stand.ID
	}
	next, err := EditRolesText(old, stand)
	var more *Errors
	switch {
	case errors.As(err, &more):
		idErr(0, 0)
		errs.List = append(errs.List, more.List...)
		return errs
	case err != nil:
		idErr(0, 0)
		return errs
	}
	line, col := 0, 0
	if t, perr := parseRolesText(next); perr == nil {
		if i, ierr := t.item(stand.ID); ierr == nil {
			if _, v := pair(t.list.Content[i], "id"); v != nil {
				line, col = v.Line, v.Column
			}
		}
	}
	idErr(line, col)
	if _, err := load(workspace, lookup, map[string][]byte{RolesFile: next}); errors.As(err, &more) {
		errs.List = append(errs.List, more.List...)
	}
	return errs
}

// EditRolesText returns the text of roles.yaml with the edit made, without
// checking what the roles mean (Apply does). A file that is not YAML with
// a roles list, an unknown role, or fields that cannot be written are
// errors; problems located in the file are *Errors.
func EditRolesText(data []byte, e RoleEdit) ([]byte, error) {
	if !roleIDPattern.MatchString(e.ID) {
		return nil, editError("invalid role id %q: use 1 to 32 lowercase letters, digits, \"_\" or \"-\", starting with a letter or digit", e.ID)
	}
	fields, err := editFields(e)
	if err != nil {
		return nil, err
	}
	text := data
	switch e.Op {
	case EditCreate:
		return editText(text, func(t *rolesText) error { return t.create(e.ID, fields) })
	case EditDelete:
		return editText(text, func(t *rolesText) error { return t.remove(e.ID) })
	case EditEnable, EditDisable:
		v := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: fmt.Sprint(e.Op == EditEnable)}
		return editText(text, func(t *rolesText) error { return t.set(e.ID, []string{"enabled"}, v) })
	case EditUpdate:
		// One key at a time, the text parsed again in between, so each
		// splice works on true positions.
		for _, f := range fields {
			text, err = editText(text, func(t *rolesText) error {
				if f.value == nil {
					return t.unset(e.ID, f.path)
				}
				return t.set(e.ID, f.path, f.value)
			})
			if err != nil {
				return nil, err
			}
		}
		if len(fields) == 0 {
			// Nothing to change, but the role must exist.
			if _, err := editText(text, func(t *rolesText) error { _, err := t.item(e.ID); return err }); err != nil {
				return nil, err
			}
		}
		return text, nil
	}
	return nil, fmt.Errorf("edit roles: unknown edit %q", e.Op)
}

// editError is a problem with an edit itself, not with a place in the file.
func editError(format string, args ...any) error {
	errs := &Errors{}
	errs.add(RolesFile, 0, 0, format, args...)
	return errs
}

// field is one key of an edit: its path and its new value (nil: remove).
type field struct {
	path  []string
	value *yaml.Node
}

// fieldName is one part of a dotted key: a roles.yaml key, or an
// environment variable's name under command.env.
var fieldName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)

// editFields checks an edit's fields and orders them as roles.yaml lists
// its keys, so that an edit always writes the same text.
func editFields(e RoleEdit) ([]field, error) {
	var out []field
	// Every field's problem at once, in the order of the keys.
	errs := &Errors{}
	for _, key := range slices.Sorted(maps.Keys(e.Fields)) {
		v := e.Fields[key]
		path := strings.Split(key, ".")
		if len(path) > 3 {
			errs.add(RolesFile, 0, 0, "key %q: at most three levels (such as \"command.env.NAME\")", key)
			continue
		}
		named := true
		for _, p := range path {
			if !fieldName.MatchString(p) {
				errs.add(RolesFile, 0, 0, "key %q: %q is not a key name", key, p)
				named = false
				break
			}
		}
		if !named {
			continue
		}
		if path[0] == "id" {
			if s, ok := v.(string); ok && s == e.ID && len(path) == 1 {
				continue // the id it has
			}
			errs.add(RolesFile, 0, 0, "a role's id cannot be changed (%q): create a role with the new id and delete this one", e.ID)
			continue
		}
		f := field{path: path}
		if v != nil {
			n, err := valueNode(v, path[len(path)-1])
			if err != nil {
				errs.add(RolesFile, 0, 0, "key %q: %v", key, err)
				continue
			}
			f.value = n
		} else if e.Op == EditCreate {
			continue // nothing to remove from a new role
		}
		out = append(out, f)
	}
	if err := errs.err(); err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].path, out[j].path
		for k := 0; k < len(a) && k < len(b); k++ {
			if a[k] != b[k] {
				return keyRank(a[k]) < keyRank(b[k]) || keyRank(a[k]) == keyRank(b[k]) && a[k] < b[k]
			}
		}
		return len(a) < len(b)
	})
	return out, nil
}

// keyOrder is the order in which roles.yaml's documentation lists a role's
// keys and the keys of its mappings; new keys are written in this order.
var keyOrder = []string{
	"id", "name", "prompt_path", "enabled", "cli", "command", "exec", "args", "env", "cwd",
	"worktree", "base", "branch", "terminal", "cols", "rows", "startup_prompt", "nudge", "notify", "remind",
	"submit", "submit_delay", "clear_input", "input_marker",
	"ready_pattern", "busy_pattern", "attention_pattern", "limit_pattern",
	"ready_quiet", "limit_wait", "ack_timeout", "stall_after", "interrupt_keys", "between_tasks",
	"restart", "policy", "max_restarts", "window", "stop", "keys", "timeout",
}

func keyRank(k string) int {
	if i := slices.Index(keyOrder, k); i >= 0 {
		return i
	}
	return len(keyOrder)
}

// valueNode turns a value decoded from JSON into a YAML node. Lists of
// plain values are written in flow style ([a, b]), as roles.yaml writes
// args; mappings in block style, except an empty one ({}).
func valueNode(v any, key string) (*yaml.Node, error) {
	switch x := v.(type) {
	case map[string]any:
		n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool {
			return keyRank(keys[i]) < keyRank(keys[j]) || keyRank(keys[i]) == keyRank(keys[j]) && keys[i] < keys[j]
		})
		for _, k := range keys {
			if x[k] == nil {
				continue
			}
			val, err := valueNode(x[k], k)
			if err != nil {
				return nil, err
			}
			n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k}, val)
		}
		if len(n.Content) == 0 {
			n.Style = yaml.FlowStyle
		}
		return n, nil
	case []any:
		n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle}
		for _, item := range x {
			if item == nil {
				return nil, fmt.Errorf("a list of %s holds null", key)
			}
			val, err := valueNode(item, key)
			if err != nil {
				return nil, err
			}
			if val.Kind != yaml.ScalarNode {
				n.Style = 0
			}
			n.Content = append(n.Content, val)
		}
		return n, nil
	case jsonNumber:
		if i, err := x.Int64(); err == nil {
			v = i
		} else if f, err := x.Float64(); err == nil {
			v = f
		} else {
			return nil, fmt.Errorf("%q is not a number", x.String())
		}
	case string, bool, int, int64, float64:
	default:
		return nil, fmt.Errorf("a value of type %T cannot be written", v)
	}
	n := &yaml.Node{}
	if err := n.Encode(v); err != nil {
		return nil, err
	}
	return n, nil
}

// jsonNumber is encoding/json's Number, named by its methods so that this
// package needs no import of encoding/json for it.
type jsonNumber interface {
	Int64() (int64, error)
	Float64() (float64, error)
	String() string
}

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
