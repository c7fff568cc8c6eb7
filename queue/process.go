package queue

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/shogun-dev/shogun/notify"
	"github.com/shogun-dev/shogun/store"
	"github.com/shogun-dev/shogun/textsafe"
)

// claim is a file moved into a .claimed folder: from then on it is the
// queue's, and a crash at any later point is finished at the next start.
type claim struct {
	dir  string // the queue folder it came from
	name string // its name there, checked by checkFileName
	// id is its name in .claimed: arrival time plus name. It is unique, and
	// the store records it so that redoing a claim after a crash is noticed.
	id   string
	path string
	// first is when processing was first tried, for the give-up time of a
	// file that a writer may still be writing in place.
	first time.Time
	// tries counts transient failures (a full disk, a folder that cannot be
	// written); due is when to try again.
	tries int
	due   time.Time
	// src is the file where its writer left it, as it was when it was
	// claimed: for a report claimed by a copy (claimReport), the agent's
	// file, still there; else the claimed file itself. Nil after a restart.
	src os.FileInfo
}

// key names the claim where the dashboard lists what blocks the queue.
func (c claim) key() string { return filepath.Base(c.dir) + "/" + textsafe.Escape(c.name) }

const claimStamp = "20060102T150405.000000000Z"

// arrived is when the file was claimed, read from its claim id; ok is false
// for an id without a stamp.
func (c claim) arrived() (time.Time, bool) {
	if len(c.id) <= len(claimStamp) {
		return time.Time{}, false
	}
	t, err := time.Parse(claimStamp, c.id[:len(claimStamp)])
	return t, err == nil
}

// archiveDir is where a claimed file of kind is archived: the folder of the
// day it arrived, which a crash and a redo the next day do not change, so
// the path the history recorded is where the file is.
func (q *Queue) archiveDir(c claim, kind string) string {
	at, ok := c.arrived()
	if !ok {
		at = q.now()
	}
	return q.layout.ArchiveFor(kind, at)
}

// claimFile moves a file whose name checkFileName accepted into .claimed.
func (q *Queue) claimFile(dir, name string) (claim, error) {
	id := q.now().UTC().Format(claimStamp) + "-" + name
	c := claim{dir: dir, name: name, id: id, path: filepath.Join(q.dirs.claimed(dir), id), first: q.now()}
	if err := os.Rename(filepath.Join(dir, name), c.path); err != nil {
		return claim{}, err
	}
	if fi, err := os.Lstat(c.path); err == nil {
		c.src = fi
	}
	return c, nil
}

