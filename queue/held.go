package queue

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/shogun-dev/shogun/atomicfile"
	"github.com/shogun-dev/shogun/textsafe"
)

// heldReports are report files that shogun has read but left where their
// agents wrote them, for queue.report_grace or until the role's next task.
// A CLI that writes a file and then looks at it must find it: Claude Code's
// Write tool renames its temporary file to the report's name and then stats
// that name, and an agent told "no such file" writes its report again.
//
// Such a report is claimed by a copy: the bytes read are written into
// .claimed as a new file, so a crash is finished at the next start as
// before, and nothing the agent does to its file afterwards reaches the
// claim, the archive or failed/ (never a hard link: the agent's file would
// be the archived one). When the grace is over, the agent's name is renamed
// into .claimed and compared with what was read: the same file is removed,
// another one, or the same one changed (the agent wrote again meanwhile),
// is a report of its own, processed by the intake. After a crash the
// agent's file is read once more and archived as a duplicate
// (sameAsRecorded).
type heldReports struct {
	mu    sync.Mutex
	files map[string]heldReport // the agent's path → what was read there
	// found are files that were under a held name when it was released but
	// were not the held file, claimed for the intake; wake tells it.
	found []claim
	wake  chan struct{}
}

// heldReport is one report left in place.
type heldReport struct {
	read  os.FileInfo // the file as it was claimed: its identity, size and time
	role  string      // the role whose report file it is (<role>.yaml), or ""
	until time.Time
}

func newHeldReports() *heldReports {
	return &heldReports{files: map[string]heldReport{}, wake: make(chan struct{}, 1)}
}

// covers reports whether the file at path, which looks like fi now, is a
// held report that has not changed since it was read. A changed file is no
// longer held: it is a new report.
func (h *heldReports) covers(path string, fi os.FileInfo) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	r, ok := h.files[path]
	if !ok {
		return false
	}
	if unchanged(r.read, fi) {
		return true
	}
	delete(h.files, path)
	return false
}

// next is when the earliest hold ends (zero when none is held).
func (h *heldReports) next() time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	var t time.Time
	for _, r := range h.files {
		if t.IsZero() || r.until.Before(t) {
			t = r.until
		}
	}
	return t
}

// take removes and returns the holds that match.
func (h *heldReports) take(match func(heldReport) bool) map[string]heldReport {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := map[string]heldReport{}
	for p, r := range h.files {
		if match(r) {
			out[p] = r
			delete(h.files, p)
		}
	}
	return out
}

// takeFound returns the files a release left for the intake.
func (h *heldReports) takeFound() []claim {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := h.found
	h.found = nil
	return out
}

func unchanged(a, b os.FileInfo) bool {
	return os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

// errChanged means a file changed while it was being claimed: it is looked
// at again once it has settled.
var errChanged = errors.New("changed while it was read")

// claimReport claims a report file. With a grace, a regular file is claimed
// by a copy and stays where it is, held; anything else (a file that cannot
// be read: not regular, too large) is claimed by a rename, as commands are.
func (q *Queue) claimReport(dir, name string) (claim, error) {
	grace := q.config().Settings.Queue.ReportGrace
	src := filepath.Join(dir, name)
	before, err := os.Lstat(src)
	if grace <= 0 || err != nil || !before.Mode().IsRegular() {
		return q.claimFile(dir, name)
	}
	data, err := readRegular(src, name, q.limits())
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return claim{}, err
	case err != nil:
		return q.claimFile(dir, name)
	}
	after, err := os.Lstat(src)
	if err != nil {
		return claim{}, err
	}
	if !unchanged(before, after) {
		return claim{}, errChanged // data may be half of each
	}
	id := q.now().UTC().Format(claimStamp) + "-" + name
	c := claim{dir: dir, name: name, id: id, path: filepath.Join(q.dirs.claimed(dir), id), first: q.now(), src: after}
	if err := atomicfile.Write(c.path, data, runtimeFileMode); err != nil {
		return claim{}, err
	}
	// The agent's name is held only while it is still the file read.
	q.held.mu.Lock()
	q.held.files[src] = heldReport{read: after, role: q.reportRole(name), until: time.Now().Add(grace)}
	q.held.mu.Unlock()
	return c, nil
}

// releaseDue ends the holds whose grace is over.
func (q *Queue) releaseDue(now time.Time) {
	q.release(q.held.take(func(r heldReport) bool { return !r.until.After(now) }))
}

// releaseRole ends the hold on a role's report file before its next task,
// so that the agent writes its next report to a free name (a CLI may refuse
// to overwrite a file it has not read in the current conversation).
func (q *Queue) releaseRole(role string) {
	q.release(q.held.take(func(r heldReport) bool { return r.role == role }))
}

// releaseAll ends every hold, when the queue stops.
func (q *Queue) releaseAll() {
	q.release(q.held.take(func(heldReport) bool { return true }))
}

// release removes each held file that is still the file that was read.
// The name is first renamed into .claimed, so a file that an agent renamed
// over it at that moment is never removed unread: it becomes a claim for
// the intake. A name that cannot be renamed now (a writer still has it open
// on Windows) stays held and is tried again a second later.
func (q *Queue) release(files map[string]heldReport) {
	for path, r := range files {
		name := filepath.Base(path)
		id := q.now().UTC().Format(claimStamp) + "-" + name
		dst := filepath.Join(q.dirs.claimed(filepath.Dir(path)), id)
		if err := os.Rename(path, dst); err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				q.log.Debug().Err(err).Str("path", textsafe.Escape(name)).Msg("release report file; tried again")
				r.until = time.Now().Add(time.Second)
				q.held.mu.Lock()
				q.held.files[path] = r
				q.held.mu.Unlock()
			}
			continue
		}
		if fi, err := os.Lstat(dst); err == nil && unchanged(r.read, fi) {
			if err := os.Remove(dst); err != nil {
				// Left claimed: the next start archives it as a duplicate.
				q.log.Warn().Err(err).Str("path", textsafe.Escape(name)).Msg("remove released report file")
			}
			continue
		}
		q.held.mu.Lock()
		q.held.found = append(q.held.found, claim{dir: filepath.Dir(path), name: name, id: id, path: dst, first: q.now()})
		q.held.mu.Unlock()
		select {
		case q.held.wake <- struct{}{}:
		default:
		}
	}
}
