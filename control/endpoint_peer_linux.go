package control

import (
	"fmt"
	"net"

	"golang.org/x/sys/unix"
)

// peerPid is the process at the other end of a control socket connection,
// as the kernel recorded it when the client connected (SO_PEERCRED).
func peerPid(c net.Conn) (int, error) {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return 0, fmt.Errorf("peer of a %T: not a Unix socket", c)
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return 0, fmt.Errorf("peer credentials: %w", err)
	}
	var cred *unix.Ucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return 0, fmt.Errorf("peer credentials: %w", err)
	}
	if credErr != nil {
		return 0, fmt.Errorf("peer credentials (SO_PEERCRED): %w", credErr)
	}
	return int(cred.Pid), nil
}
