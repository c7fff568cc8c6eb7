// Package queue runs a workspace's file protocol (DESIGN.md section 5): it
// watches runtime/queue/, claims the command and report files that agents and
// people drop there, checks them, turns each command into a task for one role
// and each report into a closed task, and moves rejected files to failed/
// with a note saying why.
//
// The files come from programs and people the supervisor cannot trust to be
// careful, so every file is read strictly and cheaply: a size limit before
// parsing, a bound on YAML nodes after aliases are expanded, no unknown keys,
// and an error that names the file, line and column of the first problem.
package queue

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"path"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/shogun-dev/shogun/config"
	"github.com/shogun-dev/shogun/store"
	"github.com/shogun-dev/shogun/textsafe"
)

// Report statuses, as an agent writes them in a report's status: the status
// its task closes with, so they are the history's words.
const (
	ReportDone    = store.StatusDone
	ReportFailed  = store.StatusFailed
	ReportBlocked = store.StatusBlocked
)

// Defaults of Limits, used for its zero fields.
const (
	// DefaultMaxBytes keeps a runaway agent from making the supervisor
	// parse megabytes of YAML; no hand-written command comes near it.
	DefaultMaxBytes = 1 << 20
	// DefaultMaxNodes allows several hundred commands in one file while
	// stopping an alias bomb after a few milliseconds.
	DefaultMaxNodes = 10000
)

// MaxIDLength is the longest id, command_id or task_id, in bytes. Ids end up
// in file names and log lines, where long ones break or get cut.
const MaxIDLength = 128

// Limits bound what decoding one file may cost. Zero fields take the
// defaults, so Limits{} is the usual choice.
type Limits struct {
	// MaxBytes rejects a larger file before it is parsed (default
	// DefaultMaxBytes).
	MaxBytes int64
	// MaxNodes rejects a document with more YAML nodes than this, counting
	// what every alias points to each time it is used (default
	// DefaultMaxNodes). A few bytes of aliases can stand for billions of
	// nodes; counting stops at the limit, so such a file costs no more
	// than an honest one.
	MaxNodes int
}

func (l Limits) withDefaults() Limits {
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	if l.MaxNodes <= 0 {
		l.MaxNodes = DefaultMaxNodes
	}
	return l
}

// maxBytes is the size limit in force, for callers that read a file
// through an io.LimitReader.
func (l Limits) maxBytes() int64 { return l.withDefaults().MaxBytes }

// CheckSize returns the error the decoders give for a file of size bytes,
// or nil if it is within the limit. A watcher can call it with the size
// from os.Stat so that it never reads a huge file into memory.
func (l Limits) CheckSize(name string, size int64) error {
	l = l.withDefaults()
	if size > l.MaxBytes {
		return &FormatError{File: name, Message: fmt.Sprintf("file is %d bytes, over the %d-byte limit", size, l.MaxBytes)}
	}
	return nil
}

// FormatError is why a command or report file was rejected, located the way
// compilers locate errors so that editors and people can jump to it. The
// decoders return only this type, so a caller tells a bad file (move it to
// failed/) from a failure of its own with errors.As.
type FormatError struct {
	// File is the name the decoder was given.
	File string
	// Line and Column are 1-based; 0 means unknown (yaml.v3 gives syntax
	// errors a line but no column, and an empty file has neither).
	Line, Column int
	// Message says what is wrong, without the location.
	Message string
}

// Error formats the problem as "file:line:col: message", leaving out the
// parts that are unknown.
func (e *FormatError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
		if e.Column > 0 {
			fmt.Fprintf(&b, ":%d", e.Column)
		}
	}
	if b.Len() > 0 {
		b.WriteString(": ")
	}
	b.WriteString(e.Message)
	return b.String()
}

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
	// store.PriorityNormal or store.PriorityLow; empty means normal.
	Priority string `yaml:"priority,omitempty"`
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
		checkTags(c.Tags),
		checkEnum("priority", c.Priority, priorities, true),
	)
}

