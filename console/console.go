// Package console is the web console that `shogun start` serves at
// http://{ui.host}:{ui.port}/: the pages embedded from assets/ (plain JS
// modules, xterm.js for the terminals) and the same /v1 API the control
// socket serves (control.NewHandler), behind the console's own guard
// (auth.go): a login token exchanged for a cookie, Host and Origin checked
// against the configured address, and a CSRF header on every request that
// changes something. The terminal stream of a role (terminal.go) and the
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
}

// Console is a listening web console.
type Console struct {
	opts  Options
	guard *guard
	ln    net.Listener
	srv   *http.Server

	streams streamSlots // open terminal streams
}

// ErrPortInUse is returned by Listen when ui.port is taken.
var ErrPortInUse = errors.New("port in use")

// The console's HTTP limits. Unlike the control socket there is no write
// timeout: the event and terminal streams stay open for as long as the tab.
const (
	headerTimeout  = 10 * time.Second
	idleTimeout    = 60 * time.Second
	maxHeaderBytes = 64 << 10
)

// Listen checks the ui: settings, loads or creates the login token and
// binds ui.host:ui.port. A port that is taken is a one-line error naming
// the setting (wrapping ErrPortInUse); a host that is not loopback is
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
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) || isAddrInUse(err) {
			return nil, fmt.Errorf("console: ui.port %d on %s is already in use (set another ui.port in config/settings.yaml, or ui.enabled: false): %w", ui.Port, ui.Host, ErrPortInUse)
		}
		return nil, fmt.Errorf("console: listen on %s (ui.host, ui.port): %w", addr, err)
	}
	token, err := loadToken(opts.Workspace)
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("console: %w", err)
	}
	if !loop {
		opts.Log.Warn().Str("address", addr).Msg("the web console listens beyond this machine (ui.allow_remote: true): anyone who can reach it and holds the token can type into the agents")
	}
	c := &Console{opts: opts, ln: ln, guard: newGuard(token, ui, loop)}
	c.srv = &http.Server{
		Handler:           c.routes(),
		ReadHeaderTimeout: headerTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          stdlog.New(debugWriter{opts.Log}, "", 0),
	}
	return c, nil
}

// isAddrInUse recognises "address already in use" where the error is not
// a syscall.Errno (Windows reports WSAEADDRINUSE).
func isAddrInUse(err error) bool {
	s := err.Error()
	return strings.Contains(s, "address already in use") || strings.Contains(s, "Only one usage of each socket address")
}

// URL is the console's address with the login token: what `shogun start`
// and `shogun ui` print.
func (c *Console) URL() string { return LoginURL(c.opts.UI, c.guard.token) }

// Addr is the address the console listens on.
func (c *Console) Addr() net.Addr { return c.ln.Addr() }

// LoginURL is the address of a console on ui with the token: opening it
// logs the browser in.
func LoginURL(ui config.UISettings, token string) string {
	u := url.URL{Scheme: "http", Host: net.JoinHostPort(ui.Host, strconv.Itoa(ui.Port)), Path: "/", RawQuery: "token=" + url.QueryEscape(token)}
	return u.String()
}

// Probe asks the console at ui whether it runs and takes token, as `shogun
// ui` does before it prints the address.
func Probe(ui config.UISettings, token string) error {
	u := "http://" + net.JoinHostPort(ui.Host, strconv.Itoa(ui.Port)) + "/v1/console/session"
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	cl := &http.Client{Timeout: 5 * time.Second}
	resp, err := cl.Do(req)
	if err != nil {
		return fmt.Errorf("the web console does not answer at %s (ui.host, ui.port); the supervisor's log says why: %w", u, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answers %s: it is not this workspace's web console (ui.port is taken by something else?)", u, resp.Status)
	}
	return nil
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
	mux.HandleFunc("GET /v1/roles/{id}/terminal", c.terminal)
	mux.Handle("/", assetHandler())
	return c.guard.wrap(mux)
}

// SessionReply is GET /v1/console/session: what the page needs to know
// about itself.
type SessionReply struct {
	// CSRF is the value of the X-Shogun-CSRF header that requests that
	// change something must carry.
	CSRF      string `json:"csrf"`
	Workspace string `json:"workspace"`
	RunID     string `json:"run_id"`
}

func (c *Console) session(w http.ResponseWriter, r *http.Request) {
	reply(w, SessionReply{CSRF: c.guard.csrf, Workspace: c.opts.Workspace, RunID: c.opts.Team.RunID()})
}

// debugWriter logs the HTTP server's own messages at debug level.
type debugWriter struct{ log zerolog.Logger }

func (w debugWriter) Write(p []byte) (int, error) {
	w.log.Debug().Str("source", "web console").Msg(strings.TrimSpace(string(p)))
	return len(p), nil
}
