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

// memoryLimited: the job's memory limit bounds a conPTY's tree.
func memoryLimited(p Process) bool {
	c, ok := p.(*conPTY)
	return ok && c.memoryMax > 0
}
