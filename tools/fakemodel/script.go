package fakemodel

import (
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// step is the server's answer to one request.
type step struct {
	// Note says in the log what was chosen.
	Note string
	// Text is a text answer; with Limit, the error message.
	Text string
	// Call is a tool call; nil for a text answer.
	Call *call
	// Delay makes the answer slow.
	Delay time.Duration
	// Reset, when set, makes the answer HTTP 429, a usage limit that lifts
	// then.
	Reset time.Time
	// In and Out are the tokens the answer reports in its API's usage
	// fields (see Server.ServeHTTP).
	In, Out int
}

// call is one tool call.
type call struct {
	Tool tool
	// Args are a JSON tool's arguments.
	Args map[string]any
	// Input is a freeform tool's input.
	Input string
}

// argsJSON returns the arguments as JSON text.
func (c *call) argsJSON() string {
	b, _ := json.Marshal(c.Args)
	return string(b)
}

// action is one tool call of a task's plan, before a tool is chosen.
type action struct {
	note     string
	kind     toolKind // read, write, shell; "" with mcp
	path     string   // read, write
	content  string   // write
	command  string   // shell
	escalate bool     // shell: ask the person to run it outside the sandbox
	mcp      string   // the shogun MCP tool's name
	mcpArgs  map[string]any
	summary  string // a report's summary
	// Modifiers from the directives before it.
	delay    time.Duration
	limit    time.Duration // > 0: answer 429 for this long first
	limitKey string
	// limitFor, when set, is the only credential the limit applies to
	// (Request.Key, CredentialKey): another account or CLI goes on.
	limitFor string
	// limitOne: the limit is the first credential's to meet it only
	// (limit … first-key); requests with another key go on.
	limitOne bool
}

// task is what the model reads in a task file.
type task struct {
	ID, Title, Body, ReportTo string
}

// The prompts the supervisor types (roles/preset.go): the nudge "Read
// {task_file} and carry out the task. Write your report to
// {report_file}." and the reminder "You have an open task: read
// {task_file} and write your report to {report_file}."
var nudgePattern = regexp.MustCompile(`(?is)\bread\s+(\S+)\s+and\b[^\n]*?\breport\s+to\s+(\S+?)[.,;]?(?:\s|$)`)

// decide chooses the answer to a request: the next step of the task the
// conversation is on, or a short text when it is on none.
func (s *Server) decide(c *conversation) step {
	if c.Schema != nil {
		b, _ := json.Marshal(fillSchema(c.Schema, 0))
		return step{Note: "json", Text: string(b)}
	}
	h := lastTyped(c.Messages)
	if h < 0 {
		return step{Note: "text: nothing typed", Text: "Ready."}
	}
	typed := c.Messages[h].Text
	m := nudgePattern.FindStringSubmatch(typed)
	if m == nil {
		switch {
		case strings.Contains(typed, "Report from "):
			return step{Note: "text: notification", Text: "Noted the report."}
		case regexp.MustCompile(`(?i)\bread\s+\S+\s+and\s+follow\b`).MatchString(typed):
			return step{Note: "text: startup prompt", Text: "Understood. I will wait until I am told to read my task file."}
		}
		return step{Note: "text: not a task", Text: "OK."}
	}
	if len(c.Tools) == 0 {
		return step{Note: "text: no tools offered", Text: "Working on the task."}
	}
	taskFile, reportFile := m[1], m[2]
	var results []string
	for _, msg := range c.Messages[h+1:] {
		results = append(results, msg.Results...)
	}
	cwd := c.cwd()
	if len(results) == 0 {
		return s.callStep(c, action{note: "read task " + taskFile, kind: kindRead, path: abs(cwd, taskFile)})
	}
	// The task is the last task file read since the nudge, its steps the
	// results after it: a role's nudge names the same task file every
	// time, and a resumed Gemini CLI 0.61 sends the history without the
	// new turn's nudge, so the new task's read follows the earlier one's
	// steps under the earlier nudge.
	first := lastTaskRead(results)
	t, err := parseTask(results[first])
	if err != nil {
		return step{Note: "text: task unreadable", Text: fmt.Sprintf("fakemodel: cannot read the task in %s: %v", taskFile, err)}
	}
	plan, err := planTask(t, reportFile, cwd)
	if err != nil {
		return step{Note: "text: bad directive", Text: "fakemodel: task " + t.ID + ": " + err.Error()}
	}
	i := len(results) - 1 - first
	if i < len(plan) {
		return s.callStep(c, plan[i])
	}
	st := step{Note: "text: task finished", Text: finalText(t, plan)}
	// A slow or limit directive after the last call applies to the final
	// answer.
	if tail := trailingModifiers(t); tail.delay > 0 || tail.limit > 0 {
		return s.modify(c, st, tail)
	}
	return st
}

// lastTaskRead is the index of the last result that reads as a task file
// (a task_id and a title: a report has no title), 0 when none does.
func lastTaskRead(results []string) int {
	for i := len(results) - 1; i > 0; i-- {
		if t, err := parseTask(results[i]); err == nil && t.Title != "" {
			return i
		}
	}
	return 0
}

// lastTyped returns the index of the last message a person (or the
// supervisor) typed: a user message with text and no tool results, not one
// of the context blocks a CLI adds (<environment_context> …).
func lastTyped(msgs []message) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if m.Role != "user" || len(m.Results) > 0 {
			continue
		}
		t := strings.TrimSpace(m.Text)
		if t == "" || (strings.HasPrefix(t, "<") && strings.HasSuffix(t, ">") && !nudgePattern.MatchString(stripTags(t))) {
			continue
		}
		return i
	}
	return -1
}

