//go:build !windows

package ptyhost

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

var _ Process = (*unixProcess)(nil)

// unixProcess is a child on a creack/pty master. The child leads its own
// session and process group, so the group id equals its pid and signalling
// -pid reaches every descendant that did not leave the group.
type unixProcess struct {
	cmd    *exec.Cmd
	master *os.File
	// cgroup holds the tree under Command.MemoryMax (Command.Cgroups);
	// nil without one. Removed by Close.
	cgroup *memoryCgroup

	waitOnce sync.Once
	waitDone chan struct{}
	exit     Exit
	waitErr  error

	closeOnce sync.Once
}

func start(c Command) (Process, error) {
	path, err := resolveProgram(c.Path, c.Dir)
	if err != nil {
		return nil, err
	}
	cg, err := c.Cgroups.session(c.MemoryMax)
	if err != nil {
		c.Cgroups.fail(err)
	}
	p, err := startIn(c, path, cg)
	if err != nil && cg != nil {
		// The kernel would not start the child in its cgroup (clone3
		// refused, or the cgroup is not one): started without it, the
		// tree is watched, and no later session tries.
		_ = cg.remove()
		inErr := err
		if p, err = startIn(c, path, nil); err == nil {
			c.Cgroups.fail(fmt.Errorf("start a program in cgroup %s: %w", cg.dir, inErr))
		}
	}
	if err != nil {
		return nil, err
	}
	return p, nil
}

// startIn starts c's program, found at path, in the cgroup cg (nil: the
// supervisor's own).
func startIn(c Command, path string, cg *memoryCgroup) (*unixProcess, error) {
	cmd := exec.Command(path, c.Args...)
	cmd.Args[0] = c.Path
	cmd.Env = c.Env
	cmd.Dir = c.Dir
	attrs := &syscall.SysProcAttr{Setsid: true, Setctty: true}
	setDeathSignal(attrs)
	if cg != nil {
		fd, err := os.Open(cg.dir)
		if err != nil {
			return nil, fmt.Errorf("open cgroup %s: %w", cg.dir, err)
		}
		defer fd.Close() // the child is in it once started
		intoCgroup(attrs, int(fd.Fd()))
	}
	ws := &pty.Winsize{Cols: uint16(c.Cols), Rows: uint16(c.Rows)}
	ptmx, err := pty.StartWithAttrs(cmd, ws, attrs)
	if err != nil {
		return nil, err
	}
	master, err := pollable(ptmx)
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, err
	}
	p := &unixProcess{cmd: cmd, master: master, cgroup: cg, waitDone: make(chan struct{})}
	go p.reap()
	return p, nil
}

// pollable returns a non-blocking duplicate of the master registered with the
// Go poller, and closes the original. creack/pty leaves the master in
// blocking mode (its ioctls go through File.Fd), and a blocking read cannot be
// interrupted by Close: a reader stuck in it would keep the supervisor alive.
func pollable(f *os.File) (*os.File, error) {
	defer f.Close()
	fd, err := unix.Dup(int(f.Fd()))
	if err != nil {
		return nil, fmt.Errorf("dup pty master: %w", err)
	}
	unix.CloseOnExec(fd)
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("set pty master non-blocking: %w", err)
	}
	return os.NewFile(uintptr(fd), "/dev/ptmx"), nil
}

// reap waits for the child once, so that Wait can be called from anywhere.
func (p *unixProcess) reap() {
	err := p.cmd.Wait()
	var ee *exec.ExitError
	switch {
	case err == nil:
		p.exit = Exit{Code: 0}
	case errors.As(err, &ee):
		ws, ok := ee.Sys().(syscall.WaitStatus)
		if ok && ws.Signaled() {
			p.exit = Exit{Code: -1, Signal: ws.Signal().String()}
		} else {
			p.exit = Exit{Code: ee.ExitCode()}
		}
	default:
		p.exit = Exit{Code: -1}
		p.waitErr = err
	}
	close(p.waitDone)
}

func (p *unixProcess) Read(b []byte) (int, error) {
	n, err := p.master.Read(b)
	if err != nil && (errors.Is(err, syscall.EIO) || errors.Is(err, os.ErrClosed)) {
		// Linux reports the closing of the last slave fd as EIO: the end
		// of output, not a failure.
		err = io.EOF
	}
	return n, err
}

func (p *unixProcess) Write(b []byte) (int, error) { return p.master.Write(b) }

func (p *unixProcess) Resize(cols, rows int) error {
	if err := checkSize(cols, rows); err != nil {
		return err
	}
	sc, err := p.master.SyscallConn()
	if err != nil {
		return err
	}
	var ioErr error
	err = sc.Control(func(fd uintptr) {
		ioErr = unix.IoctlSetWinsize(int(fd), unix.TIOCSWINSZ, &unix.Winsize{Col: uint16(cols), Row: uint16(rows)})
	})
	if err != nil {
		return err
	}
	return ioErr
}

func (p *unixProcess) Pid() int { return p.cmd.Process.Pid }

func (p *unixProcess) Wait() (Exit, error) {
	<-p.waitDone
	return p.exit, p.waitErr
}

func (p *unixProcess) Terminate() error { return signalGroup(p.Pid(), syscall.SIGTERM) }

func (p *unixProcess) Kill() error { return signalGroup(p.Pid(), syscall.SIGKILL) }

func (p *unixProcess) TreeAlive() bool { return groupAlive(p.Pid()) }

func (p *unixProcess) Close() error {
	var err error
	p.closeOnce.Do(func() {
		err = p.master.Close()
		if p.cgroup != nil {
			err = errors.Join(err, p.cgroup.remove())
		}
	})
	return err
}

// signalGroup signals the process group led by pgid. A group that is already
// gone is not an error: the goal, no process left, is met.
func signalGroup(pgid int, sig syscall.Signal) error {
	err := syscall.Kill(-pgid, sig)
	if err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("signal process group %d: %w", pgid, err)
	}
	return nil
}

// groupAlive reports whether any process of the group still exists. Zombies
// count until reaped, which is what the caller waits for.
func groupAlive(pgid int) bool {
	err := syscall.Kill(-pgid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

func killTree(pid int) error {
	if err := signalGroup(pid, syscall.SIGKILL); err != nil {
		return err
	}
	// The leader may have left its group empty but still run elsewhere.
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("kill %d: %w", pid, err)
	}
	return nil
}

// unread is how many bytes of output wait in the terminal, written by the
// program and not read yet (FIONREAD on the master).
func (p *unixProcess) unread() (int, error) {
	raw, err := p.master.SyscallConn()
	if err != nil {
		return 0, err
	}
	n, ierr := 0, error(nil)
	if err := raw.Control(func(fd uintptr) { n, ierr = unix.IoctlGetInt(int(fd), ioctlUnread) }); err != nil {
		return 0, err
	}
	return n, ierr
}
