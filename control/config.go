package control

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"

	"github.com/shogun-dev/shogun/config"
	"github.com/shogun-dev/shogun/supervisor"
)

// The live configuration's endpoints (docs/api.md, "Live configuration"):
// the roles as configured, the files, a reload, the role edits, and
// starting or stopping one role.

// registerConfig adds the live configuration's endpoints to mux.
func (s *Server) registerConfig(mux *router) {
	mux.HandleFunc("GET /v1/roles", s.roles)
	mux.HandleFunc("GET /v1/config", s.configFiles)
	mux.HandleFunc("POST /v1/reload", s.reload)
	mux.HandleFunc("POST /v1/config/roles", s.createRole)
	mux.HandleFunc("PUT /v1/config/roles/{id}", s.updateRole)
	mux.HandleFunc("DELETE /v1/config/roles/{id}", s.deleteRole)
	mux.HandleFunc("POST /v1/config/roles/{id}/enable", s.enableRole)
	mux.HandleFunc("POST /v1/config/roles/{id}/disable", s.disableRole)
	mux.HandleFunc("POST /v1/roles/{id}/start", s.startRole)
	mux.HandleFunc("POST /v1/roles/{id}/stop", s.stopRole)
}

func (s *Server) roles(w http.ResponseWriter, r *http.Request) {
	cfg := s.team.Config()
	out := RolesReply{Roles: []RoleConfig{}, ConfigError: ConfigErrorFrom(s.team.ConfigError())}
	st, err := s.statusReply()
	if err != nil {
		fail(w, http.StatusInternalServerError, err)
		return
	}
	running := map[string]RoleReply{}
	for _, rr := range st.Roles {
		running[rr.ID] = rr
	}
	for _, role := range RoleConfigsFrom(cfg) {
		if rr, ok := running[role.ID]; ok {
			role.Runtime = &rr
		}
		out.Roles = append(out.Roles, role)
	}
	reply(w, out)
}

func (s *Server) configFiles(w http.ResponseWriter, r *http.Request) {
	ws := s.team.Config().Workspace
	read := func(rel string) (string, bool) {
		b, err := os.ReadFile(filepath.Join(ws, filepath.FromSlash(rel)))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			fail(w, http.StatusInternalServerError, fmt.Errorf("read %s: %w", rel, err))
			return "", false
		}
		return string(b), true
	}
	roles, ok := read(config.RolesFile)
	if !ok {
		return
	}
	settings, ok := read(config.SettingsFile)
	if !ok {
		return
	}
	reply(w, ConfigReply{RolesYAML: roles, SettingsYAML: settings, RolesVersion: config.FileVersion([]byte(roles)),
		Error: ConfigErrorFrom(s.team.ConfigError())})
}

func (s *Server) reload(w http.ResponseWriter, r *http.Request) {
	res, err := s.team.Reload()
	s.applied(w, res, err)
}

func (s *Server) createRole(w http.ResponseWriter, r *http.Request) {
	req, ok := decodeEdit(w, r)
	if !ok {
		return
	}
	res, err := s.team.EditRoles(config.RoleEdit{Op: config.EditCreate, ID: req.ID, Fields: req.Fields, Version: req.Version})
	s.applied(w, res, err)
}

func (s *Server) updateRole(w http.ResponseWriter, r *http.Request) {
	s.edit(w, r, config.EditUpdate)
}

func (s *Server) deleteRole(w http.ResponseWriter, r *http.Request) {
	s.edit(w, r, config.EditDelete)
}

func (s *Server) enableRole(w http.ResponseWriter, r *http.Request) {
	s.edit(w, r, config.EditEnable)
}

func (s *Server) disableRole(w http.ResponseWriter, r *http.Request) {
	s.edit(w, r, config.EditDisable)
}

// edit makes an edit of the role in the path; only an update has fields.
func (s *Server) edit(w http.ResponseWriter, r *http.Request, op config.EditOp) {
	req, ok := decodeEdit(w, r)
	if !ok {
		return
	}
	e := config.RoleEdit{Op: op, ID: r.PathValue("id"), Version: req.Version}
	if op == config.EditUpdate {
		e.Fields = req.Fields
	} else if len(req.Fields) > 0 {
		fail(w, http.StatusBadRequest, fmt.Errorf("%s %s: fields are only for creating and updating a role", op, e.ID))
		return
	}
	res, err := s.team.EditRoles(e)
	s.applied(w, res, err)
}

// decodeEdit reads a RoleEditRequest; an empty body is an empty request.
// Numbers stay as written (json.Number), so 120 is written as 120.
func decodeEdit(w http.ResponseWriter, r *http.Request) (RoleEditRequest, bool) {
	var req RoleEditRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20))
	dec.UseNumber()
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil && !errors.Is(err, io.EOF) {
		fail(w, http.StatusBadRequest, fmt.Errorf("role edit: %w", err))
		return req, false
	}
	return req, true
}

// applied answers a reload or an edit: what it did, or why nothing was
// applied.
func (s *Server) applied(w http.ResponseWriter, res config.Reload, err error) {
	var errs *config.Errors
	switch {
	case err == nil:
		reply(w, ReloadReplyFrom(res))
	case errors.As(err, &errs):
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnprocessableEntity)
		_ = json.NewEncoder(w).Encode(ConfigErrorFrom(err))
	default:
		fail(w, configErrorCode(err), err)
	}
}

// configErrorCode is the status of a refused edit or role action.
func configErrorCode(err error) int {
	switch {
	case errors.Is(err, config.ErrRoleNotFound):
		return http.StatusNotFound
	case errors.Is(err, config.ErrRoleExists), errors.Is(err, config.ErrChanged),
		errors.Is(err, config.ErrRoleDisabled), errors.Is(err, supervisor.ErrNotRunning):
		return http.StatusConflict
	}
	return http.StatusInternalServerError
}

func (s *Server) startRole(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if err := s.team.StartRole(id); err != nil {
		fail(w, configErrorCode(err), err)
		return
	}
	reply(w, RestartReply{Role: id, Result: "starting"})
}

func (s *Server) stopRole(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if err := s.team.StopRole(id); err != nil {
		fail(w, configErrorCode(err), err)
		return
	}
	reply(w, RestartReply{Role: id, Result: "stopping"})
}
