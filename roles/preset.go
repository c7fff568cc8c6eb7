package roles

import (
	"sort"
	"strings"
	"time"
)

// The CLI presets. A role picks one with `cli:` in roles.yaml, or gets the one
// named like its executable.
const (
	CLICodex   = "codex"
	CLIClaude  = "claude"
	CLICopilot = "copilot"
	CLIGemini  = "gemini"
	CLIGeneric = "generic"
)

// The restart policies of a role (restart.policy in roles.yaml).
const (
	// RestartAlways restarts the program whenever it exits, even with status 0.
	RestartAlways = "always"
	// RestartOnFailure restarts only after a non-zero exit or a signal: an
	// agent that was told to quit stays down.
	RestartOnFailure = "on-failure"
	// RestartNever leaves an exited program down until `shogun restart`.
	RestartNever = "never"
)

// Placeholders that Expand replaces in startup_prompt, nudge and notify. Not
// every template gets every one: {task_file} and {report_file} are the role's
// own; {role}, {title} and {report_path} describe an incoming report and only
// make sense in notify.
const (
	VarPromptPath = "prompt_path" // the role's instruction file
	VarName       = "name"        // the role's display name
	VarID         = "id"          // the role's id
	VarTaskFile   = "task_file"   // runtime/queue/tasks/<id>.yaml
	VarReportFile = "report_file" // where the role writes its report
	VarRole       = "role"        // notify: the role that reported
	VarTitle      = "title"       // notify: the title of the reported task
	VarReportPath = "report_path" // notify: the archived report, named by shogun (arrival, task id)
)

// TerminalSize is the size of a role's pseudo-terminal. TUIs lay themselves
// out for it, and the screen model matches patterns against it, so it is
// fixed per role rather than following whoever attaches.
type TerminalSize struct {
	Cols, Rows int
}

// RestartPolicy says whether and how often an exited program is started
// again. More than MaxRestarts restarts inside Window make the role fatal,
// so a program that cannot start does not spin forever.
type RestartPolicy struct {
	Policy      string // RestartAlways, RestartOnFailure or RestartNever
	MaxRestarts int
	Window      time.Duration
}

// StopSequence is how a program is asked to quit before it is killed: Keys
// are typed (a trailing submit key is sent as its own write, as for any
// prompt, because AI TUIs treat text and "\r" in one write as a paste), then
// the supervisor waits up to Timeout before terminating the process tree.
// Empty Keys means the program is terminated at once.
type StopSequence struct {
	Keys    string
	Timeout time.Duration
}

