// Package console is the web console that `shogun start` serves at
// http://{ui.host}:{ui.port}/: the pages embedded from assets/ (plain JS
// modules, xterm.js for the terminals) and the same /v1 API the control
// socket serves (control.NewHandler), behind the console's own guard
// (auth.go): a login token exchanged for a cookie, Host and Origin checked
// against the configured address, and a CSRF header on every request that
// changes something; connections are bounded in time and number
// (limit.go). The terminal stream of a role (terminal.go) and the
// team page's screen previews (previews.go) are the console's own
// endpoints.
package console

import (
	"context"
	"errors"
	"fmt"
	stdlog "log"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/shogun-dev/shogun/config"
	"github.com/shogun-dev/shogun/control"
	"github.com/shogun-dev/shogun/workspace"
)

// Options configure a console.
type Options struct {
	// Workspace is the workspace folder; the token lives in its
	// runtime/state.
	Workspace string
	// UI is the ui: section of settings.yaml.
	UI config.UISettings
	// Team is the running team whose API the console serves.
	Team control.Team
	// Stop is called for POST /v1/stop.
	Stop func()
	// Log receives the console's warnings.
	Log zerolog.Logger
	// RotateToken replaces the login token at start (`shogun start
	// --rotate-token`).
	RotateToken bool
}

// Console is a listening web console.
type Console struct {
	opts  Options
	guard *guard
	conns *connLimit
	ln    net.Listener
	srv   *http.Server

	streams streamSlots // open terminal streams
	taken   int         // the configured ui.port, when another program had it
}

// ErrPortInUse is returned by Listen when ui.port is taken and no other
// port is free.
var ErrPortInUse = errors.New("port in use")

// Listen checks the ui: settings, loads or creates the login token (a new
// one with opts.RotateToken) and binds ui.host:ui.port, or a free port on
// ui.host when that one is taken (TakenPort, UI); a host that is not loopback is
// refused unless ui.allow_remote is true, and logged as a warning when it
// is.
func Listen(opts Options) (*Console, error) {
	ui := opts.UI
	loop, err := isLoopback(ui.Host)
	if err != nil {
		return nil, fmt.Errorf("console: ui.host %q: %w", ui.Host, err)
	}
	if !loop && !ui.AllowRemote {
		return nil, fmt.Errorf("console: ui.host %q is not a loopback address; the console types into agents that run code, so serving it to other machines needs ui.allow_remote: true in config/settings.yaml", ui.Host)
	}
	addr := net.JoinHostPort(ui.Host, strconv.Itoa(ui.Port))
	ln, err := net.Listen("tcp", addr)
	taken := 0
	if err != nil && (errors.Is(err, syscall.EADDRINUSE) || isAddrInUse(err)) {
		// Another team's console, or another program (5173 is also
		// Vite's): take a free port rather than run without a console.
		// start prints it and records it (State) for shogun ui.
		taken = ui.Port
		ln, err = net.Listen("tcp", net.JoinHostPort(ui.Host, "0"))
		if err != nil {
			return nil, fmt.Errorf("console: ui.port %d on %s is already in use, and no free port was found (%v): %w", taken, ui.Host, err, ErrPortInUse)
		}
		ui.Port = ln.Addr().(*net.TCPAddr).Port
		opts.UI = ui
	}
	if err != nil {
		return nil, fmt.Errorf("console: listen on %s (ui.host, ui.port): %w", addr, err)
	}
	load := loadToken
	if opts.RotateToken {
		load = newToken
	}
	token, err := load(opts.Workspace)
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("console: %w", err)
	}
	if !loop {
		opts.Log.Warn().Str("address", addr).Msg("the web console listens beyond this machine (ui.allow_remote: true): anyone who can reach it and holds the token can type into the agents")
	}
	c := &Console{opts: opts, ln: ln, guard: newGuard(opts.Workspace, token, ui, loop), conns: newConnLimit(maxConns), taken: taken}
	c.guard.conns = c.conns
	c.guard.store = workspace.New(opts.Workspace).UISessions()
	c.guard.loadSessions()
	c.guard.saveSessions() // a new token's sessions: none
	// No ReadTimeout or WriteTimeout: the event and terminal streams stay
	// open for as long as the tab. A body has its own deadline (limitBody).
	c.srv = &http.Server{
		Handler:           c.routes(),
		ReadHeaderTimeout: headerTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ConnState:         c.conns.track,
		// Who is at the other end, as the OS tells (RefuseAgents).
		ConnContext: func(ctx context.Context, conn net.Conn) context.Context {
			return control.ConsoleConnContext(opts.Team, connContext(ctx, conn), conn)
		},
		ErrorLog: stdlog.New(debugWriter{opts.Log}, "", 0),
	}
	return c, nil
}

