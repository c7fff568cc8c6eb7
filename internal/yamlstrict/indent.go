package yamlstrict

import (
	"bytes"
	"strings"
)

// misindented finds the first line, after line from, whose indentation fits
// none of the blocks open above it: deeper than a sibling but not a child,
// between two levels, or a key where its siblings are list items ("- ").
// It returns the line and the column of its first character, or 0, 0 when
// every line fits.
//
// yaml.v3 reports such a line at the start of the block it breaks ("did
// not find expected '-' indicator" on the line of `roles:`, sixteen lines
// above the misplaced `name:`); this points at the line a person has to
// fix. It reads block YAML as people write configuration and queue files;
// lines inside block scalars (| and >) and multi-line flow collections are
// skipped, and a line it cannot judge passes.
func misindented(data []byte, from int) (line, col int) {
	type level struct {
		indent int
		seq    bool // a list's items ("- "), not a mapping's keys
	}
	var stack []level
	opened := false    // the line before was a key with no value: a block may start
	scalarIndent := -1 // inside a block scalar: lines deeper than this are its text
	flowDepth := 0     // inside a flow collection spanning lines
	for i, raw := range bytes.Split(data, []byte("\n")) {
		n := i + 1
		text := strings.TrimRight(string(raw), " \r")
		trimmed := strings.TrimLeft(text, " ")
		indent := len(text) - len(trimmed)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		if scalarIndent >= 0 {
			if indent > scalarIndent {
				continue
			}
			scalarIndent = -1
		}
		if flowDepth > 0 {
			flowDepth = max(0, flowDepth+bracketBalance(trimmed))
			continue
		}
		if strings.HasPrefix(text, "---") || strings.HasPrefix(text, "...") {
			stack, opened = nil, false
			continue
		}
		if strings.HasPrefix(trimmed, "\t") {
			return 0, 0 // yaml.v3 locates tabs itself
		}
		seq := trimmed == "-" || strings.HasPrefix(trimmed, "- ")
		key := !seq && isKeyLine(trimmed)
		popped := false
		for len(stack) > 0 && stack[len(stack)-1].indent > indent {
			stack, popped = stack[:len(stack)-1], true
		}
		top := len(stack) - 1
		switch {
		case !popped && (top < 0 || stack[top].indent < indent):
			// A child: deeper than everything open.
			stack = append(stack, level{indent, seq})
		case top < 0 || stack[top].indent < indent:
			// Back out of a block, to no level open: between two.
			if n > from {
				return n, indent + 1
			}
			return 0, 0
		case !seq && !key:
			// A scalar's continuation or something else it cannot judge.
		case stack[top].seq == seq:
			// A sibling.
		case seq && opened:
			// A list written at its key's indentation ("roles:\n- id: a").
			stack = append(stack, level{indent, true})
		case !seq && top > 0 && stack[top-1].indent == indent && !stack[top-1].seq:
			// A key after such a list: the list ends.
			stack = stack[:top]
		default:
			if n > from {
				return n, indent + 1
			}
			return 0, 0
		}
		// The blocks a list item opens on its own line: "- id: a" is an
		// item and, two columns in, the first key of a mapping.
		rest, at := trimmed, indent
		for rest == "-" || strings.HasPrefix(rest, "- ") {
			inner := strings.TrimLeft(rest[1:], " ")
			at += len(rest) - len(inner)
			rest = inner
			if rest == "" {
				break
			}
			stack = append(stack, level{at, rest == "-" || strings.HasPrefix(rest, "- ")})
		}
		value := rest
		if k := keyEnd(rest); k >= 0 {
			value = strings.TrimSpace(rest[k+1:])
		}
		if strings.HasPrefix(value, "#") {
			value = ""
		} else if c := strings.Index(value, " #"); c >= 0 {
			value = strings.TrimSpace(value[:c])
		}
		opened = isKeyLine(rest) && value == ""
		if value != "" && (value[0] == '|' || value[0] == '>') {
			scalarIndent = at
		}
		flowDepth = max(0, bracketBalance(value))
	}
	return 0, 0
}

// isKeyLine says whether s (a line without its indentation) starts with
// a mapping key: "name:" followed by a space or the end of the line.
func isKeyLine(s string) bool { return keyEnd(s) >= 0 }

// keyEnd is the index of the colon ending the key s starts with, or -1.
// Quoted keys are read to their closing quote.
func keyEnd(s string) int {
	start := 0
	if s != "" && (s[0] == '"' || s[0] == '\'') {
		q := strings.IndexByte(s[1:], s[0])
		if q < 0 {
			return -1
		}
		start = q + 2
	} else if s != "" && strings.ContainsRune("[{&*!|>%@`\"'", rune(s[0])) {
		return -1
	}
	for i := start; i < len(s); i++ {
		switch {
		case s[i] == '#' && i > 0 && s[i-1] == ' ':
			return -1
		case s[i] == ':' && (i+1 == len(s) || s[i+1] == ' '):
			return i
		}
	}
	return -1
}

// bracketBalance is how many flow collections s opens and leaves open,
// quotes and comments aside.
func bracketBalance(s string) int {
	depth := 0
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '#' && (i == 0 || s[i-1] == ' '):
			return depth
		case c == '[' || c == '{':
			depth++
		case c == ']' || c == '}':
			depth--
		}
	}
	return depth
}
