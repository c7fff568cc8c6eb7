package control

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/shogun-dev/shogun/ptyhost"
	"github.com/shogun-dev/shogun/store"
	"github.com/shogun-dev/shogun/supervisor"
)

// Who is asking. The OS tells the control endpoint which process each
// client is (peerPid: SO_PEERCRED, LOCAL_PEERPID, GetNamedPipeClientProcessId)
// and the console which process holds the other end of a loopback
// connection (ptyhost.LoopbackOwners); the supervisor says whether a role's
// process tree holds that process (supervisor.ProcessOwner). An agent gets
// the routes that routeRules open to agents, each for what is its own; every
// other route answers it 403 with the reason, and the refusal is an event of
// the history with the role's name.

// access is who may use a route.
type access int

const (
	// forPeople routes are a person's only: the zero value, so a route
	// missing from routeRules is refused to agents.
	forPeople access = iota
	// forAgents routes serve an agent too, for its own role.
	forAgents
	// forAnyone routes tell nothing and change nothing.
	forAnyone
)

// routeRule is who may use a route, and what it does, as a refusal says:
// "… may not <what>".
type routeRule struct {
	access access
	what   string
}

// routeRules classifies every route of the API (TestEveryRouteIsClassified
// fails for one that is missing). An agent needs its own task and report
// (files, and GET /v1/tasks/{id} for its own), to send a task (send_task),
// the team's status (team_status), its hook's approval requests and its own session (session.go); it
// never answers a question, changes roles, settings or the policy, types
// into or stops a role, or reads what a person reads.
var routeRules = map[string]routeRule{
	"GET /v1/ping":                       {forAnyone, "check the connection"},
	"GET /v1/status":                     {forAgents, "read the team's status"},
	"POST /v1/approvals":                 {forAgents, "ask for an approval"},
	"GET /v1/approvals/{id}":             {forAgents, "wait for an approval's answer"},
	"POST /v1/roles/{id}/session":        {forAgents, "tell its conversation's session"},
	"POST /v1/send":                      {forAgents, "send a task"},
	"GET /v1/tasks/{id}":                 {forAgents, "read a task"},
	"GET /v1/tasks/{id}/log":             {forAgents, "read a task's log"},
	"POST /v1/attention/dismiss":         {forPeople, "dismiss the attention list"},
	"GET /v1/roles/{id}/screen":          {forPeople, "read a role's screen"},
	"POST /v1/roles/{id}/type":           {forPeople, "type into a role"},
	"POST /v1/roles/{id}/restart":        {forPeople, "restart a role"},
	"GET /v1/roles/{id}/attach":          {forPeople, "attach to a role's terminal"},
	"POST /v1/stop":                      {forPeople, "stop the supervisor"},
	"POST /v1/tasks/{id}/retry":          {forPeople, "retry a task"},
	"POST /v1/tasks/{id}/cancel":         {forPeople, "cancel a task"},
	"GET /v1/roles":                      {forPeople, "read the roles' configuration"},
	"GET /v1/config":                     {forPeople, "read the configuration files"},
	"POST /v1/reload":                    {forPeople, "reload the configuration"},
	"POST /v1/config/roles":              {forPeople, "add a role"},
	"PUT /v1/config/roles/{id}":          {forPeople, "change a role"},
	"DELETE /v1/config/roles/{id}":       {forPeople, "remove a role"},
	"POST /v1/config/roles/{id}/enable":  {forPeople, "enable a role"},
	"POST /v1/config/roles/{id}/disable": {forPeople, "disable a role"},
	"POST /v1/roles/{id}/start":          {forPeople, "start a role"},
	"POST /v1/roles/{id}/stop":           {forPeople, "stop a role"},
	"GET /v1/events/stream":              {forPeople, "read the event stream"},
	"GET /v1/tasks":                      {forPeople, "read the task history"},
	"GET /v1/runs":                       {forPeople, "read the runs"},
	"GET /v1/roles/{id}/log":             {forPeople, "read a role's log"},
	"GET /v1/skills":                     {forPeople, "read the skills"},
	"POST /v1/skills/{name}/approve":     {forPeople, "approve a skill"},
	"POST /v1/skills/{name}/reject":      {forPeople, "reject a skill"},
	"PUT /v1/skills/{name}":              {forPeople, "edit a skill"},
	"POST /v1/skills/{name}/export":      {forPeople, "export a skill"},
	"GET /v1/approvals":                  {forPeople, "read the approvals record"},
	"POST /v1/approvals/{id}/answer":     {forPeople, "answer a question"},
	"POST /v1/roles/{id}/answer":         {forPeople, "answer a question"},
	"GET /v1/questions":                  {forPeople, "read the open questions"},
	"GET /v1/usage":                      {forPeople, "read the tokens and their cost"},
	"GET /v1/accounts":                   {forPeople, "read the accounts"},
}

