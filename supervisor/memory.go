package supervisor

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/shogun-dev/shogun/config"
	"github.com/shogun-dev/shogun/ptyhost"
)

// EventMemory: a role's process tree went over its memory_max and its
// program was restarted; the message says by how much.
const EventMemory EventKind = "memory"

// The memory watch: every memoryEvery the supervisor measures the process
// trees of all running roles in one look (ptyhost.TreeMemory, one walk of
// /proc on Linux however many roles run), keeps each role's amount for its
// status, and asks a role whose tree is over its memory_max to restart
// (supervise). Where the OS bounds the tree itself (a Windows job's memory
// limit, a Linux cgroup's memory.max: ptyhost.Session.MemoryLimited) the
// watch only measures, and restarts a role the OS refused memory.

// openMemoryCgroups readies the delegated cgroup v2 in which each role's
// tree gets a cgroup with its memory_max, when a role has one at start;
// nil where there is none, the log saying once why the watch bounds the
// trees instead.
func (s *Supervisor) openMemoryCgroups() *ptyhost.MemoryCgroups {
	if !s.anyMemoryMax() {
		return nil
	}
	cg, err := ptyhost.OpenMemoryCgroups()
	if err != nil {
		msg := "memory_max: the roles' process trees are measured, and a role over it restarted"
		if runtime.GOOS == "windows" {
			msg += "; each role's job object also refuses its tree more memory than that"
		}
		s.log.Info().Dur("every", s.memoryEvery).Str("cgroup_v2", "none: "+err.Error()).Msg(msg)
		return nil
	}
	s.log.Info().Str("cgroup_v2", cg.Dir()).
		Msg("memory_max: each role's process tree runs in a cgroup of its own whose memory.max the kernel enforces")
	return cg
}

// memoryLoop measures the roles' memory until ctx ends.
func (s *Supervisor) memoryLoop(ctx context.Context) {
	t := time.NewTicker(s.memoryEvery)
	defer t.Stop()
	warned, cgroupWarned := false, false
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := s.measureMemory(); err != nil && !warned && s.anyMemoryMax() {
			warned = true // the OS will not start telling: once is enough
			s.log.Warn().Err(err).Msg("the memory of the roles' process trees cannot be measured here; memory_max is not enforced")
		}
		if err := s.memoryCgroupsErr(); err != nil && !cgroupWarned {
			cgroupWarned = true // no later role tries: once is enough
			s.log.Warn().Err(err).Msg("memory_max: a role's cgroup could not be used; from then on the roles' trees are measured and a role over it restarted")
		}
	}
}

// memoryCgroupsErr is why the roles' cgroups stopped being used, if they
// did.
func (s *Supervisor) memoryCgroupsErr() error {
	s.reapMu.Lock()
	cg := s.cgroups
	s.reapMu.Unlock()
	if cg == nil {
		return nil
	}
	return cg.Err()
}

// measureMemory measures every running role's tree once.
func (s *Supervisor) measureMemory() error {
	var roles []*Role
	var sessions []*ptyhost.Session
	for _, r := range s.Roles() {
		if sess := r.Session(); sess != nil {
			roles = append(roles, r)
			sessions = append(sessions, sess)
		}
	}
	if len(sessions) == 0 {
		return nil
	}
	mem, err := ptyhost.TreeMemory(sessions)
	if err != nil {
		return err
	}
	for i, r := range roles {
		r.noteMemory(sessions[i], mem[i])
	}
	return nil
}

// noteMemory records what sess's tree holds, and asks for a restart when
// that is over the role's memory_max and nothing else bounds it. A
// measure of a program that has been replaced meanwhile is dropped.
func (r *Role) noteMemory(sess *ptyhost.Session, bytes uint64) {
	limit := r.conf().MemoryMax
	why := ""
	switch {
	case limit == 0:
	case sess.MemoryLimited():
		// The OS holds the tree under the limit; that it had to refuse
		// memory is what says the tree is over it.
		if sess.MemoryLimitReached() {
			why = refusedReason(limit, bytes)
		}
	case bytes > uint64(limit):
		why = fmt.Sprintf("memory %s over memory_max %s", config.ByteSize(bytes).Like(limit), limit)
	}
	r.mu.Lock()
	if r.session != sess {
		r.mu.Unlock()
		return
	}
	r.memory = bytes
	over := why != "" && r.overSession != sess
	if over {
		r.overSession = sess
		r.overWhy = why
	}
	r.mu.Unlock()
	if over {
		select {
		case r.overMemory <- struct{}{}:
		default: // a request is already pending
		}
	}
}

// takeOverMemory reports whether the request on overMemory is for sess,
// and why; a request left from an earlier program is dropped.
func (r *Role) takeOverMemory(sess *ptyhost.Session) (string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.overSession != sess {
		return "", false
	}
	r.lastOverMemory = r.overWhy + " at " + time.Now().Format("15:04:05")
	return r.overWhy, true
}

// overMemoryReason is why the last program was restarted for memory.
func (r *Role) overMemoryReason() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.overWhy
}

// anyMemoryMax reports whether a role has a memory_max.
func (s *Supervisor) anyMemoryMax() bool {
	for _, r := range s.Roles() {
		if r.conf().MemoryMax > 0 {
			return true
		}
	}
	return false
}

// refusedReason says that the OS refused a tree memory at its memory_max
// (a Windows job's limit, a cgroup's oom_kill), and what it held at the last look.
func refusedReason(limit config.ByteSize, bytes uint64) string {
	return fmt.Sprintf("memory reached memory_max %s: the system refused the tree more (%s in use at the last look)",
		limit, config.ByteSize(bytes).Like(limit))
}

// refusedOnExit reports whether a program that exited by itself had been
// refused memory at its memory_max (most CLIs exit when an allocation
// fails), and then records it as a restart for its memory.
func (r *Role) refusedOnExit(sess *ptyhost.Session) bool {
	limit := r.conf().MemoryMax
	if limit == 0 || !sess.MemoryLimitReached() {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.overWhy = refusedReason(limit, r.memory)
	r.lastOverMemory = r.overWhy + " at " + time.Now().Format("15:04:05")
	return true
}
