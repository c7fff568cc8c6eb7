package ptyhost

// TreeMemory measures the memory of each session's whole process tree, as
// the platform counts it against a limit, in one look at the OS for all of
// them (with many roles the supervisor measures them together, so the cost
// is one walk of the process table, not one per role):
//   - Linux: for a tree in a cgroup of its own (Command.Cgroups), its
//     memory.current, what its memory.max counts; for any other, the sum
//     of the resident set sizes (RSS, field 24 of /proc/PID/stat) of the
//     child, its descendants and the members of its session, the
//     processes Holds counts as the tree. Pages two of them share are
//     counted in each.
//   - Windows: the private committed memory (PrivateUsage) of every
//     process in the child's job: what the job's memory limit counts
//     (Command.MemoryMax).
//
// It returns one amount in bytes per session, in order; 0 for a session
// whose tree is gone. It returns ErrNoProcessTree where the OS does not
// tell (Unix systems other than Linux).
func TreeMemory(sessions []*Session) ([]uint64, error) {
	procs := make([]Process, len(sessions))
	for i, s := range sessions {
		procs[i] = s.proc
	}
	return treeMemory(procs)
}

// MemoryLimited reports whether the OS itself bounds the memory of the
// session's tree at Command.MemoryMax (a Windows job's memory limit, a
// Linux cgroup's memory.max), so that the tree cannot grow past it;
// elsewhere only a watch of TreeMemory bounds it.
func (s *Session) MemoryLimited() bool { return memoryLimited(s.proc) }

// MemoryLimitReached reports whether the OS has refused the session's tree
// memory past Command.MemoryMax since it started (a Windows job's
// JOB_OBJECT_MSG_JOB_MEMORY_LIMIT, an oom_kill in a Linux cgroup's
// memory.events); always false where nothing refuses it
// (see MemoryLimited). It may be asked after the child has exited, until
// Close.
func (s *Session) MemoryLimitReached() bool { return memoryLimitReached(s.proc) }

// DelegatedCgroup says whether the calling process's cgroup v2 is
// delegated to its user, so that it could bound its children's memory
// with memory.max: cgroup v2 mounted at /sys/fs/cgroup, the process's own
// cgroup (from /proc/self/cgroup) offering the memory controller, and the
// cgroup's folder, cgroup.subtree_control and cgroup.procs writable (a
// systemd user service or scope with Delegate=yes). It returns the
// cgroup's folder, or why not. Nothing is changed.
func DelegatedCgroup() (string, error) { return delegatedCgroup() }
