//go:build windows

package ptyhost

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

const (
	// killExitCode is the exit code TerminateJobObject gives every process
	// it ends; 1 is what os.Process.Kill uses on Windows too.
	killExitCode = 1

	// maxCommandLine is the longest lpCommandLine CreateProcess accepts,
	// in UTF-16 code units including the final NUL.
	maxCommandLine = 32767

	// consoleCloseGrace is how long Close lets ClosePseudoConsole finish on
	// its own (the reader draining the last output) before it pulls the
	// pipes from under it.
	consoleCloseGrace = 3 * time.Second

	// treePollInterval is how often the exit watcher looks whether the last
	// process of the job has gone, between the child's exit and that moment.
	treePollInterval = 100 * time.Millisecond
)

// errConsoleClosed is returned by Resize once the pseudo console is gone.
var errConsoleClosed = errors.New("ptyhost: pseudo console closed")

// x/sys/windows only offers UpdateProcThreadAttribute through
// ProcThreadAttributeListContainer.Update, which takes the value as an
// unsafe.Pointer and keeps it in a slice the garbage collector scans. The
// pseudo console attribute is the HPCON itself, not a pointer to it, and a
// handle dressed up as a Go pointer is what vet's unsafeptr check rightly
// rejects; calling the function directly passes it as the integer it is.
var procUpdateProcThreadAttribute = windows.NewLazySystemDLL("kernel32.dll").NewProc("UpdateProcThreadAttribute")

var _ Process = (*conPTY)(nil)

// conPTY is a child attached to a Windows pseudo console (ConPTY) and placed
// in a job object with JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE, so that the whole
// tree dies with the job handle: on Kill, on Close, and when the supervisor
// itself dies however it dies.
//
// ClosePseudoConsole (Terminate, Close, and the end of the tree) may block
// until the console has written its last output, which only happens while
// someone reads the output pipe. The package's reader always reads until
// io.EOF, so this holds; even so ClosePseudoConsole runs on a goroutine of
// its own, and Close closes the pipes after a grace period, which makes a
// waiting console give up, so neither Terminate nor Close can deadlock.
type conPTY struct {
	pid int
	in  *os.File // our end of the console's input pipe
	out *os.File // our end of the console's output pipe

	// mu keeps the handles below from being used while, or after, they are
	// closed: a closed handle's value can be reused by an unrelated object.
	mu  sync.RWMutex
	hpc windows.Handle // zero once ClosePseudoConsole has been started
	job windows.Handle // zero once closed
	// memoryMax is the job's memory limit (Command.MemoryMax; 0 none).
	memoryMax uint64
	// memoryPort receives the job's messages when it has a memory limit
	// (jobMemoryPort; zero without one, and once closed); memoryHit is
	// set once one said the limit refused memory. Both under mu.
	memoryPort windows.Handle
	memoryHit  bool

	consoleDone chan struct{} // closed when ClosePseudoConsole has returned
	killed      atomic.Bool

	exited  chan struct{} // closed when exit and waitErr are set
	exit    Exit
	waitErr error

	closeOnce sync.Once
	closeErr  error
}

// startHandles are the handles start creates, so that a failure half way
// releases exactly what exists.
type startHandles struct {
	inRead, inWrite, outRead, outWrite windows.Handle
	hpc, job, process, thread          windows.Handle
	memoryPort                         windows.Handle // see jobMemoryPort
}

// release undoes a start that failed. Our ends of the pipes are closed before
// the pseudo console: a console that can no longer write its output exits, so
// ClosePseudoConsole cannot wait for a reader that will never come.
func (h *startHandles) release() {
	if h.process != 0 {
		_ = windows.TerminateProcess(h.process, killExitCode)
	}
	for _, p := range []*windows.Handle{&h.inWrite, &h.outRead, &h.inRead, &h.outWrite, &h.thread, &h.process, &h.job, &h.memoryPort} {
		if *p != 0 {
			_ = windows.CloseHandle(*p)
			*p = 0
		}
	}
	if h.hpc != 0 {
		windows.ClosePseudoConsole(h.hpc)
		h.hpc = 0
	}
}

