package console

import (
	"crypto/hmac"
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
	"runtime"
	"strconv"
	"strings"

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
//     not say the request comes from another site or another port.
//   - The request must carry the session cookie (set in exchange for the
//     login token) or the token as an Authorization bearer (for scripts).
//   - Anything but GET and HEAD must be POST, PUT or DELETE, and with the
//     cookie also carry the CSRF header: a custom header that another
//     origin cannot send without a CORS preflight, which is never granted.
const (
	// CSRFHeader carries the page's CSRF value (GET /v1/console/session)
	// on requests that change something.
	CSRFHeader = "X-Shogun-CSRF"
	// tokenBytes is the login token's entropy.
	tokenBytes = 32
)

type guard struct {
	token   string
	session string // the cookie's value, derived from the token
	csrf    string // the CSRF header's value, derived from the token
	cookie  string // the cookie's name: cookies ignore ports, so it names one
	port    string
	hosts   map[string]bool // lower-case host names (no port) Host may carry
	anyIP   bool            // ui.host is unspecified: any IP literal is this machine
}

func newGuard(token string, ui config.UISettings, loopback bool) *guard {
	g := &guard{
		token:   token,
		session: derive(token, "session"),
		csrf:    derive(token, "csrf"),
		cookie:  "shogun_" + strconv.Itoa(ui.Port),
		port:    strconv.Itoa(ui.Port),
		hosts:   map[string]bool{strings.ToLower(strings.Trim(ui.Host, "[]")): true},
	}
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

func derive(token, purpose string) string {
	m := hmac.New(sha256.New, []byte(token))
	m.Write([]byte("shogun console " + purpose))
	return hex.EncodeToString(m.Sum(nil))
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

// wrap puts the checks in front of next.
func (g *guard) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer") // the login URL carries the token
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
		switch r.Header.Get("Sec-Fetch-Site") {
		case "", "same-origin", "none":
		default:
			refuse(w, r, http.StatusForbidden, "refused: a request from another site; the console answers its own pages only")
			return
		}
		if r.URL.Path == "/login" || (r.URL.Path == "/" && r.URL.Query().Has("token")) {
			g.login(w, r)
			return
		}
		byCookie := false
		if c, err := r.Cookie(g.cookie); err == nil && equal(c.Value, g.session) {
			byCookie = true
		} else if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); !ok || !equal(strings.TrimSpace(tok), g.token) {
			refuse(w, r, http.StatusUnauthorized, "not logged in: open the address `shogun ui` prints (it carries the login token)")
			return
		}
		switch r.Method {
		case http.MethodGet, http.MethodHead:
			if byCookie && isUpgrade(r) {
				// A WebSocket is opened by script and carries the cookie
				// but cannot carry headers: the CSRF value comes in the
				// query, and the Origin must have been sent.
				if r.Header.Get("Origin") == "" || !equal(r.URL.Query().Get("csrf"), g.csrf) {
					refuse(w, r, http.StatusForbidden, "refused: a WebSocket without the page's origin and CSRF value")
					return
				}
			}
		case http.MethodPost, http.MethodPut, http.MethodDelete:
			if byCookie && !equal(r.Header.Get(CSRFHeader), g.csrf) {
				refuse(w, r, http.StatusForbidden, "refused: a change without the "+CSRFHeader+" header (reload the page)")
				return
			}
		default:
			h.Set("Allow", "GET, HEAD, POST, PUT, DELETE")
			refuse(w, r, http.StatusMethodNotAllowed, "method "+r.Method+" is not allowed")
			return
		}
		next.ServeHTTP(w, r)
	})
}

func isUpgrade(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
}

// login exchanges the URL's token for the session cookie and sends the
// browser on without the token in its address bar or history.
func (g *guard) login(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		refuse(w, r, http.StatusMethodNotAllowed, "log in with GET /login?token=…")
		return
	}
	if !equal(r.URL.Query().Get("token"), g.token) {
		refuse(w, r, http.StatusUnauthorized, "wrong or old login token: open the address `shogun ui` prints")
		return
	}
	http.SetCookie(w, &http.Cookie{Name: g.cookie, Value: g.session, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// refuse answers a refused request: JSON for the API, a line of text for a page.
func refuse(w http.ResponseWriter, r *http.Request, code int, msg string) {
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
	var b [tokenBytes]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("make a login token: %w", err)
	}
	tok := hex.EncodeToString(b[:])
	if err := os.MkdirAll(workspace.New(ws).State(), 0o700); err != nil {
		return "", fmt.Errorf("save the login token: %w", err)
	}
	if err := atomicfile.Write(path, []byte(tok+"\n"), 0o600); err != nil {
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
