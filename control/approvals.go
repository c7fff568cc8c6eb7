package control

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/shogun-dev/shogun/approvals"
	"github.com/shogun-dev/shogun/policy"
	"github.com/shogun-dev/shogun/store"
	"github.com/shogun-dev/shogun/textsafe"
)

// The approvals' endpoints (docs/api.md, "Approvals"): a CLI's hook asks
// and waits, a person lists and answers.

// maxApprovalWait bounds one GET /v1/approvals/{id}?wait=: well inside the
// write timeout, so a hook waits in several requests, each answered.
const maxApprovalWait = 30 * time.Second

// maxNote bounds a person's note.
const maxNote = 1000

// answerVias are the places an answer may say it came from.
var answerVias = []string{"cli", "console", "api"}

// registerApprovals adds the approvals' endpoints to mux.
func (s *Server) registerApprovals(mux *http.ServeMux) {
	mux.HandleFunc("POST /v1/approvals", s.askApproval)
	mux.HandleFunc("GET /v1/approvals", s.listApprovals)
	mux.HandleFunc("GET /v1/approvals/{id}", s.getApproval)
	mux.HandleFunc("POST /v1/approvals/{id}/answer", s.answerApproval)
	mux.HandleFunc("POST /v1/roles/{id}/answer", s.answerRole)
}

func (s *Server) askApproval(w http.ResponseWriter, r *http.Request) {
	var req ApprovalRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 2*policy.MaxSubject))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		fail(w, http.StatusBadRequest, fmt.Errorf("approval: %w", err))
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
	list, err := s.team.Store().Approvals(since, n)
	if err != nil {
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
	reply(w, ApprovalFrom(a))
}

func (s *Server) answerApproval(w http.ResponseWriter, r *http.Request) {
	id, ok := approvalID(w, r)
	if !ok {
		return
	}
	s.answer(w, r, func() (int64, error) { return id, nil })
}

// answerRole answers the oldest question of the role in the path.
func (s *Server) answerRole(w http.ResponseWriter, r *http.Request) {
	role := r.PathValue("id")
	s.answer(w, r, func() (int64, error) {
		open := s.team.Approvals().Open()
		i := slices.IndexFunc(open, func(a store.Approval) bool { return a.Role == role })
		if i < 0 {
			return 0, fmt.Errorf("%w for role %s", approvals.ErrNoQuestion, textsafe.Escape(role))
		}
		return open[i].ID, nil
	})
}

// answer reads an AnswerRequest and gives it to the approval pick names.
func (s *Server) answer(w http.ResponseWriter, r *http.Request, pick func() (int64, error)) {
	var req AnswerRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		fail(w, http.StatusBadRequest, fmt.Errorf("answer: %w", err))
		return
	}
	if req.Via == "" {
		req.Via = "api"
	}
	switch {
	case req.Decision != store.ApprovalAllow && req.Decision != store.ApprovalDeny:
		fail(w, http.StatusBadRequest, fmt.Errorf("answer: decision must be allow or deny, got %q", textsafe.Escape(req.Decision)))
		return
	case !slices.Contains(answerVias, req.Via):
		fail(w, http.StatusBadRequest, fmt.Errorf("answer: via must be one of %v, got %q", answerVias, textsafe.Escape(req.Via)))
		return
	case len(req.Note) > maxNote:
		fail(w, http.StatusBadRequest, fmt.Errorf("answer: the note has %d bytes, more than %d", len(req.Note), maxNote))
		return
	}
	id, err := pick()
	if err != nil {
		fail(w, approvalErrorCode(err), err)
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
