package queue

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/shogun-dev/shogun/internal/yamlstrict"
	"github.com/shogun-dev/shogun/store"
)

// priorities are a command's, and its task's: the history's words
// (store.PriorityHigh, PriorityNormal, PriorityLow).
var priorities = store.Priorities

// Command is one piece of work for one role, as a person or an agent drops
// it into runtime/queue/commands/. A file holds one command, or several as a
// list under "commands:".
type Command struct {
	// ID identifies the command across drops: a command whose id was
	// already accepted is a duplicate. DecodeCommands fills it with
	// DeriveCommandID when the file leaves it out.
	ID string `yaml:"id,omitempty"`
	// To is the role that does the work.
	To string `yaml:"to"`
	// From is the role told when the report arrives; empty for none.
	From string `yaml:"from,omitempty"`
	// Title is one line: it is typed into From's terminal in the notify
	// line, where a line break would submit half of it.
	Title string `yaml:"title"`
	// Body is the instruction itself, any length and any number of lines.
	Body string `yaml:"body"`
	// Tags group related tasks when skills are mined.
	Tags []string `yaml:"tags,omitempty"`
	// Priority orders a role's waiting tasks: store.PriorityHigh,
	// PriorityNormal or PriorityLow; empty means normal.
	Priority string `yaml:"priority,omitempty"`
	// Parent is the task this command continues, when it is not the open
	// task of From (which is taken by default): the command's task joins
	// that task's chain, which queue.max_hops bounds.
	Parent string `yaml:"parent,omitempty"`
}

// Validate reports the first problem with c, or nil. An empty Priority is
// valid and means normal, so commands built in code need not set it.
// Validate checks shape only: whether To names an enabled role is for the
// caller, who knows the configuration.
func (c Command) Validate() error {
	if p := c.problem(); p != nil {
		return p
	}
	return nil
}

func (c Command) problem() *fieldError {
	return firstProblem(
		checkID("id", c.ID),
		checkRequired("to", c.To), checkRole("to", c.To),
		checkRole("from", c.From),
		checkRequired("title", c.Title), checkLine("title", c.Title),
		checkRequired("body", c.Body),
		checkTags(c.Tags), checkTagWords(c.Tags),
		checkEnum("priority", c.Priority, priorities, true),
		checkID("parent", c.Parent),
	)
}

