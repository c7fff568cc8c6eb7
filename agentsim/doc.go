// Package agentsim is a simulated AI coding CLI: the program `shogun agent-sim`
// runs so that the demo and the supervisor's tests meet something that behaves
// like Codex or Claude Code in a terminal, without network or API keys.
//
// Like the real CLIs it refuses to run without a terminal, switches it to raw
// mode, enables bracketed paste, keeps a composer line (`› `) that treats a `\r`
// arriving in the same burst as other input as a newline rather than a submit,
// shows `Working… (esc to interrupt)` while it works on a task file, and writes
// a report file when done. Options make it misbehave the ways real CLIs do:
// start slowly or paint nothing at first, show first-run and permission
// dialogs (Claude Code's words), crash, hang, flood output, ignore input or
// signals, fail its tasks, work without a busy indicator, run out of quota.
// Others change its looks to those of other CLIs: a framed composer (a box or
// two rules around a `❯ ` prompt, growing a row per line), no echo at all, a
// full clear-and-repaint on every key, the user's messages kept in the
// history above the composer. With Delegate it works like a karo:
// it hands each task down as command files, one per role, waits at its idle
// prompt for the supervisor's "Report from <role>" notifications, and reports
// the task once every part is in, so the demo shows work flowing both ways.
//
// It is a package of its own rather than part of cmd/shogun so that its tests can
// drive it through a real pseudo-terminal. It deliberately does not import the
// queue package: it reads task files and writes reports the way an outside agent
// would, so the file protocol is exercised rather than shared.
package agentsim
