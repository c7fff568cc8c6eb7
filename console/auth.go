package console

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/shogun-dev/shogun/atomicfile"
	"github.com/shogun-dev/shogun/config"
	"github.com/shogun-dev/shogun/workspace"
)

// The console is a local server that can type into agents that run code,
// and the agents themselves run as the same user, often with dev servers of
// their own on localhost. So every request is checked, in this order:
//
//   - Host must name the console (DNS rebinding: a foreign name that
//     resolves to 127.0.0.1 is refused).
//   - Origin, when sent, must be the console's own, and Sec-Fetch-Site must
//     not say the request comes from another site or another port (but for
//     a login link, opened from a file: its code is the credential).
//   - The request must carry a session cookie or the login token as an
//     Authorization bearer (for scripts and `shogun ui`).
//   - Anything but GET and HEAD must be POST, PUT or DELETE, and with the
//     cookie also carry the session's CSRF header: a custom header that
//     another origin cannot send without a CORS preflight, which is never
//     granted.
//
// The login token (runtime/state/ui.token) never travels in a URL: other
// users of the machine read every process's command line, so a browser
// started with an address is an address they know. A browser logs in with
// a login link instead (GET /login?code=…), whose code works once and for
// loginCodeTTL; `shogun ui` asks for one with the token and hands the
// browser a file that only its owner can read (see WriteLoginPage). A
// session is a random cookie, not derived from the token, that lasts
// sessionTTL and survives a restart of the supervisor (ui.sessions keeps
// a hash of it); rotating the token ends every session and every stream
// they hold.
const (
	// CSRFHeader carries the session's CSRF value (GET /v1/console/session)
	// on requests that change something.
	CSRFHeader = "X-Shogun-CSRF"
	// tokenBytes is the entropy of the login token, of a login code and of
	// a session.
	tokenBytes = 32
	// loginCodeTTL is how long a login link works; it works once.
	loginCodeTTL = time.Minute
	// sessionTTL is how long a browser stays logged in.
	sessionTTL = 7 * 24 * time.Hour
	// maxLoginCodes and maxSessions bound what a holder of the token can
	// make the console keep; the oldest goes first.
	maxLoginCodes = 16
	maxSessions   = 64
)

// errLoggedOut ends the requests and streams of the sessions a rotation
// of the token ended.
var errLoggedOut = errors.New("the console's login token was replaced; log in again")

type guard struct {
	cookie string // the cookie's name, one per workspace (cookieName)
	port   string
	hosts  map[string]bool // lower-case host names (no port) Host may carry
	anyIP  bool            // ui.host is unspecified: any IP literal is this machine
	conns  *connLimit      // told which connections carry authenticated requests; nil in tests
	now    func() time.Time
	store  string // the file that keeps the sessions across restarts; "" in tests
	// agents refuses a request from inside a role's process tree
	// (control.RefuseAgents); nil lets every request through. It runs
	// after the token is checked, so a flood without one costs no
	// look-up of the connection's process, and before a login link is
	// taken, so an agent cannot spend the person's.
	agents func(http.Handler) http.Handler

	mu       sync.Mutex
	token    string
	sessions map[string]session   // by sessionKey of the cookie's value
	codes    map[string]time.Time // login codes not yet used, and when each expires
	// ended is cancelled when the sessions end (rotate); every
	// authenticated request's context ends with it.
	ended   context.Context
	endFunc context.CancelFunc
}

// session is a logged-in browser, as ui.sessions keeps it.
type session struct {
	CSRF    string    `json:"csrf"`
	Created time.Time `json:"created"`
}

// sessionKey is what the console keeps of a session's cookie: its hash.
func sessionKey(cookie string) string {
	h := sha256.Sum256([]byte(cookie))
	return hex.EncodeToString(h[:])
}

// cookieName is the name of the session cookie of the console of the
// workspace ws: one per workspace, since browsers send a host's cookies to
// every port of it (two workspaces' consoles on one machine must not
// overwrite each other's sessions), and the same at each start whatever
// port the console gets, so that a session lasts across restarts as the
// sessions file keeps it.
func cookieName(ws string) string {
	if abs, err := filepath.Abs(ws); err == nil {
		ws = abs
	}
	h := sha256.Sum256([]byte(filepath.Clean(ws)))
	return "shogun_" + hex.EncodeToString(h[:6])
}

