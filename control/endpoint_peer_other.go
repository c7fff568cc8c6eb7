//go:build !linux && !darwin && !windows

package control

import (
	"net"

	"github.com/shogun-dev/shogun/supervisor"
)

// peerPid is not asked on these systems: getpeereid tells the user only,
// which the socket's mode already restricts to the supervisor's, and the
// process tree of a pid is not read here (supervisor.ErrNoProcessTree).
func peerPid(net.Conn) (int, error) { return 0, supervisor.ErrNoProcessTree }
