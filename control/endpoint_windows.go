//go:build windows

package control

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"time"

	"github.com/Microsoft/go-winio"
	"github.com/rs/zerolog"
	"golang.org/x/sys/windows"
)

// Endpoint is where the API of the workspace's supervisor listens. On
// Windows it is a named pipe, \\.\pipe\shogun-<hash of the workspace
// path>, as Windows daemons expose local control endpoints (Docker's
// docker_engine, containerd): no path-length limit, an owner-only security
// descriptor, and nothing left behind after a crash.
func Endpoint(ws string) string { return `\\.\pipe\` + endpointName(ws) }

// listen creates the workspace's pipe, reachable by the user who runs the
// supervisor only. A pipe of that name already served means another
// supervisor runs (the workspace lock should have said so).
//
// Creating the pipe refuses a name that exists on Windows, but not under
// Wine 8, which makes a second pipe of the same name beside the first; so
// listen first looks whether a client can reach a pipe of that name, as a
// client would.
func listen(ws string, _ zerolog.Logger) (net.Listener, string, error) {
	addr := Endpoint(ws)
	if pipeExists(addr) {
		return nil, "", fmt.Errorf("control pipe %s: another process serves it already", addr)
	}
	sddl, err := ownerOnly()
	if err != nil {
		return nil, "", fmt.Errorf("control pipe: %w", err)
	}
	ln, err := winio.ListenPipe(addr, &winio.PipeConfig{SecurityDescriptor: sddl})
	if err != nil {
		return nil, "", fmt.Errorf("control pipe %s: %w", addr, err)
	}
	return ln, addr, nil
}

// pipeExists reports whether a pipe named addr exists: a client reaches it,
// or finds all its instances busy. Only a pipe that is not there answers at
// once that it is not.
func pipeExists(addr string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	conn, err := winio.DialPipeContext(ctx, addr)
	if err == nil {
		conn.Close()
		return true
	}
	return !errors.Is(err, fs.ErrNotExist)
}

// ownerOnly is a security descriptor that grants the current user, and
// nobody else, full access: a protected DACL with one entry.
func ownerOnly() (string, error) {
	tok := windows.GetCurrentProcessToken()
	user, err := tok.GetTokenUser()
	if err != nil {
		return "", fmt.Errorf("read the current user: %w", err)
	}
	return "D:P(A;;GA;;;" + user.User.Sid.String() + ")", nil
}

// dial connects to the pipe at addr.
func dial(ctx context.Context, addr string) (net.Conn, error) {
	return winio.DialPipeContext(ctx, addr)
}

// trustedEndpoint has nothing to check: a named pipe is not in a folder,
// and its security descriptor is the server's.
func trustedEndpoint(string, string) error { return nil }

// removeEndpoint has nothing to remove: a pipe ends with its last handle.
func removeEndpoint(string) error { return nil }

// peerPid is the process at the other end of a named pipe connection
// (GetNamedPipeClientProcessId).
func peerPid(c net.Conn) (int, error) {
	f, ok := c.(interface{ Fd() uintptr })
	if !ok {
		return 0, fmt.Errorf("peer of a %T: not a named pipe", c)
	}
	var pid uint32
	if err := windows.GetNamedPipeClientProcessId(windows.Handle(f.Fd()), &pid); err != nil {
		return 0, fmt.Errorf("named pipe client process: %w", err)
	}
	return int(pid), nil
}
