package queue

import (
	"bytes"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// MarshalTask renders t as the task file of DESIGN.md section 5: keys in the
// documented order, tags as a flow list, and every text as a person reads
// it, since agents read the file as text and copy what they see: UTF-8
// characters (Japanese, emoji) as themselves, a multi-line body as a
// literal block ("body: |") line for line, trailing spaces and tabs
// included. Only a character YAML cannot hold literally (a control
// character, a byte-order mark) makes a text double-quoted, and then only
// that character is escaped. The file is decoded again before it is
// returned: one that would not read back exactly (which the tests say never
// happens) is written by yaml.v3's own encoder instead.
func MarshalTask(t Task) ([]byte, error) {
	if err := t.Validate(); err != nil {
		return nil, fmt.Errorf("queue: invalid task %q: %w", t.TaskID, err)
	}
	if out := taskText(t); readsBackAs(out, t) {
		return out, nil
	}
	return marshalTaskYAML(t)
}

// taskText is the task file as MarshalTask writes it, before the check.
func taskText(t Task) []byte {
	var b strings.Builder
	add := func(key, value string) { b.WriteString(key + ": " + value + "\n") }
	add("task_id", lineScalar(t.TaskID, false))
	add("command_id", lineScalar(t.CommandID, false))
	add("role", lineScalar(t.Role, false))
	if t.From != "" {
		add("from", lineScalar(t.From, false))
	}
	add("title", lineScalar(t.Title, false))
	b.WriteString("body: " + textScalar(t.Body))
	if len(t.Tags) > 0 {
		tags := make([]string, len(t.Tags))
		for i, tag := range t.Tags {
			tags[i] = lineScalar(tag, true)
		}
		add("tags", "["+strings.Join(tags, ", ")+"]")
	}
	if t.Priority != "" {
		add("priority", lineScalar(t.Priority, false))
	}
	add("assigned_at", t.AssignedAt.Format(time.RFC3339Nano))
	if t.Attempt != 0 {
		add("attempt", strconv.Itoa(t.Attempt))
	}
	add("report_to", lineScalar(t.ReportTo, false))
	return []byte(b.String())
}

// readsBackAs reports whether the task file data decodes to exactly t.
func readsBackAs(data []byte, t Task) bool {
	var got Task
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&got); err != nil || !got.AssignedAt.Equal(t.AssignedAt) {
		return false
	}
	got.AssignedAt = t.AssignedAt
	return reflect.DeepEqual(got, t)
}

// yamlPrintable reports whether YAML lets r stand for itself in a
// document (the spec's c-printable, less the byte-order mark and the
// characters YAML 1.1 readers take for line breaks), tab and line feed
// aside: those are asked about by the caller.
func yamlPrintable(r rune) bool {
	switch {
	case r == 0x85, r == 0x2028, r == 0x2029, r == 0xFEFF:
		return false
	case r >= 0x20 && r <= 0x7E, r >= 0xA0 && r <= 0xD7FF, r >= 0xE000 && r <= 0xFFFD, r >= 0x10000 && r <= 0x10FFFF:
		return true
	}
	return false
}

// printableText reports whether every character of s may stand for itself,
// with tabs, and line feeds when lines is set.
func printableText(s string, lines bool) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if !yamlPrintable(r) && r != '\t' && (r != '\n' || !lines) {
			return false
		}
	}
	return true
}

// lineScalar writes a one-line text as the value of a mapping key (or, with
// flow, an item of a flow list): plain when YAML reads it back as the same
// string, else single-quoted, else (a character that cannot stand for
// itself) double-quoted with only that character escaped.
func lineScalar(s string, flow bool) string {
	if !printableText(s, false) {
		return doubleQuoted(s)
	}
	if s != "" && !strings.ContainsAny(s, "\t") && s == strings.TrimSpace(s) && readsAsPlain(s, flow) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// readsAsPlain reports whether s, written unquoted where lineScalar puts
// it, reads back as the string s: not a number, a boolean, a date, a null,
// and nothing in it that YAML takes as structure or a comment.
func readsAsPlain(s string, flow bool) bool {
	doc := "k: " + s
	if flow {
		doc = "k: [" + s + "]"
	}
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(doc), &n); err != nil || len(n.Content) != 1 {
		return false
	}
	m := n.Content[0]
	if m.Kind != yaml.MappingNode || len(m.Content) != 2 {
		return false
	}
	v := m.Content[1]
	if flow {
		if v.Kind != yaml.SequenceNode || len(v.Content) != 1 {
			return false
		}
		v = v.Content[0]
	}
	return v.Kind == yaml.ScalarNode && v.Style == 0 && v.ShortTag() == "!!str" && v.Value == s
}

// textScalar writes a text that may run over several lines, ending with
// its line break(s): a literal block when it has a line break and every
// character can stand for itself, else as one line (lineScalar).
func textScalar(s string) string {
	if !strings.Contains(s, "\n") || strings.Trim(s, "\n") == "" || !printableText(s, true) {
		return lineScalar(s, false) + "\n"
	}
	content, chomp := s, "-" // no final line break
	if strings.HasSuffix(s, "\n") {
		content, chomp = strings.TrimSuffix(s, "\n"), "" // one final line break
		if strings.HasSuffix(content, "\n") {
			chomp = "+" // more: they are kept
		}
	}
	lines := strings.Split(content, "\n")
	for _, l := range lines {
		if strings.Trim(l, " \t") == "" && strings.Contains(l, "\t") {
			// A line of blanks with a tab: YAML readers take it for an
			// empty line, not for its blanks.
			return lineScalar(s, false) + "\n"
		}
	}
	indent := ""
	for _, l := range lines {
		if l != "" {
			if l[0] == ' ' {
				indent = "2" // the first line's own spaces are not its indentation
			}
			break
		}
	}
	var b strings.Builder
	b.WriteString("|" + indent + chomp + "\n")
	for _, l := range lines {
		if l != "" {
			b.WriteString("  " + l)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// doubleQuoted writes s double-quoted, escaping what YAML needs escaped
// and the characters that cannot stand for themselves; everything else,
// non-ASCII included, as itself.
func doubleQuoted(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02X`, s[i]) // not UTF-8: Validate refuses it, so never written
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case yamlPrintable(r):
			b.WriteRune(r)
		case r < 0x100:
			fmt.Fprintf(&b, `\x%02X`, r)
		case r < 0x10000:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			fmt.Fprintf(&b, `\U%08X`, r)
		}
		i += size
	}
	b.WriteByte('"')
	return b.String()
}

// marshalTaskYAML is the task file as yaml.v3 writes it, for a task
// MarshalTask's own writing would not carry exactly.
func marshalTaskYAML(t Task) ([]byte, error) {
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
