//go:build !windows

package console_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/console/consoletest"
	"github.com/shogun-dev/shogun/shoguntest"
	"github.com/shogun-dev/shogun/workspace"
)

// noRedirect is a client that shows redirects instead of following them.
var noRedirect = &http.Client{
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	Timeout:       30 * time.Second,
}

type call struct {
	method, path string
	host         string            // Host header; "" for the console's own
	header       map[string]string // extra headers
	cookie       bool              // send the session cookie
}

func do(t *testing.T, ws *consoletest.Workspace, cookie *http.Cookie, c call) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(c.method, ws.Base+c.path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.host != "" {
		req.Host = c.host
	}
	for k, v := range c.header {
		req.Header.Set(k, v)
	}
	if c.cookie {
		req.AddCookie(cookie)
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// login opens a login link, as a browser does, and returns the session's
// cookie and CSRF value.
func login(t *testing.T, ws *consoletest.Workspace) (*http.Cookie, string) {
	t.Helper()
	return loginWith(t, ws, ws.LoginLink(t))
}

func loginWith(t *testing.T, ws *consoletest.Workspace, link string) (*http.Cookie, string) {
	t.Helper()
	resp, body := do(t, ws, nil, call{method: "GET", path: strings.TrimPrefix(link, ws.Base)})
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `content="0;url=/"`) {
		t.Fatalf("login: %d, %s; want 200 and a page that goes on to /", resp.StatusCode, body)
	}
	var cookie *http.Cookie
	for _, c := range resp.Cookies() {
		cookie = c
	}
	if cookie == nil || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode || cookie.Value == ws.Token {
		t.Fatalf("login cookie %+v: want HttpOnly, SameSite=Strict, and not the token itself", cookie)
	}
	resp, body = do(t, ws, cookie, call{method: "GET", path: "/v1/console/session", cookie: true})
	var s struct{ CSRF string }
	if resp.StatusCode != 200 || json.Unmarshal([]byte(body), &s) != nil || s.CSRF == "" {
		t.Fatalf("session: %d %s", resp.StatusCode, body)
	}
	return cookie, s.CSRF
}

func TestConsoleRefusesWhatItMust(t *testing.T) {
	ws := consoletest.Start(t, bin, consoletest.SimRole("ashigaru1"))
	ws.WaitState(t, "ashigaru1", "ready")
	cookie, csrf := login(t, ws)
	pid := ws.Status(t).Roles[0].Pid
	port := fmt.Sprint(ws.Port)
	restart := "/v1/roles/ashigaru1/restart"
	cases := []struct {
		name string
		call call
		want int
	}{
		{"no token", call{method: "GET", path: "/"}, 401},
		{"no token on the API", call{method: "GET", path: "/v1/status"}, 401},
		{"the token in the URL", call{method: "GET", path: "/?token=" + ws.Token}, 401},
		{"the token as a login code", call{method: "GET", path: "/login?code=" + ws.Token}, 401},
		{"the token at /login", call{method: "GET", path: "/login?token=" + ws.Token}, 401},
		{"bad login code", call{method: "GET", path: "/login?code=" + strings.Repeat("0", 64)}, 401},
		{"bad bearer", call{method: "GET", path: "/v1/status", header: map[string]string{"Authorization": "Bearer " + strings.Repeat("a", 64)}}, 401},
		{"the token as the cookie", call{method: "GET", path: "/v1/status", header: map[string]string{"Cookie": cookie.Name + "=" + ws.Token}}, 401},
		{"foreign Host (DNS rebinding)", call{method: "GET", path: "/v1/status", host: "evil.example:" + port, cookie: true}, 403},
		{"foreign Host with a login link", call{method: "GET", path: strings.TrimPrefix(ws.LoginLink(t), ws.Base), host: "evil.example:" + port}, 403},
		{"Host on another port", call{method: "GET", path: "/v1/status", host: "127.0.0.1:1", cookie: true}, 403},
		{"foreign Origin", call{method: "POST", path: restart, cookie: true, header: map[string]string{"Origin": "http://evil.example", "X-Shogun-CSRF": csrf}}, 403},
		{"Origin of another local server", call{method: "POST", path: restart, cookie: true, header: map[string]string{"Origin": "http://localhost:3000", "X-Shogun-CSRF": csrf}}, 403},
		{"Origin null", call{method: "POST", path: restart, cookie: true, header: map[string]string{"Origin": "null", "X-Shogun-CSRF": csrf}}, 403},
		{"cross-site fetch", call{method: "GET", path: "/v1/status", cookie: true, header: map[string]string{"Sec-Fetch-Site": "cross-site"}}, 403},
		{"same-site fetch from another port", call{method: "GET", path: "/v1/status", cookie: true, header: map[string]string{"Sec-Fetch-Site": "same-site"}}, 403},
		{"missing CSRF header", call{method: "POST", path: restart, cookie: true}, 403},
		{"wrong CSRF header", call{method: "POST", path: restart, cookie: true, header: map[string]string{"X-Shogun-CSRF": "x" + csrf[1:]}}, 403},
		{"GET on a POST route", call{method: "GET", path: "/v1/stop", cookie: true}, 405},
		{"GET on the type route", call{method: "GET", path: "/v1/roles/ashigaru1/type", cookie: true}, 405},
		{"CORS preflight", call{method: "OPTIONS", path: restart, cookie: true, header: map[string]string{"Origin": "http://localhost:" + port, "Access-Control-Request-Method": "POST"}}, 405},
		{"PATCH", call{method: "PATCH", path: restart, cookie: true, header: map[string]string{"X-Shogun-CSRF": csrf}}, 405},
		{"POST to a page", call{method: "POST", path: "/", cookie: true, header: map[string]string{"X-Shogun-CSRF": csrf}}, 405},
		{"terminal stream without the CSRF value", call{method: "GET", path: "/v1/roles/ashigaru1/terminal", cookie: true,
			header: map[string]string{"Origin": "http://127.0.0.1:" + port, "Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="}}, 403},
		{"terminal stream without an Origin", call{method: "GET", path: "/v1/roles/ashigaru1/terminal?csrf=" + csrf, cookie: true,
			header: map[string]string{"Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="}}, 403},
	}
	for _, c := range cases {
		resp, body := do(t, ws, cookie, c.call)
		if resp.StatusCode != c.want {
			t.Errorf("%s: %s %s → %d %s; want %d", c.name, c.call.method, c.call.path, resp.StatusCode, strings.TrimSpace(body), c.want)
		}
		if v := resp.Header.Get("Access-Control-Allow-Origin"); v != "" {
			t.Errorf("%s: Access-Control-Allow-Origin %q; the console grants no CORS", c.name, v)
		}
		if c.want != 405 && !strings.Contains(body, "refused") && !strings.Contains(body, "log") && !strings.Contains(body, "token") {
			t.Errorf("%s: the refusal does not say why: %s", c.name, body)
		}
	}
	// Nothing refused changed anything: the role was never restarted and
	// the supervisor still runs.
	time.Sleep(300 * time.Millisecond)
	if r := ws.Status(t).Roles[0]; r.Pid != pid || r.State != "ready" {
		t.Errorf("after the refusals the role is %s with pid %d, want ready with pid %d", r.State, r.Pid, pid)
	}

	// What is allowed works: the browser's own requests, with the address
	// the person opened, and a script with the token as a bearer.
	allowed := []call{
		{method: "GET", path: "/", cookie: true},
		{method: "GET", path: "/app.js", cookie: true, host: "localhost:" + port},
		{method: "GET", path: "/v1/status", cookie: true, header: map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": "http://127.0.0.1:" + port}},
		{method: "GET", path: "/v1/status", header: map[string]string{"Authorization": "Bearer " + ws.Token}},
		{method: "POST", path: restart, cookie: true, header: map[string]string{"X-Shogun-CSRF": csrf, "Origin": "http://127.0.0.1:" + port}},
	}
	for _, c := range allowed {
		if resp, body := do(t, ws, cookie, c); resp.StatusCode != 200 {
			t.Errorf("%s %s (host %q): %d %s; want 200", c.method, c.path, c.host, resp.StatusCode, body)
		}
	}
	shoguntest.WaitFor(t, "the restart asked for with the CSRF header", 30*time.Second, func() bool {
		p := ws.Status(t).Roles[0].Pid
		return p != 0 && p != pid
	})

	fi, err := os.Stat(filepath.Join(ws.Dir, "runtime", "state", "ui.token"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("runtime/state/ui.token: %v, mode %v; want owner-only (0600)", err, fi.Mode().Perm())
	}
	out, errOut, code := run(t, ws.Bin, "ui", "--no-open", "-w", ws.Dir)
	if link := strings.TrimSpace(out); code != 0 || !strings.HasPrefix(link, "http://127.0.0.1:"+port+"/login?code=") || strings.Contains(link, ws.Token) {
		t.Errorf("shogun ui --no-open: exit %d, %q %q; want a login link without the token", code, out, errOut)
	}
	if b, _ := os.ReadFile(workspace.New(ws.Dir).SupervisorLog()); strings.Contains(string(b), ws.Token) {
		t.Errorf("the supervisor's log holds the login token; agents can read the log")
	}
	if strings.Contains(ws.Out.String(), ws.Token) || strings.Contains(ws.Out.String(), "code=") {
		t.Errorf("shogun start printed a login:\n%s", ws.Out.String())
	}
}

func run(t *testing.T, bin string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errOut.String(), code
}

// A console that cannot start costs the console only: the supervisor runs,
// and says in one line which setting to change.
func TestConsoleThatCannotStartLeavesTheSupervisorRunning(t *testing.T) {
	// A port in use is no reason: the console takes a free one
	// (cmd/shogun TestUIFindsTheConsoleAndSaysWhenNoBrowserOpened).
	cases := []struct {
		name, host string
		port       int
		want       string
	}{
		{"remote host without allow_remote", "0.0.0.0", consoletest.FreePort(t), "needs ui.allow_remote: true"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if _, e, code := run(t, bin, "init", dir); code != 0 {
				t.Fatal(e)
			}
			if err := os.WriteFile(filepath.Join(dir, "config", "roles.yaml"), []byte("roles:\n"+consoletest.SimRole("ashigaru1")), 0o644); err != nil {
				t.Fatal(err)
			}
			consoletest.SetUI(t, dir, c.host, c.port)
			cmd := exec.Command(bin, "start", "-w", dir)
			out := &consoletest.Buffer{}
			cmd.Stdout, cmd.Stderr = out, out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() {
				_, _, _ = run(t, bin, "stop", "-w", dir)
				_ = cmd.Wait()
			}()
			shoguntest.WaitFor(t, "the console's error", 60*time.Second, func() bool { return strings.Contains(out.String(), c.want) })
			shoguntest.WaitFor(t, "the supervisor's status", 60*time.Second, func() bool {
				s, _, code := run(t, bin, "status", "-w", dir)
				return code == 0 && strings.Contains(s, "ashigaru1")
			})
			var lines int
			for _, l := range strings.Split(out.String(), "\n") {
				if strings.Contains(l, c.want) {
					lines++
				}
			}
			if lines != 1 || strings.Contains(out.String(), "web console: http") {
				t.Errorf("want the error on one line and no console address:\n%s", out.String())
			}
			if _, e, code := run(t, bin, "ui", "--no-open", "-w", dir); code == 0 {
				t.Errorf("shogun ui without a console: exit 0, %s", e)
			}
		})
	}
}
