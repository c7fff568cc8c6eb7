// Package control is the supervisor's local API: HTTP+JSON and the attach
// stream on one endpoint per workspace (Endpoint): on Unix the socket
// runtime/state/shogun.sock, or a short path in the user's runtime folder
// when the workspace's path is too long for a socket address; on Windows a
// named pipe with an owner-only security descriptor. The CLI's status,
// screen, type, restart, stop and attach commands are its clients; the
// endpoints are documented in docs/api.md for other tools. The OS tells it
// which process each client is, and a process inside a role's process tree
// gets only an agent's routes (asker.go, routeRules).
//
// types.go holds the API's JSON shapes, which `shogun status --json` and
// `shogun screen --json` print too, and Task, what `shogun tasks --json`
// prints; docs/json.md names the type behind each of the CLI's --json
// outputs.
package control

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	stdlog "log"
	"maps"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/shogun-dev/shogun/approvals"
	"github.com/shogun-dev/shogun/config"
	"github.com/shogun-dev/shogun/queue"
	"github.com/shogun-dev/shogun/store"
	"github.com/shogun-dev/shogun/supervisor"
)

// Team is what the API serves: *team.Team implements it.
type Team interface {
	Supervisor() *supervisor.Supervisor
	Queue() *queue.Queue
	RunID() string
	// Halted says why the queue stopped taking work while the roles run
	// on (the history database was lost), or nil.
	Halted() error

	// The live configuration (config.go):
	// Config is the configuration in effect.
	Config() *config.Config
	// ConfigError is why the configuration files as they are now are not
	// in effect (*config.Errors), or nil.
	ConfigError() error
	// Reload reads the configuration files again and takes them into use.
	Reload() (config.Reload, error)
	// EditRoles changes config/roles.yaml and takes the result into use.
	EditRoles(config.RoleEdit) (config.Reload, error)
	// StartRole and StopRole start and stop one configured role's program
	// without a configuration change.
	StartRole(id string) error
	StopRole(id string) error

	// The console's pages (pages.go, events.go):
	// Store is the history the queue records in.
	Store() *store.Store
	// ConfigChanged is closed at the next reload, applied or refused.
	ConfigChanged() <-chan struct{}

	// Approvals decides and records what agents ask to do
	// (approvals.go).
	Approvals() *approvals.Desk
}

// Server serves the API of one running supervisor.
type Server struct {
	team  Team
	path  string
	stop  func()
	log   zerolog.Logger
	srv   *http.Server
	ln    net.Listener
	start time.Time

	attaches slots // attach streams, which leave the HTTP server's limit
	streams  slots // event and log streams (events.go)
	events   *eventHub
}

// Listen creates the workspace's control endpoint (see Endpoint): a socket
// on Unix, a named pipe on Windows, usable by the user who runs the
// supervisor only. stop is called for POST /v1/stop.
func Listen(workspace string, t Team, stop func(), log zerolog.Logger) (*Server, error) {
	ln, path, err := listen(workspace, log)
	if err != nil {
		return nil, err
	}
	s := newServer(t, stop, log)
	s.path, s.ln = path, ln
	limit := newConnLimit(maxConns)
	s.srv = &http.Server{
		Handler:           s.routes(),
		ReadHeaderTimeout: headerTimeout,
		ReadTimeout:       readTimeout, // cleared on attach streams once upgraded
		WriteTimeout:      httpWriteTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ConnState:         limit.track,
		ConnContext:       s.connContext,                       // who is asking (asker.go)
		ErrorLog:          stdlog.New(debugWriter{log}, "", 0), // dropped connections are routine
	}
	return s, nil
}

// NewHandler returns the /v1 API of a running team as a handler, the same
// one Listen serves on the control endpoint, for the web console to mount
// behind its own authentication. stop is called for POST /v1/stop.
func NewHandler(t Team, stop func(), log zerolog.Logger) http.Handler {
	return newServer(t, stop, log).routes()
}

func newServer(t Team, stop func(), log zerolog.Logger) *Server {
	s := &Server{team: t, stop: stop, log: log, start: time.Now()}
	s.attaches.max = maxAttach
	s.streams.max = maxStreams
	s.events = newEventHub(s)
	return s
}

// routes is the API: every endpoint on one mux. Each part of the API
// registers its endpoints from its own file with one call here.
func (s *Server) routes() *http.ServeMux {
	return s.router().mux
}

// router registers every route, each behind its rule (routeRules).
func (s *Server) router() *router {
	mux := &router{mux: http.NewServeMux(), s: s}
	mux.HandleFunc("GET /v1/ping", answerPing)
	mux.HandleFunc("GET /v1/status", s.status)
	mux.HandleFunc("POST /v1/attention/dismiss", s.dismiss)
	mux.HandleFunc("GET /v1/roles/{id}/screen", s.screen)
	mux.HandleFunc("POST /v1/roles/{id}/type", s.typeText)
	mux.HandleFunc("POST /v1/roles/{id}/restart", s.restart)
	mux.HandleFunc("GET /v1/roles/{id}/attach", s.attach)
	mux.HandleFunc("POST /v1/stop", s.stopAll)
	mux.HandleFunc("POST /v1/tasks/{id}/retry", s.retryTask)
	mux.HandleFunc("POST /v1/tasks/{id}/cancel", s.cancelTask)
	s.registerConfig(mux)
	s.registerPages(mux)
	s.registerApprovals(mux)
	s.registerSessions(mux)
	return mux
}