func start(c Command) (_ Process, err error) {
	v := windows.RtlGetVersion()
	if err := checkWindowsBuild(v.MajorVersion, v.MinorVersion, v.BuildNumber); err != nil {
		return nil, err
	}
	x, y, err := consoleCoord(c.Cols, c.Rows)
	if err != nil {
		return nil, err
	}
	path, err := resolveProgram(c.Path, c.Dir)
	if err != nil {
		return nil, err
	}
	appName, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return nil, fmt.Errorf("program path: %w", err)
	}
	// CreateProcessW may write into lpCommandLine, so it must be a buffer of
	// our own, not a constant.
	cmdLine, err := windows.UTF16FromString(composeCommandLine(path, c.Args))
	if err != nil {
		return nil, fmt.Errorf("command line: an argument contains a NUL character: %w", err)
	}
	if len(cmdLine) > maxCommandLine {
		return nil, fmt.Errorf("command line is %d characters long; Windows allows %d", len(cmdLine)-1, maxCommandLine-1)
	}
	var envBlock *uint16
	if c.Env != nil { // nil means the supervisor's environment, as with os/exec
		block, err := environmentBlock(withSystemRoot(c.Env, os.Getenv("SYSTEMROOT")))
		if err != nil {
			return nil, err
		}
		envBlock = &block[0]
	}
	var dir *uint16
	if c.Dir != "" {
		abs, err := workingDir(c.Dir)
		if err != nil {
			return nil, err
		}
		if dir, err = windows.UTF16PtrFromString(abs); err != nil {
			return nil, fmt.Errorf("working directory: %w", err)
		}
	}

	var h startHandles
	defer func() {
		if err != nil {
			h.release()
		}
	}()
	// Pipes created with no security attributes are not inheritable: the
	// child reaches them only through the console, never as handles of its
	// own that would keep them open after the console is gone.
	if err := windows.CreatePipe(&h.inRead, &h.inWrite, nil, 0); err != nil {
		return nil, fmt.Errorf("create input pipe: %w", err)
	}
	if err := windows.CreatePipe(&h.outRead, &h.outWrite, nil, 0); err != nil {
		return nil, fmt.Errorf("create output pipe: %w", err)
	}
	// Flags 0: with PSEUDOCONSOLE_INHERIT_CURSOR the console would ask us
	// for the cursor position and stall until it got an answer.
	if err := windows.CreatePseudoConsole(windows.Coord{X: x, Y: y}, h.inRead, h.outWrite, 0, &h.hpc); err != nil {
		return nil, fmt.Errorf("create pseudo console: %w", err)
	}
	if h.job, err = newKillOnCloseJob(c.MemoryMax); err != nil {
		return nil, err
	}
	if c.MemoryMax > 0 {
		// Before the child is in the job: the port hears only of what
		// happens after it is associated.
		if h.memoryPort, err = jobMemoryPort(h.job); err != nil {
			return nil, err
		}
	}

	attrs, err := windows.NewProcThreadAttributeList(1)
	if err != nil {
		return nil, fmt.Errorf("create attribute list: %w", err)
	}
	defer attrs.Delete()
	if err := setPseudoConsoleAttribute(attrs.List(), h.hpc); err != nil {
		return nil, err
	}
	si := windows.StartupInfoEx{ProcThreadAttributeList: attrs.List()}
	si.Cb = uint32(unsafe.Sizeof(si))
	// STARTF_USESTDHANDLES with null standard handles, checked against
	// Microsoft's documentation and its own code (November 2026):
	//   - "Creating a Pseudoconsole session" and the samples EchoCon and
	//     GUIConsole set only the PROC_THREAD_ATTRIBUTE_PSEUDOCONSOLE
	//     attribute. Without STARTF_USESTDHANDLES, though, the child takes
	//     the standard handles of its parent where those are redirected (a
	//     supervisor started by a service, by CI, or with its output in a
	//     file), writes there instead of to the pseudo console, and nothing
	//     it prints reaches the role's screen: microsoft/terminal#11276 and
	//     #4380, where Microsoft's answer is not to pass the parent's handles.
	//   - Windows Terminal (ConptyConnection.cpp, _LaunchAttachedClient)
	//     does what is done here: STARTF_USESTDHANDLES, the three handles
	//     NULL, bInheritHandles FALSE. A console program whose standard
	//     handles are null is given the console's own by Windows when it
	//     attaches to the pseudo console; the pipes stay out of its reach.
	//   - Wine 8 leaves them null (GetStdHandle returns NULL in the child).
	//     A program that opens CONIN$ and CONOUT$ when it has no standard
	//     handles, as agent-sim does, works there; one that writes to its
	//     standard output only (cmd's echo) shows nothing under Wine. See
	//     ConPTYOutputWorks and docs/windows.md.
	si.Flags = windows.STARTF_USESTDHANDLES

	var pi windows.ProcessInformation
	flags := uint32(windows.EXTENDED_STARTUPINFO_PRESENT | windows.CREATE_UNICODE_ENVIRONMENT | windows.CREATE_SUSPENDED)
	if err := windows.CreateProcess(appName, &cmdLine[0], nil, nil, false, flags, envBlock, dir, &si.StartupInfo, &pi); err != nil {
		if c.Dir != "" {
			return nil, fmt.Errorf("create process %s in %s: %w", path, c.Dir, err)
		}
		return nil, fmt.Errorf("create process %s: %w", path, err)
	}
	h.process, h.thread = pi.Process, pi.Thread

	// The console holds its own duplicates of its pipe ends; ours would only
	// keep the pipes open after the console has gone, and Read from ever
	// seeing the end of output.
	_ = windows.CloseHandle(h.inRead)
	_ = windows.CloseHandle(h.outWrite)
	h.inRead, h.outWrite = 0, 0

	// The child is still suspended: assigned now, it cannot start a process
	// outside the job before it is in it.
	if err := windows.AssignProcessToJobObject(h.job, h.process); err != nil {
		return nil, fmt.Errorf("assign process to job object: %w", err)
	}
	if n, err := windows.ResumeThread(h.thread); n == math.MaxUint32 {
		return nil, fmt.Errorf("resume process: %w", err)
	}
	_ = windows.CloseHandle(h.thread)
	h.thread = 0

	p := &conPTY{
		pid:         int(pi.ProcessId),
		in:          os.NewFile(uintptr(h.inWrite), "conpty-input"),
		out:         os.NewFile(uintptr(h.outRead), "conpty-output"),
		hpc:         h.hpc,
		job:         h.job,
		memoryMax:   c.MemoryMax,
		memoryPort:  h.memoryPort,
		consoleDone: make(chan struct{}),
		exited:      make(chan struct{}),
	}
	go p.watch(h.process)
	h = startHandles{} // owned by p now
	return p, nil
}

