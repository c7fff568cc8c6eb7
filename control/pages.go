package control

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/shogun-dev/shogun/config"
	"github.com/shogun-dev/shogun/ptyhost"
	"github.com/shogun-dev/shogun/queue"
	"github.com/shogun-dev/shogun/rolelog"
	"github.com/shogun-dev/shogun/skills"
	"github.com/shogun-dev/shogun/store"
	"github.com/shogun-dev/shogun/workspace"
)

// The endpoints of the console's Tasks, History and Skills pages
// (docs/api.md): the task list and a task's detail and log, sending a task
// as `shogun send` does, the runs, a role's log, the skill review as
// `shogun skills review` and `export` do it, and the event stream
// (events.go).

// registerPages adds the pages' endpoints to mux.
func (s *Server) registerPages(mux *router) {
	mux.HandleFunc("GET /v1/events/stream", s.eventStream)
	mux.HandleFunc("GET /v1/tasks", s.tasks)
	mux.HandleFunc("GET /v1/tasks/{id}", s.taskDetail)
	mux.HandleFunc("GET /v1/tasks/{id}/log", s.taskLog)
	mux.HandleFunc("POST /v1/send", s.send)
	mux.HandleFunc("GET /v1/runs", s.runs)
	mux.HandleFunc("GET /v1/roles/{id}/log", s.roleLog)
	mux.HandleFunc("GET /v1/skills", s.skills)
	mux.HandleFunc("POST /v1/skills/{name}/approve", s.approveSkill)
	mux.HandleFunc("POST /v1/skills/{name}/reject", s.rejectSkill)
	mux.HandleFunc("PUT /v1/skills/{name}", s.editSkill)
	mux.HandleFunc("POST /v1/skills/{name}/export", s.exportSkill)
}

// Bounds of the pages' answers.
const (
	defaultTaskLimit = 100
	maxTaskLimit     = 1000
	defaultLogTail   = 200
	// maxTaskLog is the most of a task's log read: its last bytes.
	maxTaskLog = 4 << 20
	// taskLogAfter widens a task's time for its log past the report: the
	// agent finishing its turn. The start needs none: the nudge is typed
	// after the task file is written, and the index rounds down to a mark.
	taskLogAfter = 5 * time.Second
	// maxSendBody bounds POST /v1/send, a 1 MiB body and the rest.
	maxSendBody = 2 << 20
)

// rel makes a path inside the workspace relative to it, with forward
// slashes, as the docs show paths.
func (s *Server) rel(p string) string {
	return filepath.ToSlash(workspace.RelTo(s.team.Config().Workspace, p))
}

func badRequest(w http.ResponseWriter, format string, args ...any) {
	fail(w, http.StatusBadRequest, fmt.Errorf(format, args...))
}

// tasks is GET /v1/tasks?role=&status=&q=&since=&until=&limit=.
func (s *Server) tasks(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := store.TaskFilter{Role: q.Get("role"), Status: q.Get("status"), Search: strings.TrimSpace(q.Get("q")), Limit: defaultTaskLimit}
	if f.Status != "" && !contains(store.TaskStatuses, f.Status) {
		badRequest(w, "status %q: want one of %s", f.Status, strings.Join(store.TaskStatuses, ", "))
		return
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxTaskLimit {
			badRequest(w, "limit %q: want a number from 1 to %d", v, maxTaskLimit)
			return
		}
		f.Limit = n
	}
	for _, b := range []struct {
		key string
		dst *time.Time
	}{{"since", &f.Since}, {"until", &f.Until}} {
		v := q.Get(b.key)
		if v == "" {
			continue
		}
		t, err := parseWhen(v)
		if err != nil {
			badRequest(w, "%s %q: want an RFC 3339 time or a date (2026-11-22)", b.key, v)
			return
		}
		*b.dst = t
	}
	ts, err := s.team.Store().Tasks(f)
	if err != nil {
		fail(w, http.StatusInternalServerError, err)
		return
	}
	out := TasksReply{Tasks: make([]Task, 0, len(ts))}
	for _, t := range ts {
		out.Tasks = append(out.Tasks, TaskFrom(t))
	}
	tokens, err := s.team.Store().TaskTokens(taskIDs(out.Tasks))
	if err != nil {
		fail(w, http.StatusInternalServerError, err)
		return
	}
	WithTokens(out.Tasks, tokens)
	hs, err := s.team.Store().Handovers(taskIDs(out.Tasks))
	if err != nil {
		fail(w, http.StatusInternalServerError, err)
		return
	}
	WithHandovers(out.Tasks, hs)
	reply(w, out)
}