// DeriveCommandID makes the id of a command whose file gives none: the
// file's base name without extension (lowercased, other characters than
// a-z, 0-9, ".", "_" and "-" replaced, at most 40 characters), then the
// first 10 hex digits of the SHA-256 of the whole file, then "-index" for
// the index-th (0-based) item of a "commands:" list; index < 0 means the
// file holds a single command. The same file dropped again gets the same id
// and is recognised as a duplicate; a changed file is a new command. Pass
// the name the file was dropped under, not a name given to it on claiming.
func DeriveCommandID(fileName string, data []byte, index int) string {
	base := fileName
	if i := strings.LastIndexAny(base, `/\`); i >= 0 {
		base = base[i+1:]
	}
	if ext := path.Ext(base); ext != base {
		base = strings.TrimSuffix(base, ext)
	}
	var b strings.Builder
	var last rune
	for _, r := range strings.ToLower(base) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '_', r == '-':
		case r == '.':
			if last == '.' {
				continue // never "..", which ids may not contain
			}
		default:
			r = '-'
			if last == '-' {
				continue
			}
		}
		b.WriteRune(r)
		last = r
	}
	stem := b.String()
	if len(stem) > 40 {
		stem = stem[:40]
	}
	stem = strings.Trim(stem, ".-_") // no hidden-file or dangling-separator look
	if stem == "" {
		stem = "cmd"
	}
	sum := sha256.Sum256(data)
	id := stem + "-" + hex.EncodeToString(sum[:5])
	if index >= 0 {
		id += "-" + strconv.Itoa(index)
	}
	return id
}

// DecodeCommands reads a command file: one command, or a list under
// "commands:" as the only top-level key. name is used in errors and, for
// commands without an id, in DeriveCommandID. Priority defaults to normal.
// Every error is a *FormatError naming the first problem; list items are
// named by their 0-based index ("commands[1]: missing \"title\"").
func DecodeCommands(name string, data []byte, limits Limits) ([]Command, error) {
	root, err := parseDocument(name, data, limits)
	if err != nil {
		return nil, err
	}
	d := newFormatDecoder(name, "")
	if root.Kind != yaml.MappingNode {
		return nil, d.errAt(root, `a command file must be a mapping (one command, or a list under "commands:"), got %s`, yamlstrict.Describe(root))
	}
	fields, err := d.mapping(root, "")
	if err != nil {
		return nil, err
	}
	var items *yaml.Node
	for _, f := range fields {
		if f.name == "commands" {
			items = f.val
		}
	}
	if items == nil {
		c, err := d.command(fields, data, -1)
		if err != nil {
			return nil, err
		}
		return []Command{c}, nil
	}
	for _, f := range fields {
		if f.name != "commands" {
			return nil, d.errAt(f.key, `"commands" must be the only top-level key of a file of several commands, found %q as well`, f.name)
		}
	}
	if items.Kind != yaml.SequenceNode {
		return nil, d.errAt(items, `"commands" must be a list of commands, got %s`, yamlstrict.Describe(items))
	}
	if len(items.Content) == 0 {
		return nil, d.errAt(items, `"commands" is an empty list`)
	}
	out := make([]Command, 0, len(items.Content))
	ids := map[string]int{}
	for i, item := range items.Content {
		item = yamlstrict.Resolve(item)
		d := newFormatDecoder(name, fmt.Sprintf("commands[%d]: ", i))
		if item.Kind != yaml.MappingNode {
			return nil, d.errAt(item, "a command must be a mapping, got %s", yamlstrict.Describe(item))
		}
		fields, err := d.mapping(item, "")
		if err != nil {
			return nil, err
		}
		c, err := d.command(fields, data, i)
		if err != nil {
			return nil, err
		}
		if first, dup := ids[c.ID]; dup {
			return nil, d.errAt(item, "duplicate id %q, already used by commands[%d]", c.ID, first)
		}
		ids[c.ID] = i
		out = append(out, c)
	}
	return out, nil
}

// commandKeyError turns a problem found on the index-th command of a
// command file after decoding (a *fieldError: a role the configuration
// lacks, a parent that is no task, the loop guard) into a *FormatError at
// the line and column of the key it is about, named as DecodeCommands
// names the commands of a list. Other errors are returned as they are.
func commandKeyError(name string, data []byte, index int, limits Limits, err error) error {
	var fe *fieldError
	if !errors.As(err, &fe) {
		return err
	}
	d := newFormatDecoder(name, "")
	fail := &FormatError{File: name, Message: fe.msg}
	item, perr := yamlstrict.Parse(data, limits.withDefaults().MaxNodes)
	if perr != nil || item.Kind != yaml.MappingNode {
		return fail // decoded before: not expected
	}
	fields, _ := yamlstrict.Fields(item)
	for _, f := range fields {
		if f.Name == "commands" && f.Value.Kind == yaml.SequenceNode && index < len(f.Value.Content) {
			d.prefix = fmt.Sprintf("commands[%d]: ", index)
			item = yamlstrict.Resolve(f.Value.Content[index])
			fields, _ = yamlstrict.Fields(item)
		}
	}
	for _, f := range fields {
		if f.Name == fe.field {
			return d.errAt(f.Key, "%s", fe.msg)
		}
	}
	return d.errAt(item, "%s", fe.msg)
}

// commandKeys are the keys of a command, for "did you mean".
var commandKeys = []string{"id", "to", "from", "title", "body", "tags", "priority", "parent"}

func (d *formatDecoder) command(fields []yamlField, data []byte, index int) (Command, error) {
	var c Command
	for _, f := range fields {
		var err error
		switch f.name {
		case "id":
			c.ID, err = d.text(f)
		case "to":
			c.To, err = d.text(f)
		case "from":
			c.From, err = d.text(f)
		case "title":
			c.Title, err = d.text(f)
		case "body":
			c.Body, err = d.text(f)
		case "tags":
			c.Tags, err = d.textList(f)
		case "priority":
			c.Priority, err = d.word(f, priorities)
		case "parent":
			c.Parent, err = d.text(f)
		default:
			err = d.unknownKey(f, "", commandKeys)
		}
		if err != nil {
			return Command{}, err
		}
	}
	if p := c.problem(); p != nil {
		return Command{}, d.fieldErr(p)
	}
	if c.ID == "" {
		c.ID = DeriveCommandID(d.file, data, index)
	}
	if c.Priority == "" {
		c.Priority = store.PriorityNormal
	}
	return c, nil
}