// Preset holds the per-CLI defaults of every optional role key. Each CLI
// differs in how it shows idle, busy and first-run screens and in how it
// quits; a preset lets roles.yaml name only the command and still be typed
// into safely.
type Preset struct {
	// CLI is the preset's name, one of the CLI* constants.
	CLI string
	// Package is the npm package that installs the CLI (npm install -g
	// Package), for the message of a role whose program is missing; empty
	// for the generic preset.
	Package string
	// Terminal is the pseudo-terminal size.
	Terminal TerminalSize
	// StartupPrompt is typed once, when the role first becomes ready.
	StartupPrompt string
	// Nudge is typed when a task file has been written for the role.
	Nudge string
	// Notify is typed into a command's `from` role when its report arrives.
	Notify string
	// Submit is the key that submits the typed text, sent as its own write.
	Submit string
	// SubmitDelay separates the text from Submit so that a TUI does not
	// take the submit key for part of a paste.
	SubmitDelay time.Duration
	// ClearInput is sent before a nudge to drop whatever a person left in
	// the input line; empty sends nothing.
	ClearInput string
	// InputMarker is the prompt mark that starts the composer's first row
	// (after any box border); several marks, for a CLI whose mark changes
	// with its mode, are separated by spaces. The rows from it down to the cursor are the
	// input area: text still there after a submit was taken as a newline,
	// not submitted. Empty means the input area is the cursor's row and the
	// rows it wraps from.
	InputMarker string
	// ReadyPattern is a regular expression over the screen text meaning
	// "idle, ready for input"; empty means readiness comes from ReadyQuiet.
	ReadyPattern string
	// BusyPattern is a regular expression over the screen text meaning
	// "working"; empty means recent output is the only sign of work.
	BusyPattern string
	// AttentionPattern is a regular expression over the screen text meaning
	// "waiting for a person" (trust dialogs, sign-in, permission prompts).
	// Nothing is typed into a role while it matches.
	AttentionPattern string
	// LimitPattern is a regular expression over the screen text meaning "a
	// usage or rate limit was reached"; a named group "reset" may capture
	// when it resets (a clock time like "3:45pm" or "15:45:30", or a
	// duration like "in 2h 5m"). Empty means the CLI shows none we know.
	LimitPattern string
	// LimitWait is how long a limit lasts when the screen does not say.
	LimitWait time.Duration
	// InterruptKeys stop the agent's current turn (step 2 of a stalled
	// task's escalation); empty sends nothing.
	InterruptKeys string
	// BetweenTasks is typed after a report and before the role's next task,
	// so a long-running role starts each task with a fresh context; empty
	// types nothing.
	BetweenTasks string
	// Remind is typed when a delivered task has had no report for
	// StallAfter while the role sat ready and quiet.
	Remind string
	// AckTimeout is how long after a delivery a sign of work (busy, output
	// that is not the echo, or the report) must show, or the delivery
	// counts as lost.
	AckTimeout time.Duration
	// StallAfter is how long a role may sit ready and quiet with a
	// delivered task before it is reminded, and again before it is
	// interrupted, and again before the task is stalled.
	StallAfter time.Duration
	// StartTimeout is how long a started program may take to show it is
	// ready before the role waits for a person (attention, with the
	// screen's last lines): a program that never gets ready is flagged,
	// not waited for.
	StartTimeout time.Duration
	// ReadyQuiet is how long without output counts as ready when
	// ReadyPattern does not match.
	ReadyQuiet time.Duration
	// Restart is the restart policy.
	Restart RestartPolicy
	// Stop is how the program is asked to quit.
	Stop StopSequence
	// ResumeArgs are appended to the command line when a sleeping role
	// wakes, so that the CLI continues the role's own conversation instead
	// of starting a new one: the word "{session}" stands for its session
	// id, as the role's hook told it (never "the folder's most recent",
	// which may be another role's). Empty: the CLI cannot, and starts
	// afresh with its startup prompt.
	ResumeArgs []string
}

// The prompts are shared by every preset: they speak to the agent, not to
// the CLI, and the role file carries the details. The startup prompt does not
// name the task file: a program restarted while a finished task's file is
// still in place must not take that task up again on its own; the nudge says
// when there is work.
const (
	defaultStartupPrompt = "Read {prompt_path} and follow it from now on. You are {name} (role id: {id}) in a shogun team. " +
		"Do not look for work yet: wait until you are told to read your task file."
	defaultNudge  = "Read {task_file} and carry out the task. Write your report to {report_file}."
	defaultNotify = "Report from {role} on '{title}': read {report_path}"
	defaultRemind = "You have an open task: read {task_file} and write your report to {report_file}."
)

// base is what every preset starts from.
var base = Preset{
	Terminal:      TerminalSize{Cols: 120, Rows: 40},
	StartupPrompt: defaultStartupPrompt,
	Nudge:         defaultNudge,
	Notify:        defaultNotify,
	Submit:        "\r",
	SubmitDelay:   300 * time.Millisecond,
	ClearInput:    "\x15",
	ReadyQuiet:    2 * time.Second,
	Remind:        defaultRemind,
	LimitWait:     15 * time.Minute,
	AckTimeout:    time.Minute,
	StallAfter:    10 * time.Minute,
	StartTimeout:  2 * time.Minute,
	Restart:       RestartPolicy{Policy: RestartOnFailure, MaxRestarts: 5, Window: 10 * time.Minute},
	Stop:          StopSequence{Timeout: 10 * time.Second},
}