// parseWhen reads an RFC 3339 time or a date (midnight, local time).
func parseWhen(v string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t, nil
	}
	return time.ParseInLocation(time.DateOnly, v, time.Local)
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// task loads the task of the request's {id}; on failure it has answered.
func (s *Server) task(w http.ResponseWriter, r *http.Request) (store.Task, bool) {
	t, err := s.team.Store().Task(r.PathValue("id"))
	if err != nil {
		code := http.StatusInternalServerError
		if errors.Is(err, store.ErrUnknownTask) {
			code = http.StatusNotFound
		}
		fail(w, code, err)
		return store.Task{}, false
	}
	if s.refuseOthers(w, r, fmt.Sprintf("read task %s, of role %s", t.ID, t.Role), t.Role) {
		return store.Task{}, false
	}
	return t, true
}

// taskDetail is GET /v1/tasks/{id}.
func (s *Server) taskDetail(w http.ResponseWriter, r *http.Request) {
	t, ok := s.task(w, r)
	if !ok {
		return
	}
	out := TaskDetailReply{Task: TaskFrom(t), Attempts: t.Attempts, Submits: t.Submits, Events: []TaskEvent{}, Subtasks: []Subtask{}, Approvals: []Approval{}}
	if tokens, err := s.team.Store().TaskTokens([]string{t.ID}); err == nil {
		one := []Task{out.Task}
		WithTokens(one, tokens)
		out.Task = one[0]
	} else {
		s.log.Warn().Err(err).Str("task_id", t.ID).Msg("read a task's tokens for the console")
	}
	if hs, err := s.team.Store().Handovers([]string{t.ID}); err == nil {
		one := []Task{out.Task}
		WithHandovers(one, hs)
		out.Task = one[0]
	} else {
		s.log.Warn().Err(err).Str("task_id", t.ID).Msg("read a task's hand-overs for the console")
	}
	text, path, err := s.team.Queue().ReadTaskFile(t)
	switch {
	case err == nil:
		out.TaskFile, out.TaskFilePath = text, s.rel(path)
	case errors.Is(err, queue.ErrNoTaskFile):
	default:
		s.log.Warn().Err(err).Str("task_id", t.ID).Msg("read a task file for the console")
	}
	evs, err := s.team.Store().EventsForTask(t.ID)
	if err != nil {
		fail(w, http.StatusInternalServerError, err)
		return
	}
	for _, e := range evs {
		out.Events = append(out.Events, TaskEvent{At: e.At.UTC(), Kind: e.Kind, Role: e.Role, Detail: e.Message})
	}
	reps, err := s.team.Store().ReportsForTask(t.ID)
	if err != nil {
		fail(w, http.StatusInternalServerError, err)
		return
	}
	// The report that closed the task; a late one after a cancel only
	// when no other is there.
	for _, rp := range reps {
		if out.Report == nil || rp.ArchivedPath == t.ReportPath {
			out.Report = reportFrom(rp, s.rel)
		}
	}
	subs, err := s.team.Store().Subtasks(t.ID)
	if err != nil {
		fail(w, http.StatusInternalServerError, err)
		return
	}
	for _, st := range subs {
		out.Subtasks = append(out.Subtasks, Subtask{ID: st.ID, Role: st.Role, Title: st.Title, Status: st.Status})
	}
	apps, total, err := s.team.Store().TaskApprovals(t.ID, MaxApprovalsListed)
	out.ApprovalsTotal = total
	if err != nil {
		fail(w, http.StatusInternalServerError, err)
		return
	}
	for _, a := range apps {
		out.Approvals = append(out.Approvals, ApprovalFrom(a))
	}
	reply(w, out)
}

