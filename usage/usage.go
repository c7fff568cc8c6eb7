package usage

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"
)

// Tokens are the tokens of one model call or a sum of them. Input counts
// the prompt tokens not read from a cache; Output counts every generated
// token, reasoning included; Reasoning is the part of Output the model
// spent thinking (shown, not priced apart).
type Tokens struct {
	Input      int64 `json:"input"`
	Output     int64 `json:"output"`
	CacheRead  int64 `json:"cache_read"`
	CacheWrite int64 `json:"cache_write"`
	Reasoning  int64 `json:"reasoning"`
}

// Add returns t plus u.
func (t Tokens) Add(u Tokens) Tokens {
	return Tokens{t.Input + u.Input, t.Output + u.Output, t.CacheRead + u.CacheRead,
		t.CacheWrite + u.CacheWrite, t.Reasoning + u.Reasoning}
}

// Total is every token the server read or wrote (reasoning is inside Output).
func (t Tokens) Total() int64 { return t.Input + t.Output + t.CacheRead + t.CacheWrite }

// Record is one model call as a CLI recorded it.
type Record struct {
	// Key tells the call apart from the others of its file: a CLI may
	// write the same call on several lines (Claude Code, while it streams;
	// Gemini CLI, as a message grows), and the last one wins.
	Key   string
	At    time.Time
	Model string
	Tokens
}

// Cursor is where reading a file stopped: the byte after the last
// complete line read, and what the reader must remember of the lines
// before it (Codex's running totals, whether the file is the role's).
type Cursor struct {
	Offset int64
	State  string
}

// The CLIs whose records this package reads (config.Role.CLI).
const (
	CLIClaude  = "claude"
	CLICodex   = "codex"
	CLIGemini  = "gemini"
	CLICopilot = "copilot"
)

// Source is where one role's CLI keeps its records.
type Source struct {
	Role string
	// CLI is one of the CLI constants; any other is not read.
	CLI string
	// Home is the CLI's own folder: CLAUDE_CONFIG_DIR or ~/.claude,
	// CODEX_HOME or ~/.codex, ~/.gemini; for Copilot CLI, the file of its
	// OpenTelemetry export (CopilotOTelFile).
	Home string
	// Workdir is the folder the role runs in; only conversations held
	// there are the role's.
	Workdir string
}

// SourceFor is the Source of a role run with env (the role's own entries
// over the supervisor's environment, as lookup answers) in workdir. ok is
// false for a CLI whose records are not read, and for a copilot role whose
// environment names no export file (COPILOT_OTEL_FILE_EXPORTER_PATH).
func SourceFor(role, cli, workdir string, lookup func(string) (string, bool)) (Source, bool) {
	switch cli {
	case CLIClaude, CLICodex, CLIGemini, CLICopilot:
	default:
		// No records to read; and no folder to resolve either, which
		// every task's close asked of every configured role.
		return Source{}, false
	}
	home, _ := lookup("HOME")
	if home == "" {
		home, _ = lookup("USERPROFILE")
	}
	// The CLIs record the folder as the OS gives it (getcwd), links
	// resolved.
	if real, err := filepath.EvalSymlinks(workdir); err == nil {
		workdir = real
	}
	s := Source{Role: role, CLI: cli, Workdir: workdir}
	switch cli {
	case CLIClaude:
		s.Home = filepath.Join(home, ".claude")
		if d, _ := lookup("CLAUDE_CONFIG_DIR"); d != "" {
			s.Home = d
		}
	case CLICodex:
		s.Home = filepath.Join(home, ".codex")
		if d, _ := lookup("CODEX_HOME"); d != "" {
			s.Home = d
		}
	case CLIGemini:
		s.Home = filepath.Join(home, ".gemini")
		if d, _ := lookup("GEMINI_CLI_HOME"); d != "" {
			s.Home = filepath.Join(d, ".gemini")
		}
	case CLICopilot:
		s.Home, _ = lookup(CopilotOTelFileVar)
		return s, s.Home != ""
	default:
		return Source{}, false
	}
	return s, home != "" || s.Home != ""
}

// Files are the record files of s changed at or after since, oldest
// first. Files not changed since are left alone: a user's history from
// before the team started is not the role's.
func (s Source) Files(since time.Time) ([]string, error) {
	var pattern string
	switch s.CLI {
	case CLIClaude:
		pattern = filepath.Join(s.Home, "projects", claudeProject(s.Workdir), "*.jsonl")
	case CLICodex:
		pattern = filepath.Join(s.Home, "sessions", "*", "*", "*", "rollout-*.jsonl")
	case CLIGemini:
		pattern = filepath.Join(s.Home, "tmp", "*", "chats", "session-*.json*")
	case CLICopilot:
		// The role's own export file, named: not a pattern.
	default:
		return nil, nil
	}
	names := []string{s.Home}
	if pattern != "" {
		var err error
		if names, err = filepath.Glob(pattern); err != nil {
			return nil, fmt.Errorf("list %s records of %s: %w", s.CLI, s.Role, err)
		}
	}
	type file struct {
		name string
		mod  time.Time
	}
	var files []file
	for _, n := range names {
		// Lstat: a link is not followed (it could lead to a FIFO, which
		// would block the reader, or to a file outside the CLI's folder).
		fi, err := os.Lstat(n)
		if err != nil || !fi.Mode().IsRegular() || fi.ModTime().Before(since.Add(-mtimeSlack)) {
			continue
		}
		files = append(files, file{n, fi.ModTime()})
	}
	sort.Slice(files, func(i, j int) bool { return files[i].mod.Before(files[j].mod) })
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = f.name
	}
	return out, nil
}

// mtimeSlack widens the look back at files' modification times: file
// systems stamp them from a coarse clock that can lag the time a program
// reads by a few milliseconds, so a file written just after since may
// carry an earlier time. The records themselves are held to since.
const mtimeSlack = 2 * time.Second

// stateNotOurs marks a file that holds another folder's conversation.
const stateNotOurs = "other"

// Foreign reports whether the file read up to c holds another folder's
// conversation, none of it the role's.
func (c Cursor) Foreign() bool { return c.State == stateNotOurs }

// lineParser reads one CLI's lines. line returns the records a line
// holds, and mine false when the line shows the file is not the role's;
// state is what the next Read needs to go on.
type lineParser interface {
	line(b []byte, offset int64) (recs []Record, mine bool)
	state() string
}
