package queue

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/shogun-dev/shogun/roles"
	"github.com/shogun-dev/shogun/store"
)

// claim is a file moved into a .claimed folder: from then on it is the
// queue's, and a crash at any later point is finished at the next start.
type claim struct {
	dir  string // the queue folder it came from
	name string // its name there
	// id is its name in .claimed: arrival time plus name. It is unique, and
	// the store records it so that redoing a claim after a crash is noticed.
	id   string
	path string
	// first is when processing was first tried, for the give-up time of a
	// file that a writer may still be writing in place.
	first time.Time
}

const claimStamp = "20060102T150405.000000000Z"

func (q *Queue) claimFile(dir, name string) (claim, error) {
	id := q.now().UTC().Format(claimStamp) + "-" + name
	c := claim{dir: dir, name: name, id: id, path: filepath.Join(q.dirs.claimed(dir), id), first: q.now()}
	if err := os.Rename(filepath.Join(dir, name), c.path); err != nil {
		return claim{}, err
	}
	return c, nil
}

// claimedFiles lists what a previous run claimed but did not finish.
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
		if strings.HasPrefix(id, ".") || !e.Type().IsRegular() {
			continue
		}
		out = append(out, claim{dir: dir, name: name, id: id, path: filepath.Join(q.dirs.claimed(dir), id)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out, nil
}

// recover finishes or redoes every file a crashed run had claimed: the store
// knows which were recorded, so each command becomes exactly one task and
// each report closes exactly one task.
func (q *Queue) recover() error {
	cmds, err := q.claimedFiles(q.dirs.commands)
	if err != nil {
		return err
	}
	reps, err := q.claimedFiles(q.dirs.reports)
	if err != nil {
		return err
	}
	if n := len(cmds) + len(reps); n > 0 {
		q.log.Info().Int("files", n).Msg("finishing files claimed before a crash")
	}
	// A partly written file cannot still be growing after a restart: no
	// retries, decide now.
	for i := range cmds {
		cmds[i].first = time.Time{}
	}
	q.processCommands(cmds)
	for _, c := range reps {
		q.processReport(c)
	}
	return nil
}

// readClaim reads a claimed file, refusing one over the size limit without
// reading it whole.
func (q *Queue) readClaim(c claim) ([]byte, error) {
	f, err := os.Open(c.path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	limit := q.limits.maxBytes()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		fi, _ := f.Stat()
		size := int64(len(b))
		if fi != nil {
			size = fi.Size()
		}
		return nil, &FormatError{File: c.name, Message: fmt.Sprintf("file is %d bytes, over the %d-byte limit", size, limit)}
	}
	return b, nil
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
// the claims to try again later (files perhaps still being written).
func (q *Queue) processCommands(claims []claim) (retry []claim) {
	if len(claims) == 0 {
		return nil
	}
	var recs []store.CommandRecord
	var owners []int // index into claims for each record
	ok := make([]bool, len(claims))
	for i, c := range claims {
		cmds, err := q.decodeCommands(c)
		if err != nil {
			if q.stillWriting(c) {
				retry = append(retry, c)
				continue
			}
			q.reject(c, err)
			continue
		}
		ok[i] = true
		for _, cmd := range cmds {
			recs = append(recs, store.CommandRecord{
				ID: cmd.ID, ClaimName: c.id, File: c.name, To: cmd.To, From: cmd.From,
				Title: cmd.Title, Body: cmd.Body, Tags: cmd.Tags, Priority: cmd.Priority,
				RunID: q.runID, ReceivedAt: q.now(),
			})
			owners = append(owners, i)
		}
	}
	if len(recs) == 0 {
		return retry
	}
	results, err := q.st.AcceptCommands(recs)
	if err != nil {
		// The files stay claimed; the next start redoes them.
		q.log.Error().Err(err).Int("files", len(claims)).Msg("record commands; they stay claimed until the next start")
		return retry
	}
	for k, res := range results {
		c := claims[owners[k]]
		switch {
		case res.Duplicate:
			q.log.Warn().Str("path", c.name).Str("command_id", recs[k].ID).Str("first", res.FirstClaim).Msg("duplicate command id; archived, not dispatched")
			q.event(recs[k].To, "duplicate", "", fmt.Sprintf("command %s in %s was already accepted from %s", recs[k].ID, c.name, res.FirstClaim))
		case res.AlreadyRecorded:
		default:
			q.log.Info().Str("path", c.name).Str("command_id", recs[k].ID).Str("task_id", res.Task.ID).Str("role", res.Task.Role).Msg("command queued")
			q.event(res.Task.Role, "queued", res.Task.ID, recs[k].Title)
			q.kick(res.Task.Role)
		}
	}
	for i, c := range claims {
		if ok[i] {
			q.archive(c, "commands")
		}
	}
	q.touched()
	return retry
}

// decodeCommands reads and checks a command file: its format, then that the
// roles it names exist and are enabled.
func (q *Queue) decodeCommands(c claim) ([]Command, error) {
	data, err := q.readClaim(c)
	if err != nil {
		return nil, err
	}
	cmds, err := DecodeCommands(c.name, data, q.limits)
	if err != nil {
		return nil, err
	}
	for _, cmd := range cmds {
		if err := q.checkRole(c.name, "to", cmd.To); err != nil {
			return nil, err
		}
		if cmd.From != "" {
			if _, known := q.cfg.Role(cmd.From); !known {
				return nil, &FormatError{File: c.name, Message: fmt.Sprintf("unknown role %q in from (roles: %s)", cmd.From, q.roleList())}
			}
		}
	}
	return cmds, nil
}

func (q *Queue) checkRole(file, key, id string) error {
	r, known := q.cfg.Role(id)
	switch {
	case !known:
		return &FormatError{File: file, Message: fmt.Sprintf("unknown role %q in %s (roles: %s)", id, key, q.roleList())}
	case !r.Enabled:
		return &FormatError{File: file, Message: fmt.Sprintf("role %q in %s is disabled in config/roles.yaml", id, key)}
	}
	return nil
}

func (q *Queue) roleList() string {
	var ids []string
	for _, r := range q.cfg.Enabled() {
		ids = append(ids, r.ID)
	}
	return strings.Join(ids, ", ")
}

// processReport records a claimed report and closes its task, then tells the
// task's sender and lets the role's next task go.
func (q *Queue) processReport(c claim) {
	data, err := q.readClaim(c)
	if err != nil {
		q.reject(c, err)
		return
	}
	rep, err := DecodeReport(c.name, data, q.limits)
	if err != nil {
		q.reject(c, err)
		return
	}
	archived := filepath.Join(q.dirs.archive, "reports", c.id)
	rec := store.ReportRecord{
		ClaimName: c.id, File: c.name, TaskID: rep.TaskID, Status: rep.Status, Summary: rep.Summary,
		Details: rep.Details, Files: rep.Files, ArchivedPath: archived, ReceivedAt: q.now(),
	}
	if rep.SkillCandidate != nil {
		rec.SkillName, rec.SkillDescription = rep.SkillCandidate.Name, rep.SkillCandidate.Description
	}
	task, again, err := q.st.AcceptReport(rec)
	switch {
	case errors.Is(err, store.ErrUnknownTask):
		q.reject(c, &FormatError{File: c.name, Message: fmt.Sprintf("report for unknown task %q", rep.TaskID)})
		return
	case errors.Is(err, store.ErrTaskClosed):
		q.reject(c, &FormatError{File: c.name, Message: fmt.Sprintf("report for task %q, which is already closed", rep.TaskID)})
		return
	case err != nil:
		q.log.Error().Err(err).Str("path", c.name).Msg("record report; it stays claimed until the next start")
		return
	}
	q.archive(c, "reports")
	if again {
		return
	}
	lg := q.log.Info()
	if rep.Status != "done" {
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
}

// notifySender queues the notify line for the role that sent the command.
func (q *Queue) notifySender(task store.Task, reportPath string) {
	from, ok := q.cfg.Role(task.From)
	w, running := q.workers[task.From]
	if !ok || !running {
		q.event(task.From, "notify-skipped", task.ID, "sender is not running")
		return
	}
	rel := reportPath
	if r, err := filepath.Rel(from.Command.Cwd, reportPath); err == nil && !strings.HasPrefix(r, "..") {
		rel = filepath.ToSlash(r)
	}
	text := roles.Expand(from.Notify, map[string]string{
		roles.VarRole: task.Role, roles.VarTitle: task.Title, roles.VarReportPath: rel,
		roles.VarID: from.ID, roles.VarName: from.Name,
	})
	w.addNote(note{taskID: task.ID, text: text})
}

// archive moves a processed file from .claimed to archive/<kind>/.
func (q *Queue) archive(c claim, kind string) {
	dst := filepath.Join(q.dirs.archive, kind, c.id)
	if err := os.Rename(c.path, dst); err != nil && !errors.Is(err, fs.ErrNotExist) {
		q.log.Error().Err(err).Str("path", c.path).Msg("archive file")
	}
}

// reject moves a file to failed/ beside <name>.error.yaml saying why. The
// reason is written first, so a crash in between leaves the file claimed and
// the next start rejects it again, never loses it.
func (q *Queue) reject(c claim, cause error) {
	name := c.name
	if _, err := os.Lstat(filepath.Join(q.dirs.failed, name)); err == nil {
		name = c.id // keep an earlier rejected file of the same name
	}
	if _, err := WriteFailure(q.dirs.failed, name, cause, q.now()); err != nil {
		q.log.Error().Err(err).Str("path", c.path).Msg("write failure record; file stays claimed")
		return
	}
	if err := os.Rename(c.path, filepath.Join(q.dirs.failed, name)); err != nil {
		q.log.Error().Err(err).Str("path", c.path).Msg("move rejected file")
		return
	}
	q.log.Warn().Str("path", c.name).Str("failed", name).Str("error", cause.Error()).Msg("file rejected")
	q.event("", "rejected", "", fmt.Sprintf("%s: %v", c.name, cause))
	q.mu.Lock()
	q.recent = append(q.recent, attention{at: q.now(), text: fmt.Sprintf("rejected %s: %v (runtime/queue/failed/%s.error.yaml)", c.name, cause, name)})
	if len(q.recent) > 20 {
		q.recent = q.recent[len(q.recent)-20:]
	}
	q.mu.Unlock()
	q.touched()
}

// attention is an item for the dashboard's "needs attention" list.
type attention struct {
	at   time.Time
	text string
}