// Task is what shogun writes to runtime/queue/tasks/<role>.yaml for the role
// to read when nudged. The agent echoes TaskID in its report; the other
// fields come from the command.
type Task struct {
	TaskID    string `yaml:"task_id"`
	CommandID string `yaml:"command_id"`
	// Role is the role doing the task (the command's To).
	Role string `yaml:"role"`
	// From is the role told when the report arrives; empty for none.
	From     string   `yaml:"from,omitempty"`
	Title    string   `yaml:"title"`
	Body     string   `yaml:"body"`
	Tags     []string `yaml:"tags,omitempty"`
	Priority string   `yaml:"priority,omitempty"`
	// AssignedAt is when the task was handed to the role.
	AssignedAt time.Time `yaml:"assigned_at"`
	// Attempt, when not 0, tells the agent the task was handed out before
	// (after a restart, say), so it can check what earlier work left.
	Attempt int `yaml:"attempt,omitempty"`
	// ReportTo is where the agent should write its report, relative to the
	// workspace, with forward slashes.
	ReportTo string `yaml:"report_to"`
}

// Validate reports the first problem with t, or nil; MarshalTask refuses a
// task that does not pass, so an agent never reads a half-filled task.
func (t Task) Validate() error {
	if p := firstProblem(
		checkRequired("task_id", t.TaskID), checkID("task_id", t.TaskID),
		checkRequired("command_id", t.CommandID), checkID("command_id", t.CommandID),
		checkRequired("role", t.Role), checkRole("role", t.Role),
		checkRole("from", t.From),
		checkRequired("title", t.Title), checkLine("title", t.Title),
		checkRequired("body", t.Body),
		checkTags(t.Tags),
		checkEnum("priority", t.Priority, priorities, true),
	); p != nil {
		return p
	}
	if t.AssignedAt.IsZero() {
		return missingField("assigned_at")
	}
	if t.Attempt < 0 {
		return &fieldError{field: "attempt", msg: fmt.Sprintf(`"attempt" must not be negative, got %d`, t.Attempt)}
	}
	if p := firstProblem(checkRequired("report_to", t.ReportTo), checkLine("report_to", t.ReportTo)); p != nil {
		return p
	}
	return nil
}

// MarshalTask renders t as the task file of DESIGN.md section 5: keys in the
// documented order, a multi-line body as a literal block ("body: |") that
// reads like the text it holds, tags as a flow list. A body the literal style
// cannot carry exactly (trailing spaces on a line, some control characters)
// is written double-quoted instead, so the agent always reads the exact text.
func MarshalTask(t Task) ([]byte, error) {
	if err := t.Validate(); err != nil {
		return nil, fmt.Errorf("queue: invalid task %q: %w", t.TaskID, err)
	}
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	add := func(key string, v *yaml.Node) {
		m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, v)
	}
	add("task_id", yamlString(t.TaskID))
	add("command_id", yamlString(t.CommandID))
	add("role", yamlString(t.Role))
	if t.From != "" {
		add("from", yamlString(t.From))
	}
	add("title", yamlString(t.Title))
	body := yamlString(t.Body)
	if strings.Contains(t.Body, "\n") {
		body.Style = yaml.LiteralStyle
	}
	add("body", body)
	if len(t.Tags) > 0 {
		seq := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle}
		for _, tag := range t.Tags {
			seq.Content = append(seq.Content, yamlString(tag))
		}
		add("tags", seq)
	}
	if t.Priority != "" {
		add("priority", yamlString(t.Priority))
	}
	add("assigned_at", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!timestamp", Value: t.AssignedAt.Format(time.RFC3339Nano)})
	if t.Attempt != 0 {
		add("attempt", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(t.Attempt)})
	}
	add("report_to", yamlString(t.ReportTo))

	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(m); err != nil {
		return nil, fmt.Errorf("queue: encode task %q: %w", t.TaskID, err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("queue: encode task %q: %w", t.TaskID, err)
	}
	return buf.Bytes(), nil
}

// yamlString is a string scalar; the encoder quotes it when plain text would
// read back as another type ("123", "true", "2026-11-22").
func yamlString(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
}

// Report is what an agent writes into runtime/queue/reports/ when it has
// finished, given up on, or got stuck on a task.
type Report struct {
	// TaskID is the task_id of the task file the agent was given.
	TaskID string `yaml:"task_id"`
	// Status is ReportDone, ReportFailed or ReportBlocked.
	Status string `yaml:"status"`
	// Summary is the outcome in brief, shown in status and the dashboard;
	// Details is everything else the agent wants kept.
	Summary string `yaml:"summary"`
	Details string `yaml:"details,omitempty"`
	// Files are the paths the agent changed, as it wrote them.
	Files []string `yaml:"files,omitempty"`
	// SkillCandidate is set when the agent proposes a reusable skill; the
	// skills package turns it into a candidate for review.
	SkillCandidate *SkillCandidate `yaml:"skill_candidate,omitempty"`
}