func newGuard(ws, token string, ui config.UISettings, loopback bool) *guard {
	g := &guard{
		token:    token,
		sessions: map[string]session{},
		codes:    map[string]time.Time{},
		now:      time.Now,
		cookie:   cookieName(ws),
		port:     strconv.Itoa(ui.Port),
		hosts:    map[string]bool{strings.ToLower(strings.Trim(ui.Host, "[]")): true},
	}
	g.ended, g.endFunc = context.WithCancel(context.Background())
	if loopback {
		for _, h := range []string{"localhost", "127.0.0.1", "::1"} {
			g.hosts[h] = true
		}
	}
	if ip := net.ParseIP(strings.Trim(ui.Host, "[]")); ip != nil && ip.IsUnspecified() {
		g.anyIP = true
		if name, err := os.Hostname(); err == nil {
			g.hosts[strings.ToLower(name)] = true
		}
		for _, h := range []string{"localhost", "127.0.0.1", "::1"} {
			g.hosts[h] = true
		}
	}
	return g
}

// randomHex is n random bytes in hex.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}

func equal(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

// hostOK reports whether a Host header (or an Origin's host) names the console.
func (g *guard) hostOK(hostport string) bool {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil || port != g.port {
		return false
	}
	host = strings.ToLower(host)
	if g.hosts[host] {
		return true
	}
	return g.anyIP && net.ParseIP(host) != nil
}

func (g *guard) originOK(origin string) bool {
	rest, ok := strings.CutPrefix(origin, "http://")
	return ok && !strings.ContainsAny(rest, "/?#@") && g.hostOK(rest)
}

// bearerOK reports whether an Authorization header carries the login token.
func (g *guard) bearerOK(auth string) bool {
	tok, ok := strings.CutPrefix(auth, "Bearer ")
	if !ok {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return equal(strings.TrimSpace(tok), g.token)
}

// session finds the session of a cookie's value.
func (g *guard) session(cookie string) (session, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	s, ok := g.sessions[sessionKey(cookie)]
	if ok && g.now().Sub(s.Created) >= sessionTTL {
		return session{}, false
	}
	return s, ok
}

// loginCode makes a login code that works once, until the time returned.
func (g *guard) loginCode() (string, time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.now()
	for c, exp := range g.codes {
		if !now.Before(exp) {
			delete(g.codes, c)
		}
	}
	for len(g.codes) >= maxLoginCodes {
		var oldest string
		for c, exp := range g.codes {
			if oldest == "" || exp.Before(g.codes[oldest]) {
				oldest = c
			}
		}
		delete(g.codes, oldest)
	}
	code, exp := randomHex(tokenBytes), now.Add(loginCodeTTL)
	g.codes[code] = exp
	return code, exp
}

// useCode reports whether code is a login code not used before and not
// expired, and uses it up.
func (g *guard) useCode(code string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	for c, exp := range g.codes {
		if equal(c, code) {
			delete(g.codes, c)
			return g.now().Before(exp)
		}
	}
	return false
}

// newSession starts a session and returns its cookie's value.
func (g *guard) newSession() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	for k, s := range g.sessions {
		if g.now().Sub(s.Created) >= sessionTTL {
			delete(g.sessions, k)
		}
	}
	for len(g.sessions) >= maxSessions {
		var oldest string
		for k, s := range g.sessions {
			if oldest == "" || s.Created.Before(g.sessions[oldest].Created) {
				oldest = k
			}
		}
		delete(g.sessions, oldest)
	}
	cookie := randomHex(tokenBytes)
	g.sessions[sessionKey(cookie)] = session{CSRF: randomHex(tokenBytes), Created: g.now()}
	g.saveSessions()
	return cookie
}

// sessionsFile is ui.sessions: the sessions, and the token they belong to
// (its hash); a new token, however it came, ends them.
type sessionsFile struct {
	Token    string             `json:"token"`
	Sessions map[string]session `json:"sessions"`
}

// saveSessions writes the sessions to g.store, owner-only. A session not
// saved lasts until the supervisor stops; the failure is not the
// browser's to see.
func (g *guard) saveSessions() {
	if g.store == "" {
		return
	}
	b, _ := json.Marshal(sessionsFile{Token: sessionKey(g.token), Sessions: g.sessions})
	_ = atomicfile.Write(g.store, b, 0o600)
}

// loadSessions takes the sessions an earlier run saved in g.store, if
// they belong to the same token. A file that others could read is not
// believed.
func (g *guard) loadSessions() {
	fi, err := os.Stat(g.store)
	if err != nil || !ownerOnly(fi) {
		return
	}
	b, err := os.ReadFile(g.store)
	var f sessionsFile
	if err != nil || json.Unmarshal(b, &f) != nil || !equal(f.Token, sessionKey(g.token)) || f.Sessions == nil {
		return
	}
	g.sessions = f.Sessions
}

// rotate replaces the token and ends every session, login code and
// authenticated request.
func (g *guard) rotate(token string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.token = token
	g.sessions = map[string]session{}
	g.saveSessions()
	g.codes = map[string]time.Time{}
	g.endFunc()
	g.ended, g.endFunc = context.WithCancel(context.Background())
}

// sessionsEnd is the context that ends when the current sessions do.
func (g *guard) sessionsEnd() context.Context {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.ended
}

type csrfKey struct{}

// agentsRefused is h behind g.agents.
func (g *guard) agentsRefused(h http.Handler) http.Handler {
	if g.agents == nil {
		return h
	}
	return g.agents(h)
}

// wrap puts the checks in front of next.
func (g *guard) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer") // a login link carries a code
		h.Set("X-Frame-Options", "DENY")
		h.Set("Cache-Control", "no-store")
		h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
		if !g.hostOK(r.Host) {
			refuse(w, r, http.StatusForbidden, fmt.Sprintf("refused: Host %q is not this console's address", r.Host))
			return
		}
		if o := r.Header.Get("Origin"); o != "" && !g.originOK(o) {
			refuse(w, r, http.StatusForbidden, fmt.Sprintf("refused: a request from %q; the console answers its own pages only", o))
			return
		}
		if r.URL.Path == "/login" {
			g.agentsRefused(http.HandlerFunc(g.login)).ServeHTTP(w, r)
			return
		}
		switch r.Header.Get("Sec-Fetch-Site") {
		case "", "same-origin", "none":
		default:
			refuse(w, r, http.StatusForbidden, "refused: a request from another site; the console answers its own pages only")
			return
		}
		var sess session
		byCookie := false
		if c, err := r.Cookie(g.cookie); err == nil {
			sess, byCookie = g.session(c.Value)
		}
		if !byCookie && !g.bearerOK(r.Header.Get("Authorization")) {
			refuse(w, r, http.StatusUnauthorized, "not logged in: run `shogun ui`, which opens a login link")
			return
		}
		switch r.Method {
		case http.MethodGet, http.MethodHead:
			if byCookie && isUpgrade(r) {
				// A WebSocket is opened by script and carries the cookie
				// but cannot carry headers: the CSRF value comes in the
				// query, and the Origin must have been sent.
				if r.Header.Get("Origin") == "" || !equal(r.URL.Query().Get("csrf"), sess.CSRF) {
					refuse(w, r, http.StatusForbidden, "refused: a WebSocket without the page's origin and CSRF value")
					return
				}
			}
		case http.MethodPost, http.MethodPut, http.MethodDelete:
			if byCookie && !equal(r.Header.Get(CSRFHeader), sess.CSRF) {
				refuse(w, r, http.StatusForbidden, "refused: a change without the "+CSRFHeader+" header (reload the page)")
				return
			}
		default:
			h.Set("Allow", "GET, HEAD, POST, PUT, DELETE")
			refuse(w, r, http.StatusMethodNotAllowed, "method "+r.Method+" is not allowed")
			return
		}
		if g.conns != nil {
			g.conns.trust(r)
		}
		limitBody(w, r)
		// The request, and a stream it opens, ends with its session.
		ctx, cancel := context.WithCancelCause(context.WithValue(r.Context(), csrfKey{}, sess.CSRF))
		defer cancel(nil)
		stop := context.AfterFunc(g.sessionsEnd(), func() { cancel(errLoggedOut) })
		defer stop()
		g.agentsRefused(next).ServeHTTP(w, r.WithContext(ctx))
	})
}

