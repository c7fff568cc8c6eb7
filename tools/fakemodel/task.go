package fakemodel

import (
	"errors"
	"regexp"
	"strconv"
	"strings"
)

// lineNumber is the prefix a read tool puts before each line: Claude Code's
// Read "     1\t" (or "     1→"), Copilot CLI's view "1. ".
var lineNumber = regexp.MustCompile(`^\s*\d+(?:\t|→|\. |: |\| )`)

// parseTask reads a task file's fields from what a read tool returned:
// task_id, title, report_to and body, from the small part of YAML that
// shogun's task files use (plain, quoted and block scalars).
func parseTask(text string) (task, error) {
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	numbered := 0
	for _, l := range lines {
		if lineNumber.MatchString(l) {
			numbered++
		}
	}
	if numbered > 0 && numbered >= len(lines)/2 {
		for i, l := range lines {
			lines[i] = lineNumber.ReplaceAllString(l, "")
		}
	}
	var t task
	for i := 0; i < len(lines); i++ {
		key, val, ok := topKey(lines[i])
		if !ok {
			continue
		}
		var v string
		v, i = scalar(val, lines, i)
		switch key {
		case "task_id":
			t.ID = v
		case "title":
			t.Title = v
		case "body":
			t.Body = v
		case "report_to":
			t.ReportTo = v
		}
	}
	if t.ID == "" {
		first := text
		if len(first) > 200 {
			first = first[:200] + "…"
		}
		return t, errors.New("no task_id in " + strconv.Quote(first))
	}
	return t, nil
}

var keyPattern = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*):(?:\s+(.*))?$`)

// topKey splits a top-level "key: value" line.
func topKey(l string) (key, val string, ok bool) {
	m := keyPattern.FindStringSubmatch(strings.TrimRight(l, " \t"))
	if m == nil {
		return "", "", false
	}
	return m[1], m[2], true
}

// scalar reads the value that starts with val on line i, which may go on
// over the lines after it; it returns the value and the last line read.
func scalar(val string, lines []string, i int) (string, int) {
	switch {
	case strings.HasPrefix(val, "|") || strings.HasPrefix(val, ">"):
		var body []string
		indent := -1
		j := i + 1
		for ; j < len(lines); j++ {
			l := lines[j]
			if strings.TrimSpace(l) == "" {
				body = append(body, "")
				continue
			}
			n := len(l) - len(strings.TrimLeft(l, " "))
			if indent < 0 {
				indent = n
			}
			if n < indent || n == 0 {
				break
			}
			body = append(body, l[indent:])
		}
		for len(body) > 0 && body[len(body)-1] == "" {
			body = body[:len(body)-1]
		}
		sep := "\n"
		if val[0] == '>' {
			sep = " "
		}
		return strings.Join(body, sep), j - 1
	case strings.HasPrefix(val, `"`):
		s := val
		j := i
		for !closedDouble(s) && j+1 < len(lines) {
			j++
			s += " " + strings.TrimSpace(lines[j])
		}
		if u, err := strconv.Unquote(strings.TrimSpace(s)); err == nil {
			return u, j
		}
		return strings.Trim(s, `"`), j
	case strings.HasPrefix(val, "'"):
		s := val
		j := i
		for !closedSingle(s) && j+1 < len(lines) {
			j++
			next := strings.TrimSpace(lines[j])
			if next == "" {
				s += "\n"
			} else {
				s += " " + next
			}
		}
		s = strings.TrimSpace(s)
		s = strings.TrimSuffix(strings.TrimPrefix(s, "'"), "'")
		return strings.ReplaceAll(strings.ReplaceAll(s, "''", "'"), "\n ", "\n"), j
	}
	return strings.TrimSpace(val), i
}

func closedDouble(s string) bool {
	s = strings.TrimSpace(s)
	if len(s) < 2 || !strings.HasSuffix(s, `"`) {
		return false
	}
	bs := 0
	for k := len(s) - 2; k >= 0 && s[k] == '\\'; k-- {
		bs++
	}
	return bs%2 == 0
}

func closedSingle(s string) bool {
	s = strings.TrimSpace(s)
	if len(s) < 2 || !strings.HasSuffix(s, "'") {
		return false
	}
	return (strings.Count(s[1:], "'"))%2 == 1
}
