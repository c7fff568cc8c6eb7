package console

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/config"
)

func TestGuardNamesTheConsoleOnly(t *testing.T) {
	local := newGuard(t.TempDir(), strings.Repeat("a", 64), config.UISettings{Host: "localhost", Port: 5173}, true)
	remote := newGuard(t.TempDir(), strings.Repeat("a", 64), config.UISettings{Host: "0.0.0.0", Port: 5173, AllowRemote: true}, false)
	named := newGuard(t.TempDir(), strings.Repeat("a", 64), config.UISettings{Host: "box.lan", Port: 5173, AllowRemote: true}, false)
	hosts := []struct {
		g    *guard
		host string
		ok   bool
	}{
		{local, "localhost:5173", true},
		{local, "LocalHost:5173", true},
		{local, "127.0.0.1:5173", true},
		{local, "[::1]:5173", true},
		{local, "localhost", false},                 // no port: not what a browser sends for :5173
		{local, "localhost:80", false},              // another server's address
		{local, "evil.example:5173", false},         // DNS rebinding
		{local, "127.0.0.1.nip.io:5173", false},     // a name that resolves to loopback is still a foreign name
		{local, "192.168.1.5:5173", false},          // not this console's address
		{remote, "192.168.1.5:5173", true},          // listening on every address: any IP of the machine
		{remote, "evil.example:5173", false},        // but never a foreign name
		{named, "box.lan:5173", true},               // the configured name
		{named, "evil.example:5173", false},         //
		{named, "10.0.0.9:5173", false},             // an IP the configuration does not name
		{named, "box.lan.evil.example:5173", false}, //
	}
	for _, c := range hosts {
		if got := c.g.hostOK(c.host); got != c.ok {
			t.Errorf("hostOK(%q) = %v, want %v", c.host, got, c.ok)
		}
	}
	origins := []struct {
		origin string
		ok     bool
	}{
		{"http://localhost:5173", true},
		{"http://127.0.0.1:5173", true},
		{"https://localhost:5173", false},
		{"http://localhost:3000", false},
		{"http://localhost:5173/path", false},
		{"http://user@localhost:5173", false},
		{"null", false},
		{"", false},
	}
	for _, c := range origins {
		if got := local.originOK(c.origin); got != c.ok {
			t.Errorf("originOK(%q) = %v, want %v", c.origin, got, c.ok)
		}
	}
}

func TestIsLoopback(t *testing.T) {
	for host, want := range map[string]bool{
		"localhost": true, "LOCALHOST": true, "127.0.0.1": true, "127.1.2.3": true, "::1": true, "[::1]": true,
		"0.0.0.0": false, "::": false, "192.168.1.5": false, "10.0.0.1": false,
	} {
		got, err := isLoopback(host)
		if err != nil || got != want {
			t.Errorf("isLoopback(%q) = %v, %v; want %v", host, got, err, want)
		}
	}
}

func TestTokenFileIsOwnerOnlyAndKept(t *testing.T) {
	ws := t.TempDir()
	tok, err := loadToken(ws)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(ws, "runtime", "state", "ui.token")
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if ownerOnly(fi) == false {
		t.Errorf("ui.token mode %v, want owner-only", fi.Mode().Perm())
	}
	again, err := loadToken(ws)
	if err != nil || again != tok {
		t.Errorf("a second start made token %q (%v), want the same %q: open tabs keep working across restarts", again, err, tok)
	}
	if read, err := ReadToken(ws); err != nil || read != tok {
		t.Errorf("ReadToken = %q, %v", read, err)
	}
	// A token others could have read is replaced.
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); ownerOnly(fi) {
		t.Skip("this system does not keep group and other permissions")
	}
	fresh, err := loadToken(ws)
	if err != nil || fresh == tok || !validToken(fresh) {
		t.Errorf("after chmod 0644 the token is %q (%v); want a new one", fresh, err)
	}
	if fi, _ := os.Stat(path); !ownerOnly(fi) {
		t.Errorf("the new ui.token has mode %v", fi.Mode().Perm())
	}
	// A broken file is replaced too, and ReadToken says what is wrong.
	if err := os.WriteFile(path, []byte("not a token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadToken(ws); err == nil {
		t.Error("ReadToken accepted a file without a token")
	}
}

