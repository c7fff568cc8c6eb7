package queue

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/shogun-dev/shogun/atomicfile"
)

// intake finds files dropped into the commands and reports folders and
// hands them to the queue once they are complete. It learns of files from
// fsnotify, from a full scan at start and after an event overflow, and from a
// periodic rescan that catches anything a watcher missed.
type intake struct {
	q       *Queue
	pending map[string]fileState // path → what it looked like when last seen
	// retries are claimed files to process again at their due time: commands
	// that failed to parse while still changing, and files that failed for a
	// transient reason.
	retries []claim
	watcher *fsnotify.Watcher // nil when the platform gave none
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
		pending: map[string]fileState{},
	}
}

// settle and rescan are queue.settle and queue.rescan in effect.
func (in *intake) settle() time.Duration { return in.q.config().Settings.Queue.Settle }
func (in *intake) rescan() time.Duration { return in.q.config().Settings.Queue.Rescan }

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

// watch starts watching both folders, before the first scan, so that no
// file arrives unseen between the two and every file renamed in from then
// on is known to be whole. run closes the watcher.
func (in *intake) watch() {
	w, err := fsnotify.NewBufferedWatcher(4096)
	if err != nil {
		in.q.log.Warn().Err(err).Msg("file watcher unavailable; relying on rescans")
		return
	}
	for _, d := range []string{in.q.dirs.commands, in.q.dirs.reports} {
		if err := w.Add(d); err != nil {
			in.q.log.Warn().Err(err).Str("path", d).Msg("cannot watch folder; relying on rescans")
		}
	}
	in.watcher = w
}