// debugWriter logs the HTTP server's own messages (a client that hung up, an
// accept that failed and is retried) at debug level.
type debugWriter struct{ log zerolog.Logger }

func (w debugWriter) Write(p []byte) (int, error) {
	w.log.Debug().Str("source", "control socket").Msg(strings.TrimSpace(string(p)))
	return len(p), nil
}

// Serve answers requests until ctx ends, then closes the socket and removes it.
func (s *Server) Serve(ctx context.Context) error {
	done := make(chan error, 1)
	go func() { done <- s.srv.Serve(s.ln) }()
	select {
	case err := <-done:
		_ = removeEndpoint(s.path)
		return err
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = s.srv.Shutdown(shut)
	_ = s.srv.Close() // hijacked attach streams end here
	<-done
	return removeEndpoint(s.path)
}

// answerPing answers GET /v1/ping with 204 and no body: the client sends it on
// each new connection to know that the connection is served (Client.dial).
func answerPing(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }

func (s *Server) status(w http.ResponseWriter, r *http.Request) {
	out, err := s.statusReply()
	if err != nil {
		fail(w, http.StatusInternalServerError, err)
		return
	}
	reply(w, out)
}

// dismiss clears the alerts of the files rejected so far and releases the
// roles held since their hook went missing (a person has looked): POST
// /v1/attention/dismiss.
func (s *Server) dismiss(w http.ResponseWriter, r *http.Request) {
	n := s.team.Queue().DismissRejected()
	for _, role := range s.team.Supervisor().Roles() {
		if role.Release() {
			n++
		}
	}
	reply(w, DismissReply{Dismissed: n})
}

// statusReply is the team's status now: GET /v1/status.
func (s *Server) statusReply() (StatusReply, error) {
	snap, err := s.team.Queue().Snapshot()
	if err != nil {
		return StatusReply{}, err
	}
	// Lists and maps are empty, never null: scripts iterate over them.
	out := StatusReply{Pid: os.Getpid(), RunID: s.team.RunID(), UptimeS: time.Since(s.start).Seconds(),
		Roles: []RoleReply{}, Tasks: map[string]int{}, Attention: []string{}}
	maps.Copy(out.Tasks, snap.Tasks)
	out.Attention = append(out.Attention, snap.Attention...)
	if err := s.team.Halted(); err != nil {
		out.Halted = err.Error()
	}
	if err := s.team.ConfigError(); err != nil {
		out.ConfigError = err.Error()
	}
	out.Roles = append(out.Roles, s.roleReplies(snap)...)
	out.SlotsInUse, out.MaxRunning = s.team.Supervisor().Slots()
	for cli, n := range s.team.Supervisor().CLISlots() {
		if out.CLISlots == nil {
			out.CLISlots = map[string]CLISlots{}
		}
		out.CLISlots[cli] = CLISlots{InUse: n[0], Max: n[1]}
	}
	return out, nil
}

// roleReplies are the running roles as the status shows them, with their
// tasks and queues from the queue's snapshot.
func (s *Server) roleReplies(snap queue.Status) []RoleReply {
	byID := map[string]queue.RoleStatus{}
	for _, rs := range snap.Roles {
		byID[rs.ID] = rs
	}
	now := time.Now()
	var out []RoleReply
	for _, role := range s.team.Supervisor().Roles() {
		st := role.Status()
		rr := RoleReply{ID: st.ID, Name: st.Name, State: string(st.State), Pid: st.Pid, Restarts: st.Restarts, LastError: st.LastError,
			LastLine: st.LastLine, SubmitDelayMS: st.SubmitDelay.Milliseconds(), Account: st.Account,
			MemoryBytes: st.Memory, MemoryMaxBytes: uint64(st.MemoryMax), OverMemory: st.OverMemory,
			BackoffReason: st.BackoffReason, Held: st.Held}
		switch st.State {
		case supervisor.Sleeping, supervisor.Waking, supervisor.WaitingSlot:
			rr.SleepReason = st.Reason
		}
		if st.State == supervisor.Limited && !st.LimitedUntil.IsZero() {
			rr.LimitedUntil = st.LimitedUntil.UTC()
		}
		if !st.Started.IsZero() {
			rr.UptimeS = now.Sub(st.Started).Seconds()
		}
		if !st.LastOutput.IsZero() {
			rr.SinceOutput = now.Sub(st.LastOutput).Seconds()
		}
		if q, ok := byID[st.ID]; ok {
			rr.QueueDepth, rr.Budget = q.QueueDepth, q.Budget
			if q.Task != nil {
				rr.TaskID, rr.TaskTitle, rr.TaskStatus = q.Task.ID, q.Task.Title, q.Task.Status
			}
		}
		out = append(out, rr)
	}
	return out
}

func (s *Server) role(w http.ResponseWriter, r *http.Request) (*supervisor.Role, bool) {
	id := r.PathValue("id")
	role, ok := s.team.Supervisor().Role(id)
	if !ok {
		fail(w, http.StatusNotFound, fmt.Errorf("no role %q is running in this supervisor", id))
	}
	return role, ok
}

func (s *Server) screen(w http.ResponseWriter, r *http.Request) {
	role, ok := s.role(w, r)
	if !ok {
		return
	}
	sess := role.Session()
	if sess == nil {
		fail(w, http.StatusConflict, fmt.Errorf("role %s: %w (state %s)", role.ID(), supervisor.ErrNotRunning, role.State()))
		return
	}
	scr := sess.Screen()
	reply(w, ScreenReply{Text: scr.Text(), Lines: scr.Lines, CursorRow: scr.CursorRow, CursorCol: scr.CursorCol, State: string(role.State())})
}

func (s *Server) typeText(w http.ResponseWriter, r *http.Request) {
	role, ok := s.role(w, r)
	if !ok {
		return
	}
	var req TypeRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&req); err != nil {
		fail(w, http.StatusBadRequest, fmt.Errorf("type: %w", err))
		return
	}
	if err := supervisor.CheckTypable(req.Text); err != nil {
		fail(w, http.StatusBadRequest, fmt.Errorf("type: %w", err))
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 60*time.Second)
	defer cancel()
	d, err := role.Type(ctx, req.Text, supervisor.TypeOptions{NoSubmit: !req.Submit, RefuseAttention: true})
	switch {
	case errors.Is(err, supervisor.ErrAttention):
		// A person sent this; waiting for a person would only wait for
		// them to notice the screen.
		fail(w, http.StatusConflict, fmt.Errorf("role %s is waiting for a person (attention): answer it with shogun attach %s, "+
			"or in the console's terminal; nothing was typed", role.ID(), role.ID()))
	case errors.Is(err, supervisor.ErrUndelivered):
		// The text was typed and submitted: what happened is an answer,
		// with the submits made, not a refusal.
		reason := strings.TrimPrefix(err.Error(), supervisor.ErrUndelivered.Error()+": ")
		reply(w, TypeReply{Submits: d.Attempts, Confirmed: false, Reason: reason})
	case errors.Is(err, context.DeadlineExceeded):
		fail(w, http.StatusConflict, fmt.Errorf("role %s did not become ready to type into within 60 s (state %s)", role.ID(), role.State()))
	case err != nil:
		fail(w, http.StatusConflict, err)
	default:
		reply(w, TypeReply{Submits: d.Attempts, Confirmed: d.Confirmed || !req.Submit})
	}
}

