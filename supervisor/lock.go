package supervisor

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/shogun-dev/shogun/ptyhost"
)

// ErrLocked is returned by AcquireLock when another supervisor runs the workspace.
var ErrLocked = errors.New("workspace is in use")

// LockError says which supervisor holds a workspace.
type LockError struct {
	Path string
	Pid  int
}

func (e *LockError) Error() string {
	return fmt.Sprintf("another shogun (pid %d) is already running this workspace (lock %s)", e.Pid, e.Path)
}

// Unwrap lets errors.Is(err, ErrLocked) match.
func (e *LockError) Unwrap() error { return ErrLocked }

// Lock is a workspace's runtime/state/shogun.lock, held by one supervisor.
type Lock struct{ path string }

// AcquireLock takes the lock file at path. It holds the owner's pid and
// process identity; a lock left by a supervisor that no longer runs (killed
// with -9) is replaced. Creation with O_EXCL makes two racing starts agree.
func AcquireLock(path string) (*Lock, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("lock: %w", err)
	}
	for attempt := 0; ; attempt++ {
		err := createLock(path)
		if err == nil {
			return &Lock{path: path}, nil
		}
		if !errors.Is(err, fs.ErrExist) || attempt > 0 {
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		pid, live := lockOwner(path)
		if live {
			return nil, &LockError{Path: path, Pid: pid}
		}
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("remove stale lock %s: %w", path, err)
		}
	}
}

func createLock(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	id, _ := ptyhost.Identity(os.Getpid())
	_, werr := fmt.Fprintf(f, "%d %s\n", os.Getpid(), id)
	cerr := f.Close()
	if werr != nil || cerr != nil {
		os.Remove(path)
		return errors.Join(werr, cerr)
	}
	return nil
}

// lockOwner reads the lock and reports whether its owner still runs. A lock
// that cannot be parsed (a crash while writing it) is stale.
func lockOwner(path string) (pid int, live bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(b))
	if len(f) < 1 {
		return 0, false
	}
	pid, err = strconv.Atoi(f[0])
	if err != nil || pid <= 0 {
		return 0, false
	}
	id, err := ptyhost.Identity(pid)
	if err != nil {
		return pid, false
	}
	return pid, len(f) < 2 || f[1] == id
}

// Owner returns the pid of the supervisor holding the lock at path, or 0 when
// none runs. Commands like `shogun status` use it.
func Owner(path string) int {
	if pid, live := lockOwner(path); live {
		return pid
	}
	return 0
}

// Release removes the lock file.
func (l *Lock) Release() error {
	if err := os.Remove(l.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("release lock: %w", err)
	}
	return nil
}