// isAddrInUse recognises "address already in use" where the error is not
// a syscall.Errno (Windows reports WSAEADDRINUSE).
func isAddrInUse(err error) bool {
	s := err.Error()
	return strings.Contains(s, "address already in use") || strings.Contains(s, "Only one usage of each socket address")
}

// Address is the console's address, without any login: what `shogun
// start` prints.
func (c *Console) Address() string { return Address(c.opts.UI) }

// UI is the ui settings the console serves on: the configured ones, with
// the port it took when the configured one was in use.
func (c *Console) UI() config.UISettings { return c.opts.UI }

// TakenPort is the configured ui.port when another program had it and the
// console took a free one instead (UI().Port); 0 when it listens where
// configured.
func (c *Console) TakenPort() int { return c.taken }

// Addr is the address the console listens on.
func (c *Console) Addr() net.Addr { return c.ln.Addr() }

// Address is the address of a console on ui.
func Address(ui config.UISettings) string {
	return "http://" + net.JoinHostPort(ui.Host, strconv.Itoa(ui.Port)) + "/"
}

// Serve answers requests until ctx ends.
func (c *Console) Serve(ctx context.Context) error {
	done := make(chan error, 1)
	go func() { done <- c.srv.Serve(c.ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = c.srv.Shutdown(shut)
	_ = c.srv.Close() // streams end here
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func (c *Console) routes() http.Handler {
	mux := http.NewServeMux()
	api := control.NewHandler(c.opts.Team, c.opts.Stop, c.opts.Log)
	mux.Handle("/v1/", api)
	// The event streams, also over a WebSocket (eventsOverWebSocket).
	mux.Handle("GET /v1/events/stream", eventsOverWebSocket(api))
	mux.Handle("GET /v1/roles/{id}/log", eventsOverWebSocket(api))
	mux.Handle("GET /v1/console/previews", eventsOverWebSocket(http.HandlerFunc(c.previews)))
	mux.HandleFunc("GET /v1/console/session", c.session)
	mux.HandleFunc("POST /v1/console/login-link", c.loginLink)
	mux.HandleFunc("POST /v1/console/rotate-token", c.rotateToken)
	mux.HandleFunc("GET /v1/roles/{id}/terminal", c.terminal)
	mux.Handle("/", assetHandler())
	// A connection from inside a role's process tree is refused whatever
	// token or cookie it carries: the console is a person's.
	c.guard.agents = func(h http.Handler) http.Handler { return control.RefuseAgents(c.opts.Team, c.opts.Log, h) }
	return c.guard.wrap(mux)
}

// SessionReply is GET /v1/console/session: what the page needs to know
// about itself.
type SessionReply struct {
	// CSRF is the value of the X-Shogun-CSRF header that requests with
	// the session's cookie must carry to change something; empty for a
	// request with the token as a bearer, which needs none.
	CSRF      string `json:"csrf"`
	Workspace string `json:"workspace"`
	RunID     string `json:"run_id"`
}

func (c *Console) session(w http.ResponseWriter, r *http.Request) {
	csrf, _ := r.Context().Value(csrfKey{}).(string)
	reply(w, SessionReply{CSRF: csrf, Workspace: c.opts.Workspace, RunID: c.opts.Team.RunID()})
}

// LoginLinkReply is POST /v1/console/login-link: an address that logs a
// browser in once, until Expires.
type LoginLinkReply struct {
	URL     string    `json:"url"`
	Expires time.Time `json:"expires"`
}

func (c *Console) loginLink(w http.ResponseWriter, r *http.Request) {
	code, exp := c.guard.loginCode()
	u := url.URL{Scheme: "http", Host: net.JoinHostPort(c.opts.UI.Host, strconv.Itoa(c.opts.UI.Port)), Path: "/login", RawQuery: "code=" + code}
	reply(w, LoginLinkReply{URL: u.String(), Expires: exp})
}

// rotateToken is POST /v1/console/rotate-token: a new login token in
// runtime/state/ui.token, and every session, login link and stream
// ended. The new token is not in the answer; its owner reads the file.
func (c *Console) rotateToken(w http.ResponseWriter, r *http.Request) {
	tok, err := newToken(c.opts.Workspace)
	if err != nil {
		refuse(w, r, http.StatusInternalServerError, err.Error())
		return
	}
	c.guard.rotate(tok)
	c.opts.Log.Info().Msg("the web console's login token was replaced; every session ended")
	reply(w, struct{}{})
}

// debugWriter logs the HTTP server's own messages at debug level.
type debugWriter struct{ log zerolog.Logger }

func (w debugWriter) Write(p []byte) (int, error) {
	w.log.Debug().Str("source", "web console").Msg(strings.TrimSpace(string(p)))
	return len(p), nil
}
