package control

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/shogun-dev/shogun/approvals"
	"github.com/shogun-dev/shogun/policy"
	"github.com/shogun-dev/shogun/questions"
	"github.com/shogun-dev/shogun/store"
	"github.com/shogun-dev/shogun/supervisor"
	"github.com/shogun-dev/shogun/textsafe"
)

// The approvals' endpoints (docs/api.md, "Approvals"): a CLI's hook asks
// and waits, a person lists and answers.

// maxApprovalWait bounds one GET /v1/approvals/{id}?wait=: well inside the
// write timeout, so a hook waits in several requests, each answered.
const maxApprovalWait = 30 * time.Second

// MaxApprovalsListed bounds GET /v1/approvals: the last so many, with the
// total count, whatever limit asks for.
const MaxApprovalsListed = 1000

// maxNote bounds a person's note.
const maxNote = 1000

// answerVias are the places an answer may say it came from.
var answerVias = []string{"cli", "console", "api"}

// registerApprovals adds the approvals' endpoints to mux.
func (s *Server) registerApprovals(mux *router) {
	mux.HandleFunc("POST /v1/approvals", s.askApproval)
	mux.HandleFunc("GET /v1/approvals", s.listApprovals)
	mux.HandleFunc("GET /v1/approvals/{id}", s.getApproval)
	mux.HandleFunc("POST /v1/approvals/{id}/answer", s.answerApproval)
	mux.HandleFunc("POST /v1/roles/{id}/answer", s.answerRole)
	mux.HandleFunc("GET /v1/questions", s.listQuestions)
	mux.HandleFunc("GET /v1/usage", s.usageReport)
	mux.HandleFunc("GET /v1/accounts", s.accountsReport)
}

// hookOptions are the answers to a hook's question.
var hookOptions = []QuestionOption{{Key: "y", Label: "Yes", Answer: questions.Yes},
	{Key: "a", Label: "Yes, and the same again until the supervisor stops", Answer: questions.Always},
	{Key: "n", Label: "No", Answer: questions.No}}

// listQuestions is what waits for a person: the hooks' questions, then
// the dialogs on the waiting roles' screens.
func (s *Server) listQuestions(w http.ResponseWriter, r *http.Request) {
	reply(w, s.questionsReply())
}

// questionsReply is what waits for a person now.
func (s *Server) questionsReply() QuestionsReply {
	out := QuestionsReply{Questions: []Question{}}
	for _, a := range s.team.Approvals().Open() {
		out.Questions = append(out.Questions, hookQuestion(a))
	}
	for _, role := range s.team.Supervisor().Roles() {
		q, ok := role.Question()
		if !ok {
			continue
		}
		out.Questions = append(out.Questions, questionFrom(role.ID(), role.Config().CLI, q))
	}
	return out
}

// hookQuestion is a hook's pending approval as the API shows it.
func hookQuestion(a store.Approval) Question {
	return Question{ID: strconv.FormatInt(a.ID, 10), Role: a.Role, CLI: a.CLI, Source: "hook", Kind: string(questions.Permission),
		Prompt: fmt.Sprintf("May %s %s this?", a.Role, verbOf(a.Kind)), Subject: a.Subject, Options: hookOptions,
		ApprovalID: a.ID, AskedAt: a.AskedAt.UTC()}
}

// questionFrom is a question on a role's screen as the API shows it.
func questionFrom(role, cli string, q questions.Question) Question {
	out := Question{ID: q.ID, Role: role, CLI: cli, Source: "screen", Kind: string(q.Kind), Prompt: q.Prompt, Subject: q.Subject,
		Options: []QuestionOption{}}
	for _, o := range q.Options {
		out.Options = append(out.Options, QuestionOption{Key: o.Key, Label: o.Label, Answer: o.Answer})
	}
	return out
}

