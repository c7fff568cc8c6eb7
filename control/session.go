package control

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"

	"github.com/shogun-dev/shogun/textsafe"
)

// SessionReport is the body of POST /v1/roles/{id}/session: the session id
// a role's CLI gave its hook, which the role's next wake resumes.
type SessionReport struct {
	SessionID string `json:"session_id"`
}

// maxSessionReport bounds the body of a session report.
const maxSessionReport = 1024

// registerSessions adds the endpoint a role's hook tells its CLI's
// session on.
func (s *Server) registerSessions(mux *router) {
	mux.HandleFunc("POST /v1/roles/{id}/session", s.noteSession)
}

// noteSession records the session a role's CLI holds now. Only the role's
// own process tree may tell it (an agent may not steer another role's
// wake into its conversation), and only a UUID is taken.
func (s *Server) noteSession(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	var req SessionReport
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxSessionReport))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		fail(w, http.StatusBadRequest, fmt.Errorf("session: %w", err))
		return
	}
	if s.refuseOthers(w, r, "tell the session of role "+id, id) {
		return
	}
	role, ok := s.team.Supervisor().Role(id)
	if !ok {
		fail(w, http.StatusNotFound, fmt.Errorf("no role %s is running", textsafe.Escape(id)))
		return
	}
	if err := role.NoteSession(req.SessionID); err != nil {
		fail(w, http.StatusBadRequest, err)
		return
	}
	reply(w, req)
}

// NoteSession tells the supervisor that role's CLI holds session id now
// (a hook's report, POST /v1/roles/{id}/session).
func (c *Client) NoteSession(role, id string) error {
	return c.do(http.MethodPost, "/v1/roles/"+url.PathEscape(role)+"/session", SessionReport{SessionID: id}, nil)
}
