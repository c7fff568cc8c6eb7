package ptyhost

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"net/netip"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// lineage is pid and its ancestors up to init or the calling process, from
// /proc/PID/stat (field 4 the parent, field 6 the session).
func lineage(pid int) ([]procLink, error) { return walkLineage(pid, maxLineage) }

// walkLineage is lineage, at most limit processes long.
func walkLineage(pid, limit int) ([]procLink, error) {
	self := os.Getpid()
	var out []procLink
	for len(out) < limit && pid > 1 {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			if len(out) == 0 {
				return nil, fmt.Errorf("read process %d: %w", pid, ErrNoProcess)
			}
			break // an ancestor ended meanwhile: the walk ends there
		}
		f, err := statFields(b)
		if err != nil {
			return nil, fmt.Errorf("/proc/%d/stat: %w", pid, err)
		}
		ppid, _ := strconv.Atoi(f[1])
		sid, _ := strconv.Atoi(f[3])
		out = append(out, procLink{pid: pid, ppid: ppid, sid: sid})
		if pid == self {
			break
		}
		pid = ppid
	}
	if len(out) == limit && pid > 1 && out[len(out)-1].pid != self {
		// Fail closed: a chain this deep is built to hide where it comes
		// from, and what the walk did not see may be a role's.
		return nil, fmt.Errorf("process %d: %w", out[0].pid, ErrTooDeep)
	}
	return out, nil
}

func leftBehind(pid int) (bool, error) {
	links, err := lineage(pid)
	if err != nil {
		return false, err
	}
	self := os.Getpid()
	own, err := unix.Getsid(0)
	if err != nil {
		return false, fmt.Errorf("read own session: %w", err)
	}
	for _, l := range links {
		if l.ppid == self && l.pid != self {
			return l.sid != own, nil
		}
	}
	return false, nil
}

func loopbackOwners(client netip.Addr, cport uint16, server netip.Addr, sport uint16) ([]int, error) {
	inode, err := tcpInode(client, cport, server, sport)
	if err != nil || inode == "" {
		return nil, err
	}
	want := "socket:[" + inode + "]"
	// The calling process (the supervisor, whose descriptors are many) is
	// not read: it is no agent, and the client's end is never its own
	// outside tests, where it is a person.
	self := os.Getpid()
	var pids []int
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", err)
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		dir := "/proc/" + e.Name() + "/fd/"
		fds, err := os.ReadDir(dir)
		if err != nil {
			continue // another user's, or ended
		}
		for _, fd := range fds {
			if link, err := os.Readlink(dir + fd.Name()); err == nil && link == want {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids, nil
}

// tcpInode is the inode of the socket whose local end is client and whose
// remote end is server, from /proc/net/tcp (IPv4) or tcp6; "" when none.
func tcpInode(client netip.Addr, cport uint16, server netip.Addr, sport uint16) (string, error) {
	file := "/proc/net/tcp"
	if client.Is6() {
		file = "/proc/net/tcp6"
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", file, err)
	}
	local, remote := procNetAddr(client, cport), procNetAddr(server, sport)
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
		f := strings.Fields(sc.Text())
		if len(f) >= 10 && f[1] == local && f[2] == remote {
			return f[9], nil
		}
	}
	return "", nil
}

// procNetAddr writes an address as /proc/net/tcp does: the address's bytes
// in host order per 32-bit word, in hex, a colon, the port in hex.
func procNetAddr(a netip.Addr, port uint16) string {
	raw := a.AsSlice()
	var words []byte
	for i := 0; i+4 <= len(raw); i += 4 {
		w := raw[i : i+4]
		if nativeLittleEndian() {
			w = []byte{w[3], w[2], w[1], w[0]}
		}
		words = append(words, w...)
	}
	return strings.ToUpper(hex.EncodeToString(words)) + fmt.Sprintf(":%04X", port)
}

// nativeLittleEndian reports the machine's byte order, in which the kernel
// prints each 32-bit word of an address.
func nativeLittleEndian() bool {
	return binary.NativeEndian.Uint16([]byte{1, 0}) == 1
}

// maxEnviron bounds what is read of a process's environment.
const maxEnviron = 1 << 20

func environ(pid int) ([]string, error) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return nil, fmt.Errorf("read the environment of process %d: %w", pid, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxEnviron))
	if err != nil {
		return nil, fmt.Errorf("read the environment of process %d: %w", pid, err)
	}
	return strings.Split(strings.TrimRight(string(b), "\x00"), "\x00"), nil
}
