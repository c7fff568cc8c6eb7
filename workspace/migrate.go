package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// RotatedLogTimeFormat is the time in a rotated log's name, as lumberjack
// names it: <name>-<UTC time in this format><ext> beside the log.
const RotatedLogTimeFormat = "2006-01-02T15-04-05.000"

// MoveLegacySupervisorLog moves the supervisor's log of the older layout,
// runtime/logs/shogun.log with its rotations (shogun-<time>.log), into
// SupervisorLogDir, so that an existing workspace keeps its log and a role
// named shogun starts a log of its own. It moves once: only the call that
// creates SupervisorLogDir moves anything, so a runtime/logs/shogun.log
// written later, the role's, stays where it is. Only regular files are
// moved, never a link. It returns the new paths of the files moved.
func (l Layout) MoveLegacySupervisorLog() ([]string, error) {
	dir := l.Path(SupervisorLogDir)
	if err := os.MkdirAll(l.Logs(), 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", l.Logs(), err)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil, nil // the current layout: moved before, or never needed
		}
		return nil, fmt.Errorf("create %s: %w", dir, err)
	}
	entries, err := os.ReadDir(l.Logs())
	if err != nil {
		return nil, fmt.Errorf("move the supervisor's log to %s: %w", dir, err)
	}
	var moved []string
	var errs []error
	for _, e := range entries {
		if !e.Type().IsRegular() || !isLegacySupervisorLog(e.Name()) {
			continue
		}
		to := filepath.Join(dir, e.Name())
		if err := os.Rename(filepath.Join(l.Logs(), e.Name()), to); err != nil {
			errs = append(errs, fmt.Errorf("move the supervisor's log to %s: %w", dir, err))
			continue
		}
		moved = append(moved, to)
	}
	return moved, errors.Join(errs...)
}

// isLegacySupervisorLog says whether name, in runtime/logs, is the older
// layout's supervisor log or one of its rotations.
func isLegacySupervisorLog(name string) bool {
	if name == "shogun.log" {
		return true
	}
	stamp, ok := strings.CutPrefix(name, "shogun-")
	if !ok {
		return false
	}
	if stamp, ok = strings.CutSuffix(stamp, ".log"); !ok {
		return false
	}
	_, err := time.Parse(RotatedLogTimeFormat, stamp)
	return err == nil
}