// router registers the API's routes, each behind its rule (Server.guard),
// and remembers them for TestEveryRouteIsClassified.
type router struct {
	mux      *http.ServeMux
	s        *Server
	patterns []string
}

// HandleFunc registers h for pattern behind the pattern's rule.
func (rt *router) HandleFunc(pattern string, h http.HandlerFunc) {
	rt.patterns = append(rt.patterns, pattern)
	rt.mux.HandleFunc(pattern, rt.s.guard(pattern, h))
}

// askerKey is the context key of a request's asker.
type askerKey struct{}

// askerInfo is who is at the other end of a connection: the asker, or why
// that could not be told.
type askerInfo struct {
	supervisor.Asker
	err error
}

// askerOf is who sent r; ok is false for a request that came with no
// connection of the control endpoint or the console (the console's handler
// in tests), which is a person's.
func askerOf(r *http.Request) (askerInfo, bool) {
	cell, ok := r.Context().Value(askerKey{}).(*askerCell)
	if !ok {
		return askerInfo{}, false
	}
	cell.once.Do(func() { cell.info = cell.tell() })
	return cell.info, true
}

// askerCell tells who is at the other end of a connection when its first
// request asks, on the connection's own goroutine: the look-up reads the
// process table (and for the console every process's descriptors), which
// must not hold up the accept loop, nor be spent on a connection that
// never sends a request.
type askerCell struct {
	once sync.Once
	tell func() askerInfo
	info askerInfo
}

// withAsker returns ctx with a cell that tells the asker with tell.
func withAsker(ctx context.Context, tell func() askerInfo) context.Context {
	return context.WithValue(ctx, askerKey{}, &askerCell{tell: tell})
}

// agentOf is the agent that sent r, if an agent did.
func agentOf(r *http.Request) (supervisor.Asker, bool) {
	a, ok := askerOf(r)
	return a.Asker, ok && a.err == nil && a.Agent
}

// connContext tells whose process is at the other end of a control
// endpoint connection, once, when it is accepted.
func (s *Server) connContext(ctx context.Context, c net.Conn) context.Context {
	return withAsker(ctx, func() askerInfo {
		var info askerInfo
		pid, err := peerPid(c)
		if err == nil {
			info.Asker, err = s.team.Supervisor().ProcessOwner(pid)
		}
		info.Pid = pid
		if err != nil && !errors.Is(err, supervisor.ErrNoProcessTree) {
			info.err = err
		}
		return info
	})
}

// guard puts pattern's rule in front of h.
func (s *Server) guard(pattern string, h http.HandlerFunc) http.HandlerFunc {
	rule, ok := routeRules[pattern]
	if !ok {
		rule = routeRule{forPeople, "use " + pattern}
	}
	return func(w http.ResponseWriter, r *http.Request) {
		a, ok := askerOf(r)
		switch {
		case !ok || rule.access == forAnyone:
		case a.err != nil:
			refuse(w, s.team, s.log, a.Asker, fmt.Sprintf("%s: shogun could not tell whose process is asking (%v), and answers only a person's", rule.what, a.err))
			return
		case a.Agent && rule.access == forPeople:
			refuse(w, s.team, s.log, a.Asker, rule.what+": only a person may, from their own terminal or the web console")
			return
		}
		h(w, r)
	}
}