// verbOf says what an action of kind does, for a hook's question.
func verbOf(kind string) string {
	switch policy.Kind(kind) {
	case policy.Shell:
		return "run"
	case policy.Read:
		return "read"
	case policy.Write:
		return "write"
	case policy.Fetch:
		return "fetch"
	}
	return "use"
}

func (s *Server) askApproval(w http.ResponseWriter, r *http.Request) {
	var req ApprovalRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 2*policy.MaxSubject))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		fail(w, http.StatusBadRequest, fmt.Errorf("approval: %w", err))
		return
	}
	if s.refuseOthers(w, r, "ask for an approval as role "+req.Role, req.Role) {
		return
	}
	action := policy.Action{Kind: policy.Kind(req.Kind), Command: req.Command, Path: req.Path, URL: req.URL, Tool: req.Tool, Cwd: req.Cwd}
	if err := action.Validate(); err != nil {
		fail(w, http.StatusBadRequest, err)
		return
	}
	a, err := s.team.Approvals().Ask(approvals.Request{Role: req.Role, CLI: req.CLI, Action: action})
	if err != nil {
		fail(w, approvalErrorCode(err), err)
		return
	}
	reply(w, ApprovalFrom(a))
}

func (s *Server) listApprovals(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	out := ApprovalsReply{Approvals: []Approval{}}
	if q.Get("pending") == "true" {
		for _, a := range s.team.Approvals().Open() {
			out.Approvals = append(out.Approvals, ApprovalFrom(a))
		}
		out.Total = len(out.Approvals) // at most approvals.MaxOpen
		reply(w, out)
		return
	}
	var since time.Time
	if v := q.Get("since"); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			fail(w, http.StatusBadRequest, fmt.Errorf("since: want an RFC 3339 time, got %q", textsafe.Escape(v)))
			return
		}
		since = t
	}
	n := 0
	if v := q.Get("limit"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 0 {
			fail(w, http.StatusBadRequest, fmt.Errorf("limit: want a number, got %q", textsafe.Escape(v)))
			return
		}
	}
	if n == 0 || n > MaxApprovalsListed {
		n = MaxApprovalsListed
	}
	list, err := s.team.Store().Approvals(since, n)
	if err != nil {
		fail(w, http.StatusInternalServerError, err)
		return
	}
	if out.Total, err = s.team.Store().CountApprovals(since); err != nil {
		fail(w, http.StatusInternalServerError, err)
		return
	}
	for _, a := range list {
		out.Approvals = append(out.Approvals, ApprovalFrom(a))
	}
	reply(w, out)
}

// getApproval is one approval; with ?wait=SECONDS it answers once the
// approval is decided or the wait is over, whichever comes first.
func (s *Server) getApproval(w http.ResponseWriter, r *http.Request) {
	id, ok := approvalID(w, r)
	if !ok {
		return
	}
	wait := time.Duration(0)
	if v := r.URL.Query().Get("wait"); v != "" {
		secs, err := strconv.ParseFloat(v, 64)
		if err != nil || secs < 0 {
			fail(w, http.StatusBadRequest, fmt.Errorf("wait: want seconds, got %q", textsafe.Escape(v)))
			return
		}
		wait = min(time.Duration(secs*float64(time.Second)), maxApprovalWait)
	}
	ctx, cancel := context.WithTimeout(r.Context(), wait)
	defer cancel()
	a, err := s.team.Approvals().Wait(ctx, id)
	if err != nil {
		fail(w, approvalErrorCode(err), err)
		return
	}
	if s.refuseOthers(w, r, fmt.Sprintf("read approval %d, of role %s", a.ID, a.Role), a.Role) {
		return
	}
	reply(w, ApprovalFrom(a))
}

func (s *Server) answerApproval(w http.ResponseWriter, r *http.Request) {
	id, ok := approvalID(w, r)
	if !ok {
		return
	}
	req, ok := decodeAnswer(w, r)
	if !ok {
		return
	}
	s.answer(w, req, id)
}