// typedCount counts the typed lines of msgs (see lastTyped).
func typedCount(msgs []message) int {
	n := 0
	for i := range msgs {
		if lastTyped(msgs[:i+1]) == i {
			n++
		}
	}
	return n
}

var tagPattern = regexp.MustCompile(`(?s)<system-reminder>.*?</system-reminder>`)

func stripTags(s string) string { return tagPattern.ReplaceAllString(s, "") }

// callStep turns an action into a call of one of the offered tools, or a
// text that names the missing tool.
func (s *Server) callStep(c *conversation, a action) step {
	cl, err := chooseCall(c, a)
	if err != nil {
		return step{Note: "text: " + err.Error(), Text: "fakemodel: " + a.note + ": " + err.Error()}
	}
	return s.modify(c, step{Note: a.note, Call: cl}, a)
}

// modify applies an action's slow and limit directives to a step.
func (s *Server) modify(c *conversation, st step, a action) step {
	st.Delay = a.delay
	if a.limit > 0 && (a.limitFor == "" || a.limitFor == c.Key) && (!a.limitOne || s.limitOwner(a.limitKey, c.Key) == c.Key) {
		reset := s.limitStart(a.limitKey).Add(a.limit)
		if reset.After(s.now()) {
			return step{Note: "limit until " + reset.Format("15:04:05") + " (" + st.Note + ")", Reset: reset}
		}
	}
	return st
}

// chooseCall picks the tool for an action and fills its arguments.
func chooseCall(c *conversation, a action) (*call, error) {
	if a.mcp != "" {
		t, ok := c.findMCP("shogun", a.mcp)
		if !ok {
			return nil, fmt.Errorf("no tool %s of the MCP server shogun among the %d offered", a.mcp, len(c.Tools))
		}
		return &call{Tool: t, Args: a.mcpArgs}, nil
	}
	switch a.kind {
	case kindRead:
		if t, ok := c.find(kindRead); ok {
			return &call{Tool: t, Args: map[string]any{t.arg("file_path", "absolute_path", "path"): a.path}}, nil
		}
		return shellCall(c, "cat "+quote(a.path), "no read or shell tool")
	case kindWrite:
		t, ok := c.find(kindWrite)
		if !ok {
			// Codex offers apply_patch only to models it knows; for
			// others its shell is its way to write files.
			return shellCall(c, heredoc(a.path, a.content), "no write or shell tool")
		}
		if t.Name == "apply_patch" {
			return applyPatch(t, a.path, a.content), nil
		}
		return &call{Tool: t, Args: map[string]any{
			t.arg("file_path", "path", "absolute_path"):       a.path,
			t.arg("content", "file_text", "contents", "text"): a.content,
		}}, nil
	case kindShell:
		cl, err := shellCall(c, a.command, "no shell tool")
		if err == nil && a.escalate {
			// Codex: run outside the sandbox, which asks the person.
			if _, ok := cl.Tool.props()["sandbox_permissions"]; ok {
				cl.Args["sandbox_permissions"] = "require_escalated"
				cl.Args["justification"] = "fakemodel asks: may I run this?"
			}
		}
		return cl, err
	}
	return nil, fmt.Errorf("unknown action %q", a.kind)
}