// loginAt opens a login link's path on g at the given time and returns the
// session cookie it set, or nil, and the answer's status.
func loginAt(g *guard, path string) (*http.Cookie, int) {
	rec := httptest.NewRecorder()
	g.wrap(http.NotFoundHandler()).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://localhost:5173"+path, nil))
	for _, c := range rec.Result().Cookies() {
		return c, rec.Code
	}
	return nil, rec.Code
}

// statusWith asks g for a page with a cookie or a bearer token.
func statusWith(g *guard, cookie *http.Cookie, bearer string) int {
	req := httptest.NewRequest(http.MethodGet, "http://localhost:5173/v1/status", nil)
	if cookie != nil {
		req.AddCookie(cookie)
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	rec := httptest.NewRecorder()
	g.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})).ServeHTTP(rec, req)
	return rec.Code
}

func TestLoginLinkWorksOnceWithinAMinute(t *testing.T) {
	tok := strings.Repeat("a", 64)
	g := newGuard(t.TempDir(), tok, config.UISettings{Host: "localhost", Port: 5173}, true)
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	g.now = func() time.Time { return now }

	code, exp := g.loginCode()
	if exp.Sub(now) != time.Minute || len(code) != 64 || code == tok {
		t.Fatalf("login code %q until %v; want a fresh code for a minute", code, exp)
	}
	cookie, status := loginAt(g, "/login?code="+code)
	if status != http.StatusOK || cookie == nil {
		t.Fatalf("a fresh login link: %d, cookie %v", status, cookie)
	}
	if cookie.Value == tok || strings.Contains(cookie.Value, tok) || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode {
		t.Errorf("session cookie %+v: want HttpOnly, SameSite=Strict, random", cookie)
	}
	if again, status := loginAt(g, "/login?code="+code); status != http.StatusUnauthorized || again != nil {
		t.Errorf("the same link a second time: %d, cookie %v; want 401", status, again)
	}
	if got := statusWith(g, cookie, ""); got != http.StatusOK {
		t.Errorf("the session's cookie: %d", got)
	}
	// A second login is a second session, with a cookie of its own.
	code2, _ := g.loginCode()
	cookie2, _ := loginAt(g, "/login?code="+code2)
	if cookie2 == nil || cookie2.Value == cookie.Value {
		t.Errorf("two logins share the cookie %v", cookie2)
	}

	late, _ := g.loginCode()
	now = now.Add(time.Minute + time.Second)
	if c, status := loginAt(g, "/login?code="+late); status != http.StatusUnauthorized || c != nil {
		t.Errorf("a link a minute old: %d, cookie %v; want 401", status, c)
	}
	for _, path := range []string{"/login?code=", "/login?code=" + tok, "/login?token=" + tok, "/?token=" + tok} {
		if c, status := loginAt(g, path); status != http.StatusUnauthorized || c != nil {
			t.Errorf("GET %s: %d, cookie %v; want 401", path, status, c)
		}
	}
	// Codes and sessions are bounded.
	for range 3 * maxLoginCodes {
		g.loginCode()
	}
	if len(g.codes) > maxLoginCodes {
		t.Errorf("%d login codes kept, want at most %d", len(g.codes), maxLoginCodes)
	}
	for range 2 * maxSessions {
		g.newSession()
	}
	if len(g.sessions) > maxSessions {
		t.Errorf("%d sessions kept, want at most %d", len(g.sessions), maxSessions)
	}
}

func TestRotateEndsSessionsAndTheOldToken(t *testing.T) {
	old, fresh := strings.Repeat("a", 64), strings.Repeat("b", 64)
	g := newGuard(t.TempDir(), old, config.UISettings{Host: "localhost", Port: 5173}, true)
	code, _ := g.loginCode()
	cookie, _ := loginAt(g, "/login?code="+code)
	unused, _ := g.loginCode()
	ended := g.sessionsEnd()
	g.rotate(fresh)
	if ended.Err() == nil {
		t.Error("the sessions' context lives on after the rotation")
	}
	if got := statusWith(g, cookie, ""); got != http.StatusUnauthorized {
		t.Errorf("an old session's cookie: %d, want 401", got)
	}
	if got := statusWith(g, nil, old); got != http.StatusUnauthorized {
		t.Errorf("the old token: %d, want 401", got)
	}
	if c, status := loginAt(g, "/login?code="+unused); status != http.StatusUnauthorized || c != nil {
		t.Errorf("a login link made before the rotation: %d", status)
	}
	if got := statusWith(g, nil, fresh); got != http.StatusOK {
		t.Errorf("the new token: %d, want 200", got)
	}
}
