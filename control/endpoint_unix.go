//go:build !windows

package control

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/shogun-dev/shogun/atomicfile"
	"github.com/shogun-dev/shogun/workspace"
)

// maxSocketPath is the longest socket path every supported OS takes: a Unix
// socket address holds 104 bytes on macOS (108 on Linux), the final NUL
// included.
const maxSocketPath = 103

// Endpoint is where the API of the workspace's supervisor listens. On Unix
// it is a socket:
// runtime/state/shogun.sock when that path fits in a socket address, else a
// short path in a folder of the user's outside the workspace (socketDir),
// named by a hash of the workspace path. The supervisor writes the latter
// into the layout's SocketPointer; a client takes the path from there when
// it names a socket for this workspace in a folder that only the user can
// enter, so server and client agree even when their environments differ.
func Endpoint(ws string) string {
	l := workspace.New(ws)
	own := l.Socket()
	if len(own) <= maxSocketPath {
		return own
	}
	if p, ok := pointedSocket(ws); ok {
		return p
	}
	return filepath.Join(runtimeDir(), socketName(ws))
}

// pointedSocket is the socket path the workspace's SocketPointer names, when
// it is one for this workspace in a folder only the user owns and can enter.
func pointedSocket(ws string) (string, bool) {
	b, err := os.ReadFile(workspace.New(ws).SocketPointer())
	if err != nil {
		return "", false
	}
	p := strings.TrimSpace(string(b))
	if filepath.IsAbs(p) && filepath.Base(p) == socketName(ws) && privateDir(filepath.Dir(p)) == nil {
		return p, true
	}
	return "", false
}

// socketName names a workspace's socket outside the workspace.
func socketName(ws string) string { return endpointName(ws) + ".sock" }

// runtimeDir is the user's folder for sockets: $XDG_RUNTIME_DIR/shogun when
// set (private to the user by the XDG specification), else shogun-<uid>
// in the temporary folder.
func runtimeDir() string {
	if x := os.Getenv("XDG_RUNTIME_DIR"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "shogun")
	}
	if uid := os.Geteuid(); uid >= 0 {
		return filepath.Join(os.TempDir(), fmt.Sprintf("shogun-%d", uid))
	}
	return filepath.Join(os.TempDir(), "shogun")
}

// listenPath is Endpoint for the supervisor: when the socket cannot live in
// the workspace it takes a private folder for it (socketDir) and records the
// path in the layout's SocketPointer; otherwise it removes a stale pointer.
func listenPath(ws string, log zerolog.Logger) (string, error) {
	l := workspace.New(ws)
	own, pointer := l.Socket(), l.SocketPointer()
	if len(own) <= maxSocketPath {
		if err := os.Remove(pointer); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("remove stale socket pointer: %w", err)
		}
		return own, nil
	}
	dir, err := socketDir(ws, log)
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, socketName(ws))
	if len(path) > maxSocketPath {
		return "", fmt.Errorf("control socket: neither %s nor %s fits in a socket address (%d bytes at most); use a shorter ws path or set XDG_RUNTIME_DIR to a short folder",
			own, path, maxSocketPath)
	}
	if err := os.MkdirAll(filepath.Dir(pointer), 0o755); err != nil {
		return "", fmt.Errorf("control socket pointer: %w", err)
	}
	if err := atomicfile.Write(pointer, []byte(path+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("control socket pointer: %w", err)
	}
	return path, nil
}

// socketDir is a folder for the workspace's socket that only the user owns
// and can enter: the one the pointer names from an earlier start while it
// still is so; else the runtime folder, made owner-only when missing; else,
// when someone else made that folder first or can enter it (anyone can
// create /tmp/shogun-<uid>), a new private folder beside it
// (shogun-<uid>-<random>, which os.MkdirTemp creates exclusively and 0700)
// rather than no control endpoint at all.
func socketDir(ws string, log zerolog.Logger) (string, error) {
	if p, ok := pointedSocket(ws); ok {
		return filepath.Dir(p), nil
	}
	dir := runtimeDir()
	err := os.MkdirAll(dir, 0o700)
	if err != nil {
		err = fmt.Errorf("cannot be made: %w", err)
	} else if err = privateDir(dir); err == nil {
		return dir, nil
	}
	own, terr := os.MkdirTemp(os.TempDir(), fmt.Sprintf("shogun-%d-", os.Geteuid()))
	if terr != nil {
		return "", fmt.Errorf("control socket folder: %s %v, and a private one could not be made: %w", dir, err, terr)
	}
	if terr := privateDir(own); terr != nil {
		return "", fmt.Errorf("control socket folder %s %v: refusing to put the socket there", own, terr)
	}
	log.Warn().Str("path", dir).Str("instead", own).Str("why", err.Error()).
		Msg("the usual control socket folder is not yours alone; the socket goes to a private folder instead, named in " +
			workspace.RelTo(ws, workspace.New(ws).SocketPointer()))
	return own, nil
}

// privateDir says what is wrong when dir is not a real folder that only the
// running user owns and can enter.
func privateDir(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return errors.New("is not a folder")
	}
	return ownedPrivately(fi)
}

// trustedEndpoint says what is wrong when a client must not connect to
// addr, the endpoint of the workspace ws: a socket outside the workspace is
// trusted only in a folder that only the user owns and can enter, the only
// kind a supervisor listens in (socketDir); in a folder another user made,
// anyone could answer as the supervisor and read what is sent to it.
func trustedEndpoint(ws, addr string) error {
	if addr == workspace.New(ws).Socket() {
		return nil
	}
	if err := privateDir(filepath.Dir(addr)); err != nil {
		return fmt.Errorf("control socket folder %s %w: not connecting, a supervisor of yours never listens there", filepath.Dir(addr), err)
	}
	return nil
}

// listen creates the socket at Endpoint, owner-only, replacing one left by
// a supervisor that was killed (the workspace lock guarantees no other
// supervisor owns it).
func listen(ws string, log zerolog.Logger) (net.Listener, string, error) {
	path, err := listenPath(ws, log)
	if err != nil {
		return nil, "", err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, "", fmt.Errorf("control socket: %w", err)
	}
	if _, err := os.Lstat(path); err == nil {
		if c, err := net.DialTimeout("unix", path, 500*time.Millisecond); err == nil {
			c.Close()
			return nil, "", fmt.Errorf("control socket %s: another process is listening on it", path)
		}
		log.Info().Str("path", path).Msg("removing a stale control socket left by a killed supervisor")
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, "", fmt.Errorf("remove stale control socket: %w", err)
		}
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, "", fmt.Errorf("control socket: %w", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, "", fmt.Errorf("control socket: %w", err)
	}
	return ln, path, nil
}

// dial connects to the endpoint at addr.
func dial(ctx context.Context, addr string) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, "unix", addr)
}

// removeEndpoint removes the socket when the server ends.
func removeEndpoint(addr string) error {
	if err := os.Remove(addr); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove control socket: %w", err)
	}
	return nil
}

// ownedPrivately says what is wrong when fi is not owned by the running user
// or can be entered by others.
func ownedPrivately(fi fs.FileInfo) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Errorf("has no owner information")
	}
	if me := os.Geteuid(); int(st.Uid) != me {
		return fmt.Errorf("is owned by user %d, not by you (user %d)", st.Uid, me)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("is open to other users (mode %04o)", perm)
	}
	return nil
}
