// Package workspace names every folder and file of a shogun workspace
// (DESIGN.md section 2): the one place a path is spelled. Everything else
// asks a Layout, so a change to the layout is a change here.
//
//	config/settings.yaml, config/roles.yaml     configuration
//	config/policy.yaml                          the approvals policy
//	roles/                                      role instructions
//	runtime/queue/commands/                     commands dropped by anyone
//	runtime/queue/tasks/<role>.yaml             a role's current task
//	runtime/queue/reports/<role>.yaml           where a role reports
//	runtime/queue/archive/<day>/<kind>/         processed files, by the day they were archived
//	runtime/queue/failed/                       rejected files
//	runtime/logs/<role>.log                     a role's PTY log
//	runtime/logs/supervisor/shogun.log          the supervisor's log, in a folder no role id can name
//	runtime/state/                              status.yaml, shogun.sock, shogun.lock, pids.json, ui.json
//	runtime/dashboard.md                        the dashboard
//	data/shogun.db                              the history (data.sqlite_path)
//	.mcp.json, .claude/, .codex/, .gemini/      the CLIs' MCP configuration (shogun mcp)
package workspace

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// The layout relative to the workspace, slash separated: what `shogun init`
// creates and what is shown to people and agents. Layout's methods give the
// same paths absolute.
const (
	ConfigDir     = "config"
	SettingsFile  = "config/settings.yaml"
	RolesFile     = "config/roles.yaml"
	PolicyFile    = "config/policy.yaml"
	RolesDir      = "roles"
	RuntimeDir    = "runtime"
	QueueDir      = "runtime/queue"
	CommandsDir   = "runtime/queue/commands"
	TasksDir      = "runtime/queue/tasks"
	ReportsDir    = "runtime/queue/reports"
	ArchiveDir    = "runtime/queue/archive"
	FailedDir     = "runtime/queue/failed"
	LogsDir       = "runtime/logs"
	StateDir      = "runtime/state"
	TempDir       = "runtime/tmp" // sandboxed roles' temp folders, when theirs holds the workspace
	DashboardFile = "runtime/dashboard.md"
	DataDir       = "data"
	DatabaseFile  = "data/shogun.db" // the default of data.sqlite_path

	// The CLIs' project configuration that makes them start `shogun mcp`
	// (config.MCPClientFiles), and Claude Code's approvals hook.
	MCPJSONFile        = ".mcp.json"             // Claude Code, Copilot CLI
	ClaudeSettingsFile = ".claude/settings.json" // Claude Code
	CodexConfigFile    = ".codex/config.toml"    // Codex
	GeminiSettingsFile = ".gemini/settings.json" // Gemini CLI
	// GeminiPolicyFile holds config/policy.yaml's shell deny rules in
	// Gemini CLI's policy engine (config.GeminiPolicy); settings.json
	// names it.
	GeminiPolicyFile = ".gemini/shogun-policy.toml"
	// CodexRulesFile holds them as Codex's execpolicy rules
	// (config.CodexRules), read from .codex/rules/ in a trusted project.
	CodexRulesFile = ".codex/rules/shogun.rules"
)

// The supervisor's own log and its rotations live in a folder of their own.
// A role's log is LogsDir/<id>.log and a role id has no slash
// (config.ValidRoleID), so no role, not even one named shogun, can write
// into the supervisor's log, rotate it away or be shown as it.
const (
	SupervisorLogDir  = "runtime/logs/supervisor"
	SupervisorLogFile = "runtime/logs/supervisor/shogun.log"
)

// Layout gives the absolute paths of one workspace.
type Layout struct {
	// Root is the workspace folder, absolute.
	Root string
}

// New returns the layout of the workspace at root (made absolute).
func New(root string) Layout {
	if abs, err := filepath.Abs(root); err == nil {
		root = abs
	}
	return Layout{Root: root}
}

// WorktreesDir is where role worktrees live, relative to the main
// checkout of their repository: WorktreesDir/<role id> (package gitwork).
const WorktreesDir = ".shogun/worktrees"

