package ptyhost

import (
	"encoding/binary"
	"fmt"
	"unsafe"

	"golang.org/x/sys/windows"
)

// procGetProcessMemoryInfo is psapi's GetProcessMemoryInfo, which kernel32
// exports as K32GetProcessMemoryInfo since Windows 7; x/sys/windows does
// not wrap it.
var procGetProcessMemoryInfo = windows.NewLazySystemDLL("kernel32.dll").NewProc("K32GetProcessMemoryInfo")

// procGetQueuedCompletionStatus is called directly: see memoryLimitReached.
var procGetQueuedCompletionStatus = windows.NewLazySystemDLL("kernel32.dll").NewProc("GetQueuedCompletionStatus")

// processMemoryCountersEx is PROCESS_MEMORY_COUNTERS_EX.
type processMemoryCountersEx struct {
	cb                         uint32
	pageFaultCount             uint32
	peakWorkingSetSize         uintptr
	workingSetSize             uintptr
	quotaPeakPagedPoolUsage    uintptr
	quotaPagedPoolUsage        uintptr
	quotaPeakNonPagedPoolUsage uintptr
	quotaNonPagedPoolUsage     uintptr
	pagefileUsage              uintptr
	peakPagefileUsage          uintptr
	privateUsage               uintptr
}

// maxJobPids bounds the process ids read of one job: far more than an
// agent's tree holds; what is beyond it is not counted.
const maxJobPids = 4096

func treeMemory(procs []Process) ([]uint64, error) {
	out := make([]uint64, len(procs))
	for i, p := range procs {
		if c, ok := p.(*conPTY); ok {
			m, err := c.memory()
			if err != nil {
				return nil, err
			}
			out[i] = m
		}
	}
	return out, nil
}

// memory sums the private committed memory of the job's processes.
func (p *conPTY) memory() (uint64, error) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.job == 0 {
		return 0, nil // closed: its processes are gone
	}
	// JOBOBJECT_BASIC_PROCESS_ID_LIST: two DWORD counts, then ULONG_PTRs.
	ptr := unsafe.Sizeof(uintptr(0))
	buf := make([]byte, 8+maxJobPids*ptr)
	if err := windows.QueryInformationJobObject(p.job, windows.JobObjectBasicProcessIdList,
		uintptr(unsafe.Pointer(&buf[0])), uint32(len(buf)), nil); err != nil {
		return 0, fmt.Errorf("ptyhost: list the processes of a job: %w", err)
	}
	n := int(binary.LittleEndian.Uint32(buf[4:8]))
	var total uint64
	for i := 0; i < n && i < maxJobPids; i++ {
		off := 8 + uintptr(i)*ptr
		pid := *(*uintptr)(unsafe.Pointer(&buf[off]))
		n, err := processPrivateBytes(uint32(pid))
		if err != nil {
			return 0, err
		}
		total += n
	}
	return total, nil
}

// processPrivateBytes is a process's private committed memory; 0 when it
// has ended meanwhile.
func processPrivateBytes(pid uint32) (uint64, error) {
	h, err := openProcess(int(pid), windows.PROCESS_QUERY_LIMITED_INFORMATION)
	if err != nil {
		return 0, nil // ended since the job listed it
	}
	defer windows.CloseHandle(h)
	var c processMemoryCountersEx
	c.cb = uint32(unsafe.Sizeof(c))
	if r, _, err := procGetProcessMemoryInfo.Call(uintptr(h), uintptr(unsafe.Pointer(&c)), uintptr(c.cb)); r == 0 {
		return 0, fmt.Errorf("ptyhost: GetProcessMemoryInfo %d: %w", pid, err)
	}
	// PagefileUsage is the same commit charge in the older structure;
	// Wine 8 fills only that one.
	return uint64(max(c.privateUsage, c.pagefileUsage)), nil
}

// jobObjectMsgJobMemoryLimit is JOB_OBJECT_MSG_JOB_MEMORY_LIMIT: a process
// of the job asked for memory past the job's limit and was refused.
const jobObjectMsgJobMemoryLimit = 10

// jobAssociateCompletionPort is JOBOBJECT_ASSOCIATE_COMPLETION_PORT.
type jobAssociateCompletionPort struct {
	key  uintptr
	port windows.Handle
}

// jobMemoryPort makes a completion port that the job posts its messages
// to, so that memoryLimitReached can tell that the job's memory limit
// refused an allocation (a CLI may carry on, or exit, after one). It is
// read without waiting (no goroutine waits on it), and the messages of
// process starts and exits that pile up meanwhile are drained then.
func jobMemoryPort(job windows.Handle) (windows.Handle, error) {
	port, err := windows.CreateIoCompletionPort(windows.InvalidHandle, 0, 0, 1)
	if err != nil {
		return 0, fmt.Errorf("create completion port for the job: %w", err)
	}
	assoc := jobAssociateCompletionPort{port: port}
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectAssociateCompletionPortInformation,
		uintptr(unsafe.Pointer(&assoc)), uint32(unsafe.Sizeof(assoc))); err != nil {
		_ = windows.CloseHandle(port)
		return 0, fmt.Errorf("associate completion port with the job: %w", err)
	}
	return port, nil
}

// memoryLimitReached drains the job's messages and reports whether one
// said its memory limit refused memory, now or before.
func memoryLimitReached(p Process) bool {
	c, ok := p.(*conPTY)
	if !ok {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.memoryPort != 0 {
		// A job's message carries a process id where an OVERLAPPED
		// pointer would be: it is received as the integer it is, never
		// into a Go pointer, as x/sys/windows' wrapper would.
		var msg uint32
		var key, pid uintptr
		r, _, _ := procGetQueuedCompletionStatus.Call(uintptr(c.memoryPort), uintptr(unsafe.Pointer(&msg)),
			uintptr(unsafe.Pointer(&key)), uintptr(unsafe.Pointer(&pid)), 0)
		if r == 0 {
			break // none waiting (WAIT_TIMEOUT)
		}
		if msg == jobObjectMsgJobMemoryLimit {
			c.memoryHit = true
		}
	}
	return c.memoryHit
}

// memoryLimited: the job's memory limit bounds a conPTY's tree.
func memoryLimited(p Process) bool {
	c, ok := p.(*conPTY)
	return ok && c.memoryMax > 0
}