// answerRole answers a question of the role in the path: the one the
// request names by id, which must still be open ("the question changed"
// if not: an answer is never passed on to another question), or, named
// by none, the role's only open question.
func (s *Server) answerRole(w http.ResponseWriter, r *http.Request) {
	role := r.PathValue("id")
	req, ok := decodeAnswer(w, r)
	if !ok {
		return
	}
	var hook []store.Approval
	for _, a := range s.team.Approvals().Open() {
		if a.Role == role {
			hook = append(hook, a)
		}
	}
	var screen *questions.Question
	sup, known := s.team.Supervisor().Role(role)
	if known {
		if q, ok := sup.Question(); ok {
			screen = &q
		}
	}
	if req.ID != "" {
		if i := slices.IndexFunc(hook, func(a store.Approval) bool { return strconv.FormatInt(a.ID, 10) == req.ID }); i >= 0 {
			s.answer(w, req, hook[i].ID)
			return
		}
		if screen != nil && screen.ID == req.ID {
			s.answerScreen(w, r, sup, *screen, req)
			return
		}
		fail(w, http.StatusConflict, fmt.Errorf("%w: question %s of %s is no longer open; nothing was answered (shogun questions shows what waits now)",
			supervisor.ErrQuestionChanged, textsafe.Escape(req.ID), textsafe.Escape(role)))
		return
	}
	n := len(hook)
	if screen != nil {
		n++
	}
	switch {
	case n == 0:
		fail(w, http.StatusNotFound, fmt.Errorf("%w for role %s", approvals.ErrNoQuestion, textsafe.Escape(role)))
	case n > 1:
		fail(w, http.StatusConflict, fmt.Errorf("%w: %s has %d open questions; answer one by its id (shogun answer %s yes|always|no --id ID): %s",
			ErrWhichQuestion, textsafe.Escape(role), n, textsafe.Escape(role), questionList(hook, screen)))
	case len(hook) == 1:
		s.answer(w, req, hook[0].ID)
	default:
		s.answerScreen(w, r, sup, *screen, req)
	}
}

// ErrWhichQuestion refuses an answer that names no question for a role
// with more than one open: which one the person saw cannot be known.
var ErrWhichQuestion = errors.New("which question? none was named")

// maxListed bounds the questions an ErrWhichQuestion names, and each
// one's subject there.
const maxListed, maxListedSubject = 10, 120

// questionList names a role's open questions in one line, escaped: each
// id with what it asks about.
func questionList(hook []store.Approval, screen *questions.Question) string {
	var parts []string
	for _, a := range hook {
		parts = append(parts, fmt.Sprintf("%d (%s %s)", a.ID, verbOf(a.Kind), textsafe.Escape(cut(a.Subject, maxListedSubject))))
	}
	if screen != nil {
		parts = append(parts, fmt.Sprintf("%s (on screen: %s)", screen.ID, textsafe.Escape(cut(cmp.Or(screen.Subject, screen.Prompt), maxListedSubject))))
	}
	if len(parts) > maxListed {
		parts = append(parts[:maxListed], fmt.Sprintf("and %d more", len(parts)-maxListed))
	}
	return strings.Join(parts, "; ")
}

