// Package ptyhost runs one program in a pseudo-terminal and keeps its output
// drained, logged, scrolled back and rendered as a screen, whatever else happens.
//
// Platform differences live behind the Process interface: process_unix.go uses
// github.com/creack/pty, process_windows.go calls ConPTY through
// golang.org/x/sys/windows directly. Nothing outside this package imports
// golang.org/x/sys/windows or knows how a process tree is ended on a platform.
//
// Errors name the package once: what an exported function or method returns
// reads "ptyhost: verb noun: cause", and the helpers beneath it return "verb
// noun: cause", leaving the prefix to their caller.
package ptyhost

import (
	"errors"
	"fmt"
)

// Command describes a program to start in a new pseudo-terminal.
type Command struct {
	// Path is the program. Without a path separator it is looked up in PATH.
	Path string
	// Args are the arguments, not including the program itself.
	Args []string
	// Env is the complete environment of the child, as "KEY=value" pairs.
	Env []string
	// Dir is the working directory; empty means the supervisor's.
	Dir string
	// Cols and Rows are the terminal size, within MinCols..MaxCols and
	// MinRows..MaxRows.
	Cols, Rows int
	// MemoryMax, when not 0, bounds the memory of the whole process tree in
	// bytes where the OS does it for a tree: on Windows the job's memory
	// limit (JOB_OBJECT_LIMIT_JOB_MEMORY), past which the tree's
	// allocations fail; on Linux with Cgroups, the memory.max of the
	// tree's own cgroup, past which the kernel reclaims, then kills.
	// Elsewhere it is not enforced here: the caller watches TreeMemory
	// (see MemoryLimited).
	MemoryMax uint64
	// Cgroups, on Linux, is the delegated cgroup v2 in which a tree with a
	// MemoryMax gets a cgroup of its own; nil: none.
	Cgroups *MemoryCgroups
}

// Validate reports whether c can be started.
func (c Command) Validate() error {
	if c.Path == "" {
		return errors.New("ptyhost: empty command path")
	}
	if err := CheckSize(c.Cols, c.Rows); err != nil {
		return err
	}
	return nil
}

// The terminal sizes a pseudo-terminal may have. The screen model keeps a
// cell for every column and row, so whatever a configuration file or an
// attached client asks for, a role's screen stays under half a million cells;
// below the minimums no TUI can draw its prompt.
const (
	MinCols, MaxCols = 20, 1000
	MinRows, MaxRows = 5, 500
)

// CheckSize rejects a terminal size outside MinCols..MaxCols columns and
// MinRows..MaxRows rows. Every size that reaches a pseudo-terminal or the
// screen model passes through it: at start, on resize and on attach.
func CheckSize(cols, rows int) error {
	if cols < MinCols || cols > MaxCols || rows < MinRows || rows > MaxRows {
		return fmt.Errorf("ptyhost: terminal size %dx%d is out of range (%d to %d columns, %d to %d rows)",
			cols, rows, MinCols, MaxCols, MinRows, MaxRows)
	}
	return nil
}

// checkSize is CheckSize; ConPTY's COORD (int16) and the kernel's winsize
// (uint16) hold every size it lets through.
func checkSize(cols, rows int) error { return CheckSize(cols, rows) }

// Exit describes how a process ended.
type Exit struct {
	// Code is the exit code; -1 when the process was ended by a signal.
	Code int
	// Signal names the signal that ended the process ("killed", "terminated"), if any.
	Signal string
}

// Success reports whether the process exited with code 0.
func (e Exit) Success() bool { return e.Code == 0 && e.Signal == "" }

func (e Exit) String() string {
	if e.Signal != "" {
		return "signal: " + e.Signal
	}
	return fmt.Sprintf("exit code %d", e.Code)
}

