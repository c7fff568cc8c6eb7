package queue

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/shogun-dev/shogun/store"
	"github.com/shogun-dev/shogun/workspace"
)

// MaxTaskFileBytes bounds what ReadTaskFile reads: an agent can write into
// its task file, and the file is shown to people.
const MaxTaskFileBytes = 1 << 20

// ErrNoTaskFile means a task has no task file: it was never handed out, or
// its file is gone.
var ErrNoTaskFile = errors.New("no task file")

// ReadTaskFile returns the text of t's task file as the agent was given it
// (and may have edited it): the role's current task file while it is t's,
// else the copy the queue archived when the role's next task replaced it
// or t was cancelled (the latest one, when there are several). Only a
// regular file is read, never through a symbolic link an agent put there,
// and at most MaxTaskFileBytes of it; bytes that are not UTF-8 are
// replaced. It returns the path read too.
func (q *Queue) ReadTaskFile(t store.Task) (text, path string, err error) {
	if checkRole("role", t.Role) != nil || checkID("task_id", t.ID) != nil {
		return "", "", fmt.Errorf("task file of %s: %w", t.ID, ErrNoTaskFile)
	}
	if last, err := q.st.LastAssigned(t.Role); err == nil && last != nil && last.ID == t.ID {
		path = q.layout.TaskFile(t.Role)
	} else if path, err = latestArchivedTask(q.layout, t.Role+"-"+t.ID); err != nil {
		return "", "", fmt.Errorf("task file of %s: %w", t.ID, err)
	}
	b, err := readAtMost(path, MaxTaskFileBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return "", "", fmt.Errorf("task file of %s: %w", t.ID, ErrNoTaskFile)
	}
	if err != nil {
		return "", "", fmt.Errorf("task file of %s: %w", t.ID, err)
	}
	return strings.ToValidUTF8(string(b), string(utf8.RuneError)), path, nil
}

// latestArchivedTask is the task file archived last as stem.yaml (or
// stem-N.yaml): in the newest archive day that has one, else in the
// archive's older flat layout.
func latestArchivedTask(l workspace.Layout, stem string) (string, error) {
	var dirs []string
	if entries, err := os.ReadDir(l.Archive()); err == nil {
		names := make([]string, 0, len(entries))
		for _, e := range entries {
			if e.IsDir() {
				names = append(names, e.Name())
			}
		}
		for _, day := range slices.Backward(workspace.ArchiveDays(names)) {
			dirs = append(dirs, filepath.Join(l.Archive(), day, "tasks"))
		}
	}
	for _, dir := range append(dirs, l.ArchiveLegacy("tasks")) {
		p, err := latestArchived(dir, stem)
		if !errors.Is(err, ErrNoTaskFile) {
			return p, err
		}
	}
	return "", ErrNoTaskFile
}

// latestArchived is the file in dir named stem.yaml, or stem-N.yaml with
// the largest N (moveInto's names, the later the larger).
func latestArchived(dir, stem string) (string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return "", ErrNoTaskFile
	}
	if err != nil {
		return "", err
	}
	best, bestN := "", 0
	for _, e := range entries {
		name := e.Name()
		rest, ok := strings.CutPrefix(name, stem)
		if !ok || !strings.HasSuffix(rest, ".yaml") {
			continue
		}
		rest = strings.TrimSuffix(rest, ".yaml")
		n := 1
		if rest != "" {
			num, ok := strings.CutPrefix(rest, "-")
			v, err := strconv.Atoi(num)
			if !ok || err != nil || v < 2 {
				continue // another task's file whose id starts like this one's
			}
			n = v
		}
		if n > bestN {
			best, bestN = filepath.Join(dir, name), n
		}
	}
	if best == "" {
		return "", ErrNoTaskFile
	}
	return best, nil
}

// readAtMost reads at most max bytes of the regular file at path, refusing
// anything else (a symbolic link, a folder, a FIFO) without opening it.
// Unlike readRegular, which refuses a file over the limit, it shows the
// beginning of one: the text is for people to read, not to parse.
func readAtMost(path string, max int64) ([]byte, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is %s, not a regular file", filepath.Base(path), fileKind(fi.Mode()))
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// Swapped for a link between the look and the open: refused too.
	if opened, err := f.Stat(); err != nil || !os.SameFile(fi, opened) {
		return nil, fmt.Errorf("%s changed while it was opened", filepath.Base(path))
	}
	return io.ReadAll(io.LimitReader(f, max))
}