// taskLog is GET /v1/tasks/{id}/log?strip=: the role's log while it had
// the task (its latest attempt), from this supervisor's index of the log.
func (s *Server) taskLog(w http.ResponseWriter, r *http.Request) {
	t, ok := s.task(w, r)
	if !ok {
		return
	}
	raw, ok := stripParam(w, r)
	if !ok {
		return
	}
	if t.AssignedAt.IsZero() {
		fail(w, http.StatusNotFound, fmt.Errorf("task %s was never handed to %s, so it has no log", t.ID, t.Role))
		return
	}
	role, running := s.team.Supervisor().Role(t.Role)
	var idx *rolelog.Index
	if running {
		idx = role.LogIndex()
	}
	if idx == nil {
		fail(w, http.StatusNotFound, fmt.Errorf("role %s is not running in this supervisor, so where task %s is in its log is not known; its whole log is GET /v1/roles/%s/log", t.Role, t.ID, t.Role))
		return
	}
	to := time.Now()
	if !t.FinishedAt.IsZero() {
		to = t.FinishedAt.Add(taskLogAfter)
	}
	sp := idx.Span(t.AssignedAt, to)
	if sp.Before && sp.Start == sp.End {
		fail(w, http.StatusNotFound, fmt.Errorf("task %s ran before this supervisor started, so where it is in %s's log is not known; its whole log is GET /v1/roles/%s/log", t.ID, t.Role, t.Role))
		return
	}
	path := workspace.New(s.team.Config().Workspace).RoleLog(t.Role)
	ex, err := rolelog.ReadStream(path, idx, sp, maxTaskLog)
	if err != nil {
		fail(w, http.StatusInternalServerError, err)
		return
	}
	w.Header().Set("X-Shogun-Log-Skipped", strconv.FormatInt(ex.Skipped, 10))
	if raw {
		w.Header().Set("Content-Type", "application/octet-stream")
		_, _ = w.Write(ex.Data)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if ex.Skipped > 0 || sp.Before {
		fmt.Fprintf(w, "[… the start of this task's output is not shown: %s]\n", skippedWhy(ex.Skipped, sp.Before))
	}
	cols, rows := s.termSize(t.Role)
	_ = ptyhost.RenderText(bytes.NewReader(ex.Data), w, cols, rows)
}

func skippedWhy(skipped int64, before bool) string {
	var parts []string
	if skipped > 0 {
		parts = append(parts, fmt.Sprintf("%d bytes rotated away or over the %d MiB shown", skipped, maxTaskLog>>20))
	}
	if before {
		parts = append(parts, "it began before this supervisor started")
	}
	return strings.Join(parts, "; ")
}

// stripParam reads strip= (1, the default: the text a person saw; 0: the
// raw bytes); it reports raw.
func stripParam(w http.ResponseWriter, r *http.Request) (raw, ok bool) {
	switch v := r.URL.Query().Get("strip"); v {
	case "", "1", "true":
		return false, true
	case "0", "false":
		return true, true
	default:
		badRequest(w, "strip %q: want 1 (text as shown) or 0 (raw bytes)", v)
		return false, false
	}
}

// termSize is the role's terminal size, or the default for a role the
// configuration does not have.
func (s *Server) termSize(role string) (int, int) {
	if rc, ok := s.team.Config().Role(role); ok && rc.Terminal.Cols > 0 && rc.Terminal.Rows > 0 {
		return rc.Terminal.Cols, rc.Terminal.Rows
	}
	return rolelog.DefaultCols, rolelog.DefaultRows
}

// send is POST /v1/send: queue.SendTo, as `shogun send`.
func (s *Server) send(w http.ResponseWriter, r *http.Request) {
	var req SendRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxSendBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		badRequest(w, "send: %v", err)
		return
	}
	if a, ok := agentOf(r); ok && req.From == "" {
		req.From = a.Role // an agent sends as its role, never as a person
	}
	if s.refuseOthers(w, r, "send a task as "+orPerson(req.From), req.From) {
		return
	}
	// A textarea's line ends, as `shogun send --body-file` takes a file's.
	body := strings.ReplaceAll(req.Body, "\r\n", "\n")
	priority := req.Priority
	if priority == "" {
		priority = store.PriorityNormal
	}
	id, path, err := queue.SendTo(s.team.Config(), queue.Command{
		To: req.To, From: req.From, Title: req.Title, Body: body, Tags: req.Tags, Priority: priority,
	}, time.Now())
	if errors.Is(err, queue.ErrCommandRefused) {
		fail(w, http.StatusUnprocessableEntity, err)
		return
	}
	if err != nil {
		fail(w, http.StatusInternalServerError, err)
		return
	}
	reply(w, SendReply{ID: id, File: s.rel(path)})
}