func (s *Server) restart(w http.ResponseWriter, r *http.Request) {
	role, ok := s.role(w, r)
	if !ok {
		return
	}
	role.Release() // a person restarted it: they have looked
	// Asked before the restart: a running role keeps its slot through it.
	bound := role.SlotWait()
	role.StartNow()
	if bound != "" {
		reply(w, RestartReply{Role: role.ID(), Result: "waiting for a slot", Reason: "no slot is free for it (" + bound + "): it starts when one frees"})
		return
	}
	reply(w, RestartReply{Role: role.ID(), Result: "restarting"})
}

func (s *Server) stopAll(w http.ResponseWriter, r *http.Request) {
	reply(w, StopReply{Result: "stopping"})
	go s.stop()
}

func (s *Server) retryTask(w http.ResponseWriter, r *http.Request) {
	t, err := s.team.Queue().Retry(r.PathValue("id"))
	if err != nil {
		fail(w, taskErrorCode(err), err)
		return
	}
	reply(w, TaskReply{TaskID: t.ID, Role: t.Role, Status: t.Status})
}

func (s *Server) cancelTask(w http.ResponseWriter, r *http.Request) {
	var req CancelRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&req); err != nil && !errors.Is(err, io.EOF) {
		fail(w, http.StatusBadRequest, fmt.Errorf("cancel: %w", err))
		return
	}
	t, err := s.team.Queue().Cancel(r.PathValue("id"), req.Reason)
	if err != nil {
		fail(w, taskErrorCode(err), err)
		return
	}
	reply(w, TaskReply{TaskID: t.ID, Role: t.Role, Status: t.Status})
}

// taskErrorCode is the status of a refused retry or cancel.
func taskErrorCode(err error) int {
	switch {
	case errors.Is(err, store.ErrUnknownTask):
		return http.StatusNotFound
	case errors.Is(err, queue.ErrBadReason):
		return http.StatusBadRequest
	case errors.Is(err, store.ErrTaskClosed), errors.Is(err, store.ErrNotRetryable):
		return http.StatusConflict
	}
	return http.StatusInternalServerError
}

func fail(w http.ResponseWriter, code int, err error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(ErrorReply{Error: err.Error()})
}

func reply(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
