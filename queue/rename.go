package queue

import (
	"os"
	"time"
)

// Renames that Windows refuses while another process has one of the files
// open without FILE_SHARE_DELETE (an agent reading its task file, an editor,
// a virus scanner) are tried again with growing pauses for this long. Such
// a handle is usually closed within milliseconds.
const (
	renameRetryFor   = 5 * time.Second
	renameFirstPause = 5 * time.Millisecond
	renameMaxPause   = 250 * time.Millisecond
)

// replaceFile renames src to dst, replacing dst, as os.Rename does, but
// waits out a file that is open elsewhere (only Windows refuses that; see
// fileInUse). src is left in place when it gives up, so nothing is lost.
func replaceFile(src, dst string) error {
	deadline := time.Now().Add(renameRetryFor)
	pause := renameFirstPause
	for {
		err := os.Rename(src, dst)
		if err == nil || !fileInUse(err) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(pause)
		pause = min(2*pause, renameMaxPause)
	}
}