// runs is GET /v1/runs?limit=.
func (s *Server) runs(w http.ResponseWriter, r *http.Request) {
	n := 50
	if v := r.URL.Query().Get("limit"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 || n > maxTaskLimit {
			badRequest(w, "limit %q: want a number from 1 to %d", v, maxTaskLimit)
			return
		}
	}
	rs, err := s.team.Store().Runs(n)
	if err != nil {
		fail(w, http.StatusInternalServerError, err)
		return
	}
	out := RunsReply{Runs: make([]RunReply, 0, len(rs))}
	for _, run := range rs {
		rr := RunReply{ID: run.ID, Status: run.Status, StartedAt: run.StartedAt.UTC(), Pid: run.Pid, Current: run.ID == s.team.RunID()}
		if !run.EndedAt.IsZero() {
			rr.EndedAt = run.EndedAt.UTC()
		}
		out.Runs = append(out.Runs, rr)
	}
	reply(w, out)
}

// roleLog is GET /v1/roles/{id}/log?strip=&tail=&follow=&download=: the
// role's log as `shogun logs` prints it, whether or not the role runs now.
func (s *Server) roleLog(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if !config.ValidRoleID(id) {
		badRequest(w, "%q is not a role id", id)
		return
	}
	raw, ok := stripParam(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	tail := defaultLogTail
	if v := q.Get("tail"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			badRequest(w, "tail %q: want a number of lines (0: all)", v)
			return
		}
		tail = n
	}
	follow := q.Get("follow") == "1" || q.Get("follow") == "true"
	cols, rows := s.termSize(id)
	opts := rolelog.Options{Lines: tail, Raw: raw, Cols: cols, Rows: rows}
	path := workspace.New(s.team.Config().Workspace).RoleLog(id)
	if _, err := os.Stat(path); err != nil {
		code := http.StatusInternalServerError
		if errors.Is(err, fs.ErrNotExist) {
			code = http.StatusNotFound
			err = fmt.Errorf("role %s has no log yet (%s)", id, s.rel(path))
		}
		fail(w, code, err)
		return
	}
	if !follow {
		ext, ct := ".txt", "text/plain; charset=utf-8"
		if raw {
			ext, ct = ".log", "application/octet-stream"
		}
		w.Header().Set("Content-Type", ct)
		if q.Get("download") == "1" {
			w.Header().Set("Content-Disposition", `attachment; filename="`+id+ext+`"`)
		}
		// Past this point the answer has begun: an error can only cut it.
		if err := rolelog.Follow(r.Context(), path, w, opts); err != nil {
			s.log.Debug().Err(err).Str("role", id).Msg("role log for the console")
		}
		return
	}
	if !s.streams.take() {
		fail(w, http.StatusServiceUnavailable, fmt.Errorf("too many event and log streams are open (%d)", maxStreams))
		return
	}
	defer s.streams.give()
	out := newStreamWriter(w)
	lw := &logEvents{out: out}
	opts.Follow = true
	opts.Flush = func() {
		if lw.err == nil {
			lw.err = out.flush()
		}
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	lw.cancel = cancel
	out.start()
	if err := rolelog.Follow(ctx, path, lw, opts); err != nil && lw.err == nil {
		// Not "error", which EventSource takes for its own.
		if e, err2 := newEvent("end", ErrorReply{Error: err.Error()}); err2 == nil {
			_ = out.event(e)
			_ = out.flush()
		}
	}
}

// logEvents turns a followed log into "log" events, each a JSON string of
// the text (or raw bytes) that came. A UTF-8 character split between two
// pieces is held back until its end comes, so none becomes U+FFFD.
type logEvents struct {
	out    *streamWriter
	held   []byte
	err    error
	cancel context.CancelFunc // ends the follow once the client is gone
}

func (l *logEvents) Write(p []byte) (int, error) {
	if l.err != nil {
		return 0, l.err
	}
	b := append(l.held, p...)
	cut := len(b)
	// Back up over an incomplete character at the end (at most 3 bytes).
	for i := len(b) - 1; i >= 0 && i >= len(b)-3; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				cut = i
			}
			break
		}
	}
	l.held = append([]byte(nil), b[cut:]...)
	if cut == 0 {
		return len(p), nil
	}
	e, err := newEvent("log", strings.ToValidUTF8(string(b[:cut]), string(utf8.RuneError)))
	if err == nil {
		err = l.out.event(e)
	}
	if err != nil {
		l.err = err
		l.cancel()
		return 0, err
	}
	return len(p), nil
}

