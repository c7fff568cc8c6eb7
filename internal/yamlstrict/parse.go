// Package yamlstrict holds the rules shogun reads every hand- or
// agent-written YAML file by: the configuration (config/roles.yaml,
// config/settings.yaml) and the queue's command and report files.
//
// It exists so that those rules have one definition. The config and queue
// decoders each used to carry their own alias resolver, null check,
// syntax-error mapper and merge-key collector, and the copies had drifted
// (8 against 100 alias hops, a merge-depth guard in one only, parser panics
// recovered and bad characters located in the other only). Here each rule
// is written once, in its stricter form, and both decoders use it:
//
//   - Parse reads exactly one document, recovers from parser panics, bounds
//     the node count once aliases are expanded (alias bombs), and turns
//     yaml.v3's syntax errors into messages with a line and, for bytes YAML
//     does not allow, a column.
//   - Fields lists a mapping's keys with "<<" merge keys applied, refusing
//     duplicate and non-string keys and bounding how deep merges nest.
//   - Resolve, IsNull and Describe are the one way to follow an alias, to
//     tell "not set", and to name a value in "must be X, got Y" messages;
//     SuggestKey is the one "did you mean" for unknown keys.
//
// Files are decoded by walking yaml.Node trees rather than with
// yaml.Unmarshal into structs: the tree has to be walked anyway to bound
// alias expansion before any value is built, Unmarshal stops at the first
// type error and gives no column, and Node.Decode ignores KnownFields.
// What a file means (which keys it has, what they hold) stays with its
// decoder; this package only knows YAML.
package yamlstrict

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// DefaultMaxNodes is the node bound Parse uses when given 0. It allows
// several hundred commands in a queue file, or a roles.yaml fifty times the
// size of the scaffolded demo team (178 nodes), while stopping an alias bomb
// after a few milliseconds.
const DefaultMaxNodes = 10000

// Error is a problem at a place in a YAML document. Callers put it into
// their own error type, adding the file name.
type Error struct {
	// Line and Column are 1-based; 0 means unknown (yaml.v3 gives most
	// syntax errors a line but no column, and an empty file has neither).
	Line, Column int
	// Message says what is wrong, without the location.
	Message string
}

// Error formats the problem as "line:col: message", leaving out the parts
// that are unknown.
func (e *Error) Error() string {
	switch {
	case e.Line > 0 && e.Column > 0:
		return fmt.Sprintf("%d:%d: %s", e.Line, e.Column, e.Message)
	case e.Line > 0:
		return fmt.Sprintf("%d: %s", e.Line, e.Message)
	default:
		return e.Message
	}
}

func errorAt(n *yaml.Node, format string, args ...any) *Error {
	e := &Error{Message: fmt.Sprintf(format, args...)}
	if n != nil {
		e.Line, e.Column = n.Line, n.Column
	}
	return e
}

// Parse reads data as one YAML document and returns its root, which is
// neither an alias nor null. Documents that hold nothing (a stray "---",
// "--- ~") are skipped, so a separator at the top or bottom of a file is
// harmless; a second document with content is refused, since a person who
// wrote two would lose one. A document with more than maxNodes nodes once
// every alias is replaced by what it names is refused before anything
// walks it (0 means DefaultMaxNodes).
//
// It returns *Error rather than error because every caller re-locates the
// problem in its own error type; the result is nil exactly when the root is
// not.
func Parse(data []byte, maxNodes int) (*yaml.Node, *Error) {
	return parse(bytes.NewReader(data), data, maxNodes)
}

// parse is Parse reading from r, so that a test can make the parser fail
// from inside; data is what r holds, for locating bad characters.
func parse(r io.Reader, data []byte, maxNodes int) (*yaml.Node, *Error) {
	if maxNodes <= 0 {
		maxNodes = DefaultMaxNodes
	}
	dec := yaml.NewDecoder(r)
	var root *yaml.Node
	for {
		doc, err := decodeDocument(dec)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, syntaxError(err, data)
		}
		if len(doc.Content) == 0 || IsNull(doc.Content[0]) {
			continue // "---" alone, a stray document separator: nothing to read
		}
		if root != nil {
			return nil, errorAt(&doc, "only one YAML document is allowed, found a second one")
		}
		root = doc.Content[0]
	}
	if root == nil {
		return nil, &Error{Message: "file is empty"}
	}
	if !withinNodeLimit(root, maxNodes) {
		return nil, &Error{Message: fmt.Sprintf(
			"document has more than %d YAML nodes once aliases are expanded (an alias bomb?)", maxNodes)}
	}
	return Resolve(root), nil
}

// decodeDocument parses the next document. A panic inside yaml.v3 becomes
// an error: a file that trips a parser bug must be refused like any other
// bad file, not stop the supervisor.
func decodeDocument(dec *yaml.Decoder) (doc yaml.Node, err error) {
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
// list of aliases to itself. It never recurses, so no nesting is too deep
// for it.
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

// syntaxError turns a yaml.v3 parse error into an Error saying "invalid
// YAML: ...". yaml.v3 gives a line for most errors and never a column; for
// bytes YAML does not allow at all it gives neither, so those are located
// here in data, and so is the line a misindented block breaks at
// (misindented).
func syntaxError(err error, data []byte) *Error {
	msg := err.Error()
	if m := yamlLineRe.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		// These two name the line where the broken block starts, not the
		// line that breaks it.
		if m[2] == "did not find expected key" || m[2] == "did not find expected '-' indicator" {
			if bad, col := misindented(data, line); bad > 0 {
				return &Error{Line: bad, Column: col, Message: fmt.Sprintf(
					"invalid YAML: %s in the block that starts on line %d (check the indentation of line %d)", m[2], line, bad)}
			}
		}
		return &Error{Line: line, Message: "invalid YAML: " + m[2]}
	}
	msg = strings.TrimPrefix(msg, "yaml: ")
	e := &Error{Message: "invalid YAML: " + msg}
	if strings.Contains(msg, "control characters") || strings.Contains(msg, "UTF-8") || strings.Contains(msg, "Unicode") {
		e.Line, e.Column = locateBadChar(data)
	}
	return e
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
