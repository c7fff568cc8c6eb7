package control

import (
	"fmt"
	"net"

	"golang.org/x/sys/unix"
)

// peerPid is the process at the other end of a control socket connection,
// as the kernel recorded it when the client connected (LOCAL_PEERPID).
func peerPid(c net.Conn) (int, error) {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return 0, fmt.Errorf("peer of a %T: not a Unix socket", c)
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return 0, fmt.Errorf("peer credentials: %w", err)
	}
	var pid int
	var pidErr error
	if err := raw.Control(func(fd uintptr) {
		pid, pidErr = unix.GetsockoptInt(int(fd), unix.SOL_LOCAL, unix.LOCAL_PEERPID)
	}); err != nil {
		return 0, fmt.Errorf("peer credentials: %w", err)
	}
	if pidErr != nil {
		return 0, fmt.Errorf("peer credentials (LOCAL_PEERPID): %w", pidErr)
	}
	return pid, nil
}