// SkillCandidate is a skill an agent proposes in a report. Its name is
// normalised later, when the candidate is made; here it must only be one
// line.
type SkillCandidate struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
}

// Validate reports the first problem with r, or nil.
func (r Report) Validate() error {
	if p := r.problem(); p != nil {
		return p
	}
	return nil
}

func (r Report) problem() *fieldError {
	if p := firstProblem(
		checkRequired("task_id", r.TaskID), checkID("task_id", r.TaskID),
		checkRequired("status", r.Status), checkEnum("status", r.Status, statuses, false),
		checkRequired("summary", r.Summary), checkLine("summary", r.Summary),
		checkText("details", r.Details),
	); p != nil {
		return p
	}
	for i, f := range r.Files {
		field := fmt.Sprintf("files[%d]", i)
		if f == "" {
			return &fieldError{field: field, msg: fmt.Sprintf(`%q must not be empty`, field)}
		}
		if p := checkLine(field, f); p != nil {
			return p
		}
	}
	if sc := r.SkillCandidate; sc != nil {
		return firstProblem(
			checkRequired("skill_candidate.name", sc.Name), checkLine("skill_candidate.name", sc.Name),
			checkRequired("skill_candidate.description", sc.Description), checkText("skill_candidate.description", sc.Description),
		)
	}
	return nil
}