// workingDir returns dir as the absolute path CreateProcess wants, and checks
// it: CreateProcess only says "The directory name is invalid".
func workingDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("working directory %s: %w", dir, err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return "", fmt.Errorf("working directory: %w", err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("working directory %s is not a directory", abs)
	}
	return abs, nil
}

// newKillOnCloseJob creates the job that holds the child's tree. Its handle
// is not inheritable, so the supervisor holds the only one and the tree ends
// when the supervisor does. memoryMax, when not 0, is the job's memory
// limit: the private memory all its processes may commit together.
func newKillOnCloseJob(memoryMax uint64) (windows.Handle, error) {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return 0, fmt.Errorf("create job object: %w", err)
	}
	var info windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
	info.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
	if memoryMax > 0 {
		info.BasicLimitInformation.LimitFlags |= windows.JOB_OBJECT_LIMIT_JOB_MEMORY
		info.JobMemoryLimit = uintptr(min(memoryMax, uint64(math.MaxUint)))
	}
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		_ = windows.CloseHandle(job)
		return 0, fmt.Errorf("set job object limits: %w", err)
	}
	return job, nil
}

// setPseudoConsoleAttribute attaches the child to the pseudo console. Unlike
// other attributes, whose value is a pointer to the data, this one takes the
// HPCON itself with the size of a handle (as Microsoft's ConPTY sample does);
// a pointer to the handle would hand ConPTY a bogus console.
func setPseudoConsoleAttribute(list *windows.ProcThreadAttributeList, hpc windows.Handle) error {
	if err := procUpdateProcThreadAttribute.Find(); err != nil {
		return fmt.Errorf("find UpdateProcThreadAttribute: %w", err)
	}
	r, _, err := procUpdateProcThreadAttribute.Call(
		uintptr(unsafe.Pointer(list)), 0,
		windows.PROC_THREAD_ATTRIBUTE_PSEUDOCONSOLE,
		uintptr(hpc), unsafe.Sizeof(hpc),
		0, 0)
	if r == 0 {
		return fmt.Errorf("set pseudo console attribute: %w", err)
	}
	return nil
}