// Process is a child running in a pseudo-terminal, as a platform provides it.
//
// Read returns the terminal's output and io.EOF once the output has ended (on
// Unix an EIO from the master after the child's side closed is the end of
// output, not an error). Write sends input as if typed. Read and Write may be
// called concurrently with each other and with the other methods.
type Process interface {
	Read(p []byte) (int, error)
	Write(p []byte) (int, error)
	// Resize changes the terminal size; the child receives SIGWINCH (Unix) or
	// a buffer-size event (Windows).
	Resize(cols, rows int) error
	// Pid is the process id of the child.
	Pid() int
	// Wait waits for the child to exit and returns how it ended. It may be
	// called more than once and from several goroutines; all see the same Exit.
	Wait() (Exit, error)
	// Terminate asks the whole process tree to end: SIGTERM to the process
	// group on Unix; on Windows, closing the pseudo console, which sends
	// CTRL_CLOSE_EVENT to every attached process.
	Terminate() error
	// Kill ends the whole process tree at once: SIGKILL to the process group
	// on Unix, TerminateJobObject on Windows.
	Kill() error
	// TreeAlive reports whether any process of the tree still runs (the
	// process group on Unix, the job object on Windows), after the child
	// itself may have exited.
	TreeAlive() bool
	// Holds reports whether the process pid is in the tree: a descendant
	// or session member of the child on Unix, a member of its job on
	// Windows (Session.Holds).
	Holds(pid int) (bool, error)
	// Close releases the pseudo-terminal and unblocks a pending Read. Call
	// it once the tree is gone: on Unix it leaves processes running, on
	// Windows closing the kill-on-close job ends whatever is left.
	Close() error
}

// Start starts c in a new pseudo-terminal. The child is the leader of its own
// process group (Unix) or the first member of a kill-on-close job (Windows),
// and dies with the supervisor (Linux Pdeathsig, Windows job handle).
func Start(c Command) (Process, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	p, err := start(c)
	if err != nil {
		return nil, fmt.Errorf("ptyhost: start %q: %w", c.Path, err)
	}
	return p, nil
}

// Identity returns a string that identifies the process pid for as long as it
// lives and differs for a later process that reuses the pid (its start time).
// It returns ErrNoProcess when no such process runs. The workspace lock
// stores it so that a lock left by a dead supervisor is told from a live one.
func Identity(pid int) (string, error) { return identity(pid) }

// ProcessInfo tells one process from every other, now and later: what the
// pid ledger records about each program the supervisor starts, so that
// after a crash only that very program's leftovers are ever killed.
type ProcessInfo struct {
	// Pid is the process id.
	Pid int `json:"pid"`
	// Identity is the process's start time, as Identity returns it.
	Identity string `json:"identity"`
	// UID is the user the process runs as; -1 where the platform has no
	// user ids (Windows).
	UID int `json:"uid"`
	// Exe is the path of the program the process runs, as the OS reports
	// it; "" when the OS does not tell (another user's process).
	Exe string `json:"exe"`
}

// Inspect describes the running process pid. It returns ErrNoProcess when no
// such process runs.
func Inspect(pid int) (ProcessInfo, error) { return inspect(pid) }

// Matches reports why the running process cur is not the process p
// describes, or nil when pid, start time, user and executable all agree. An
// unknown field never matches: what cannot be proved is not the same.
func (p ProcessInfo) Matches(cur ProcessInfo) error {
	switch {
	case p.Pid != cur.Pid:
		return fmt.Errorf("%w: pid %d, recorded %d", ErrOtherProcess, cur.Pid, p.Pid)
	case p.Identity == "" || p.Identity != cur.Identity:
		return fmt.Errorf("%w: pid %d started at %q, recorded %q", ErrOtherProcess, p.Pid, cur.Identity, p.Identity)
	case p.UID != cur.UID:
		return fmt.Errorf("%w: pid %d runs as user %d, recorded %d", ErrOtherProcess, p.Pid, cur.UID, p.UID)
	case p.Exe == "" || p.Exe != cur.Exe:
		return fmt.Errorf("%w: pid %d runs %q, recorded %q", ErrOtherProcess, p.Pid, cur.Exe, p.Exe)
	}
	return nil
}

// KillLeftovers kills what is left of a process tree that a previous
// supervisor started, as p describes its first process, when no Process
// value exists any more (the supervisor was killed with -9). Nothing is
// killed unless it is provably that tree:
//   - while a process with p's pid runs, it must match p (Matches); after a
//     pid reuse it is a stranger, and so is its process group;
//   - on Linux, where the program itself died with the supervisor, the
//     members of its process group and session that run as p's user and
//     started no earlier than it are killed;
//   - elsewhere the tree is killed only while its first process still runs
//     as p.
//
// It reports whether anything was killed; an error wrapping ErrOtherProcess
// says why nothing was.
func KillLeftovers(p ProcessInfo) (bool, error) { return killLeftovers(p) }

// ErrOtherProcess means a process is not the one a record describes.
var ErrOtherProcess = errors.New("ptyhost: not the recorded process")

// ErrNoProcess is returned by Identity when no process has the given pid.
var ErrNoProcess = errors.New("ptyhost: no such process")
