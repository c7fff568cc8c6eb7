package supervisor

// State is where a role is in its life cycle:
//
//	starting → ready ⇄ busy → exited → backoff → starting …
//
// plus attention (a person must answer the program's dialog), waiting (its
// agent waits on a person's answer to a question it asked through its CLI's
// hook), limited (a usage
// limit, until it lifts), fatal (too many restarts, or a program that cannot
// be found) and stopped; and, for roles that sleep (idle_after) or wait
// for a slot (agent.max_running):
//
//	ready → sleeping → [waiting-slot →] waking → ready …
type State string

// The states of a role.
const (
	// Starting: the program runs but has not yet shown it is ready.
	Starting State = "starting"
	// Ready: idle and waiting for input.
	Ready State = "ready"
	// Busy: working (busy pattern on screen, or output in the last second).
	Busy State = "busy"
	// Attention: the screen shows a dialog only a person should answer;
	// nothing is typed until it goes away.
	Attention State = "attention"
	// Waiting: the agent waits on a person's answer to a question its
	// CLI's hook asked (shogun questions): it is not stalled, and nothing
	// is handed to it until the answer comes.
	Waiting State = "waiting"
	// Limited: the program hit a usage or rate limit; nothing is typed
	// until it lifts (its reset time, or limit_wait), and then the role
	// goes on by itself.
	Limited State = "limited"
	// Exited: the program ended; the restart policy decides what follows.
	Exited State = "exited"
	// Backoff: waiting before the next start.
	Backoff State = "backoff"
	// Fatal: restarted too often inside the window, or its program cannot
	// be found (see MissingPrograms); left down until a restart request.
	Fatal State = "fatal"
	// Stopped: ended on purpose, or exited under a policy that does not restart.
	Stopped State = "stopped"
	// Sleeping: idle long enough (idle_after), or made room for another
	// role (agent.max_running): its program was ended, its working folder
	// and conversation kept; the next task wakes it. No process runs.
	Sleeping State = "sleeping"
	// WaitingSlot: the role has work but agent.max_running roles run
	// already; it starts when a slot frees. No process runs.
	WaitingSlot State = "waiting-slot"
	// Waking: a sleeping role's program is starting again, resuming its
	// conversation where its CLI can.
	Waking State = "waking"
)

// Running reports whether a program process exists in this state.
func (s State) Running() bool {
	return s == Starting || s == Waking || s == Ready || s == Busy || s == Attention || s == Waiting || s == Limited
}