// watch owns the process handle: it waits for the child once, for every
// Wait, and closes the handle afterwards. Nothing else touches the handle,
// so Close can never close it under a pending wait (which Windows leaves
// undefined) and Wait still works after Close.
//
// After the child has exited it closes the pseudo console once the job is
// empty. Until then the console keeps the output pipe open, and Read would
// not see the end of output when the tree is gone, as it does on Unix.
func (p *conPTY) watch(process windows.Handle) {
	code, err := waitProcess(process)
	_ = windows.CloseHandle(process)
	switch {
	case err != nil:
		p.exit, p.waitErr = Exit{Code: -1}, err
	case p.killed.Load() && code == killExitCode:
		p.exit = Exit{Code: -1, Signal: "killed"}
	default:
		p.exit = Exit{Code: int(code)}
	}
	close(p.exited)

	for p.TreeAlive() {
		select {
		case <-p.consoleDone:
			return
		case <-time.After(treePollInterval):
		}
	}
	p.closeConsole()
}

func waitProcess(process windows.Handle) (uint32, error) {
	ev, err := windows.WaitForSingleObject(process, windows.INFINITE)
	if ev != windows.WAIT_OBJECT_0 {
		if err == nil {
			err = fmt.Errorf("unexpected wait result %#x", ev)
		}
		return 0, fmt.Errorf("ptyhost: wait for process: %w", err)
	}
	var code uint32
	if err := windows.GetExitCodeProcess(process, &code); err != nil {
		return 0, fmt.Errorf("ptyhost: get exit code: %w", err)
	}
	return code, nil
}

// closeConsole starts ClosePseudoConsole once and returns a channel closed
// when it has returned. The call runs on its own goroutine because it can
// block until the output has been read (see conPTY).
func (p *conPTY) closeConsole() <-chan struct{} {
	p.mu.Lock()
	hpc := p.hpc
	p.hpc = 0
	p.mu.Unlock()
	if hpc != 0 {
		go func() {
			windows.ClosePseudoConsole(hpc)
			close(p.consoleDone)
		}()
	}
	return p.consoleDone
}

// Read returns the console's output. A broken pipe (the console has gone)
// is io.EOF, which os.File already makes of ERROR_BROKEN_PIPE; a read cut
// short by Close is io.EOF too, as on Unix.
func (p *conPTY) Read(b []byte) (int, error) {
	n, err := p.out.Read(b)
	if err != nil && (errors.Is(err, os.ErrClosed) || errors.Is(err, windows.ERROR_BROKEN_PIPE)) {
		err = io.EOF
	}
	return n, err
}

// Write sends input to the console, which turns it into key events for the
// child; os.File does the short-write loop and cancellation on Close.
func (p *conPTY) Write(b []byte) (int, error) { return p.in.Write(b) }

// Resize resizes the console's buffer; attached programs get a buffer-size
// event (and conhost redraws), the Windows counterpart of SIGWINCH. Where
// the pseudo console cannot be resized at all, the error is
// errors.ErrUnsupported.
func (p *conPTY) Resize(cols, rows int) error {
	x, y, err := consoleCoord(cols, rows)
	if err != nil {
		return err
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.hpc == 0 {
		return errConsoleClosed
	}
	if err := windows.ResizePseudoConsole(p.hpc, windows.Coord{X: x, Y: y}); err != nil {
		if errors.Is(err, syscall.Errno(windows.E_NOTIMPL)) {
			// Wine 8 has ResizePseudoConsole but does not implement it.
			return fmt.Errorf("ptyhost: resize pseudo console to %dx%d: %w: %v", cols, rows, errors.ErrUnsupported, err)
		}
		return fmt.Errorf("ptyhost: resize pseudo console to %dx%d: %w", cols, rows, err)
	}
	return nil
}

func (p *conPTY) Pid() int { return p.pid }

// Wait returns what watch saw: the process is waited for once, whoever asks
// and however often, and the answer stays the same.
func (p *conPTY) Wait() (Exit, error) {
	<-p.exited
	return p.exit, p.waitErr
}

// Terminate closes the pseudo console, which sends CTRL_CLOSE_EVENT to every
// process attached to it. Processes that detached from the console are out
// of its reach; Kill ends those.
func (p *conPTY) Terminate() error {
	p.closeConsole()
	return nil
}

// Kill ends every process in the job. After Close there is nothing to do:
// closing the kill-on-close job has already ended them.
func (p *conPTY) Kill() error {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.job == 0 {
		return nil
	}
	p.killed.Store(true)
	if err := windows.TerminateJobObject(p.job, killExitCode); err != nil {
		return fmt.Errorf("ptyhost: terminate job object: %w", err)
	}
	return nil
}

// jobBasicAccounting is JOBOBJECT_BASIC_ACCOUNTING_INFORMATION, which
// x/sys/windows does not define.
type jobBasicAccounting struct {
	TotalUserTime             int64
	TotalKernelTime           int64
	ThisPeriodTotalUserTime   int64
	ThisPeriodTotalKernelTime int64
	TotalPageFaultCount       uint32
	TotalProcesses            uint32
	ActiveProcesses           uint32
	TotalTerminatedProcesses  uint32
}

// TreeAlive counts the job's active processes, which include descendants
// that left the console or outlived the child.
func (p *conPTY) TreeAlive() bool {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.job == 0 {
		return false // closing the kill-on-close job ended the tree
	}
	var info jobBasicAccounting
	err := windows.QueryInformationJobObject(p.job, windows.JobObjectBasicAccountingInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info)), nil)
	if err != nil {
		// Not expected for a job handle we hold; the child itself is the
		// best answer left.
		select {
		case <-p.exited:
			return false
		default:
			return true
		}
	}
	return info.ActiveProcesses > 0
}