func isUpgrade(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
}

// login exchanges a login link's code for a new session's cookie and sends
// the browser on to the console without the code in its address bar. It
// answers with a page that goes on by itself rather than a redirect: the
// link is opened from a file (WriteLoginPage), and a browser treats a
// redirect as part of that cross-site navigation, sending neither the
// SameSite=Strict cookie nor a Sec-Fetch-Site the guard takes; the page's
// own navigation is same-origin.
func (g *guard) login(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		refuse(w, r, http.StatusMethodNotAllowed, "log in with the link `shogun ui` opens")
		return
	}
	if !g.useCode(r.URL.Query().Get("code")) {
		refuse(w, r, http.StatusUnauthorized, "this login link was used already or is over a minute old: run `shogun ui` for a new one")
		return
	}
	http.SetCookie(w, &http.Cookie{Name: g.cookie, Value: g.newSession(), Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprint(w, loggedInPage)
}

const loggedInPage = `<!doctype html>
<meta charset="utf-8">
<meta http-equiv="refresh" content="0;url=/">
<title>shogun console</title>
<p>Logged in. <a href="/">Open the console</a>.</p>
`

// refuse answers a refused request: JSON for the API, a line of text for a
// page. The connection is closed after the answer, and a body the request
// announced is never read: a client without the token costs the console
// no more than its header.
func refuse(w http.ResponseWriter, r *http.Request, code int, msg string) {
	w.Header().Set("Connection", "close")
	// The server reads up to 256 KiB of an unread body once the handler
	// returns, whatever the answer said; a deadline now ends that read.
	_ = http.NewResponseController(w).SetReadDeadline(time.Now())
	if strings.HasPrefix(r.URL.Path, "/v1/") {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(code)
	fmt.Fprintln(w, "shogun console: "+msg)
}

func reply(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// loadToken reads the workspace's login token, or makes one. A token file
// that others could read, or that is not a token, is replaced: the old
// token may have been seen.
func loadToken(ws string) (string, error) {
	path := workspace.New(ws).UIToken()
	if b, err := os.ReadFile(path); err == nil {
		tok := strings.TrimSpace(string(b))
		if fi, err := os.Stat(path); err == nil && ownerOnly(fi) && validToken(tok) {
			return tok, nil
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("read the login token: %w", err)
	}
	return newToken(ws)
}

// newToken makes a login token and saves it, replacing the one before.
func newToken(ws string) (string, error) {
	tok := randomHex(tokenBytes)
	if err := os.MkdirAll(workspace.New(ws).State(), 0o700); err != nil {
		return "", fmt.Errorf("save the login token: %w", err)
	}
	if err := atomicfile.Write(workspace.New(ws).UIToken(), []byte(tok+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("save the login token: %w", err)
	}
	return tok, nil
}

// ReadToken reads the login token a running console uses.
func ReadToken(ws string) (string, error) {
	b, err := os.ReadFile(workspace.New(ws).UIToken())
	if err != nil {
		return "", fmt.Errorf("read the console's login token: %w", err)
	}
	tok := strings.TrimSpace(string(b))
	if !validToken(tok) {
		return "", errors.New("runtime/state/ui.token does not hold a login token; restart the supervisor to make one")
	}
	return tok, nil
}

func validToken(tok string) bool {
	if len(tok) != 2*tokenBytes {
		return false
	}
	_, err := hex.DecodeString(tok)
	return err == nil
}

// ownerOnly reports whether only the file's owner may read it. Windows
// keeps access in ACLs, which the state folder's inheritance sets.
func ownerOnly(fi fs.FileInfo) bool {
	return runtime.GOOS == "windows" || fi.Mode().Perm()&0o077 == 0
}

// isLoopback reports whether host names this machine only: localhost, a
// loopback address, or a name whose every address is loopback.
func isLoopback(host string) (bool, error) {
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true, nil
	}
	if ip := net.ParseIP(host); ip != nil {
		return ip.IsLoopback(), nil
	}
	ips, err := net.LookupIP(host)
	if err != nil {
		return false, fmt.Errorf("resolve: %w", err)
	}
	for _, ip := range ips {
		if !ip.IsLoopback() {
			return false, nil
		}
	}
	return len(ips) > 0, nil
}
