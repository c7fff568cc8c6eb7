// Package fakemodel is a scripted model server on 127.0.0.1 that makes the
// real AI coding CLIs (Claude Code, Codex, Gemini CLI, Copilot CLI) carry
// out whole shogun tasks offline, with their own tools, so that the
// supervisor can be tested end to end without an account.
//
// It speaks enough of four wire protocols:
//
//	POST /v1/messages                       Anthropic Messages (Claude Code), SSE or JSON
//	POST /v1/responses                      OpenAI Responses (Codex), SSE or JSON
//	POST /v1/chat/completions               OpenAI Chat Completions (Copilot CLI), SSE or JSON
//	POST /v1beta/models/M:generateContent   Gemini (Gemini CLI); :streamGenerateContent?alt=sse
//
// plus HEAD / (Claude Code's connectivity check), GET …/models and the
// token counters.
//
// # The script
//
// The server keeps no conversation state: every request carries the whole
// conversation, and the answer follows from it. The last message a person
// typed decides:
//
//   - A nudge, "Read TASK_FILE and carry out the task. Write your report to
//     REPORT_FILE." (or the reminder "You have an open task: read TASK_FILE
//     and write your report to REPORT_FILE."): a task. Its first step reads
//     TASK_FILE with the CLI's read tool (a shell cat where there is none).
//     The read's result is the task file; the "fakemodel:" lines of its body
//     are directives, carried out in order, one tool call per request. The
//     number of tool results since the nudge says which step is next, so a
//     retried request gets the same step. After the last directive the
//     answer is a short text ("Done: SUMMARY").
//   - Anything else gets a short text and no tool call: the startup prompt
//     ("Read roles/x.md and follow it …"), a notification ("Report from X on
//     'T': read PATH"), /clear and the like.
//
// Relative paths are made absolute with the working folder the CLI names
// in its prompt (Claude Code "Working directory:", Codex <cwd>, Gemini CLI
// "I'm currently working in the directory:").
//
// # Directives
//
// One per line of the task's body, after "fakemodel:". Words are separated
// by spaces; a "double-quoted" word may hold spaces and Go escapes (\n, \").
//
//	write PATH TEXT                    write TEXT and a newline to PATH (relative to the
//	                                   CLI's folder) with the CLI's file-write tool, or a
//	                                   heredoc through its shell when it has none (Codex);
//	                                   PATH $REPORT is the report file; TEXT "" writes an empty
//	                                   file (a CLI that creates a file, then fills it)
//	run COMMAND                        run the rest of the line with the CLI's shell tool
//	ask COMMAND                        the same, asking the person first where the model can
//	                                   ask for that (Codex: sandbox_permissions require_escalated)
//	report STATUS [as ID] [via ROUTE] [SUMMARY]
//	                                   write the report, "task_id: ID\nstatus: STATUS\nsummary: SUMMARY\n",
//	                                   STATUS done, failed or blocked; ID the task's own unless
//	                                   "as" names another (a sloppy model's); ROUTE
//	                                     write  the CLI's file-write tool (the default)
//	                                     shell  cat > REPORT <<'FAKEMODEL_EOF' … with the shell tool
//	                                     mv     the same into REPORT.tmp, then mv it into place
//	                                     mcp    the report tool of the MCP server named shogun
//	send ROLE [via mcp] TITLE BODY     the send_task tool of the MCP server named shogun
//	slow DURATION                      the next answer pauses DURATION (5s) after its first event
//	limit [DURATION] [for KEY | first-key]
//	                                   the next step is answered HTTP 429, the API's usage-limit
//	                                   error, for DURATION (default 1h) from its first request;
//	                                   the message names the reset time; with for, only to
//	                                   requests made with the credential KEY (CredentialKey);
//	                                   with first-key only for the credential that met it first
//	                                   (one account's limit: a request with another API key goes on)
//
// slow and limit apply to the next directive that calls a tool, or to the
// final text when none follows. A directive that cannot be carried out (an
// unknown word, a tool the CLI does not offer) is answered with a text that
// says so, starting "fakemodel:".
//
// # Tools
//
// Tools are chosen by name from the request's tool list: Claude Code Read,
// Write, Bash, mcp__shogun__report; Codex exec_command and the namespace
// mcp__shogun; Gemini CLI read_file, write_file, run_shell_command,
// mcp_shogun_report; Copilot CLI view, apply_patch (freeform), bash,
// shogun-report. README.md records what each CLI sends and
// how to set it up.
//
// # Side requests
//
// A request that wants JSON matching a schema (Claude Code's title request,
// Gemini CLI's next-speaker check) gets an object filled from the schema:
// the first enum value, "fakemodel" for strings, 0, false.
//
// # Usage
//
// Every answer reports tokens in its API's own fields (Anthropic's usage
// in message_start and message_delta, the Responses API's in
// response.completed, Gemini's usageMetadata, Chat Completions' usage in
// the last chunk): a quarter of the request body's bytes as input, a
// quarter of the answer's text (a tool call's name and arguments) as
// output, no cache. Each Request records them with a short hash of its
// credential, and Server.Served sums them per credential, so that a test
// that gives each role its own API key can compare what the CLIs
// recorded with what was served.
package fakemodel