// Close closes the pseudo console (letting the reader take the last output
// for up to consoleCloseGrace), the job, and the pipes, which unblocks a
// pending Read or Write. Closing the job ends whatever is left of the tree:
// kill-on-close is what keeps children from outliving the supervisor, and
// Windows has no way to let go of a job without it.
func (p *conPTY) Close() error {
	p.closeOnce.Do(func() { p.closeErr = p.close() })
	return p.closeErr
}

func (p *conPTY) close() error {
	done := p.closeConsole()
	timer := time.NewTimer(consoleCloseGrace)
	select {
	case <-done:
	case <-timer.C:
	}
	timer.Stop()

	p.mu.Lock()
	job, port := p.job, p.memoryPort
	p.job, p.memoryPort = 0, 0
	p.mu.Unlock()

	var errs []error
	if err := windows.CloseHandle(job); err != nil {
		errs = append(errs, fmt.Errorf("ptyhost: close job object: %w", err))
	}
	if port != 0 {
		_ = windows.CloseHandle(port)
	}
	// os.File cancels a pending synchronous read or write (CancelIoEx) and
	// waits for it before it closes the handle. With our read end closed, a
	// console still waiting to write its output fails and exits, so a
	// ClosePseudoConsole still running returns as well.
	if err := p.out.Close(); err != nil {
		errs = append(errs, fmt.Errorf("ptyhost: close output pipe: %w", err))
	}
	if err := p.in.Close(); err != nil {
		errs = append(errs, fmt.Errorf("ptyhost: close input pipe: %w", err))
	}
	return errors.Join(errs...)
}

// openProcess opens pid with the given rights; ErrNoProcess when no process
// has that pid (OpenProcess says ERROR_INVALID_PARAMETER).
func openProcess(pid int, access uint32) (windows.Handle, error) {
	if pid <= 0 || uint64(pid) > math.MaxUint32 {
		return 0, ErrNoProcess
	}
	h, err := windows.OpenProcess(access, false, uint32(pid))
	if err != nil {
		if errors.Is(err, windows.ERROR_INVALID_PARAMETER) {
			return 0, ErrNoProcess
		}
		return 0, fmt.Errorf("ptyhost: open process %d: %w", pid, err)
	}
	return h, nil
}

// exitedProcess reports whether the process behind h has ended. Such a
// process can still be opened while anyone holds a handle to it.
func exitedProcess(h windows.Handle) bool {
	ev, err := windows.WaitForSingleObject(h, 0)
	return err == nil && ev == windows.WAIT_OBJECT_0
}

// creationTime is the process creation time in 100 ns units since 1601.
func creationTime(h windows.Handle) (uint64, error) {
	var created, exited, kernel, user windows.Filetime
	if err := windows.GetProcessTimes(h, &created, &exited, &kernel, &user); err != nil {
		return 0, fmt.Errorf("get process times: %w", err)
	}
	return uint64(created.HighDateTime)<<32 | uint64(created.LowDateTime), nil
}

// identity is the process creation time: a later process reusing the pid was
// created later.
func identity(pid int) (string, error) {
	h, err := openProcess(pid, windows.PROCESS_QUERY_LIMITED_INFORMATION|windows.SYNCHRONIZE)
	if err != nil {
		return "", err
	}
	defer windows.CloseHandle(h)
	if exitedProcess(h) {
		return "", ErrNoProcess
	}
	created, err := creationTime(h)
	if err != nil {
		return "", fmt.Errorf("ptyhost: process %d: %w", pid, err)
	}
	return fmt.Sprintf("windows-created:%d", created), nil
}

