package ptyhost

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"unsafe"

	"golang.org/x/sys/windows"
)

var (
	procIsProcessInJob      = windows.NewLazySystemDLL("kernel32.dll").NewProc("IsProcessInJob")
	procGetExtendedTcpTable = windows.NewLazySystemDLL("iphlpapi.dll").NewProc("GetExtendedTcpTable")
)

// Holds asks whether pid is in the child's job: every descendant is put in
// it when created, and the job does not allow breaking away.
func (p *conPTY) Holds(pid int) (bool, error) {
	// Wine 8 refuses IsProcessInJob with the limited right alone, which
	// Windows takes; the full right is refused on an elevated process
	// (a person's shogun from an administrator's terminal), so the
	// limited one is what is left then.
	h, err := openProcess(pid, windows.PROCESS_QUERY_INFORMATION)
	if err != nil {
		if h, err = openProcess(pid, windows.PROCESS_QUERY_LIMITED_INFORMATION); err != nil {
			return false, err
		}
	}
	defer windows.CloseHandle(h)
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.job == 0 {
		return false, nil // the job is closed: its processes are gone
	}
	var in int32
	if r, _, err := procIsProcessInJob.Call(uintptr(h), uintptr(p.job), uintptr(unsafe.Pointer(&in))); r == 0 {
		return false, fmt.Errorf("ptyhost: IsProcessInJob %d: %w", pid, err)
	}
	return in != 0, nil
}

// leftBehind is false: a process of a role stays in the role's job
// whatever becomes of its parent.
func leftBehind(int) (bool, error) { return false, nil }

// The GetExtendedTcpTable table class and address families.
const (
	tcpTableOwnerPidAll = 5
	afInet              = 2
	afInet6             = 23
)

func loopbackOwners(client netip.Addr, cport uint16, server netip.Addr, sport uint16) ([]int, error) {
	family, rowSize := afInet, 24 // MIB_TCPROW_OWNER_PID
	if client.Is6() {
		family, rowSize = afInet6, 56 // MIB_TCP6ROW_OWNER_PID
	}
	var size uint32
	var buf []byte
	for range 5 { // the table may grow between the calls
		var ptr uintptr
		if len(buf) > 0 {
			ptr = uintptr(unsafe.Pointer(&buf[0]))
		}
		r, _, _ := procGetExtendedTcpTable.Call(ptr, uintptr(unsafe.Pointer(&size)), 0, uintptr(family), tcpTableOwnerPidAll, 0)
		if r == 0 && len(buf) > 0 {
			break
		}
		if r != 0 && windows.Errno(r) != windows.ERROR_INSUFFICIENT_BUFFER {
			return nil, fmt.Errorf("ptyhost: GetExtendedTcpTable: %w", windows.Errno(r))
		}
		buf = make([]byte, size)
	}
	if len(buf) < 4 {
		return nil, fmt.Errorf("ptyhost: GetExtendedTcpTable: no table")
	}
	n := int(binary.LittleEndian.Uint32(buf))
	le := binary.LittleEndian
	var pids []int
	for i := 0; i < n && 4+(i+1)*rowSize <= len(buf); i++ {
		row := buf[4+i*rowSize : 4+(i+1)*rowSize]
		var la, ra netip.Addr
		var lp, rp uint16
		var pid uint32
		if family == afInet {
			// state, local addr, local port, remote addr, remote port, pid
			la = netip.AddrFrom4([4]byte(row[4:8]))
			lp = portOf(row[8:12])
			ra = netip.AddrFrom4([4]byte(row[12:16]))
			rp = portOf(row[16:20])
			pid = le.Uint32(row[20:24])
		} else {
			// local addr, scope, local port, remote addr, scope, remote port, state, pid
			la = netip.AddrFrom16([16]byte(row[0:16]))
			lp = portOf(row[20:24])
			ra = netip.AddrFrom16([16]byte(row[24:40]))
			rp = portOf(row[44:48])
			pid = le.Uint32(row[52:56])
		}
		// Wine 8 reports IPv6 connections with no owning process (0).
		if la == client && lp == cport && ra == server && rp == sport && pid != 0 {
			pids = append(pids, int(pid))
		}
	}
	return pids, nil
}

// portOf reads a port as the TCP table holds it: in network byte order in
// the low 16 bits of a DWORD.
func portOf(b []byte) uint16 { return binary.BigEndian.Uint16(b[0:2]) }

// environ is not read on Windows: nothing is left behind there.
func environ(int) ([]string, error) { return nil, ErrNoProcessTree }
