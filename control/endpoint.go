package control

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/shogun-dev/shogun/atomicfile"
	"github.com/shogun-dev/shogun/workspace"
)

// maxSocketPath is the longest socket path every supported OS takes: a Unix
// socket address holds 104 bytes on macOS (108 on Linux), the final NUL
// included.
const maxSocketPath = 103

// SocketPath is where the API of the workspace's supervisor listens:
// runtime/state/shogun.sock when that path fits in a socket address, else a
// short path in the user's runtime folder ($XDG_RUNTIME_DIR/shogun, or
// shogun-<uid> in the temporary folder) named by a hash of the workspace
// path. The supervisor writes the latter into the layout's SocketPointer; a
// client takes the path from there when it names a socket for this
// workspace in a folder that only the user can enter, so server and client
// agree even when their environments differ.
func SocketPath(ws string) string {
	l := workspace.New(ws)
	own := l.Socket()
	if len(own) <= maxSocketPath {
		return own
	}
	name := socketName(ws)
	if b, err := os.ReadFile(l.SocketPointer()); err == nil {
		p := strings.TrimSpace(string(b))
		if filepath.IsAbs(p) && filepath.Base(p) == name && privateDir(filepath.Dir(p)) == nil {
			return p
		}
	}
	return filepath.Join(runtimeDir(), name)
}

// socketName names a workspace's socket outside the workspace.
func socketName(ws string) string {
	sum := sha256.Sum256([]byte(filepath.Clean(ws)))
	return "shogun-" + hex.EncodeToString(sum[:8]) + ".sock"
}

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

// listenPath is SocketPath for the supervisor: it creates the runtime
// folder (owner-only) when the socket must live there, refuses a folder
// that someone else could enter or own, and records the path in
// the layout's SocketPointer; otherwise it removes a stale pointer.
func listenPath(ws string) (string, error) {
	l := workspace.New(ws)
	own, pointer := l.Socket(), l.SocketPointer()
	if len(own) <= maxSocketPath {
		if err := os.Remove(pointer); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("remove stale socket pointer: %w", err)
		}
		return own, nil
	}
	dir := runtimeDir()
	path := filepath.Join(dir, socketName(ws))
	if len(path) > maxSocketPath {
		return "", fmt.Errorf("control socket: neither %s nor %s fits in a socket address (%d bytes at most); use a shorter ws path or set XDG_RUNTIME_DIR to a short folder",
			own, path, maxSocketPath)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("control socket folder: %w", err)
	}
	if err := privateDir(dir); err != nil {
		return "", fmt.Errorf("control socket folder %s %v: refusing to put the socket there", dir, err)
	}
	if err := os.MkdirAll(filepath.Dir(pointer), 0o755); err != nil {
		return "", fmt.Errorf("control socket pointer: %w", err)
	}
	if err := atomicfile.Write(pointer, []byte(path+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("control socket pointer: %w", err)
	}
	return path, nil
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