// skills is GET /v1/skills?status=pending|approved|rejected|exported|all.
func (s *Server) skills(w http.ResponseWriter, r *http.Request) {
	status := r.URL.Query().Get("status")
	switch {
	case status == "":
		status = store.SkillPending
	case status == "all":
		status = ""
	case !contains(store.SkillStatuses, status):
		badRequest(w, "status %q: want one of %s or all", status, strings.Join(store.SkillStatuses, ", "))
		return
	}
	st := s.team.Store()
	cands, err := st.SkillCandidates(status)
	if err != nil {
		fail(w, http.StatusInternalServerError, err)
		return
	}
	out := SkillsReply{Skills: make([]SkillReply, 0, len(cands))}
	for _, c := range cands {
		out.Skills = append(out.Skills, skillFrom(st, c))
	}
	reply(w, out)
}

// maxSourceTasks is how many of a candidate's source tasks are shown, as
// the terminal review shows them.
const maxSourceTasks = 8

func skillFrom(st *store.Store, c store.SkillCandidate) SkillReply {
	out := SkillReply{ID: c.ID, Name: c.Name, Status: c.Status, Kind: c.Kind, Description: c.Description, Body: c.Body,
		Text:  string(skills.Render(skills.Document{Name: c.Name, Description: c.Description, Body: c.Body})),
		Tasks: len(c.SourceTaskIDs), SourceTasks: []SourceTask{}, Edited: !c.EditedAt.IsZero(),
		CreatedAt: c.CreatedAt.UTC(), UpdatedAt: c.UpdatedAt.UTC()}
	ids := c.SourceTaskIDs
	for _, id := range ids[max(0, len(ids)-maxSourceTasks):] {
		t, err := st.Task(id)
		if err != nil {
			out.SourceTasks = append(out.SourceTasks, SourceTask{ID: id, Missing: true})
			continue
		}
		out.SourceTasks = append(out.SourceTasks, SourceTask{ID: t.ID, Role: t.Role, Title: t.Title, Status: t.Status, Summary: t.Summary})
	}
	return out
}

// skillError answers a refused skill action.
func skillError(w http.ResponseWriter, err error) {
	var refused *skills.EditRefusedError
	var clash *skills.ClashError
	switch {
	case errors.Is(err, store.ErrUnknownSkill):
		fail(w, http.StatusNotFound, err)
	case errors.Is(err, store.ErrSkillExported), errors.As(err, &clash):
		fail(w, http.StatusConflict, err)
	case errors.As(err, &refused):
		fail(w, http.StatusUnprocessableEntity, err)
	default:
		fail(w, http.StatusInternalServerError, err)
	}
}