func shellCall(c *conversation, command, missing string) (*call, error) {
	t, ok := c.find(kindShell)
	if !ok {
		return nil, fmt.Errorf("%s (one of %s) among the %d offered", missing, strings.Join(toolNames[kindShell], ", "), len(c.Tools))
	}
	args := map[string]any{}
	name := t.arg("command", "cmd")
	if t.argType(name) == "array" {
		args[name] = []string{"bash", "-lc", command}
	} else {
		args[name] = command
	}
	if _, ok := t.props()["description"]; ok {
		args["description"] = "fakemodel step"
	}
	return &call{Tool: t, Args: args}, nil
}

// heredoc is a shell command that writes content to file.
func heredoc(file, content string) string {
	return "cat > " + quote(file) + " <<'FAKEMODEL_EOF'\n" + content + "FAKEMODEL_EOF"
}

// applyPatch is Codex's way to write a file: a patch that adds it.
func applyPatch(t tool, file, content string) *call {
	var b strings.Builder
	b.WriteString("*** Begin Patch\n*** Add File: " + file + "\n")
	for _, l := range strings.SplitAfter(strings.TrimSuffix(content, "\n"), "\n") {
		b.WriteString("+" + strings.TrimSuffix(l, "\n") + "\n")
	}
	b.WriteString("*** End Patch\n")
	if t.Freeform {
		return &call{Tool: t, Input: b.String()}
	}
	return &call{Tool: t, Args: map[string]any{t.arg("input", "patch"): b.String()}}
}

func abs(cwd, p string) string {
	if path.IsAbs(p) || cwd == "" {
		return p
	}
	return path.Join(cwd, p)
}

// quote quotes a word for a POSIX shell.
func quote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("/._-+:,=@", r)))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func finalText(t task, plan []action) string {
	for i := len(plan) - 1; i >= 0; i-- {
		if plan[i].summary != "" {
			return "Done: " + plan[i].summary
		}
	}
	return "Done: task " + t.ID + " (" + t.Title + ")."
}

// trailingModifiers are the slow and limit directives after the last
// directive that calls a tool: they apply to the final text.
func trailingModifiers(t task) action {
	var a action
	for i, d := range directives(t.Body) {
		f := fields(d.text)
		if len(f) == 0 {
			continue
		}
		switch f[0] {
		case "slow":
			a.delay, _ = time.ParseDuration(arg(f, 1))
		case "limit":
			a.limit, a.limitFor, a.limitOne, _ = limitArgs(f)
			a.limitKey = fmt.Sprintf("%s/%d", t.ID, i)
		default:
			a = action{}
		}
	}
	return a
}

// limitArgs reads "limit [DURATION] [for KEY]": how long (default an hour)
// and, when named, the only credential it applies to.
func limitArgs(f []string) (d time.Duration, forKey string, firstKey bool, err error) {
	d, rest := time.Hour, f[1:]
	if len(rest) > 0 && rest[len(rest)-1] == "first-key" {
		firstKey, rest = true, rest[:len(rest)-1]
	}
	if len(rest) > 0 && rest[0] != "for" {
		dur, err := time.ParseDuration(rest[0])
		if err != nil || dur <= 0 {
			return 0, "", false, errors.New("limit wants a duration such as 2m")
		}
		d, rest = dur, rest[1:]
	}
	switch {
	case len(rest) == 0:
		return d, "", firstKey, nil
	case len(rest) == 2 && rest[0] == "for" && rest[1] != "" && !firstKey:
		return d, rest[1], false, nil
	}
	return 0, "", false, errors.New("limit wants [DURATION] [for KEY | first-key], KEY a credential's key (fakemodel.CredentialKey)")
}