// cut shortens s to at most n bytes, on a rune boundary, marked with "…".
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// answerScreen types the answer to q, the question on role's screen, and
// records it.
func (s *Server) answerScreen(w http.ResponseWriter, r *http.Request, role *supervisor.Role, q questions.Question, req AnswerRequest) {
	id := role.ID()
	if q.Kind != questions.Permission && req.Kind != string(q.Kind) {
		fail(w, http.StatusConflict, fmt.Errorf("the question on %s's screen is a %s dialog (%q): nothing typed; to answer it, say so with kind %s",
			id, q.Kind, textsafe.Escape(q.Prompt), q.Kind))
		return
	}
	option := -1
	switch {
	case req.Option != "":
		option = slices.IndexFunc(q.Options, func(o questions.Option) bool { return o.Key == req.Option })
	case req.Decision == store.ApprovalAllow && req.Always:
		option = q.Pick(questions.Always)
	case req.Decision == store.ApprovalAllow:
		option = q.Pick(questions.Yes)
	default:
		option = q.Pick(questions.No)
	}
	if option < 0 {
		fail(w, http.StatusBadRequest, fmt.Errorf("the question on %s's screen has no such answer; its options: %s", id, optionList(q)))
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
	defer cancel()
	if err := role.Answer(ctx, q, option); err != nil {
		code := http.StatusConflict
		if !errors.Is(err, supervisor.ErrQuestionChanged) {
			code = http.StatusInternalServerError
		}
		fail(w, code, err)
		return
	}
	a, err := s.team.Approvals().Screen(id, role.Config().CLI, q, option, req.Via, req.Note)
	if err != nil {
		fail(w, http.StatusInternalServerError, fmt.Errorf("the answer was typed but not recorded: %w", err))
		return
	}
	reply(w, ApprovalFrom(a))
}

// optionList is a question's options in one line, escaped.
func optionList(q questions.Question) string {
	var parts []string
	for _, o := range q.Options {
		parts = append(parts, o.Key+". "+textsafe.Escape(o.Label))
	}
	return strings.Join(parts, "; ")
}

// decodeAnswer reads and checks an AnswerRequest.
func decodeAnswer(w http.ResponseWriter, r *http.Request) (AnswerRequest, bool) {
	var req AnswerRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		fail(w, http.StatusBadRequest, fmt.Errorf("answer: %w", err))
		return req, false
	}
	if req.Via == "" {
		req.Via = "api"
	}
	switch {
	case req.Option == "" && req.Decision != store.ApprovalAllow && req.Decision != store.ApprovalDeny:
		fail(w, http.StatusBadRequest, fmt.Errorf("answer: decision must be allow or deny, got %q", textsafe.Escape(req.Decision)))
		return req, false
	case !slices.Contains(answerVias, req.Via):
		fail(w, http.StatusBadRequest, fmt.Errorf("answer: via must be one of %v, got %q", answerVias, textsafe.Escape(req.Via)))
		return req, false
	case len(req.Note) > maxNote:
		fail(w, http.StatusBadRequest, fmt.Errorf("answer: the note has %d bytes, more than %d", len(req.Note), maxNote))
		return req, false
	}
	return req, true
}

// answer gives a checked answer to the hook's question id.
func (s *Server) answer(w http.ResponseWriter, req AnswerRequest, id int64) {
	if req.Option != "" {
		fail(w, http.StatusBadRequest, fmt.Errorf("answer: option is for questions on a screen; a hook's question takes decision allow or deny"))
		return
	}
	a, err := s.team.Approvals().Answer(id, req.Decision == store.ApprovalAllow, req.Always, req.Via, req.Note)
	if err != nil {
		fail(w, approvalErrorCode(err), err)
		return
	}
	reply(w, ApprovalFrom(a))
}

func approvalID(w http.ResponseWriter, r *http.Request) (int64, bool) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		fail(w, http.StatusBadRequest, fmt.Errorf("approval id: want a number, got %q", textsafe.Escape(r.PathValue("id"))))
		return 0, false
	}
	return id, true
}

// approvalErrorCode is the status of a refused ask or answer.
func approvalErrorCode(err error) int {
	switch {
	case errors.Is(err, approvals.ErrNoQuestion), errors.Is(err, store.ErrUnknownApproval), errors.Is(err, approvals.ErrUnknownRole):
		return http.StatusNotFound
	case errors.Is(err, approvals.ErrNoPolicy), errors.Is(err, store.ErrApprovalDecided), errors.Is(err, approvals.ErrClosed):
		return http.StatusConflict
	}
	return http.StatusInternalServerError
}
