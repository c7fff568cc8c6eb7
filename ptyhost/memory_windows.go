package ptyhost

import (
	"encoding/binary"
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
			out[i] = c.memory()
		}
	}
	return out, nil
}

// memory sums the private committed memory of the job's processes.
func (p *conPTY) memory() uint64 {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.job == 0 {
		return 0
	}
	// JOBOBJECT_BASIC_PROCESS_ID_LIST: two DWORD counts, then ULONG_PTRs.
	ptr := unsafe.Sizeof(uintptr(0))
	buf := make([]byte, 8+maxJobPids*ptr)
	if err := windows.QueryInformationJobObject(p.job, windows.JobObjectBasicProcessIdList,
		uintptr(unsafe.Pointer(&buf[0])), uint32(len(buf)), nil); err != nil {
		return 0
	}
	n := int(binary.LittleEndian.Uint32(buf[4:8]))
	var total uint64
	for i := 0; i < n && i < maxJobPids; i++ {
		off := 8 + uintptr(i)*ptr
		pid := *(*uintptr)(unsafe.Pointer(&buf[off]))
		total += processPrivateBytes(uint32(pid))
	}
	return total
}

// processPrivateBytes is a process's private committed memory; 0 when it
// cannot be read (it ended meanwhile).
func processPrivateBytes(pid uint32) uint64 {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, pid)
	if err != nil {
		return 0
	}
	defer windows.CloseHandle(h)
	var c processMemoryCountersEx
	c.cb = uint32(unsafe.Sizeof(c))
	if r, _, _ := procGetProcessMemoryInfo.Call(uintptr(h), uintptr(unsafe.Pointer(&c)), uintptr(c.cb)); r == 0 {
		return 0
	}
	return uint64(c.privateUsage)
}

// memoryLimited: the job's memory limit bounds a conPTY's tree.
func memoryLimited(p Process) bool {
	c, ok := p.(*conPTY)
	return ok && c.memoryMax > 0
}
