package config

import (
	"fmt"
	"sort"
	"strings"
)

// Error is one problem in a configuration file, located the way compilers
// locate theirs so that editors can jump to it.
type Error struct {
	// File is the path relative to the workspace, with forward slashes
	// (config/roles.yaml), so messages read the same on every OS.
	File string
	// Line and Column are 1-based. 0 means unknown (a YAML syntax error has
	// no column, an empty file has no line) and is left out of Error().
	Line, Column int
	// Message says what is wrong, without the location.
	Message string
}

// Error formats the problem as "file:line:col: message".
func (e Error) Error() string {
	switch {
	case e.Line > 0 && e.Column > 0:
		return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Column, e.Message)
	case e.Line > 0:
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Message)
	default:
		return fmt.Sprintf("%s: %s", e.File, e.Message)
	}
}

// Errors is every problem found while loading a workspace's configuration.
// Load returns all of them at once so that a person fixes the files in one
// pass instead of one error per `shogun start`.
type Errors struct {
	List []Error

	warnings []Error // not errors: Load returns them in Config.Warnings
	seen     map[Error]bool
}

// Error joins the problems, one per line.
func (e *Errors) Error() string {
	lines := make([]string, len(e.List))
	for i, item := range e.List {
		lines[i] = item.Error()
	}
	return strings.Join(lines, "\n")
}

// add records a problem at a position, once: a mapping merged with "<<" in
// several places is checked at each, and its problems are still one each.
func (e *Errors) add(file string, line, col int, format string, args ...any) {
	item := Error{File: file, Line: line, Column: col, Message: fmt.Sprintf(format, args...)}
	if e.seen[item] {
		return
	}
	if e.seen == nil {
		e.seen = map[Error]bool{}
	}
	e.seen[item] = true
	e.List = append(e.List, item)
}

// warn records something suspicious that does not stop a start.
func (e *Errors) warn(file string, line, col int, format string, args ...any) {
	e.warnings = append(e.warnings, Error{File: file, Line: line, Column: col, Message: fmt.Sprintf(format, args...)})
}

// sortFrom orders the problems found since start (those of one file) by
// position, keeping the order of discovery for equal positions: checks run
// key by key, but a person reads the file top to bottom.
func (e *Errors) sortFrom(start int) {
	tail := e.List[start:]
	sort.SliceStable(tail, func(i, j int) bool {
		if tail[i].Line != tail[j].Line {
			return tail[i].Line < tail[j].Line
		}
		return tail[i].Column < tail[j].Column
	})
}

// err returns e as an error, or nil when nothing was found, so that a nil
// *Errors never hides inside a non-nil error interface.
func (e *Errors) err() error {
	if len(e.List) == 0 {
		return nil
	}
	return e
}
