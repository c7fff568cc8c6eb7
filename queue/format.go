// Package queue runs a workspace's file protocol (DESIGN.md section 5): it
// watches runtime/queue/, claims the command and report files that agents and
// people drop there, checks them, turns each command into a task for one role
// and each report into a closed task, and moves rejected files to failed/
// with a note saying why. A role at its usage limit hands its open tasks to
// its fallback role (fallback.go).
//
// The files come from programs and people the supervisor cannot trust to be
// careful, so every file is read strictly and cheaply: a size limit before
// parsing, a bound on YAML nodes after aliases are expanded, no unknown keys,
// and an error that names the file, line and column of the first problem.
// The YAML rules themselves are internal/yamlstrict's, shared with the
// configuration. What each file holds is here, one file per format:
// command.go, report.go, task.go (with taskfile.go, which writes it); this
// file has the checks they share, formatdecode.go turns a parsed file into
// their structs, and limits.go bounds what reading one may cost.
package queue

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/shogun-dev/shogun/textsafe"
)

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

// MaxIDLength is the longest id, command_id or task_id, in bytes. Ids end up
// in file names and log lines, where long ones break or get cut.
const MaxIDLength = 128

// roleIDRe is the shape of a role id, as config requires it of roles.yaml.
var roleIDRe = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,31}$`)

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

// checkTagWords refuses a tag with spaces in a command: a tag is one word
// (the console's form splits on spaces). Task files are not held to it, so
// that a task an older shogun accepted with such a tag still goes out.
func checkTagWords(tags []string) *fieldError {
	for i, t := range tags {
		if strings.ContainsFunc(t, unicode.IsSpace) {
			field := fmt.Sprintf("tags[%d]", i)
			return &fieldError{field: field, msg: fmt.Sprintf(`%q must not contain spaces (a tag is one word, such as frontend), got %q`, field, t)}
		}
	}
	return nil
}
