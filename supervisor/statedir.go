package supervisor

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/shogun-dev/shogun/workspace"
)

// CheckStateDir refuses a workspace whose runtime/state folder is not its
// own: a symbolic link, or inside a runtime folder that leads elsewhere.
// The folder holds the workspace lock, the pid ledger and the control
// socket; two workspaces sharing it would share one lock, and the second
// would act on (and kill) the processes the first one recorded. A missing
// folder is fine: it is created at start.
func CheckStateDir(ws string) error {
	dir := workspace.New(ws).State()
	fi, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("check runtime/state: %w", err)
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		target, _ := os.Readlink(dir)
		return fmt.Errorf("runtime/state is a symbolic link (to %s): it holds the workspace lock, the pid ledger and the control socket, and must belong to this workspace alone; make it a real folder", target)
	}
	if !fi.IsDir() {
		return fmt.Errorf("runtime/state is not a folder")
	}
	root, err := filepath.EvalSymlinks(ws)
	if err != nil {
		return fmt.Errorf("check runtime/state: %w", err)
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return fmt.Errorf("check runtime/state: %w", err)
	}
	if rel, err := filepath.Rel(root, real); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return fmt.Errorf("runtime/state leads out of the workspace through a symbolic link (to %s): it must belong to this workspace alone; make runtime/ a real folder", real)
	}
	return nil
}