// claimedFiles lists what a previous run claimed but did not finish,
// whatever kind of file it is: a symbolic link claimed by an older shogun
// is rejected now, not left there.
func (q *Queue) claimedFiles(dir string) ([]claim, error) {
	entries, err := os.ReadDir(q.dirs.claimed(dir))
	if err != nil {
		return nil, fmt.Errorf("list claimed files: %w", err)
	}
	var out []claim
	for _, e := range entries {
		id := e.Name()
		name := id
		if len(id) > len(claimStamp)+1 && id[len(claimStamp)] == '-' {
			name = id[len(claimStamp)+1:]
		}
		if strings.HasPrefix(id, ".") {
			continue
		}
		out = append(out, claim{dir: dir, name: name, id: id, path: filepath.Join(q.dirs.claimed(dir), id)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out, nil
}

// recover finishes or redoes every file a crashed run had claimed: the store
// knows which were recorded, so each command becomes exactly one task and
// each report closes exactly one task. It returns the claims that failed
// for a transient reason, for the intake to try again.
func (q *Queue) recover() ([]claim, error) {
	cmds, err := q.claimedFiles(q.dirs.commands)
	if err != nil {
		return nil, err
	}
	reps, err := q.claimedFiles(q.dirs.reports)
	if err != nil {
		return nil, err
	}
	if n := len(cmds) + len(reps); n > 0 {
		q.log.Info().Int("files", n).Msg("finishing files claimed before a crash")
	}
	// A name an older shogun claimed without checking it is rejected, not
	// used.
	var retry []claim
	checked := func(cs []claim) []claim {
		var ok []claim
		for _, c := range cs {
			if err := checkFileName(c.name); err != nil {
				if again, rejected := q.reject(c, nil, err); !rejected {
					retry = append(retry, again)
				}
				continue
			}
			ok = append(ok, c)
		}
		return ok
	}
	cmds, reps = checked(cmds), checked(reps)
	// A partly written file cannot still be growing after a restart: no
	// retries, decide now.
	for i := range cmds {
		cmds[i].first = time.Time{}
	}
	retry = append(retry, q.processCommands(cmds)...)
	for _, c := range reps {
		if again, ok := q.processReport(c); !ok {
			retry = append(retry, again)
		}
	}
	return retry, nil
}

// readClaim reads a claimed file (see readRegular).
func (q *Queue) readClaim(c claim) ([]byte, error) {
	return readRegular(c.path, c.name, q.limits())
}

// ReadFile reads a file of the queue's folders the way the queue reads
// what agents drop there (see readRegular), for readers outside the queue
// that must not trust the file either: a task file an agent may have
// replaced with a link, say.
func ReadFile(path string, limits Limits) ([]byte, error) {
	return readRegular(path, filepath.Base(path), limits)
}

// readRegular reads the file at path, named name in errors. It refuses,
// with a *FormatError, an entry that is not a regular file (never opening
// it, so a symbolic link is not followed and a FIFO does not block) and a
// file over the size limit (without reading it whole). Any other error is
// the system's, not the file's: the caller tries again later.
func readRegular(path, name string, limits Limits) ([]byte, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, notRegular(name, fi.Mode())
	}
	if err := limits.CheckSize(name, fi.Size()); err != nil {
		return nil, err
	}
	f, err := openNoFollow(path)
	if err != nil {
		if fi, lerr := os.Lstat(path); lerr == nil && !fi.Mode().IsRegular() {
			return nil, notRegular(name, fi.Mode()) // swapped since the check
		}
		return nil, err
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, notRegular(name, fi.Mode())
	}
	limit := limits.maxBytes()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, limits.CheckSize(name, max(int64(len(b)), fi.Size()))
	}
	if b == nil {
		b = []byte{} // read, and empty: what was read is kept as such
	}
	return b, nil
}

// badFile reports whether err is the file's fault (it goes to failed/)
// rather than the system's (the file waits and is tried again).
func badFile(err error) bool {
	var fe *FormatError
	return errors.As(err, &fe)
}

// later schedules a claim that failed for a transient reason for another
// try, marks the queue blocked on it and logs that once.
func (q *Queue) later(c claim, what string, err error) claim {
	c.tries++
	wait := retryDelay(c.tries)
	c.due = time.Now().Add(wait)
	if q.block(c.key(), fmt.Errorf("%s: %w", what, err)) {
		q.log.Error().Err(err).Str("path", textsafe.Escape(c.name)).Str("retry_in", wait.String()).
			Msg(what + "; the file stays claimed and is tried again")
	}
	return c
}

// done clears what blocked a claim once it went through.
func (q *Queue) done(c claim) {
	if q.unblock(c.key()) {
		q.log.Info().Str("path", textsafe.Escape(c.name)).Int("tries", c.tries).Msg("file handled after all")
	}
}

// stillWriting reports whether a claimed file that failed to parse may be
// one a writer is still writing in place: it changed very recently, and we
// have not been trying for long.
func (q *Queue) stillWriting(c claim) bool {
	if c.first.IsZero() || q.now().Sub(c.first) > retryFor {
		return false
	}
	fi, err := os.Stat(c.path)
	return err == nil && q.now().Sub(fi.ModTime()) < retryFor
}

// retryFor is how long a file that fails to parse while it is still
// changing is given before it is rejected.
const retryFor = 2 * time.Second

// processCommands validates and records a batch of claimed command files in
// one transaction, then archives them or moves them to failed/. It returns
// the claims to try again later: files perhaps still being written, and
// files that failed for a transient reason (processing a claim again is
// harmless: the store knows what it recorded).
func (q *Queue) processCommands(claims []claim) (retry []claim) {
	if len(claims) == 0 {
		return nil
	}
	var recs []store.CommandRecord
	var owners []int // index into claims for each record
	ok := make([]bool, len(claims))
	read := make([][]byte, len(claims))
	pairs := map[[2]string]int{}
	for i, c := range claims {
		data, cmds, refused, err := q.decodeCommands(c, pairs)
		read[i] = data
		switch {
		case err == nil:
		case errors.Is(err, fs.ErrNotExist):
			q.log.Warn().Str("path", textsafe.Escape(c.name)).Msg("claimed command file vanished")
			q.done(c)
			continue
		case !badFile(err):
			retry = append(retry, q.later(c, "read command file", err))
			continue
		case q.stillWriting(c):
			c.due = time.Now().Add(max(4*q.config().Settings.Queue.Settle, 50*time.Millisecond))
			retry = append(retry, c)
			continue
		default:
			again, rejected := q.reject(c, data, err)
			if !rejected {
				retry = append(retry, again)
			} else if refused.From != "" {
				q.tellRefused(refused, err)
			}
			continue
		}
		ok[i] = true
		for _, cmd := range cmds {
			recs = append(recs, store.CommandRecord{
				ID: cmd.ID, ClaimName: c.id, File: c.name, To: cmd.To, From: cmd.From,
				Title: cmd.Title, Body: cmd.Body, Tags: cmd.Tags, Priority: cmd.Priority,
				RunID: q.runID, ReceivedAt: q.now(),
				Parent: cmd.link.parent, Root: cmd.link.root, Depth: cmd.link.depth,
			})
			owners = append(owners, i)
		}
	}
	if len(recs) == 0 {
		return retry
	}
	results, err := q.st.AcceptCommands(recs)
	if err != nil {
		for i, c := range claims {
			if ok[i] {
				retry = append(retry, q.later(c, "record commands", err))
			}
		}
		return retry
	}
	for k, res := range results {
		c := claims[owners[k]]
		switch {
		case res.Duplicate:
			q.log.Warn().Str("path", c.name).Str("command_id", recs[k].ID).Str("first", res.FirstClaim).Msg("duplicate command id; archived, not dispatched")
			answer := q.answerDuplicate(recs[k])
			q.event(recs[k].To, "duplicate", "", fmt.Sprintf("command %s in %s was already accepted from %s%s", recs[k].ID, c.name, res.FirstClaim, answer))
		case res.AlreadyRecorded:
		default:
			q.log.Info().Str("path", c.name).Str("command_id", recs[k].ID).Str("task_id", res.Task.ID).Str("role", res.Task.Role).Msg("command queued")
			q.event(res.Task.Role, "queued", res.Task.ID, recs[k].Title)
			q.kick(res.Task.Role)
		}
	}
	for i, c := range claims {
		if !ok[i] {
			continue
		}
		if _, err := q.archive(c, "commands", c.id, read[i]); err != nil {
			retry = append(retry, q.later(c, "archive command file", err))
			continue
		}
		q.done(c)
	}
	q.touched()
	return retry
}

// decodeCommands reads and checks a command file: its format, that the
// roles it names exist and are enabled, and the loop guard (placeInChain).
// It returns the bytes read, nil when none were, and with an error about
// one command of a file that parsed, that command: its sender is told.
func (q *Queue) decodeCommands(c claim, pairs map[[2]string]int) ([]byte, []placed, Command, error) {
	data, err := q.readClaim(c)
	if err != nil {
		return nil, nil, Command{}, err
	}
	cmds, err := DecodeCommands(c.name, data, q.limits())
	if err != nil {
		return data, nil, Command{}, err
	}
	for i, cmd := range cmds {
		if err := CheckRoles(q.config(), cmd); err != nil {
			return data, nil, cmd, commandKeyError(c.name, data, i, q.limits(), err)
		}
	}
	out := make([]placed, 0, len(cmds))
	for i, cmd := range cmds {
		link, err := q.placeInChain(cmd, pairs)
		if err != nil {
			return data, nil, cmd, commandKeyError(c.name, data, i, q.limits(), err)
		}
		out = append(out, placed{Command: cmd, link: link})
	}
	return data, out, Command{}, nil
}

// processReport records a claimed report and closes its task, then tells the
// task's sender and lets the role's next task go. When it fails for a
// transient reason it returns the claim to try again and false.
//
// A report closes only a task that is open and was handed to its role. A
// report file named after a role (<role>.yaml, the report_to of every task
// file) speaks for that role and may close only that role's task; a report
// under any other name may close whichever task its task_id names, as long
// as that task was handed out, and the task's role is the one recorded.
func (q *Queue) processReport(c claim) (claim, bool) {
	data, err := q.readClaim(c)
	var rep Report
	if err == nil {
		rep, err = DecodeReport(c.name, data, q.limits())
	}
	switch {
	case err == nil:
	case errors.Is(err, fs.ErrNotExist):
		q.log.Warn().Str("path", textsafe.Escape(c.name)).Msg("claimed report file vanished")
		q.done(c)
		return c, true
	case !badFile(err):
		return q.later(c, "read report file", err), false
	case data == nil:
		return q.reject(c, nil, err) // not a file that can be read: nothing to wait for
	default:
		switch q.unfinishedReport(c) {
		case reportSuperseded:
			return q.dropSuperseded(c, err)
		case reportWriting:
			c.due = time.Now().Add(max(q.config().Settings.Queue.Settle, 100*time.Millisecond))
			return c, false
		}
		return q.reject(c, data, err)
	}
	archiveName := reportArchiveName(c, rep.TaskID)
	archived, err := freeName(q.archiveDir(c, "reports"), archiveName)
	if err != nil {
		return q.later(c, "choose the archived report's name", err), false
	}
	rec := store.ReportRecord{
		ClaimName: c.id, File: c.name, TaskID: rep.TaskID, Role: q.reportRole(c.name), Status: rep.Status,
		Summary: rep.Summary, Details: rep.Details, Files: rep.Files, ArchivedPath: archived, ReceivedAt: q.now(),
	}
	if rep.SkillCandidate != nil {
		rec.SkillName, rec.SkillDescription = rep.SkillCandidate.Name, rep.SkillCandidate.Description
	}
	rec.HeadCommit = q.headCommit(rec.Role, rep.TaskID)
	task, again, err := q.st.AcceptReport(rec)
	switch {
	case errors.Is(err, store.ErrUnknownTask):
		return q.reject(c, data, &FormatError{File: c.name, Message: fmt.Sprintf("report for unknown task %q", rep.TaskID)})
	case errors.Is(err, store.ErrTaskClosed) && q.sameAsRecorded(rep):
		// The agent wrote the same report again (it could not see the
		// first one), or a crash left its file behind: nothing is wrong.
		q.log.Info().Str("task_id", rep.TaskID).Str("path", textsafe.Escape(c.name)).Msg("report already recorded; archived as a duplicate")
		q.event(rec.Role, "report-duplicate", rep.TaskID, "the same report again: archived, not applied")
	case errors.Is(err, store.ErrTaskClosed):
		return q.reject(c, data, &FormatError{File: c.name, Message: fmt.Sprintf("report for task %q, which is already closed", rep.TaskID)})
	case errors.Is(err, store.ErrNotDelivered):
		return q.reject(c, data, &FormatError{File: c.name, Message: fmt.Sprintf(
			"report for task %q, which is still queued for %s: no role has been given it, so no report can close it", rep.TaskID, q.taskRole(rep.TaskID))})
	case errors.Is(err, store.ErrWrongRole):
		return q.reject(c, data, &FormatError{File: c.name, Message: fmt.Sprintf(
			"%s is role %s's report file, but task %q is %s's; a role reports only on its own task", c.name, rec.Role, rep.TaskID, q.taskRole(rep.TaskID))})
	case err != nil:
		return q.later(c, "record report", err), false
	}
	switch {
	case again || err != nil: // redone after a crash, or a duplicate
	case task.Status == store.StatusCancelled:
		// Kept in the history and archived, but the person's cancel stands.
		q.log.Warn().Str("role", task.Role).Str("task_id", task.ID).Str("status", rep.Status).Msg("report for a cancelled task recorded, not applied")
		q.event(task.Role, "report-after-cancel", task.ID, rep.Status+": "+rep.Summary)
	default:
		q.reported(task, rep, archived)
	}
	if _, err := q.archive(c, "reports", archiveName, data); err != nil {
		return q.later(c, "archive report file", err), false
	}
	q.done(c)
	return c, true
}

// sameAsRecorded reports whether a report for a closed task says exactly
// what a report already recorded for it says.
func (q *Queue) sameAsRecorded(rep Report) bool {
	recorded, err := q.st.ReportsForTask(rep.TaskID)
	if err != nil {
		return false
	}
	for _, r := range recorded {
		if r.Status == rep.Status && r.Summary == rep.Summary && r.Details == rep.Details && slices.Equal(r.Files, rep.Files) {
			return true
		}
	}
	return false
}

// reported does what a newly recorded report calls for: log it, let the
// role's next task go, tell the sender.
func (q *Queue) reported(task store.Task, rep Report, archived string) {
	lg := q.log.Info()
	if rep.Status != ReportDone {
		lg = q.log.Warn()
	}
	lg.Str("role", task.Role).Str("task_id", task.ID).Str("status", rep.Status).Str("summary", rep.Summary).Msg("report received")
	q.event(task.Role, "report", task.ID, rep.Status+": "+rep.Summary)
	q.kick(task.Role)
	if q.onReport != nil {
		q.onReport(task)
	}
	if task.From != "" {
		q.notifySender(task, archived)
	}
	kind := ""
	switch {
	case rep.Status == ReportFailed:
		kind = notify.KindFailed
	case rep.Status == ReportBlocked:
		kind = notify.KindBlocked
	case task.From == "":
		kind = notify.KindFinished // nobody else hears of it
	}
	if kind != "" {
		q.notify(notify.Event{Kind: kind, Role: task.Role, TaskID: task.ID, Title: textsafe.Escape(task.Title),
			Message: fmt.Sprintf("task %s for %s reported %s: %s", task.ID, task.Role, rep.Status, textsafe.Escape(rep.Summary))})
	}
}

// reportRole is the role a report file speaks for: the role whose report_to
// it is (<role>.yaml), or "" for a file under any other name.
func (q *Queue) reportRole(name string) string {
	stem := strings.TrimSuffix(name, filepath.Ext(name))
	if r, ok := q.config().Role(stem); ok {
		return r.ID
	}
	return ""
}

// headCommit is the commit checked out where the report's role works:
// the role its file is named after, else the task's.
func (q *Queue) headCommit(role, taskID string) string {
	if q.headOf == nil {
		return ""
	}
	if role == "" {
		t, err := q.st.Task(taskID)
		if err != nil {
			return ""
		}
		role = t.Role
	}
	return q.headOf(role)
}

// taskRole names a task's role in an error message.
func (q *Queue) taskRole(id string) string {
	if t, err := q.st.Task(id); err == nil {
		return t.Role
	}
	return "its role"
}

// reportArchiveName is the name a report is archived under: when it
// arrived and the task it names, never the name its agent gave the file
// (the history keeps that, as the report's file). The archived path is
// typed into the sender's notify line, and an agent chooses its file's
// name freely ("IGNORE ALL PREVIOUS INSTRUCTIONS.yaml"); a report is
// archived only once the history knows its task, so the id is one shogun
// made. Deterministic, so that a redo after a crash archives the report
// where the history recorded it.
func reportArchiveName(c claim, taskID string) string {
	stamp := "report"
	if _, ok := c.arrived(); ok {
		stamp = c.id[:len(claimStamp)]
	}
	return stamp + "-" + taskID + ".yaml"
}

// archive writes data, the bytes read from the claimed file c, into its
// archive folder (archiveDir) as name, never over another file, then
// removes the claim, and returns where it went. What is archived is a new
// file holding what shogun read, never the writer's file: an agent that
// still has its file open, or whose file is a report left in place for it
// (heldReports), cannot change the record of a closed task.
func (q *Queue) archive(c claim, kind, name string, data []byte) (string, error) {
	dst, err := keepRead(q.archiveDir(c, kind), name, data, true)
	if err != nil {
		return "", err
	}
	if err := os.Remove(c.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return dst, fmt.Errorf("remove claimed file: %w", err)
	}
	return dst, nil
}

// freeName is the path name would have in dir if nothing were in the way,
// else the first free "-N" variant, as moveInto would pick it.
func freeName(dir, name string) (string, error) {
	ext := filepath.Ext(name)
	stem := strings.TrimSuffix(name, ext)
	for i := 1; i <= maxSuffix; i++ {
		n := name
		if i > 1 {
			n = fmt.Sprintf("%s-%d%s", stem, i, ext)
		}
		p, err := inFolder(dir, n)
		if err != nil {
			return "", err
		}
		if _, err := os.Lstat(p); os.IsNotExist(err) {
			return p, nil
		} else if err != nil {
			return "", err
		}
	}
	return "", fmt.Errorf("queue: %s and %d more names like it are taken in %s", name, maxSuffix-1, dir)
}

// reject moves a claimed file to failed/ beside <name>.error.yaml saying
// why. The reason is written first, so a crash in between leaves the file
// claimed and the next start rejects it again, never loses it. When the
// record or the move fails (a full disk, a folder that cannot be written),
// the file stays claimed: it returns the claim to try again and false.
//
// data is what was read from the file, kept in failed/ as a new file (see
// archive); nil when the file could not be read (not a regular file, over
// the size limit), and then the file itself is moved there.
func (q *Queue) reject(c claim, data []byte, cause error) (claim, bool) {
	if err := q.moveToFailed(c.path, c.name, c.id, data, cause); err != nil {
		return q.later(c, "move rejected file to failed/", err), false
	}
	q.done(c)
	return c, true
}

// rejectUnclaimed moves a file that must not be claimed (its name is not
// safe to use) straight from its queue folder to failed/. A failure leaves
// it there, for the next scan.
func (q *Queue) rejectUnclaimed(dir, name string, cause error) error {
	key := filepath.Base(dir) + "/" + textsafe.Escape(name)
	stamp := q.now().UTC().Format(claimStamp)
	if err := q.moveToFailed(filepath.Join(dir, name), name, stamp+"-"+safeName(name), nil, cause); err != nil {
		if q.block(key, fmt.Errorf("move rejected file to failed/: %w", err)) {
			q.log.Error().Err(err).Str("path", textsafe.Escape(name)).Msg("move rejected file to failed/; tried again at the next scan")
		}
		return err
	}
	q.unblock(key)
	return nil
}

// moveToFailed writes the failure record and then puts src into failed/:
// data, the bytes read from it, as a new file, and src removed; or, when
// data is nil, src itself, moved. The file keeps its name there (its id,
// if an earlier rejected file has the name); an unsafe name is replaced by
// safeName, and the record keeps the original, escaped.
func (q *Queue) moveToFailed(src, name, id string, data []byte, cause error) error {
	failedName := safeName(name)
	original := ""
	if failedName != name {
		original = strconv.Quote(name)
	}
	if _, err := os.Lstat(filepath.Join(q.dirs.failed, failedName)); err == nil {
		failedName = safeName(id) // keep an earlier rejected file of the same name
	}
	dst, err := freeName(q.dirs.failed, failedName)
	if err != nil {
		return err
	}
	failedName = filepath.Base(dst)
	if _, err := writeFailure(q.dirs.failed, failedName, original, cause, q.now()); err != nil {
		return err
	}
	if data == nil {
		if err := os.Rename(src, dst); err != nil {
			return err
		}
	} else {
		if _, err := keepRead(q.dirs.failed, failedName, data, false); err != nil {
			return err
		}
		if err := os.Remove(src); err != nil && !errors.Is(err, fs.ErrNotExist) {
			// Kept in failed/ already; the claim left behind is judged
			// again at the next start.
			q.log.Warn().Err(err).Str("path", textsafe.Escape(name)).Msg("remove rejected file after keeping a copy in failed/")
		}
	}
	shown := textsafe.Escape(name)
	msg := textsafe.Escape(cause.Error())
	q.log.Warn().Str("path", shown).Str("failed", failedName).Str("error", msg).Msg("file rejected")
	q.event("", "rejected", "", fmt.Sprintf("%s: %s", shown, msg))
	q.addAttention(failedName, fmt.Sprintf("rejected %s: %s (runtime/queue/failed/%s.error.yaml)", shown, msg, failedName))
	return nil
}

// attention is an item for the dashboard's "needs attention" list. One
// about a file rejected during this run lasts while the file is in
// failed/, until DismissRejected; others last the run.
type attention struct {
	at   time.Time
	text string
	file string // its name in failed/, or "" when it is not about a file
}

// rejectedAlerts are the texts of the attention lines of this run, less
// the rejected-file alerts whose file a person removed from
// runtime/queue/failed/: those are dropped, and the dashboard is written
// again without them.
func (q *Queue) rejectedAlerts() []string {
	q.mu.Lock()
	items := slices.Clone(q.recent)
	q.mu.Unlock()
	gone := map[string]bool{}
	var out []string
	for _, a := range items {
		if a.file == "" {
			out = append(out, a.text)
			continue
		}
		if _, err := os.Lstat(filepath.Join(q.dirs.failed, a.file)); errors.Is(err, fs.ErrNotExist) {
			gone[a.file] = true
			continue
		}
		out = append(out, a.text)
	}
	if len(gone) > 0 {
		q.mu.Lock()
		q.recent = slices.DeleteFunc(q.recent, func(a attention) bool { return gone[a.file] })
		q.mu.Unlock()
		q.touched()
	}
	return out
}

// DismissRejected clears the alerts of the files rejected so far (the
// status's and the dashboard's "rejected …" lines) and returns how many
// there were. The files and their error records stay in failed/.
func (q *Queue) DismissRejected() int {
	q.mu.Lock()
	n := len(q.recent)
	q.recent = slices.DeleteFunc(q.recent, func(a attention) bool { return a.file != "" })
	n -= len(q.recent)
	q.mu.Unlock()
	if n > 0 {
		q.touched()
	}
	return n
}