// inspect describes pid: its creation time and the path of its program.
// Windows has no numeric user ids; UID is -1.
func inspect(pid int) (ProcessInfo, error) {
	h, err := openProcess(pid, windows.PROCESS_QUERY_LIMITED_INFORMATION|windows.SYNCHRONIZE)
	if err != nil {
		return ProcessInfo{}, err
	}
	defer windows.CloseHandle(h)
	if exitedProcess(h) {
		return ProcessInfo{}, ErrNoProcess
	}
	created, err := creationTime(h)
	if err != nil {
		return ProcessInfo{}, fmt.Errorf("ptyhost: process %d: %w", pid, err)
	}
	info := ProcessInfo{Pid: pid, Identity: fmt.Sprintf("windows-created:%d", created), UID: -1}
	buf := make([]uint16, windows.MAX_LONG_PATH)
	n := uint32(len(buf))
	if err := windows.QueryFullProcessImageName(h, 0, &buf[0], &n); err == nil {
		info.Exe = windows.UTF16ToString(buf[:n])
	}
	return info, nil
}

// killTree ends pid and its descendants, children before their parents.
// Windows keeps no tree, only each process's parent pid, which may belong to
// a parent long gone whose pid was reused: a process only counts as a child
// if it was created after its supposed parent, and every handle stays open
// during the walk so that no pid in it can be reused meanwhile. Descendants
// of a root that no longer runs cannot be told from strangers and are left
// alone; a root that no longer runs is not an error, as on Unix.
func killTree(pid int) error {
	const access = windows.PROCESS_TERMINATE | windows.PROCESS_QUERY_LIMITED_INFORMATION | windows.SYNCHRONIZE
	root, err := openProcess(pid, access)
	if errors.Is(err, ErrNoProcess) {
		return nil
	}
	if err != nil {
		return err
	}
	defer windows.CloseHandle(root)
	rootCreated, err := creationTime(root)
	if err != nil {
		return fmt.Errorf("ptyhost: kill tree %d: %w", pid, err)
	}
	children, err := childrenByParent()
	if err != nil {
		return fmt.Errorf("ptyhost: kill tree %d: %w", pid, err)
	}

	var errs []error
	seen := map[uint32]bool{uint32(pid): true}
	var killChildren func(parent uint32, parentCreated uint64)
	killChildren = func(parent uint32, parentCreated uint64) {
		for _, child := range children[parent] {
			if seen[child] {
				continue
			}
			seen[child] = true
			h, err := openProcess(int(child), access)
			if err != nil {
				if !errors.Is(err, ErrNoProcess) {
					errs = append(errs, err)
				}
				continue
			}
			if created, err := creationTime(h); err == nil && created >= parentCreated {
				killChildren(child, created)
				if err := terminate(h); err != nil {
					errs = append(errs, fmt.Errorf("ptyhost: terminate process %d: %w", child, err))
				}
			}
			_ = windows.CloseHandle(h)
		}
	}
	killChildren(uint32(pid), rootCreated)
	if err := terminate(root); err != nil {
		errs = append(errs, fmt.Errorf("ptyhost: terminate process %d: %w", pid, err))
	}
	return errors.Join(errs...)
}

// terminate ends a process; one that has already ended is not an error,
// although TerminateProcess says "access denied" for it.
func terminate(h windows.Handle) error {
	if err := windows.TerminateProcess(h, killExitCode); err != nil && !exitedProcess(h) {
		return err
	}
	return nil
}

// childrenByParent lists every running process's pid under its parent's pid.
func childrenByParent() (map[uint32][]uint32, error) {
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPPROCESS, 0)
	if err != nil {
		return nil, fmt.Errorf("snapshot processes: %w", err)
	}
	defer windows.CloseHandle(snap)
	children := make(map[uint32][]uint32)
	var e windows.ProcessEntry32
	e.Size = uint32(unsafe.Sizeof(e))
	for err = windows.Process32First(snap, &e); err == nil; err = windows.Process32Next(snap, &e) {
		if e.ProcessID != e.ParentProcessID { // the idle process is its own parent
			children[e.ParentProcessID] = append(children[e.ParentProcessID], e.ProcessID)
		}
	}
	if !errors.Is(err, windows.ERROR_NO_MORE_FILES) {
		return nil, fmt.Errorf("walk process snapshot: %w", err)
	}
	return children, nil
}