func (s *Server) approveSkill(w http.ResponseWriter, r *http.Request) {
	s.decideSkill(w, r, true)
}

func (s *Server) rejectSkill(w http.ResponseWriter, r *http.Request) {
	s.decideSkill(w, r, false)
}

// decideSkill approves or rejects the candidate {name} as the review does.
func (s *Server) decideSkill(w http.ResponseWriter, r *http.Request, approve bool) {
	name := r.PathValue("name")
	var yes, no []string
	if approve {
		yes = []string{name}
	} else {
		no = []string{name}
	}
	cs, err := skills.DecideBy(s.team.Store(), yes, no, "console", time.Now())
	if err != nil {
		skillError(w, err)
		return
	}
	reply(w, skillFrom(s.team.Store(), cs[0]))
}

// editSkill is PUT /v1/skills/{name}: skills.EditText, as the review's
// editor.
func (s *Server) editSkill(w http.ResponseWriter, r *http.Request) {
	var req SkillEditRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&req); err != nil {
		badRequest(w, "edit skill: %v", err)
		return
	}
	st := s.team.Store()
	c, err := st.SkillCandidate(r.PathValue("name"))
	if err != nil {
		skillError(w, err)
		return
	}
	text := strings.ReplaceAll(req.Text, "\r\n", "\n")
	upd, changed, err := skills.EditText(st, c, []byte(text), "console", time.Now())
	if err != nil {
		skillError(w, err)
		return
	}
	reply(w, SkillEditReply{Skill: skillFrom(st, upd), Changed: changed})
}

// exportSkill is POST /v1/skills/{name}/export: skills.Export of this one
// skill, into the folders `shogun skills export` writes (never elsewhere).
func (s *Server) exportSkill(w http.ResponseWriter, r *http.Request) {
	var req SkillExportRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&req); err != nil && !errors.Is(err, io.EOF) {
		badRequest(w, "export skill: %v", err)
		return
	}
	target, layout := req.Target, req.Layout
	if target == "" {
		target = skills.TargetAll
	}
	if target != skills.TargetAll && !contains(skills.Targets, target) {
		badRequest(w, "target %q: want %s or %s", target, strings.Join(skills.Targets, ", "), skills.TargetAll)
		return
	}
	if layout == "" {
		layout = skills.LayoutFlat
	}
	if layout != skills.LayoutFlat && layout != skills.LayoutDir {
		badRequest(w, "layout %q: want %s or %s", layout, skills.LayoutFlat, skills.LayoutDir)
		return
	}
	st, cfg := s.team.Store(), s.team.Config()
	name := r.PathValue("name")
	c, err := st.SkillCandidate(name)
	if err != nil {
		skillError(w, err)
		return
	}
	if c.Status != store.SkillApproved && c.Status != store.SkillExported {
		fail(w, http.StatusConflict, fmt.Errorf("skill %s is %s: approve it first", name, c.Status))
		return
	}
	res, err := skills.Export(st, skills.ExportOptions{Targets: []string{target}, Layout: layout, Workspace: cfg.Workspace,
		CodexPath: cfg.Settings.Skills.CodexPath, CopilotPath: cfg.Settings.Skills.CopilotPath, Names: []string{name}})
	if err != nil {
		var clash *skills.ClashError
		var pathErr *fs.PathError
		switch {
		case errors.As(err, &clash):
			fail(w, http.StatusConflict, err)
		case errors.As(err, &pathErr):
			fail(w, http.StatusInternalServerError, err)
		default:
			// A target without a folder in this layout (claude, flat).
			fail(w, http.StatusUnprocessableEntity, err)
		}
		return
	}
	if res.Files == nil {
		res.Files = []skills.ExportedFile{}
	}
	for i := range res.Files {
		res.Files[i].Path = s.rel(res.Files[i].Path)
	}
	reply(w, res)
}