// Find returns the workspace that holds dir, the way git finds a
// repository: dir itself or the nearest folder above it that has
// config/roles.yaml. ok is false when no folder up to the root has one.
// A role's worktree holds the committed config/roles.yaml too; inside
// one, the workspace is the one above the worktree, where its team runs.
func Find(dir string) (root string, ok bool) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", false
	}
	for {
		if fi, err := os.Stat(filepath.Join(dir, filepath.FromSlash(RolesFile))); err == nil && fi.Mode().IsRegular() {
			if above, ok := outsideWorktree(dir); ok {
				if outer, ok := Find(above); ok {
					return outer, true
				}
			}
			return dir, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

// outsideWorktree returns the folder that holds the role worktrees dir is
// in (the main checkout), when dir is inside one.
func outsideWorktree(dir string) (string, bool) {
	marker := string(filepath.Separator) + filepath.FromSlash(WorktreesDir) + string(filepath.Separator)
	if i := strings.LastIndex(dir+string(filepath.Separator), marker); i > 0 {
		return dir[:i], true
	}
	return "", false
}

// Path turns a slash-separated path relative to the workspace (one of the
// constants) into an absolute path for this OS.
func (l Layout) Path(rel string) string { return filepath.Join(l.Root, filepath.FromSlash(rel)) }

// Commands is where commands are dropped.
func (l Layout) Commands() string { return l.Path(CommandsDir) }

// Tasks holds each role's current task file.
func (l Layout) Tasks() string { return l.Path(TasksDir) }

// Reports is where agents write reports.
func (l Layout) Reports() string { return l.Path(ReportsDir) }

// Archive keeps processed commands, reports and superseded task files.
func (l Layout) Archive() string { return l.Path(ArchiveDir) }

// ArchiveDayFormat names an archive day folder: the local date a file was
// archived on, so that no folder holds a year of files and a person finds a
// day's work by its date.
const ArchiveDayFormat = "2006-01-02"

// ArchiveKinds are the folders of an archive day: processed commands,
// processed reports, and task files a role's next task replaced.
var ArchiveKinds = []string{"commands", "reports", "tasks"}

// ArchiveFor is the folder that files of kind (one of ArchiveKinds)
// archived at t go to: archive/<YYYY-MM-DD>/<kind>.
func (l Layout) ArchiveFor(kind string, t time.Time) string {
	return filepath.Join(l.Archive(), t.Local().Format(ArchiveDayFormat), kind)
}

// ArchiveDays returns the archive's day folder names, oldest first, ignoring
// anything else there (such as the flat kind folders of
// the older layout, which ArchiveLegacy names).
func ArchiveDays(names []string) []string {
	var days []string
	for _, n := range names {
		if _, err := time.Parse(ArchiveDayFormat, n); err == nil && len(n) == len(ArchiveDayFormat) {
			days = append(days, n)
		}
	}
	// YYYY-MM-DD sorts as text.
	slices.Sort(days)
	return days
}

// ArchiveLegacy is the folder of kind in the archive's older, flat layout
// (archive/<kind>/), still read so a workspace keeps its past.
func (l Layout) ArchiveLegacy(kind string) string { return filepath.Join(l.Archive(), kind) }

// Failed keeps rejected files with their error records.
func (l Layout) Failed() string { return l.Path(FailedDir) }

// TaskFile is the role's current task.
func (l Layout) TaskFile(role string) string { return filepath.Join(l.Tasks(), role+".yaml") }

// ReportFile is where the role writes its report.
func (l Layout) ReportFile(role string) string { return filepath.Join(l.Reports(), role+".yaml") }

// Logs holds the roles' PTY logs and the supervisor's log.
func (l Layout) Logs() string { return l.Path(LogsDir) }

// RoleLog is the raw PTY output of the role.
func (l Layout) RoleLog(role string) string { return filepath.Join(l.Logs(), role+".log") }

// RoleTemp is the temp folder of a sandboxed role whose own temp folder
// holds the workspace (supervisor's sandboxed).
func (l Layout) RoleTemp(role string) string { return filepath.Join(l.Path(TempDir), role) }

// SupervisorLog is the supervisor's own log (zerolog JSON).
func (l Layout) SupervisorLog() string { return l.Path(SupervisorLogFile) }

// SupervisorLogLegacy is where the older layout kept the supervisor's log,
// runtime/logs/shogun.log: the log a role named shogun has now
// (MoveLegacySupervisorLog).
func (l Layout) SupervisorLogLegacy() string { return filepath.Join(l.Logs(), "shogun.log") }

// State holds the running supervisor's files.
func (l Layout) State() string { return l.Path(StateDir) }

// Lock names the running supervisor; one per workspace.
func (l Layout) Lock() string { return filepath.Join(l.State(), "shogun.lock") }

// Socket is the control endpoint's usual path (see control.Endpoint for
// a workspace path too long for a socket).
func (l Layout) Socket() string { return filepath.Join(l.State(), "shogun.sock") }

// SocketPointer names the socket's real path when it could not live at
// Socket.
func (l Layout) SocketPointer() string { return filepath.Join(l.State(), "shogun.sock.path") }

// UIToken holds the web console's login token, readable by its owner only.
func (l Layout) UIToken() string { return filepath.Join(l.State(), "ui.token") }

// UILoginPage is the owner-only page `shogun ui` opens in the browser: it
// carries a login link that works once.
func (l Layout) UILoginPage() string { return filepath.Join(l.State(), "ui-login.html") }

// UISessions keeps the web console's logged-in browsers (hashes of their
// cookies) across restarts, readable by its owner only.
func (l Layout) UISessions() string { return filepath.Join(l.State(), "ui.sessions") }

// UIState says where the running supervisor's web console listens (the
// port it took when ui.port was in use), or why it does not run; start
// writes it, `shogun ui` and the demo read it.
func (l Layout) UIState() string { return filepath.Join(l.State(), "ui.json") }

// PidLedger lists the processes the supervisor started.
func (l Layout) PidLedger() string { return filepath.Join(l.State(), "pids.json") }

// Status is the machine-readable status, rewritten on every change.
func (l Layout) Status() string { return filepath.Join(l.State(), "status.yaml") }

// Dashboard is the human- and agent-readable dashboard.
func (l Layout) Dashboard() string { return l.Path(DashboardFile) }

// Database is the default history database (settings may put it elsewhere).
func (l Layout) Database() string { return l.Path(DatabaseFile) }

// RelTo says path as an agent working in dir sees it: relative and slash
// separated when path is inside dir, else absolute as it is. A name that
// merely starts with two dots ("..notes") is inside.
func RelTo(dir, path string) string {
	rel, err := filepath.Rel(dir, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return path
	}
	return filepath.ToSlash(rel)
}

// CopilotOTel is the file a copilot role's CLI exports its OpenTelemetry
// signals to, its tokens among them (package usage reads it):
// runtime/usage/<role>/copilot-otel.jsonl, in a folder of its own that a
// sandboxed role may write.
func (l Layout) CopilotOTel(role string) string {
	return filepath.Join(l.Path(RuntimeDir), "usage", role, "copilot-otel.jsonl")
}

// CLIState is a file of the configuration shogun gives a role's CLI from
// outside the role's folder (config.CLIEnforcement): runtime/state/cli/name.
func (l Layout) CLIState(name string) string {
	return filepath.Join(l.State(), "cli", name)
}