// directive is one "fakemodel:" line of a task's body.
type directive struct {
	line int
	text string
}

var directivePattern = regexp.MustCompile(`^\s*fakemodel:\s*(.*?)\s*$`)

func directives(body string) []directive {
	var out []directive
	for i, l := range strings.Split(body, "\n") {
		if m := directivePattern.FindStringSubmatch(l); m != nil {
			out = append(out, directive{line: i + 1, text: m[1]})
		}
	}
	return out
}

// planTask turns the task's directives into the tool calls after the read.
func planTask(t task, reportFile, cwd string) ([]action, error) {
	var plan []action
	var mod action // slow and limit waiting for the next call
	for i, d := range directives(t.Body) {
		f := fields(d.text)
		if len(f) == 0 {
			return nil, fmt.Errorf("body line %d: empty directive", d.line)
		}
		note := fmt.Sprintf("directive %d: %s", i+1, d.text)
		a := action{note: note}
		switch f[0] {
		case "write":
			if len(f) < 2 {
				return nil, fmt.Errorf("body line %d: write wants a path and a text", d.line)
			}
			a.kind, a.path, a.content = kindWrite, abs(cwd, f[1]), rest(d.text, 2)+"\n"
			if f[1] == "$REPORT" {
				a.path = abs(cwd, reportPath(t, reportFile))
			}
			if len(f) == 3 && f[2] == "" {
				// write PATH "": an empty file, as a CLI that creates
				// the file first and fills it in a second call leaves it.
				a.content = ""
			}
		case "run", "ask":
			if len(f) < 2 {
				return nil, fmt.Errorf("body line %d: %s wants a command", d.line, f[0])
			}
			a.kind, a.command, a.escalate = kindShell, strings.TrimSpace(strings.TrimPrefix(d.text, f[0])), f[0] == "ask"
		case "report":
			var err error
			if a, err = reportAction(t, f, d, reportFile, cwd); err != nil {
				return nil, err
			}
			a.note = note
		case "send":
			// send ROLE [via mcp] TITLE BODY
			g := f[1:]
			if len(g) >= 2 && g[1] == "via" {
				if len(g) < 3 || g[2] != "mcp" {
					return nil, fmt.Errorf("body line %d: send goes via mcp only", d.line)
				}
				g = append(g[:1:1], g[3:]...)
			}
			if len(g) < 3 {
				return nil, fmt.Errorf("body line %d: send wants a role, a title and a body", d.line)
			}
			a.mcp, a.mcpArgs = "send_task", map[string]any{"to": g[0], "title": g[1], "body": strings.Join(g[2:], " ")}
		case "slow":
			dur, err := time.ParseDuration(arg(f, 1))
			if err != nil {
				return nil, fmt.Errorf("body line %d: slow wants a duration such as 5s", d.line)
			}
			mod.delay = dur
			continue
		case "limit":
			var err error
			if mod.limit, mod.limitFor, mod.limitOne, err = limitArgs(f); err != nil {
				return nil, fmt.Errorf("body line %d: %w", d.line, err)
			}
			mod.limitKey = fmt.Sprintf("%s/%d", t.ID, i)
			continue
		default:
			return nil, fmt.Errorf("body line %d: unknown directive %q (want write, run, ask, report, send, slow or limit)", d.line, f[0])
		}
		a.delay, a.limit, a.limitKey, a.limitFor, a.limitOne = mod.delay, mod.limit, mod.limitKey, mod.limitFor, mod.limitOne
		mod = action{}
		plan = append(plan, a)
	}
	return plan, nil
}