// presets is built once; LookupPreset hands out copies, so callers may change
// what they get.
var presets = func() map[string]Preset {
	// The patterns below come from the screens of the pinned versions, seen
	// offline in a 120x40 PTY and kept as raw captures in
	// supervisor/testdata/screens (`make fixtures` records them again;
	// supervisor/screens_test.go checks every preset against them). The
	// classifier sees the whole screen: attention wins over busy, busy over
	// ready, and ready patterns are anchored to the composer's prompt line
	// so that a dialog's selection cursor (❯ 1. Yes) is never taken for it.

	codex := base
	codex.CLI = CLICodex
	codex.Package = "@openai/codex"
	// Codex 0.169.0. The composer is "› " at column 0 (the placeholder
	// rotates: "Ask Codex to do anything" is one of several). A dialog's
	// selected option is "› 1. …", so a digit and a dot after the marker
	// are not a prompt.
	codex.ReadyPattern = `(?m)^›(?: ?$| [^\d\n]| \d+[^.\d\n])`
	// Working and reconnecting show "esc to interrupt". The composer is
	// drawn before the session is up: a line submitted then stays in the
	// composer under "Waiting for startup" (MCP servers show "Booting MCP
	// server"), and until the session is up the footer is "? for shortcuts"
	// alone, without "← for agents" and without the model line above it.
	codex.BusyPattern = `esc to interrupt|Waiting for startup|Booting MCP server|Starting MCP servers|(?m)^  \? for shortcuts`
	// A fresh CODEX_HOME asks how to sign in ("Sign in with ChatGPT");
	// a sign-in that can no longer be refreshed says "Please log out and
	// sign in again", missing credentials "Run codex login or provide an
	// API key".
	codex.AttentionPattern = `(?i)trust this folder\?|do you trust the (files|contents) (in|of) this (folder|directory)` +
		`|allow codex to work in this folder|sign in with chatgpt|sign in with device code|provide your own api key` +
		`|log out and sign in again|run codex login or provide|please re-run .codex login` +
		`|would you like to (run the following command|make the following edits)` +
		`|press enter to (confirm|continue)|enter continue · esc back` +
		// 0.169 at 95 % of its usage window: "Approaching rate limits ·
		// Switch to …?", which waits for a choice.
		`|approaching rate limits` +
		// any other dialog: its selected, numbered option
		`|(?m)^[›>] \d+\. \S`
	codex.InputMarker = "›"
	// Codex 0.169's usage and rate limit errors. The usage limit is one
	// message under "■", with a typographic apostrophe, wrapped at the
	// terminal's width wherever its plan's wording puts the words: "■
	// You’ve hit your usage limit. Upgrade to Pro (https://…), visit
	// https://chatgpt.com/settings/\nusage to purchase more credits or try
	// again at 12:24 AM." (or "… Try again at 12:24 AM.", "… Try again
	// later."). The reset is read when it is a time of day; one on another
	// day ("Nov 28th, 2026 2:22 AM") is not, and limit_wait applies.
	codex.LimitPattern = `(?i)you['’]ve hit your usage limit(?:[^■›]*?try\s+again\s+at\s+(?P<reset>\d{1,2}:\d{2}\s*[ap]m))?` +
		`|rate limit (?:reached|exceeded)|\b429\b.*too many requests`
	codex.InterruptKeys = "\x1b"
	// /clear, not /new: in a git repository Codex 0.169's /new asks "Where
	// should the new conversation run? 1. Use current Git worktree 2.
	// Create new Git worktree" (a managed-worktree choice with no config
	// key that skips it; features.worktrees=false does not), and a role
	// waits in that dialog after its first task. /clear ("clear the
	// terminal and start a new chat") starts a fresh conversation in the
	// same folder without asking, in a repository or not (recorded with
	// the real CLI; fixture codex-new-worktree is the dialog).
	codex.BetweenTasks = "/clear"
	codex.Stop.Keys = "/quit\r"
	// codex 0.169: `codex resume SESSION_ID` continues that session.
	codex.ResumeArgs = []string{"resume", "{session}"}

	claude := base
	claude.CLI = CLIClaude
	claude.Package = "@anthropic-ai/claude-code"
	// Claude Code 2.1.197. The composer is "❯" and a no-break space at
	// column 0, right under a full-width rule; dialogs indent their "❯ 1."
	// cursor, and the echo of a sent line in the transcript has a blank
	// line above it.
	claude.ReadyPattern = `(?m)^─{8,}\n❯(?:[ \x{a0}]|$)`
	claude.BusyPattern = `esc to interrupt`
	// The first-run dialogs seen: folder trust ("Quick safety check … ❯ 1.
	// Yes, I trust this folder  2. No, exit"), the API-key question, the
	// Bypass Permissions warning ("❯ 1. No, exit  2. Yes, I accept"); all
	// end in "Enter to confirm · Esc to cancel". Permission prompts ask "Do
	// you want to proceed?" and the like; any numbered "❯ 1." cursor
	// indented in a dialog means a person has to choose. Without a key or a
	// sign-in the composer is drawn as usual, over "Not logged in · Run
	// /login" in the footer, and every request is answered "Not logged in ·
	// Please run /login"; a bad or revoked credential is answered "Invalid
	// API key · …", "OAuth token revoked · Please run /login" and the like.
	claude.AttentionPattern = `(?i)do you trust the files in this folder|is this a project you created or one you trust` +
		`|yes, i trust this folder|bypass permissions mode|yes, i accept|select login method|choose the text style` +
		`|do you want to use this api key|detected a custom api key|do you want to proceed\?` +
		`|do you want to (make this edit|create|allow)|press enter to continue|enter to confirm · esc to cancel` +
		`|not logged in · (please )?run /login|please run /login|run /login to (sign in|re-?authenticate|authenticate)` +
		`|invalid api key · |oauth token (has expired|revoked)` +
		`|(?m)^ +❯ \d+\. `
	claude.InputMarker = "❯"
	// Claude Code 2.1.197 took the Enter 300 ms after a long startup
	// prompt as a newline in about one start in six (test-real): its paste
	// window is longer right after start-up.
	claude.SubmitDelay = 600 * time.Millisecond
	// Claude Code 2.1's usage-limit message names its reset time.
	claude.LimitPattern = `(?i)(?:usage limit reached|you've hit your (?:usage )?limit|limit will reset)(?:[^\n]*?resets? (?:at )?(?P<reset>\d{1,2}(?::\d{2}){0,2}\s*(?:[ap]m)?))?|\b429\b.*rate.?limit`
	claude.InterruptKeys = "\x1b"
	claude.BetweenTasks = "/clear"
	// Ctrl+C twice, then /exit: right after a /clear (between_tasks,
	// typed after the last report) Claude Code 2.1.197 lost a lone /exit
	// while it started the new session, and was terminated after 5 s (3
	// runs in 5 of TestUsageEqualsWhatTheModelServed); Ctrl+C on an empty
	// composer ("Press Ctrl-C again to exit") quits then. In a turn the
	// first Ctrl+C interrupts it and /exit quits (Ctrl+C alone did not).
	claude.Stop.Keys = "\x03\x03/exit\r"
	// --resume SESSION_ID: that conversation, under the same id.
	claude.ResumeArgs = []string{"--resume", "{session}"}

	copilot := base
	copilot.CLI = CLICopilot
	copilot.Package = "@github/copilot"
	// Copilot CLI 1.0.102, idle in its offline mode with its own model
	// provider (COPILOT_OFFLINE, COPILOT_PROVIDER_BASE_URL): the composer
	// is "❯ " at column 0 right under a full-width rule, as in Claude Code;
	// the echo of a sent line is " ❯ …" one column in.
	copilot.ReadyPattern = `(?m)^─{8,}\n❯(?:[ \x{a0}]|$)`
	// Working shows in the footer: " ● Working esc esc edit prompt" (the
	// dot spins).
	copilot.BusyPattern = `(?m)^ \S Working\b|(?i)esc to (cancel|interrupt)`
	// The folder trust dialog ("Confirm folder trust … Do you trust the
	// files in this folder? ❯ 1. Yes"), the sign-in request above an
	// otherwise idle composer ("Please use /login to sign in to use
	// Copilot"), a token that cannot be checked ("Use /login to
	// re-authenticate"); dialogs are boxed, their cursor "│ ❯ 1.".
	copilot.AttentionPattern = `(?i)do you trust the files in this folder|confirm folder trust` +
		`|please (log|sign) in|use /login|do you want to run this command|allow (this|the following) tool` +
		`|↑/↓ to navigate · enter to select|(?m)^│ +❯ \d+\. `
	copilot.InputMarker = "❯"
	copilot.LimitPattern = `(?i)rate limit(?:ed| exceeded)|quota exceeded|\b429\b[^\n]*(?:too many|rate|quota)`
	copilot.InterruptKeys = "\x1b"
	// Copilot CLI 1.0.102's /clear starts over with an empty conversation.
	copilot.BetweenTasks = "/clear"
	// Ctrl+C twice, then /exit: its /clear clears the composer at once
	// but starts the fresh session a moment later ("◉ Loading: 2
	// skills"), and a lone /exit submitted in between is lost (a task's
	// prompt is held and sent once the session is up, with its tools), so
	// a stop right after a task (/exit after the between_tasks /clear)
	// waited 5 s and was terminated. Ctrl+C on an empty composer shows
	// "ctrl+c again to exit" and the second quits (exit code 0), during
	// the reload too; at the end of a turn the first is taken as
	// "◉ Cancelling" and the second is lost, and /exit quits.
	copilot.Stop.Keys = "\x03\x03/exit\r"

	gemini := base
	gemini.CLI = CLIGemini
	gemini.Package = "@google/gemini-cli"
	// Gemini CLI 0.61.0, idle with API-key auth: the composer is " > " at
	// column 1 (placeholder "Type your message or @path/to/file"); dialogs
	// mark their choice with "● 1.", which attention catches first.
	// With --approval-mode yolo (config.CLIEnforcement, where shogun's hook
	// guards it) the mark is "*" instead of ">".
	gemini.ReadyPattern = `(?m)^ [>*] `
	// A prompt submitted while Gemini CLI still starts (its config or MCP
	// servers not ready) is queued, shown under "Queued (press ↑ to edit):",
	// and sent once it is ready, joined to whatever else was queued: busy
	// until then, so that the next text (a nudge after the startup
	// prompt) is not queued into the same message.
	// While its hooks run (shogun's BeforeTool hook, before every tool
	// call) it shows "⠋ Executing Hooks: …" and no "esc to cancel": busy
	// too, or a turn of tool calls reads as ready, busy, ready. The spinner
	// is drawn only while they run; the line left at rest has none.
	gemini.BusyPattern = `(?i)esc to cancel|queued \(press ↑ to edit\)|[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] executing hooks`
	// The folder trust dialog ("Do you trust the files in this folder? ● 1.
	// Trust folder"), the auth choice ("How would you like to authenticate
	// for this project?"), tool confirmations; any selected, numbered
	// option "● 1." is a dialog waiting for a person. Without auth it says
	// "Please set an Auth method", "You must select an auth method to
	// proceed", or, with API-key auth and no key, "you must specify the
	// GEMINI_API_KEY environment variable"; a Google sign-in under way
	// shows "Waiting for authentication...". A ready screen says
	// "Authenticated with gemini-api-key /auth": "auth" alone is no sign.
	gemini.AttentionPattern = `(?i)do you trust (this folder|the files in this folder)|how would you like to authenticate` +
		`|login with google|sign in with google|use gemini api key|allow execution|apply this change\?` +
		`|please set an auth method|you must select an auth method|must specify the gemini_api_key|waiting for authentication` +
		`|waiting for user confirmation|do you want to proceed\?|● \d+\. `
	gemini.InputMarker = "> *"
	// Gemini's quota errors (RESOURCE_EXHAUSTED, HTTP 429). Gemini CLI
	// 0.61 shows a usage limit as a dialog, not a line: "Usage limit
	// reached for all Pro models. [Access resets at 3:45 PM.] /stats model
	// for usage details /model to switch models. ● 1. Keep trying 2. Stop"
	// (supervisor/testdata/screens/gemini-limit.raw). The dialog stays up
	// after the reset until someone chooses, so it is attention (its "●
	// 1."), and its text is left out of the limit pattern: a limit begun
	// by it would hold the role limited after a person chose Keep trying.
	gemini.LimitPattern = `(?i)quota exceeded|resource_exhausted|rate limit|\b429\b[^\n]*(?:too many|rate|quota)`
	gemini.InterruptKeys = "\x1b"
	// No between_tasks: Gemini CLI 0.61's /clear starts a new session, after
	// which it sometimes takes no more keys under the supervisor (seen in
	// make test-e2e: every later key dropped for minutes, while the same
	// steps by hand in tmux went through).
	gemini.Stop.Keys = "/quit\r"
	// gemini 0.61: --resume takes "latest", an index or a session's UUID.
	gemini.ResumeArgs = []string{"--resume", "{session}"}

	// A generic program promises nothing: readiness is quiet output, work is
	// recent output, and it is terminated rather than asked to quit.
	generic := base
	generic.CLI = CLIGeneric

	return map[string]Preset{
		CLICodex:   codex,
		CLIClaude:  claude,
		CLICopilot: copilot,
		CLIGemini:  gemini,
		CLIGeneric: generic,
	}
}()

