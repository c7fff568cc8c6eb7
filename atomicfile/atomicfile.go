// Package atomicfile writes files so that a reader — an agent reading its
// task file, a person's editor on the dashboard, the next start reading the
// pid ledger — sees the old content or the new, never a part, and a crash
// at any moment leaves one of the two. It is the one way shogun replaces a
// file: a temporary file in the same folder, written, synced and given the
// mode asked for, then renamed over the target, and the folder synced where
// the OS allows (WriteUnsynced leaves the syncs out, for files that mean
// nothing after the machine restarts).
package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// Write replaces the file at path with data, with the given permissions
// whatever the umask (on Windows only the read-only bit means anything).
// The temporary file is hidden (a dot name ending in .tmp), so folder scans
// that skip such names never pick it up, and it is removed on failure.
func Write(path string, data []byte, mode fs.FileMode) error {
	return write(path, data, mode, true)
}

// WriteUnsynced is Write without its syncs, for files whose content means
// nothing after the machine restarts: the pid ledger (no process outlives
// a restart) and the views rewritten every second (status.yaml,
// dashboard.md). Every reader still sees the old content or the new, and
// so does the next start after a crash of shogun (the kernel keeps what it
// was given); only a crash of the machine may leave the old content. A
// team whose roles sleep and wake rewrites the ledger at every start and
// exit, and the syncs were most of what that cost.
func WriteUnsynced(path string, data []byte, mode fs.FileMode) error {
	return write(path, data, mode, false)
}

func write(path string, data []byte, mode fs.FileMode, sync bool) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			_ = os.Remove(tmp)
			err = fmt.Errorf("write %s: %w", path, err)
		}
	}()
	_, werr := f.Write(data)
	merr := f.Chmod(mode)
	var serr error
	if sync {
		serr = f.Sync()
	}
	if err := errors.Join(werr, merr, serr, f.Close()); err != nil {
		return err
	}
	if err := Rename(tmp, path); err != nil {
		return err
	}
	if !sync {
		return nil
	}
	return syncDir(dir)
}

// Renames that Windows refuses while another process has one of the files
// open without FILE_SHARE_DELETE (an agent reading its task file, an editor,
// a virus scanner) are tried again with growing pauses for this long. Such
// a handle is usually closed within milliseconds.
const (
	RenameRetryFor   = 5 * time.Second
	renameFirstPause = 5 * time.Millisecond
	renameMaxPause   = 250 * time.Millisecond
)

// Rename renames src to dst, replacing dst, as os.Rename does, but waits
// out a file that is open elsewhere (only Windows refuses that; see
// FileInUse) for up to RenameRetryFor. src is left in place when it gives
// up, so nothing is lost.
func Rename(src, dst string) error {
	deadline := time.Now().Add(RenameRetryFor)
	pause := renameFirstPause
	for {
		err := os.Rename(src, dst)
		if err == nil || !FileInUse(err) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(pause)
		pause = min(2*pause, renameMaxPause)
	}
}
