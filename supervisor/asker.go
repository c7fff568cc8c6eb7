package supervisor

import (
	"errors"
	"fmt"
	"os"

	"github.com/shogun-dev/shogun/ptyhost"
)

// ErrNoProcessTree means this OS does not tell which process tree a process
// is in (ptyhost.ErrNoProcessTree).
var ErrNoProcessTree = ptyhost.ErrNoProcessTree

// Asker is whose a process is, as the OS tells: the control endpoint and
// the console look up each client's process (ProcessOwner) so that an
// agent, running as the same OS user, cannot act as a person.
type Asker struct {
	// Pid is the process.
	Pid int
	// Agent is true when the process is inside a role's process tree, or
	// was left behind by one (ptyhost.LeftBehind).
	Agent bool
	// Role is the role whose live process tree holds the process; "" for
	// a person and for a process left behind: only a live role's tree
	// proves a role, and a left-behind process's environment (SHOGUN_ROLE)
	// is whatever its agent wrote there.
	Role string
	// LeftBehind is true for a process that left its role's tree.
	LeftBehind bool
}

// String names the asker for a refusal or a log line.
func (a Asker) String() string {
	switch {
	case !a.Agent:
		return fmt.Sprintf("process %d", a.Pid)
	case a.LeftBehind:
		return fmt.Sprintf("a process left behind by an agent (process %d, running under the supervisor in no role's tree)", a.Pid)
	}
	return fmt.Sprintf("process %d in role %s's process tree", a.Pid, a.Role)
}

// ProcessOwner tells whose the process pid is: a role's, when a running
// role's process tree holds it (a descendant, a member of its session on
// Unix, of its job on Windows); an agent's of no role (LeftBehind) when it
// descends from what an agent left behind under the supervisor (Linux,
// where the supervisor is a child subreaper), whatever role its
// environment names; else a person's. The supervisor itself is a person's. It returns
// ErrNoProcessTree where the OS does not say, and an error when pid cannot
// be read (it has ended).
func (s *Supervisor) ProcessOwner(pid int) (Asker, error) {
	a := Asker{Pid: pid}
	if pid == os.Getpid() {
		return a, nil
	}
	s.mu.Lock()
	roles := make([]*Role, 0, len(s.live))
	for r := range s.live {
		roles = append(roles, r)
	}
	s.mu.Unlock()
	var errs []error
	for _, r := range roles {
		sess := r.Session()
		if sess == nil {
			continue
		}
		in, err := sess.Holds(pid)
		if errors.Is(err, ptyhost.ErrNoProcessTree) {
			return a, ErrNoProcessTree
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if in {
			a.Agent, a.Role = true, r.ID()
			return a, nil
		}
	}
	left, err := ptyhost.LeftBehind(pid)
	if err != nil {
		errs = append(errs, err)
	}
	if left {
		// An agent of no role: whatever role its environment names, it
		// may do only what an agent of no role may.
		a.Agent, a.LeftBehind = true, true
		return a, nil
	}
	if len(errs) > 0 {
		return a, fmt.Errorf("supervisor: whose is process %d: %w", pid, errors.Join(errs...))
	}
	return a, nil
}
