package agentsim

import (
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Defaults for the CLI's flags. Options' zero values are documented field by
// field; these are the values a person gets from `shogun agent-sim` without flags.
const (
	// DefaultPasteWindow is how close a `\r` must follow other input to count as
	// part of a paste burst; 50 ms is about what Codex uses.
	DefaultPasteWindow = 50 * time.Millisecond
	// DefaultWorkTime is long enough for the supervisor to see the busy state.
	DefaultWorkTime = time.Second
	// DefaultExitCode is the status of a simulated crash.
	DefaultExitCode = 1
)

// Composer styles (Options.Composer): how the input area is drawn.
const (
	// ComposerPlain is the default: a `› ` line, continuation lines indented
	// two columns, the footer right below, as Codex draws it.
	ComposerPlain = "plain"
	// ComposerBox is a rounded box (`╭─╮`, `│ ❯ text │`, `╰─╯`) around the
	// text, as Claude Code 1.x and Gemini CLI draw it: text after the cursor
	// on the same row (the right border), and the box grows a row per line.
	ComposerBox = "box"
	// ComposerRules puts the text between two horizontal rules with a `❯ `
	// marker, as Claude Code 2.1 draws it.
	ComposerRules = "rules"
)

// Echo modes (Options.Echo).
const (
	// EchoFull shows what is typed in the composer (the default).
	EchoFull = "full"
	// EchoNone shows nothing of what is typed: the composer stays empty, yet
	// `\r` still submits the text it holds.
	EchoNone = "none"
)

// Redraw modes (Options.Redraw).
const (
	// RedrawInline redraws only the live pane at the bottom, in place (the
	// default, like Codex's inline viewport).
	RedrawInline = "inline"
	// RedrawFull clears the screen (`ESC[H ESC[2J`) and paints every row on
	// each change, as some Ink-based TUIs do.
	RedrawFull = "full"
)

// Dialog names (Options.Dialogs).
const (
	// DialogTrust is Claude Code 2.1's "Quick safety check" folder trust
	// dialog; its default (Enter) trusts, "2. No, exit" ends the agent.
	DialogTrust = "trust"
	// DialogAPIKey is "Do you want to use this API key?"; its default is
	// "2. No (recommended)" and neither answer ends the agent.
	DialogAPIKey = "api-key"
	// DialogBypass is the Bypass Permissions warning: its default (Enter)
	// is "1. No, exit", which ends the agent.
	DialogBypass = "bypass"
	// DialogPermission is a tool permission prompt, "Do you want to
	// proceed?"; the default is "1. Yes" and no answer ends the agent.
	DialogPermission = "permission"
	// DialogFolder is the older "Do you trust the files in this folder?"
	// list (what TrustPrompt shows): "1" or Enter trusts, "2" or Ctrl-C
	// ends the agent.
	DialogFolder = "folder"
)

// ErrNotTerminal is returned by Run when stdin is not a terminal: the real CLIs
// refuse to start their TUI then, and a supervisor that forgot the PTY should
// find out at once.
var ErrNotTerminal = errors.New("agent-sim: stdin is not a terminal")

// Options configures a simulated agent. The zero value is a well-behaved agent
// that works instantly; every other field exists so that tests can make it
// behave like a slow, stuck, crashing or chatty CLI.
type Options struct {
	// PasteWindow: a `\r` arriving within this long of the previous input byte
	// is taken as part of a paste burst and inserted as a newline, as Codex does,
	// so text and `\r` sent in one write are never submitted. Zero means
	// DefaultPasteWindow; negative turns the detection off, so every `\r`
	// submits (Claude Code 2.1 behaves so).
	PasteWindow time.Duration

	// WorkTime is how long working on a task takes. Zero means instant; the
	// CLI's default is DefaultWorkTime.
	WorkTime time.Duration

	// Fail makes every report say `status: failed`, to test the failure path
	// without a broken agent.
	Fail bool

	// StartDelay keeps the agent at `Starting…` this long before it shows its
	// prompt, like a CLI loading its configuration. Input typed meanwhile is
	// kept, with the times it arrived, and handled after the delay.
	StartDelay time.Duration

	// TrustPrompt shows "Do you trust the files in this folder?" before the
	// prompt and waits for "1" or Enter (a "2" ends the agent), so the
	// supervisor's attention state can be tested. It is DialogFolder shown
	// before any of Dialogs.
	TrustPrompt bool

	// FirstPaintDelay keeps the agent entirely silent this long after it
	// started: no output at all, not even the bracketed-paste switch, as a
	// CLI whose runtime is still loading. Input typed meanwhile is kept, as
	// with StartDelay, which follows it.
	FirstPaintDelay time.Duration

	// Dialogs are first-run dialogs (DialogTrust, DialogAPIKey, DialogBypass,
	// DialogPermission, DialogFolder) shown one after the other before the
	// prompt, each waiting for its answer. Every answer is recorded (kind
	// "dialog") and saved to ChoicesFile in the working directory, so a test
	// can tell whether anything answered. With DialogAfter they come later.
	Dialogs []string

	// DialogAfter shows Dialogs this long after the prompt first showed,
	// over the composer (whose text is kept), as a permission prompt
	// appears in the middle of a session. With no Dialogs it shows
	// DialogPermission. Zero means the dialogs come before the prompt.
	DialogAfter time.Duration

	// Composer is how the input area is drawn: ComposerPlain (empty means
	// so), ComposerBox or ComposerRules.
	Composer string

	// Echo is EchoFull (empty means so) or EchoNone.
	Echo string

	// Redraw is RedrawInline (empty means so) or RedrawFull.
	Redraw string

	// Transcript repeats each submitted line in the history above the
	// composer (`› text` under the plain composer, `> text` under the
	// others), as Codex and Claude Code show the user's messages, so the
	// text is still on the screen after a submit, just not in the input area.
	Transcript bool

	// TornPaint splits each paint that adds lines to the history in two, as
	// an Ink-based TUI such as Gemini CLI writes its static output before
	// its live frame: the pane is erased and the new history lines written
	// (the cursor under them, no composer on the screen), and the pane is
	// drawn again only this long after. With Transcript, the submitted text
	// is then the last prompt-marked row on the screen. Under RedrawFull
	// every paint is torn so, each key typed too.
	TornPaint time.Duration

	// Placeholder is shown in the empty composer, as Gemini CLI's
	// "Type your message or @path/to/file": the input area is then never
	// empty, even when nothing is typed.
	Placeholder string

	// BusyLine replaces the busy indicator "• Working… (esc to interrupt) ·
	// {elapsed}"; "{elapsed}" in it becomes the seconds worked ("3s").
	BusyLine string

	// SilentWork shows no busy indicator while working and writes nothing
	// until the work ends: only the history line naming the task and, later,
	// the report show that anything happened.
	SilentWork bool

	// LimitScreen makes the agent answer every submitted line after its
	// first with a usage-limit screen ("You've hit your usage limit · resets
	// 3:45pm") instead of working, as a CLI out of quota does.
	LimitScreen bool

	// LimitReset lifts the limit of LimitScreen this long after it was hit;
	// the screen names the reset as a clock time to the second. Zero means
	// the limit never lifts.
	LimitReset time.Duration

	// CrashAfter ends the agent this long after it started, with ExitCode,
	// whatever it is doing. Zero means never.
	CrashAfter time.Duration

	// ExitCode is the exit status of a crash (see CrashAfter). Zero means
	// DefaultExitCode, so a crash never looks like a clean exit.
	ExitCode int

	// IgnoreTerm makes the agent ignore SIGTERM, SIGHUP and SIGINT (on Windows
	// the console events Go maps to them) and keep running when its terminal
	// goes away, so the supervisor has to kill it. The signals stay ignored
	// after Run returns.
	IgnoreTerm bool

	// DeafAfterCommand makes the agent drop every key that arrives within
	// this long after a submitted line starting with "/", as Gemini CLI
	// 0.61 drops what is typed while /clear starts a new session.
	DeafAfterCommand time.Duration

	// IgnoreInput makes the agent read and discard all input: nothing is
	// echoed or submitted, though the prompt still shows.
	IgnoreInput bool

	// Hang makes the agent stop responding after its first submitted line: no
	// more output, input still read and discarded.
	Hang bool

	// Flood writes this many bytes per second of varied printable lines for as
	// long as the agent runs, to test that output is drained. Zero means off;
	// a very large value means as fast as the terminal takes it.
	Flood int

	// DropTurns makes the agent lose its first DropTurns submitted lines
	// that name a task file: the line is taken from the composer and
	// recorded, and then nothing happens and nothing more shows, as a CLI
	// whose turn was lost.
	DropTurns int

	// CheckReport makes the agent look at its report file this long after
	// writing it, as Claude Code's Write tool stats the file it renamed into
	// place: a report that is gone by then is shown as an error ("✗ …:
	// report file gone") and recorded (kind "report-gone"). Zero: no look.
	CheckReport time.Duration

	// SkipReports makes the first SkipReports tasks the agent works on end
	// without a report: it works, says the turn ended, and writes nothing.
	SkipReports int

	// HoldMemory makes the agent allocate this many bytes and write every
	// page of them, so that they are resident, and keep them until it
	// exits: a CLI that grows, for memory_max and the memory bench. When
	// is HoldFromTask's. Zero: nothing held.
	HoldMemory uint64
	// HoldFromTask is the task, counted from 1 in this run of the agent,
	// at whose start HoldMemory is taken; 0 takes it at start. With 2, a
	// run restarted for its memory while on its second task does that
	// task, delivered again, as its first, and stays small.
	HoldFromTask int

	// Bounce hands every task straight back: before working on a task it
	// writes a command to the task's from role with the same title and the
	// task as its parent, as two agents that keep asking each other do.
	// It needs a role of its own, like Delegate.
	Bounce bool

	// RecordPath, if set, is a file to which the agent appends one JSON object
	// per line ({"at": RFC 3339, "kind": …, "task_id": …, "dialog": …,
	// "line": …}) for every submitted line (kind "submit", line the exact
	// text), every `\r` taken as a newline because it came within the paste
	// window (kind "newline", line the composer's text before it; Ctrl-J and
	// pasted newlines are not recorded), every dialog answer (kind "dialog",
	// dialog its name, line the option's label), every start of work on a
	// task file (kind "task", line the task's title) and every report written
	// (kind "report", line the report's path), so tests can see exactly what
	// the agent received, count submits against newlines, and how often it did
	// each task.
	RecordPath string

	// Resumed says the agent was started to resume its earlier
	// conversation (the --resumed flag, which tests give as a role's
	// resume_args). It is recorded when the agent starts (kind "start",
	// line "resumed"; a fresh start records nothing), so a test can tell a
	// woken role's start from a fresh one.
	Resumed bool

	// Role names the agent in its reports. Empty means $SHOGUN_ROLE, which
	// the supervisor sets, or "agent-sim" without it.
	Role string

	// Delegate makes the agent work like a karo: it hands each task down as
	// one command per role listed, in order, through the workspace's command
	// queue ($SHOGUN_WORKSPACE, or the working directory, then
	// runtime/queue/commands/), stays idle at its prompt until a "Report from
	// <role>" line has been submitted for every one of them, and only then
	// reports the task. It needs a role of its own (Role or $SHOGUN_ROLE) for
	// the commands' from, which is where the supervisor sends those lines.
	// Empty means the agent does its tasks itself.
	Delegate []string

	// CommitWork makes the agent's work leave a commit, as a coding agent's
	// does: for each task it works on it writes this file (slash separated,
	// relative to its working directory) with the task's title, role and id,
	// and commits it there with git (as "agent-sim <role>" unless
	// GIT_AUTHOR_NAME and GIT_COMMITTER_NAME say otherwise), before it
	// reports the file. Empty means no file and no commit.
	CommitWork string

	// Trespass makes the agent try, for each task it works on, what a
	// hostile agent would: "read:PATH" reads the file, "write:PATH"
	// appends a line to it (PATH slash separated, relative to the working
	// directory or absolute, $VARIABLES expanded: "write:$TMPDIR/x" makes
	// a temp file). What happened to each try ("ok", or the
	// error) is listed in the report's details; a refused try does not
	// fail the task. Empty means no tries.
	Trespass []string
}

// Validate reports whether o describes an agent that can run.
func (o *Options) Validate() error {
	for _, d := range []struct {
		name string
		v    time.Duration
	}{
		{"work time", o.WorkTime},
		{"start delay", o.StartDelay},
		{"crash-after duration", o.CrashAfter},
		{"first-paint delay", o.FirstPaintDelay},
		{"dialog-after duration", o.DialogAfter},
		{"limit-reset duration", o.LimitReset},
	} {
		if d.v < 0 {
			return fmt.Errorf("agent-sim: negative %s %v", d.name, d.v)
		}
	}
	if o.ExitCode < 0 || o.ExitCode > 255 {
		return fmt.Errorf("agent-sim: exit code %d out of range 0-255", o.ExitCode)
	}
	if o.CheckReport < 0 || o.DeafAfterCommand < 0 {
		return fmt.Errorf("agent-sim: negative time before looking at the report again (%v) or of deafness after a command (%v)", o.CheckReport, o.DeafAfterCommand)
	}
	if o.HoldFromTask < 0 {
		return fmt.Errorf("agent-sim: negative task to hold memory from (%d)", o.HoldFromTask)
	}
	if o.DropTurns < 0 || o.SkipReports < 0 {
		return fmt.Errorf("agent-sim: negative count of turns to drop (%d) or reports to skip (%d)", o.DropTurns, o.SkipReports)
	}
	if o.Bounce && len(o.Delegate) > 0 {
		return errors.New("agent-sim: --bounce and --delegate exclude each other")
	}
	if o.Flood < 0 {
		return fmt.Errorf("agent-sim: negative flood rate %d bytes/s", o.Flood)
	}
	for _, t := range o.Trespass {
		if kind, path, _ := strings.Cut(t, ":"); (kind != "read" && kind != "write") || path == "" {
			return fmt.Errorf("agent-sim: --trespass %q must be read:PATH or write:PATH", t)
		}
	}
	if o.CommitWork != "" && (!filepath.IsLocal(filepath.FromSlash(o.CommitWork)) || strings.HasSuffix(o.CommitWork, "/")) {
		return fmt.Errorf("agent-sim: --commit-work %q must name a file inside the working directory", o.CommitWork)
	}
	for _, c := range []struct {
		name, v string
		allowed []string
	}{
		{"composer", o.Composer, []string{ComposerPlain, ComposerBox, ComposerRules}},
		{"echo", o.Echo, []string{EchoFull, EchoNone}},
		{"redraw", o.Redraw, []string{RedrawInline, RedrawFull}},
	} {
		if c.v != "" && !slices.Contains(c.allowed, c.v) {
			return fmt.Errorf("agent-sim: unknown %s %q (want one of %s)", c.name, c.v, strings.Join(c.allowed, ", "))
		}
	}
	for _, d := range o.Dialogs {
		if _, ok := dialogs[d]; !ok {
			return fmt.Errorf("agent-sim: unknown dialog %q (want one of %s)", d, strings.Join(DialogNames(), ", "))
		}
	}
	seen := make(map[string]bool, len(o.Delegate))
	for _, r := range o.Delegate {
		if !roleName.MatchString(r) {
			return fmt.Errorf("agent-sim: delegate role %q is not a role id", r)
		}
		// Each part's command id is the task id and the role: a role listed
		// twice would give two commands the same id.
		if seen[r] {
			return fmt.Errorf("agent-sim: delegate role %q listed twice", r)
		}
		seen[r] = true
	}
	return nil
}

// roleName is what the agent accepts as a role id: the configuration's rule
// loosened, since the supervisor, not the agent, decides which roles exist, but
// strict enough that a name stays one word in a command id and a notification.
var roleName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]*$`)

// pasteWindow is the effective window; zero or less means no burst detection.
func (o *Options) pasteWindow() time.Duration {
	switch {
	case o.PasteWindow == 0:
		return DefaultPasteWindow
	case o.PasteWindow < 0:
		return 0
	}
	return o.PasteWindow
}

// startDialogs are the dialogs shown before the prompt, in order.
func (o *Options) startDialogs() []string {
	var names []string
	if o.TrustPrompt {
		names = append(names, DialogFolder)
	}
	if o.DialogAfter == 0 {
		names = append(names, o.Dialogs...)
	}
	return names
}

// laterDialogs are the dialogs shown DialogAfter after the prompt.
func (o *Options) laterDialogs() []string {
	switch {
	case o.DialogAfter == 0:
		return nil
	case len(o.Dialogs) == 0:
		return []string{DialogPermission}
	}
	return o.Dialogs
}

func (o *Options) exitCode() int {
	if o.ExitCode == 0 {
		return DefaultExitCode
	}
	return o.ExitCode
}

// ExitError is returned by Run when the agent ends the way a crashing or
// signalled program would, so that the process can exit with Code rather than a
// generic failure. It has ExitCode like exec.ExitError, which also makes it a
// urfave/cli ExitCoder: returning it unwrapped from a command is enough.
type ExitError struct {
	// Code is the exit status the process should end with.
	Code int
	// Reason says why, for the one line the CLI prints.
	Reason string
}

// Error names the reason and the status, as the one line the CLI prints.
func (e *ExitError) Error() string {
	return fmt.Sprintf("agent-sim: %s (exit status %d)", e.Reason, e.Code)
}

// ExitCode returns the status the process should exit with.
func (e *ExitError) ExitCode() int { return e.Code }
