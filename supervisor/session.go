package supervisor

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// A role's conversation is resumed by its own session id, never by "the
// folder's most recent" (Claude Code --continue, Codex resume --last,
// Gemini CLI --resume latest): roles that share a working folder and a
// CLI home would each resume whichever role spoke last, and work on under
// another role's identity. The id is told by the role's own hook (`shogun
// hook …`, which runs inside the role's process tree with the CLI's
// session_id on its input) at every tool call, so it follows a /clear or
// /new of between_tasks; resume_args name it as SessionPlaceholder.

// SessionPlaceholder stands for the role's own session id in resume_args
// ([--resume, "{session}"]). Where the id is not
// known, a role whose resume_args hold it starts afresh.
const SessionPlaceholder = "{session}"

// sessionIDForm is the only form of session id put on a command line: a
// UUID, as Claude Code 2.1, Codex 0.169 and Gemini CLI 0.61 all give
// theirs. The id comes from an agent's process, so nothing else passes
// (no option-like word, no path, no shell character).
var sessionIDForm = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// ValidSessionID reports whether id has the form of a CLI's session id.
func ValidSessionID(id string) bool {
	return sessionIDForm.MatchString(id)
}

// NoteSession records id as the conversation the role's CLI holds now,
// the one its next wake resumes. An id of another form is refused.
func (r *Role) NoteSession(id string) error {
	if !ValidSessionID(id) {
		return fmt.Errorf("session id %q is not a UUID", truncate(id, 80))
	}
	id = strings.ToLower(id)
	r.mu.Lock()
	prev := r.sessionID
	r.sessionID, r.sessionCleared = id, false
	r.mu.Unlock()
	if prev != id {
		ev := r.log.Info().Str("session", id)
		if prev != "" {
			ev = ev.Str("previous", prev)
		}
		ev.Msg("the CLI's conversation")
	}
	return nil
}

// ForgetSession forgets the role's conversation: its between_tasks keys
// are about to end it, and until its hook tells the new one, a wake starts
// afresh, as between_tasks would have.
func (r *Role) ForgetSession() {
	r.mu.Lock()
	prev := r.sessionID
	r.sessionID, r.sessionCleared = "", true
	r.mu.Unlock()
	if prev != "" {
		r.log.Debug().Str("previous", prev).Msg("the CLI's conversation ends (between_tasks)")
	}
}

// SessionID is the role's own conversation as last told by its hook (""
// when none was).
func (r *Role) SessionID() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sessionID
}

// resumeArgs are args (resume_args) with SessionPlaceholder, a word or
// part of one (--resume={session}), replaced by the role's session id. ok
// is false when they need an id and none is known: the role then starts
// afresh rather than resume another's conversation.
func resumeArgs(args []string, session string) (out []string, ok bool) {
	if !slices.ContainsFunc(args, func(a string) bool { return strings.Contains(a, SessionPlaceholder) }) {
		return args, true
	}
	if !ValidSessionID(session) {
		return nil, false
	}
	out = slices.Clone(args)
	for i, a := range out {
		out[i] = strings.ReplaceAll(a, SessionPlaceholder, session)
	}
	return out, true
}

// truncate is s cut to n bytes, for a message about hostile input.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