// reportAction is "report STATUS [as ID] [via ROUTE] [SUMMARY]".
func reportAction(t task, f []string, d directive, reportFile, cwd string) (action, error) {
	if len(f) < 2 {
		return action{}, fmt.Errorf("body line %d: report wants a status", d.line)
	}
	status, route, n, id := f[1], "write", 2, t.ID
	switch status {
	case "done", "failed", "blocked":
	default:
		return action{}, fmt.Errorf("body line %d: report status %q, want done, failed or blocked", d.line, status)
	}
	if len(f) > 3 && f[2] == "as" {
		// A sloppy model's report naming another task.
		id, n = f[3], n+2
		f = append(f[:2:2], f[4:]...)
	}
	if len(f) > 3 && f[2] == "via" {
		route, n = f[3], n+2
	}
	summary := rest(d.text, n)
	if summary == "" {
		summary = "Task " + t.ID + " " + status + "."
	}
	a, err := reportRoute(route, id, status, summary, abs(cwd, reportPath(t, reportFile)))
	if err != nil {
		return action{}, fmt.Errorf("body line %d: %w", d.line, err)
	}
	a.summary = summary
	return a, nil
}

// reportPath is the report file the nudge named, else the task file's.
func reportPath(t task, reportFile string) string {
	if reportFile == "" {
		return t.ReportTo
	}
	return reportFile
}

// reportRoute is the call that writes a report by one route.
func reportRoute(route, id, status, summary, file string) (action, error) {
	yaml := "task_id: " + id + "\nstatus: " + status + "\nsummary: " + yamlString(summary) + "\n"
	switch route {
	case "write":
		return action{kind: kindWrite, path: file, content: yaml}, nil
	case "shell":
		return action{kind: kindShell, command: heredoc(file, yaml)}, nil
	case "mv":
		tmp := file + ".tmp"
		return action{kind: kindShell, command: heredoc(tmp, yaml) + "\nmv " + quote(tmp) + " " + quote(file)}, nil
	case "mcp":
		return action{mcp: "report", mcpArgs: map[string]any{"task_id": id, "status": status, "summary": summary}}, nil
	}
	return action{}, fmt.Errorf("report route %q, want write, shell, mv or mcp", route)
}

// yamlString writes s as a YAML scalar: plain when that reads back the same,
// double-quoted otherwise.
func yamlString(s string) string {
	plain := regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9 _.,()/+-]*$`)
	if plain.MatchString(s) && !strings.HasSuffix(s, " ") {
		return s
	}
	return strconv.Quote(s)
}

// fields splits a directive into words; a "double-quoted" word may hold
// spaces and Go escapes (\n, \").
func fields(s string) []string {
	var out []string
	for s = strings.TrimSpace(s); s != ""; s = strings.TrimSpace(s) {
		if s[0] == '"' {
			if q, err := strconv.QuotedPrefix(s); err == nil {
				u, _ := strconv.Unquote(q)
				out = append(out, u)
				s = s[len(q):]
				continue
			}
		}
		i := strings.IndexFunc(s, unicode.IsSpace)
		if i < 0 {
			i = len(s)
		}
		out = append(out, s[:i])
		s = s[i:]
	}
	return out
}

// rest returns the text after the first n words: unquoted when it is one
// quoted string, as written otherwise.
func rest(s string, n int) string {
	s = strings.TrimSpace(s)
	for range n {
		if s != "" && s[0] == '"' {
			if q, err := strconv.QuotedPrefix(s); err == nil {
				s = strings.TrimSpace(s[len(q):])
				continue
			}
		}
		i := strings.IndexFunc(s, unicode.IsSpace)
		if i < 0 {
			return ""
		}
		s = strings.TrimSpace(s[i:])
	}
	if q, err := strconv.QuotedPrefix(s); err == nil && len(q) == len(s) {
		u, _ := strconv.Unquote(q)
		return u
	}
	return s
}

func arg(f []string, i int) string {
	if i < len(f) {
		return f[i]
	}
	return ""
}