// refuseOthers answers 403 when an agent asks about another role's
// things: what names the act ("read role x's task") and role the role it
// concerns. It reports whether it refused.
func (s *Server) refuseOthers(w http.ResponseWriter, r *http.Request, what, role string) bool {
	a, ok := agentOf(r)
	if !ok || (a.Role != "" && a.Role == role) {
		return false
	}
	refuse(w, s.team, s.log, a, what+": an agent may do so for its own role only")
	return true
}

// refuse answers 403 to an agent, saying why, and records the refusal as
// an event of the history with the role's name and in the log.
func refuse(w http.ResponseWriter, t Team, log zerolog.Logger, a supervisor.Asker, why string) {
	msg := fmt.Sprintf("refused: %s may not %s", a, why)
	log.Warn().Str("role", a.Role).Int("pid", a.Pid).Msg(msg)
	if st := t.Store(); st != nil {
		if err := st.AddEvent(store.Event{At: time.Now(), RunID: t.RunID(), Role: a.Role, Kind: "refused", Message: msg}); err != nil {
			log.Warn().Err(err).Msg("record a refusal")
		}
	}
	fail(w, http.StatusForbidden, errors.New(msg))
}

// ConsoleConnContext returns ctx carrying whose process is at the other
// end of c, a connection to the web console's port: for a loopback
// connection, the processes holding its client end
// (ptyhost.LoopbackOwners), an agent's when any of them is inside a role's
// process tree. RefuseAgents then refuses such a connection's requests.
func ConsoleConnContext(t Team, ctx context.Context, c net.Conn) context.Context {
	remote, rok := c.RemoteAddr().(*net.TCPAddr)
	local, lok := c.LocalAddr().(*net.TCPAddr)
	if !rok || !lok || !remote.IP.IsLoopback() {
		return ctx // another machine's: the token is the only door (ui.allow_remote)
	}
	return withAsker(ctx, func() askerInfo { return loopbackAsker(t, remote.AddrPort(), local.AddrPort()) })
}

// loopbackAsker is who holds the client end of a loopback connection: an
// agent when any of its holders is.
func loopbackAsker(t Team, client, server netip.AddrPort) askerInfo {
	var info askerInfo
	pids, err := ptyhost.LoopbackOwners(client, server)
	switch {
	case errors.Is(err, ptyhost.ErrNoProcessTree):
		return info
	case err != nil:
		info.err = err
	}
	var lookupErr error
	for _, pid := range pids {
		a, err := t.Supervisor().ProcessOwner(pid)
		if err != nil && !errors.Is(err, supervisor.ErrNoProcessTree) {
			lookupErr = errors.Join(lookupErr, err)
			info.Pid = pid
			continue
		}
		if a.Agent {
			return askerInfo{Asker: a}
		}
		info.Asker = a
	}
	if lookupErr != nil {
		info.err = lookupErr
	}
	return info
}

// RefuseAgents answers 403 to every request that comes from inside a
// role's process tree (ConsoleConnContext), whatever token or cookie it
// carries, and to one whose process could not be told; others reach next.
func RefuseAgents(t Team, log zerolog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a, ok := askerOf(r)
		switch {
		case ok && a.err != nil:
			refuse(w, t, log, a.Asker, fmt.Sprintf("use the web console: shogun could not tell whose process is asking (%v), and serves only a person's", a.err))
		case ok && a.Agent:
			refuse(w, t, log, a.Asker, "use the web console: it is a person's, whatever token or cookie an agent holds")
		default:
			next.ServeHTTP(w, r)
		}
	})
}

// orPerson names the sender of a task: a role, or a person when none.
func orPerson(from string) string {
	if from == "" {
		return "a person"
	}
	return "role " + from
}