// PresetNames lists the preset names in alphabetical order, for messages and
// help text.
func PresetNames() []string {
	names := make([]string, 0, len(presets))
	for n := range presets {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// LookupPreset returns the preset with the given name (case-insensitive).
// ok is false for an unknown name, so that a typo in `cli:` is an error
// rather than a silent fallback.
func LookupPreset(cli string) (p Preset, ok bool) {
	p, ok = presets[strings.ToLower(strings.TrimSpace(cli))]
	return p, ok
}

// PresetFor chooses a role's preset: the one named by cli when that is set
// and known, else the one named like the executable (see CLIFromExec), else
// the generic preset.
func PresetFor(cli, exec string) Preset {
	if p, ok := LookupPreset(cli); ok {
		return p
	}
	if p, ok := LookupPreset(CLIFromExec(exec)); ok {
		return p
	}
	return presets[CLIGeneric]
}

// CLIFromExec reduces an executable to the name a preset would have: the last
// path element (with either slash, whatever the OS, since roles.yaml may be
// written on Windows and read on Linux), lower-cased, without a .exe, .cmd,
// .bat or .ps1 suffix. "C:\tools\Codex.EXE" becomes "codex".
func CLIFromExec(exec string) string {
	name := strings.TrimSpace(exec)
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	name = strings.ToLower(name)
	for _, ext := range []string{".exe", ".cmd", ".bat", ".ps1"} {
		if strings.HasSuffix(name, ext) {
			name = strings.TrimSuffix(name, ext)
			break
		}
	}
	return name
}

// Expand replaces each {key} in template whose key is in vars with its value,
// in one pass, so a value that itself contains braces is never expanded
// again. Unknown placeholders and lone braces are left as they are: a prompt
// may legitimately contain "{}" or JSON.
func Expand(template string, vars map[string]string) string {
	var b strings.Builder
	b.Grow(len(template))
	for i := 0; i < len(template); {
		if template[i] == '{' {
			if end := strings.IndexByte(template[i+1:], '}'); end >= 0 {
				key := template[i+1 : i+1+end]
				if v, ok := vars[key]; ok && isPlaceholder(key) {
					b.WriteString(v)
					i += end + 2
					continue
				}
			}
		}
		b.WriteByte(template[i])
		i++
	}
	return b.String()
}

// isPlaceholder keeps Expand from treating "{ a, b }" or nested braces as a
// key, even if vars happened to hold such a key.
func isPlaceholder(key string) bool {
	if key == "" {
		return false
	}
	for _, r := range key {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}
