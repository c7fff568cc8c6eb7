package fakemodel

import (
	"net/http"
	"regexp"
	"strings"
	"time"
)

// api is one wire protocol: it turns a request body into a conversation
// and writes a step as that protocol's answer.
type api interface {
	name() string
	parse(r *http.Request, body []byte) (*conversation, error)
	// write answers with the step, streamed or not as the request asked.
	write(out *stream, s *Server, c *conversation, st step)
	// writeError answers with the protocol's error body.
	writeError(w http.ResponseWriter, status int, msg string)
	// writeLimit answers HTTP 429 with the protocol's usage-limit error,
	// for a limit that lifts at reset.
	writeLimit(w http.ResponseWriter, reset time.Time)
}

// conversation is a request in a form common to every API.
type conversation struct {
	Model  string
	Stream bool
	// System is the system prompt or instructions.
	System   string
	Tools    []tool
	Messages []message
	// Schema is the JSON schema a side request wants its answer to match
	// (a title, a next-speaker check); nil for a turn of the agent.
	Schema map[string]any
	// Key is the request's credential (Request.Key).
	Key string
}

// message is one turn. A user turn carries what a person typed (Text) or
// the results of the model's tool calls (Results); an assistant turn
// carries text and the number of tool calls it made.
type message struct {
	Role    string // "user" or "assistant"
	Text    string
	Calls   []string // names of the tools called
	Results []string // tool results' text, in order
}

// tool is a tool offered to the model.
type tool struct {
	Name string
	// Namespace is the Codex namespace tool the tool came in
	// (mcp__shogun), empty for a plain tool.
	Namespace string
	// Freeform is a Codex custom tool whose input is raw text, not JSON.
	Freeform bool
	// Params is the JSON schema of the arguments.
	Params map[string]any
}

func (t tool) String() string {
	if t.Namespace != "" {
		return t.Namespace + "/" + t.Name
	}
	return t.Name
}

// props returns the tool's argument properties.
func (t tool) props() map[string]any {
	p, _ := t.Params["properties"].(map[string]any)
	return p
}

// arg returns the first of the names that the tool's schema has, else the
// first name.
func (t tool) arg(names ...string) string {
	p := t.props()
	for _, n := range names {
		if _, ok := p[n]; ok {
			return n
		}
	}
	return names[0]
}

// argType returns the JSON type of the named argument ("" if unknown).
func (t tool) argType(name string) string {
	p, _ := t.props()[name].(map[string]any)
	switch ty := p["type"].(type) {
	case string:
		return strings.ToLower(ty)
	case []any:
		if len(ty) > 0 {
			s, _ := ty[0].(string)
			return strings.ToLower(s)
		}
	}
	return ""
}

// toolKind is an action the script needs a tool for.
type toolKind string

const (
	kindRead  toolKind = "read"
	kindWrite toolKind = "write"
	kindShell toolKind = "shell"
)

// toolNames are the names each CLI gives its tools, by action, in the
// order they are tried.
var toolNames = map[toolKind][]string{
	// Claude Code Read, Gemini CLI read_file, Copilot CLI view.
	kindRead: {"Read", "read_file", "view"},
	// Claude Code Write, Gemini CLI write_file, Copilot CLI create,
	// Codex and Copilot CLI apply_patch.
	kindWrite: {"Write", "write_file", "create", "apply_patch"},
	// Claude Code Bash, Gemini CLI run_shell_command, Codex
	// shell_command / shell / exec_command, Copilot CLI bash.
	kindShell: {"Bash", "run_shell_command", "shell_command", "exec_command", "shell", "bash", "powershell"},
}

// find returns the tool for the action.
func (c *conversation) find(k toolKind) (tool, bool) {
	for _, n := range toolNames[k] {
		for _, t := range c.Tools {
			if t.Namespace == "" && t.Name == n {
				return t, true
			}
		}
	}
	return tool{}, false
}

// findMCP returns the tool name of the MCP server named server: Claude
// Code's mcp__shogun__report, Gemini CLI's mcp_shogun_report (or plain
// report), Copilot CLI's shogun-report, Codex's report in the namespace
// mcp__shogun.
func (c *conversation) findMCP(server, name string) (tool, bool) {
	for _, t := range c.Tools {
		if t.Namespace != "" && strings.Contains(t.Namespace, server) && t.Name == name {
			return t, true
		}
	}
	for _, full := range []string{"mcp__" + server + "__" + name, "mcp_" + server + "_" + name, server + "-" + name,
		server + "__" + name, server + "_" + name, server + "." + name} {
		for _, t := range c.Tools {
			if t.Namespace == "" && t.Name == full {
				return t, true
			}
		}
	}
	return tool{}, false
}

// cwdPatterns find the working folder in what each CLI tells its model:
// Claude Code "Working directory: /p", Codex "<cwd>/p</cwd>", Gemini CLI
// "I'm currently working in the directory: /p", Copilot CLI "Current
// working directory: /p".
var cwdPatterns = []*regexp.Regexp{
	regexp.MustCompile(`<cwd>([^<\n]+)</cwd>`),
	regexp.MustCompile(`(?i)working directory(?: is)?:\s*(/[^\s<>'"` + "`" + `]*)`),
	regexp.MustCompile(`(?i)working in the directory:?\s*(/[^\s<>'"` + "`" + `]*)`),
	regexp.MustCompile(`(?i)workspace directories:\**\s*-\s*(/[^\s<>'"` + "`" + `]*)`),
	regexp.MustCompile(`(?i)\bcwd:?\s*(/[^\s<>'"` + "`" + `]*)`),
}

// cwd returns the CLI's working folder, or "" when the request does not
// say.
func (c *conversation) cwd() string {
	texts := []string{c.System}
	for _, m := range c.Messages {
		if m.Role == "user" {
			texts = append(texts, m.Text)
		}
	}
	for _, re := range cwdPatterns {
		for _, t := range texts {
			if m := re.FindStringSubmatch(t); m != nil {
				return strings.TrimRight(strings.TrimSpace(m[1]), ".,;:")
			}
		}
	}
	return ""
}

// limitText is the usage-limit message the APIs put in their error bodies,
// worded so that the CLI's screen matches its preset's LimitPattern and
// names the reset as a local time of day.
func limitText(reset time.Time) string {
	return "You've hit your usage limit (fakemodel) · resets " + reset.Local().Format("15:04:05") +
		" · try again at " + reset.Local().Format("15:04:05")
}

// retryAfter is the whole seconds until reset, at least 1.
func retryAfter(reset time.Time) int {
	return max(int(time.Until(reset).Seconds()+0.999), 1)
}