var (
	priorities = store.Priorities
	statuses   = store.ReportStatuses
	roleIDRe   = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,31}$`)
)

// fieldError is a problem with one field, named by its YAML key path
// ("title", "skill_candidate.name") so that the decoder can point at the
// line that holds it.
type fieldError struct {
	field   string
	missing bool // absent or blank: the decoder points at the key if there is one
	msg     string
}

func (e *fieldError) Error() string { return e.msg }

func missingField(field string) *fieldError {
	return &fieldError{field: field, missing: true, msg: fmt.Sprintf("missing %q", field)}
}

func firstProblem(ps ...*fieldError) *fieldError {
	for _, p := range ps {
		if p != nil {
			return p
		}
	}
	return nil
}

// checkRequired treats a blank value as missing: a title of spaces tells
// the agent as little as no title.
func checkRequired(field, v string) *fieldError {
	if strings.TrimSpace(v) == "" {
		return missingField(field)
	}
	return nil
}

// checkLine refuses control characters (textsafe.IsControl: C0, DEL, C1,
// the Unicode line separators, bidirectional overrides) and invalid UTF-8.
// Titles are typed into agents' terminals in notify lines, summaries are
// printed for people, and ids end up in file names and log lines: a line
// break there submits half a prompt, an escape sequence drives the
// terminal.
func checkLine(field, v string) *fieldError {
	return checkChars(field, v, "one line without control characters", nil)
}

// checkText is checkLine for free text that may run over several lines:
// line breaks and tabs are allowed, other control characters are not.
func checkText(field, v string) *fieldError {
	return checkChars(field, v, "text without control characters other than line breaks and tabs", func(r rune) bool {
		return r == '\n' || r == '\t'
	})
}

func checkChars(field, v, rule string, allow func(rune) bool) *fieldError {
	at, r := textsafe.Find(v, allow)
	if at < 0 {
		return nil
	}
	n := utf8.RuneCountInString(v[:at]) + 1
	return &fieldError{field: field, msg: fmt.Sprintf("%q must be %s, found %s at character %d", field, rule, textsafe.Describe(r), n)}
}

// checkID keeps ids usable as file names on every OS: no way out of a
// folder, no control characters, a bounded length. Empty ids pass; callers
// decide whether one is required.
func checkID(field, v string) *fieldError {
	switch {
	case v == "":
		return nil
	case strings.TrimSpace(v) == "":
		return &fieldError{field: field, msg: fmt.Sprintf("%q must not be blank", field)}
	case len(v) > MaxIDLength:
		return &fieldError{field: field, msg: fmt.Sprintf("%q is %d bytes long, over the %d-byte limit", field, len(v), MaxIDLength)}
	}
	if p := checkLine(field, v); p != nil {
		return p
	}
	switch {
	case strings.ContainsAny(v, `/\`):
		return &fieldError{field: field, msg: fmt.Sprintf(`%q must not contain a path separator (/ or \), got %q`, field, v)}
	case strings.Contains(v, ".."):
		return &fieldError{field: field, msg: fmt.Sprintf(`%q must not contain "..", got %q`, field, v)}
	}
	return nil
}

// checkRole checks the shape of a role id, the same shape config requires
// of roles.yaml; whether the role exists is the caller's business. An empty
// id passes, as in checkID.
func checkRole(field, v string) *fieldError {
	if v == "" || roleIDRe.MatchString(v) {
		return nil
	}
	return &fieldError{field: field, msg: fmt.Sprintf(`%q must be a role id (a-z or 0-9, then up to 31 of a-z, 0-9, "_", "-"), got %q`, field, v)}
}

func checkEnum(field, v string, choices []string, emptyOK bool) *fieldError {
	if v == "" && emptyOK {
		return nil
	}
	for _, c := range choices {
		if v == c {
			return nil
		}
	}
	return &fieldError{field: field, msg: fmt.Sprintf("%q must be one of %s; got %q", field, strings.Join(choices, ", "), v)}
}

// checkTags refuses empty tags, since skills are grouped by tag and an empty
// one would group unrelated tasks, and tags with control characters, which
// are printed for people.
func checkTags(tags []string) *fieldError {
	for i, t := range tags {
		field := fmt.Sprintf("tags[%d]", i)
		if strings.TrimSpace(t) == "" {
			return &fieldError{field: field, msg: fmt.Sprintf(`%q must not be empty`, field)}
		}
		if p := checkLine(field, t); p != nil {
			return p
		}
	}
	return nil
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
		return nil, d.errAt(root, `a command file must be a mapping (one command, or a list under "commands:"), got %s`, config.DescribeNode(root))
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
		return nil, d.errAt(items, `"commands" must be a list of commands, got %s`, config.DescribeNode(items))
	}
	if len(items.Content) == 0 {
		return nil, d.errAt(items, `"commands" is an empty list`)
	}
	out := make([]Command, 0, len(items.Content))
	ids := map[string]int{}
	for i, item := range items.Content {
		item = resolveAlias(item)
		d := newFormatDecoder(name, fmt.Sprintf("commands[%d]: ", i))
		if item.Kind != yaml.MappingNode {
			return nil, d.errAt(item, "a command must be a mapping, got %s", config.DescribeNode(item))
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

// DecodeReport reads a report file. Every error is a *FormatError naming
// the first problem.
func DecodeReport(name string, data []byte, limits Limits) (Report, error) {
	root, err := parseDocument(name, data, limits)
	if err != nil {
		return Report{}, err
	}
	d := newFormatDecoder(name, "")
	if root.Kind != yaml.MappingNode {
		return Report{}, d.errAt(root, "a report must be a mapping, got %s", config.DescribeNode(root))
	}
	fields, err := d.mapping(root, "")
	if err != nil {
		return Report{}, err
	}
	var r Report
	for _, f := range fields {
		var err error
		switch f.name {
		case "task_id":
			r.TaskID, err = d.text(f)
		case "status":
			r.Status, err = d.word(f, statuses)
		case "summary":
			r.Summary, err = d.text(f)
		case "details":
			r.Details, err = d.text(f)
		case "files":
			r.Files, err = d.textList(f)
		case "skill_candidate":
			r.SkillCandidate, err = d.skillCandidate(f)
		default:
			err = d.unknownKey(f, "", reportKeys)
		}
		if err != nil {
			return Report{}, err
		}
	}
	if p := r.problem(); p != nil {
		return Report{}, d.fieldErr(p)
	}
	return r, nil
}

var (
	commandKeys = []string{"id", "to", "from", "title", "body", "tags", "priority"}
	reportKeys  = []string{"task_id", "status", "summary", "details", "files", "skill_candidate"}
	skillKeys   = []string{"name", "description"}
)

// Files are decoded by walking the yaml.Node tree rather than with
// yaml.Decoder.KnownFields(true): the tree has to be walked anyway to bound
// alias expansion before any value is built, Node.Decode ignores
// KnownFields, and walking gives each problem its line and column. The
// struct tags stay the reference for key names; the tests check that the
// two agree.

// parseDocument parses data as one YAML document and checks the limits,
// returning a root that is neither an alias nor null.
func parseDocument(name string, data []byte, limits Limits) (*yaml.Node, error) {
	limits = limits.withDefaults()
	if err := limits.CheckSize(name, int64(len(data))); err != nil {
		return nil, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var root *yaml.Node
	for {
		doc, err := decodeNode(dec)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, syntaxError(name, data, err)
		}
		if len(doc.Content) == 0 || isNullNode(doc.Content[0]) {
			continue // "---" alone, a stray document separator: nothing to read
		}
		if root != nil {
			return nil, &FormatError{File: name, Line: doc.Line, Column: doc.Column,
				Message: "only one YAML document is allowed, found a second one"}
		}
		root = doc.Content[0]
	}
	if root == nil {
		return nil, &FormatError{File: name, Message: "file is empty"}
	}
	if !withinNodeLimit(root, limits.MaxNodes) {
		return nil, &FormatError{File: name, Message: fmt.Sprintf(
			"document has more than %d YAML nodes once aliases are expanded (an alias bomb?)", limits.MaxNodes)}
	}
	return resolveAlias(root), nil
}

// decodeNode parses the next document. A panic inside yaml.v3 becomes an
// error: a file that trips a parser bug must land in failed/, not stop the
// supervisor.
func decodeNode(dec *yaml.Decoder) (doc yaml.Node, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("yaml: parser failed: %v", r)
		}
	}()
	err = dec.Decode(&doc)
	return doc, err
}

// withinNodeLimit counts nodes as the tree would be if every alias were
// replaced by a copy of what it names, and stops as soon as the count passes
// max. Children are counted when they are put on the stack, so the stack
// never holds more than max nodes even for an alias to a node with a huge
// list of aliases to itself.
func withinNodeLimit(root *yaml.Node, max int) bool {
	count := 1
	stack := []*yaml.Node{root}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if n.Kind == yaml.AliasNode {
			if n.Alias == nil {
				continue
			}
			if count++; count > max {
				return false
			}
			stack = append(stack, n.Alias)
			continue
		}
		if count += len(n.Content); count > max {
			return false
		}
		stack = append(stack, n.Content...)
	}
	return true
}

var yamlLineRe = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// syntaxError turns a yaml.v3 parse error into a FormatError. yaml.v3 gives
// a line for most errors and never a column; for bytes YAML does not allow
// at all it gives neither, so those are located here.
func syntaxError(name string, data []byte, err error) *FormatError {
	msg := err.Error()
	if m := yamlLineRe.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		return &FormatError{File: name, Line: line, Message: "invalid YAML: " + m[2]}
	}
	msg = strings.TrimPrefix(msg, "yaml: ")
	fe := &FormatError{File: name, Message: "invalid YAML: " + msg}
	if strings.Contains(msg, "control characters") || strings.Contains(msg, "UTF-8") || strings.Contains(msg, "Unicode") {
		fe.Line, fe.Column = locateBadChar(data)
	}
	return fe
}

// locateBadChar finds the first byte sequence YAML does not allow in UTF-8
// text: invalid UTF-8, or a control character other than tab and line
// breaks. It returns 0, 0 for UTF-16 input, which it cannot read.
func locateBadChar(data []byte) (line, col int) {
	if bytes.HasPrefix(data, []byte{0xff, 0xfe}) || bytes.HasPrefix(data, []byte{0xfe, 0xff}) {
		return 0, 0
	}
	line, col = 1, 0
	for len(data) > 0 {
		r, size := utf8.DecodeRune(data)
		data = data[size:]
		col++
		switch {
		case r == utf8.RuneError && size == 1,
			r < 0x20 && r != '\t' && r != '\n' && r != '\r',
			r == 0x7f, r >= 0x80 && r <= 0x9f && r != 0x85,
			r == 0xfffe, r == 0xffff:
			return line, col
		case r == '\n':
			line, col = line+1, 0
		}
	}
	return 0, 0
}

// resolveAlias follows an alias to the node it names. Anchors never sit on
// aliases, so one step is enough; the loop only guards against a tree built
// by hand.
func resolveAlias(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && n.Alias != nil && i < 8; i++ {
		n = n.Alias
	}
	return n
}

func isNullNode(n *yaml.Node) bool {
	n = resolveAlias(n)
	return n == nil || n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
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
				n = resolveAlias(n.Content[k])
			}
		}
		return d.errAt(n, "%s", p.msg)
	}
	return d.errAt(nil, "%s", p.msg)
}

// mapping lists the keys of n in document order, then those merged in with
// "<<" (which never override keys written out), refusing duplicate and
// non-string keys.
func (d *formatDecoder) mapping(n *yaml.Node, path string) ([]yamlField, error) {
	d.maps[path] = n
	var out []yamlField
	taken := map[string]bool{}
	if err := d.collect(n, path, &out, taken); err != nil {
		return nil, err
	}
	for _, f := range out {
		d.fields[f.path] = f
	}
	return out, nil
}

func (d *formatDecoder) collect(n *yaml.Node, path string, out *[]yamlField, taken map[string]bool) error {
	var merges []*yaml.Node
	own := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolveAlias(n.Content[i]), n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
			merges = append(merges, v)
			continue
		}
		if k.Kind != yaml.ScalarNode {
			return d.errAt(k, "keys must be strings, got %s", config.DescribeNode(k))
		}
		if first, dup := own[k.Value]; dup {
			return d.errAt(k, "duplicate key %q (first at line %d)", k.Value, first.Line)
		}
		own[k.Value] = k
		if taken[k.Value] {
			continue
		}
		taken[k.Value] = true
		fp := k.Value
		if path != "" {
			fp = path + "." + k.Value
		}
		*out = append(*out, yamlField{name: k.Value, path: fp, key: k, val: resolveAlias(v)})
	}
	for _, v := range merges {
		v = resolveAlias(v)
		switch v.Kind {
		case yaml.MappingNode:
			if err := d.collect(v, path, out, taken); err != nil {
				return err
			}
		case yaml.SequenceNode:
			for _, item := range v.Content {
				item = resolveAlias(item)
				if item.Kind != yaml.MappingNode {
					return d.errAt(item, `"<<" must merge mappings, got %s`, config.DescribeNode(item))
				}
				if err := d.collect(item, path, out, taken); err != nil {
					return err
				}
			}
		default:
			return d.errAt(v, `"<<" must merge a mapping, got %s`, config.DescribeNode(v))
		}
	}
	return nil
}

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

func (d *formatDecoder) skillCandidate(f yamlField) (*SkillCandidate, error) {
	if isNullNode(f.val) {
		return nil, nil
	}
	if f.val.Kind != yaml.MappingNode {
		return nil, d.errAt(f.val, `%q must be a mapping with "name" and "description", got %s`, f.path, config.DescribeNode(f.val))
	}
	fields, err := d.mapping(f.val, f.path)
	if err != nil {
		return nil, err
	}
	var sc SkillCandidate
	for _, g := range fields {
		var err error
		switch g.name {
		case "name":
			sc.Name, err = d.text(g)
		case "description":
			sc.Description, err = d.text(g)
		default:
			err = d.unknownKey(g, f.path, skillKeys)
		}
		if err != nil {
			return nil, err
		}
	}
	return &sc, nil
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
	return "", d.errAt(n, "%q must be a string, got %s", f.path, config.DescribeNode(n))
}

// word reads an enumerated field, which must be one of choices written as a
// string.
func (d *formatDecoder) word(f yamlField, choices []string) (string, error) {
	n := f.val
	if isNullNode(n) {
		return "", nil
	}
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str" {
		for _, c := range choices {
			if n.Value == c {
				return c, nil
			}
		}
	}
	return "", d.errAt(n, "%q must be one of %s; got %s", f.path, strings.Join(choices, ", "), config.DescribeNode(n))
}

func (d *formatDecoder) textList(f yamlField) ([]string, error) {
	n := f.val
	if isNullNode(n) {
		return nil, nil
	}
	if n.Kind != yaml.SequenceNode {
		return nil, d.errAt(n, "%q must be a list of strings, got %s", f.path, config.DescribeNode(n))
	}
	out := make([]string, 0, len(n.Content))
	for i, item := range n.Content {
		item = resolveAlias(item)
		s, err := d.text(yamlField{path: fmt.Sprintf("%s[%d]", f.path, i), val: item})
		if err == nil && isNullNode(item) {
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
	if s := config.SuggestKey(f.name, known); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	return d.errAt(f.key, "%s", msg)
}
