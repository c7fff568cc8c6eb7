package queue

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
)

// intake finds files dropped into the commands and reports folders and
// hands them to the queue once they are complete. It learns of files from
// fsnotify, from a full scan at start and after an event overflow, and from a
// periodic rescan that catches anything a watcher missed.
type intake struct {
	q       *Queue
	settle  time.Duration
	rescan  time.Duration
	pending map[string]fileState // path → what it looked like when last seen
	retries []claim              // claimed commands that failed to parse while still changing
	retryAt time.Time
}

// fileState is a file's size and modification time: while either changes, a
// writer is still at work.
type fileState struct {
	size  int64
	mtime time.Time
	due   time.Time // when to look again
}

func newIntake(q *Queue) *intake {
	return &intake{
		q:       q,
		settle:  q.cfg.Settings.Queue.Settle,
		rescan:  q.cfg.Settings.Queue.Rescan,
		pending: map[string]fileState{},
	}
}

// candidate reports whether a file name is one shogun should read: YAML, not
// hidden, not a temporary file a writer will rename later.
func candidate(name string) bool {
	if strings.HasPrefix(name, ".") || strings.HasSuffix(name, "~") {
		return false
	}
	switch strings.ToLower(filepath.Ext(name)) {
	case ".yaml", ".yml":
		return true
	}
	return false
}

func (in *intake) run(ctx context.Context) {
	w, err := fsnotify.NewBufferedWatcher(4096)
	if err != nil {
		in.q.log.Warn().Err(err).Msg("file watcher unavailable; relying on rescans")
	} else {
		defer w.Close()
		for _, d := range []string{in.q.dirs.commands, in.q.dirs.reports} {
			if err := w.Add(d); err != nil {
				in.q.log.Warn().Err(err).Str("path", d).Msg("cannot watch folder; relying on rescans")
			}
		}
	}
	var events <-chan fsnotify.Event
	var errs <-chan error
	if w != nil {
		events, errs = w.Events, w.Errors
	}
	in.scan()
	rescan := time.NewTicker(in.rescan)
	defer rescan.Stop()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		in.arm(timer)
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			if ev.Op.Has(fsnotify.Create) || ev.Op.Has(fsnotify.Write) || ev.Op.Has(fsnotify.Chmod) {
				in.note(ev.Name)
			}
		case err, ok := <-errs:
			if !ok {
				errs = nil
				continue
			}
			// An overflow means events were lost: look at everything.
			in.q.log.Warn().Err(err).Msg("file watcher error; rescanning")
			in.scan()
		case <-rescan.C:
			in.scan()
		case <-timer.C:
		}
		in.settleDue()
	}
}

// initial takes the files already waiting when the queue starts.
func (in *intake) initial(ctx context.Context) {
	in.scan()
	if len(in.pending) == 0 {
		return
	}
	select {
	case <-ctx.Done():
		return
	case <-time.After(in.settle):
	}
	in.settleDue()
}

// arm sets the timer for the earliest pending file.
func (in *intake) arm(t *time.Timer) {
	next := in.retryAt
	for _, st := range in.pending {
		if next.IsZero() || st.due.Before(next) {
			next = st.due
		}
	}
	if next.IsZero() {
		t.Reset(time.Hour)
		return
	}
	t.Reset(max(time.Until(next), 0))
}

// scan notes every candidate file in both folders.
func (in *intake) scan() {
	for _, d := range []string{in.q.dirs.commands, in.q.dirs.reports} {
		entries, err := os.ReadDir(d)
		if err != nil {
			in.q.log.Warn().Err(err).Str("path", d).Msg("scan queue folder")
			continue
		}
		for _, e := range entries {
			if e.Type().IsRegular() {
				in.note(filepath.Join(d, e.Name()))
			}
		}
	}
}

// note records how a file looks now; it is taken once it has looked the same
// for the settle time.
func (in *intake) note(path string) {
	if !candidate(filepath.Base(path)) {
		return
	}
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		delete(in.pending, path)
		return
	}
	st := fileState{size: fi.Size(), mtime: fi.ModTime()}
	if old, ok := in.pending[path]; ok && old.size == st.size && old.mtime.Equal(st.mtime) {
		return // already waiting to settle
	}
	st.due = time.Now().Add(in.settle)
	in.pending[path] = st
}

// settleDue takes the files whose settle time has passed without change and
// processes them, commands in one batch, in order of arrival.
func (in *intake) settleDue() {
	now := time.Now()
	if len(in.retries) > 0 && !in.retryAt.After(now) {
		again := in.retries
		in.retries, in.retryAt = nil, time.Time{}
		in.keepTrying(in.q.processCommands(again))
	}
	var ready []settled
	for path, st := range in.pending {
		if st.due.After(now) {
			continue
		}
		fi, err := os.Stat(path)
		if err != nil {
			delete(in.pending, path)
			continue
		}
		if fi.Size() != st.size || !fi.ModTime().Equal(st.mtime) {
			in.pending[path] = fileState{size: fi.Size(), mtime: fi.ModTime(), due: now.Add(in.settle)}
			continue
		}
		delete(in.pending, path)
		ready = append(ready, settled{path: path, mtime: st.mtime})
	}
	if len(ready) == 0 {
		return
	}
	sort.Slice(ready, func(i, j int) bool {
		if !ready[i].mtime.Equal(ready[j].mtime) {
			return ready[i].mtime.Before(ready[j].mtime)
		}
		return ready[i].path < ready[j].path
	})
	var commands, reports []claim
	for _, r := range ready {
		dir := filepath.Dir(r.path)
		c, err := in.q.claimFile(dir, filepath.Base(r.path))
		if err != nil {
			if fileInUse(err) {
				in.note(r.path) // its writer still has it open (Windows): again after the settle time
				continue
			}
			if !errors.Is(err, fs.ErrNotExist) {
				in.q.log.Warn().Err(err).Str("path", r.path).Msg("claim file")
			}
			continue
		}
		if dir == in.q.dirs.commands {
			commands = append(commands, c)
		} else {
			reports = append(reports, c)
		}
	}
	in.keepTrying(in.q.processCommands(commands))
	for _, c := range reports {
		in.q.processReport(c)
	}
}

// keepTrying schedules claimed files that may still be being written for
// another parse a little later.
func (in *intake) keepTrying(claims []claim) {
	if len(claims) == 0 {
		return
	}
	in.retries = append(in.retries, claims...)
	in.retryAt = time.Now().Add(max(4*in.settle, 50*time.Millisecond))
}

type settled struct {
	path  string
	mtime time.Time
}