func (in *intake) run(ctx context.Context) {
	var events <-chan fsnotify.Event
	var errs <-chan error
	if w := in.watcher; w != nil {
		defer w.Close()
		events, errs = w.Events, w.Errors
	}
	in.scan()
	every := in.rescan()
	rescan := time.NewTicker(every)
	defer rescan.Stop()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		in.arm(timer)
		select {
		case <-ctx.Done():
			in.q.releaseAll()
			return
		case <-in.q.held.wake:
			in.processReports(in.q.held.takeFound())
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			switch {
			case ev.Op.Has(fsnotify.Create) && movedIn(ev):
				in.noteComplete(ev.Name)
			case ev.Op.Has(fsnotify.Create) || ev.Op.Has(fsnotify.Write) || ev.Op.Has(fsnotify.Chmod):
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
			if d := in.rescan(); d != every {
				every = d // queue.rescan changed by a live reload
				rescan.Reset(every)
			}
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
	case <-time.After(in.settle()):
	}
	in.settleDue()
}

// arm sets the timer for the earliest pending file or retry.
func (in *intake) arm(t *time.Timer) {
	next := in.q.held.next()
	for _, c := range in.retries {
		if next.IsZero() || c.due.Before(next) {
			next = c.due
		}
	}
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

// scan notes every candidate entry in both folders, of whatever kind: one
// that is not a regular file is rejected, not left there unexplained.
func (in *intake) scan() {
	for _, d := range []string{in.q.dirs.commands, in.q.dirs.reports} {
		key := "scan " + filepath.Base(d) + "/"
		entries, err := os.ReadDir(d)
		if err != nil {
			if in.q.block(key, err) {
				in.q.log.Error().Err(err).Str("path", d).Msg("scan queue folder; tried again at the next scan")
			}
			continue
		}
		in.q.unblock(key)
		for _, e := range entries {
			in.note(filepath.Join(d, e.Name()))
		}
	}
}

// movedIn reports whether a Create event is a file renamed into the folder
// from another name in a watched folder: the documented way to drop a file
// (write a hidden temporary file, then rename it), which `shogun send` and
// atomicfile use. Such a file is whole when it appears. fsnotify knows the
// old name (inotify's rename cookie, ReadDirectoryChangesW's old-name
// record) but shows it only in Event.String, as `<op> "new" ← "old"`; a
// version that shows it otherwise makes every file wait the settle time,
// which is safe, and TestRenamedFileIsTakenAtOnce fails.
func movedIn(ev fsnotify.Event) bool {
	plain := fmt.Sprintf("%-13s %q", ev.Op.String(), ev.Name)
	s := ev.String()
	return len(s) > len(plain) && strings.HasPrefix(s, plain+" ← ")
}

// note records how a file looks now, without following a symbolic link;
// it is taken once it has looked the same for the settle time. A file first
// seen with a modification time older than the settle time has already
// looked the same that long, and is taken at once.
func (in *intake) note(path string) { in.noteAt(path, false) }

// noteComplete is note for a file known to be whole (movedIn): it is taken
// at once unless it changes before the next look.
func (in *intake) noteComplete(path string) { in.noteAt(path, true) }

func (in *intake) noteAt(path string, complete bool) {
	if !candidate(filepath.Base(path)) {
		return
	}
	fi, err := os.Lstat(path)
	if err != nil || in.q.held.covers(path, fi) {
		delete(in.pending, path)
		return
	}
	now := time.Now()
	st := fileState{size: fi.Size(), mtime: fi.ModTime()}
	old, seen := in.pending[path]
	if seen && old.size == st.size && old.mtime.Equal(st.mtime) {
		if complete && old.due.After(now) {
			old.due = now
			in.pending[path] = old
		}
		return // already waiting to settle
	}
	settle := in.settle()
	st.due = now.Add(settle)
	if complete || (!seen && !st.mtime.After(now.Add(-settle))) {
		st.due = now
	}
	in.pending[path] = st
}

// settleDue takes the files whose settle time has passed without change and
// processes them, commands in one batch, in order of arrival.
func (in *intake) settleDue() {
	now := time.Now()
	in.retryDue(now)
	in.q.releaseDue(now)
	var ready []settled
	for path, st := range in.pending {
		if st.due.After(now) {
			continue
		}
		fi, err := os.Lstat(path)
		if err != nil {
			delete(in.pending, path)
			continue
		}
		if fi.Size() != st.size || !fi.ModTime().Equal(st.mtime) {
			in.pending[path] = fileState{size: fi.Size(), mtime: fi.ModTime(), due: now.Add(in.settle())}
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
		dir, name := filepath.Dir(r.path), filepath.Base(r.path)
		if err := checkFileName(name); err != nil {
			// Not claimed: the name would become part of the claim id,
			// the archived path and the notify line.
			in.q.rejectUnclaimed(dir, name, err)
			continue
		}
		key := "claim " + filepath.Base(dir) + "/" + name
		claimFile := in.q.claimFile
		if dir == in.q.dirs.reports {
			claimFile = in.q.claimReport
		}
		c, err := claimFile(dir, name)
		if err != nil {
			switch {
			case atomicfile.FileInUse(err), errors.Is(err, errChanged):
				in.note(r.path) // its writer still has it open (Windows) or is at work: again after the settle time
			case errors.Is(err, fs.ErrNotExist):
				in.q.unblock(key)
			case in.q.block(key, err):
				in.q.log.Error().Err(err).Str("path", name).Msg("claim file; tried again at the next scan")
			}
			continue
		}
		in.q.unblock(key)
		if dir == in.q.dirs.commands {
			commands = append(commands, c)
		} else {
			reports = append(reports, c)
		}
	}
	in.keepTrying(in.q.processCommands(commands))
	in.processReports(reports)
}

// processReports processes claimed reports, keeping those that failed for
// a transient reason for another try.
func (in *intake) processReports(reports []claim) {
	for _, c := range reports {
		if again, ok := in.q.processReport(c); !ok {
			in.keepTrying([]claim{again})
		}
	}
}

// retryDue processes the claims whose retry time has come: commands in one
// batch, then reports.
func (in *intake) retryDue(now time.Time) {
	var commands, reports, wait []claim
	for _, c := range in.retries {
		switch {
		case c.due.After(now):
			wait = append(wait, c)
		case c.dir == in.q.dirs.commands:
			commands = append(commands, c)
		default:
			reports = append(reports, c)
		}
	}
	if len(commands)+len(reports) == 0 {
		return
	}
	in.retries = wait
	in.keepTrying(in.q.processCommands(commands))
	in.processReports(reports)
}

// keepTrying schedules claimed files for another try at their due time.
func (in *intake) keepTrying(claims []claim) {
	in.retries = append(in.retries, claims...)
}

type settled struct {
	path  string
	mtime time.Time
}
