package ptyhost

import (
	"errors"
	"net/netip"
)

// Who is asking: the control endpoint and the console learn a client's
// process from the OS and ask whether a role's process tree holds it
// (Session.Holds, LeftBehind), so that an agent cannot act as a person.

// ErrNoProcessTree means this OS does not tell shogun a process's ancestry
// or session (Unix systems other than Linux and macOS), or a TCP
// connection's owning process.
var ErrNoProcessTree = errors.New("ptyhost: this OS does not tell which process tree a process is in")

// maxLineage bounds a walk up the parents of a process: a process tree is
// far shallower, and a loop in what the OS reports must not hang the walk.
const maxLineage = 4096

// ErrTooDeep: a process's ancestry is longer than maxLineage, so whose it
// is cannot be told (and it is answered as no person's).
var ErrTooDeep = errors.New("its ancestry is deeper than any process tree shogun runs")

// Holds reports whether pid is in the session's process tree: on Unix the
// child itself, a descendant of it, or a process of its session (a
// background process that outlived its parent keeps the session it was
// started in unless it calls setsid); on Windows a process of the child's
// job, which every descendant joins and none may leave. It returns
// ErrNoProcessTree where the OS does not say.
func (s *Session) Holds(pid int) (bool, error) { return s.proc.Holds(pid) }

// LeftBehind reports whether pid descends from a process that the calling
// process (the supervisor, a child subreaper on Linux) adopted after its
// parent ended and that runs in a session other than the caller's: what an
// agent's tree leaves behind when it double-forks and calls setsid, which
// no role's session or ancestry names any more. The supervisor's own
// children (git, notification commands) stay in its session and are not
// left behind. Outside Linux nothing is adopted, and it reports false.
func LeftBehind(pid int) (bool, error) { return leftBehind(pid) }

// LoopbackOwners returns the processes holding the client's end of a TCP
// connection between two addresses of this machine: client is the
// connection's remote address as the server sees it, server its local
// address. Linux finds the socket's inode in /proc/net/tcp or tcp6 and the
// processes whose descriptors hold it (only the running user's processes
// can be read, and the calling process's own descriptors are not); Windows
// asks GetExtendedTcpTable. It returns
// ErrNoProcessTree elsewhere, and no pids when no process of the user holds
// the socket.
func LoopbackOwners(client, server netip.AddrPort) ([]int, error) {
	return loopbackOwners(client.Addr().Unmap(), client.Port(), server.Addr().Unmap(), server.Port())
}

// Environ is the environment the process pid was started with (Linux:
// /proc/PID/environ), for naming what a role left behind; the process
// wrote it, so it names, never proves. It returns ErrNoProcessTree
// elsewhere.
func Environ(pid int) ([]string, error) { return environ(pid) }
