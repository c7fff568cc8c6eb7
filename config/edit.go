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
	"regexp"
	"slices"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/shogun-dev/shogun/atomicfile"
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
	"worktree", "base", "branch", "sandbox", "fallback", "terminal", "cols", "rows", "startup_prompt", "nudge", "notify", "remind",
	"submit", "submit_delay", "clear_input", "input_marker",
	"ready_pattern", "busy_pattern", "attention_pattern", "limit_pattern",
	"ready_quiet", "limit_wait", "ack_timeout", "stall_after", "start_timeout", "interrupt_keys", "between_tasks",
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
