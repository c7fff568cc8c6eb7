//go:build linux

package console_test

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/coder/websocket"

	"github.com/shogun-dev/shogun/console/consoletest"
	"github.com/shogun-dev/shogun/shoguntest"
)

// browserStandIn is an xdg-open for `shogun ui` to start: it writes its
// pid and arguments into dir and waits until release is called, so that
// the test reads its command line in /proc as another user of the machine
// could while a browser starts.
type browserStandIn struct {
	dir string
}

func newBrowserStandIn(t *testing.T) *browserStandIn {
	t.Helper()
	b := &browserStandIn{dir: t.TempDir()}
	script := `#!/bin/sh
d=` + b.dir + `
echo $$ > "$d/pid.tmp" && mv "$d/pid.tmp" "$d/pid"
printf '%s\n' "$@" > "$d/args"
while [ ! -e "$d/release" ]; do sleep 0.05; done
`
	if err := os.WriteFile(filepath.Join(b.dir, "xdg-open"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.release)
	return b
}

// env is the environment of a `shogun ui` that finds the stand-in first,
// with a display to show a browser on (without one shogun ui starts none).
func (b *browserStandIn) env() []string {
	return append(os.Environ(), "PATH="+b.dir+string(os.PathListSeparator)+os.Getenv("PATH"), "DISPLAY=:99")
}

func (b *browserStandIn) release() { _ = os.WriteFile(filepath.Join(b.dir, "release"), nil, 0o644) }

// cmdline waits for the stand-in to start and returns its command line as
// /proc shows it to every user: /bin/sh, the script, its arguments.
func (b *browserStandIn) cmdline(t *testing.T) []string {
	t.Helper()
	var pid []byte
	shoguntest.WaitFor(t, "the browser stand-in", 30*time.Second, func() bool {
		var err error
		pid, err = os.ReadFile(filepath.Join(b.dir, "pid"))
		return err == nil
	})
	raw, err := os.ReadFile("/proc/" + strings.TrimSpace(string(pid)) + "/cmdline")
	if err != nil {
		t.Fatalf("the browser stand-in's command line: %v", err)
	}
	return strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00")
}

// everyCommandLine is what any user reads in /proc/*/cmdline.
func everyCommandLine() []byte {
	var all []byte
	paths, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range paths {
		b, _ := os.ReadFile(p)
		all = append(append(all, b...), '\n')
	}
	return all
}

// `shogun ui` hands the browser an owner-only page, never the token or a
// login link: what another user reads on the browser's command line logs
// nobody in. The page's link logs the browser in once.
func TestUIHandsTheBrowserNoLogin(t *testing.T) {
	ws := consoletest.Start(t, bin, consoletest.SimRole("ashigaru1"))
	ws.WaitState(t, "ashigaru1", "ready")
	standIn := newBrowserStandIn(t)
	cmd := exec.Command(ws.Bin, "ui", "-w", ws.Dir)
	cmd.Env = standIn.env()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("shogun ui: %v\n%s", err, out)
	}
	args := standIn.cmdline(t)
	seen := everyCommandLine()
	printed := regexp.MustCompile(`http://\S+/login\?code=[0-9a-f]+`).FindString(string(out))
	if printed == "" {
		t.Fatalf("shogun ui printed no login link:\n%s", out)
	}
	code := printed[strings.Index(printed, "code=")+len("code="):]
	for _, secret := range []string{ws.Token, code} {
		if bytes.Contains(seen, []byte(secret)) {
			t.Errorf("a command line in /proc holds %q (the token or the login code)", secret)
		}
	}
	if len(args) != 3 || !strings.HasSuffix(args[1], "/xdg-open") || !strings.HasPrefix(args[2], "file:///") {
		t.Fatalf("the browser was started with %q; want one file:// address", args)
	}
	page, err := url.PathUnescape(strings.TrimPrefix(args[2], "file://"))
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(ws.Dir, "runtime", "state", "ui-login.html"); page != want {
		t.Errorf("the browser opens %s, want %s", page, want)
	}
	fi, err := os.Stat(page)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the login page: %v, mode %v; want owner-only (0600)", err, fi.Mode().Perm())
	}
	// What another user can do with the command line: nothing.
	for _, a := range args {
		for _, path := range []string{"/login?code=" + url.QueryEscape(a), "/?token=" + url.QueryEscape(a)} {
			if resp, body := do(t, ws, nil, call{method: "GET", path: path}); resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("GET %s: %d %s; want 401", path, resp.StatusCode, body)
			}
		}
		if resp, _ := do(t, ws, nil, call{method: "GET", path: "/v1/status", header: map[string]string{"Authorization": "Bearer " + a}}); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("the argument %q as a bearer: %d; want 401", a, resp.StatusCode)
		}
	}

	// The browser opens the page and is logged in.
	ctx := consoletest.NewBrowser(t, 1280, 900)
	var team string
	if err := chromedp.Run(ctx, chromedp.Navigate(args[2]), chromedp.WaitReady("#page"), chromedp.Location(&team)); err != nil {
		t.Fatalf("open the login page in Chromium: %v", err)
	}
	if team != ws.Base+"/" {
		t.Errorf("after the login page the browser is at %s, want %s/ (no code in the address bar)", team, ws.Base)
	}
	if err := chromedp.Run(ctx, consoletest.Route("#/team"), chromedp.WaitVisible(`.role`)); err != nil {
		t.Fatalf("the team page after logging in: %v", err)
	}
	// Its link, which shogun ui also printed, worked once.
	if resp, body := do(t, ws, nil, call{method: "GET", path: strings.TrimPrefix(printed, ws.Base)}); resp.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "used already") {
		t.Errorf("the login link a second time: %d %s; want 401", resp.StatusCode, body)
	}
}

// `shogun ui --rotate` replaces the token and ends every session: the old
// token, an old session's cookie, its open streams and an unused login
// link stop working; the new link logs in.
func TestUIRotateEndsEverySession(t *testing.T) {
	ws := consoletest.Start(t, bin, consoletest.SimRole("ashigaru1"))
	ws.WaitState(t, "ashigaru1", "ready")
	old := ws.Token
	cookie, csrf := login(t, ws)
	unused := ws.LoginLink(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	stream, _, err := websocket.Dial(ctx, strings.Replace(ws.Base, "http", "ws", 1)+"/v1/events/stream?csrf="+csrf, &websocket.DialOptions{
		HTTPHeader: http.Header{"Cookie": {cookie.Name + "=" + cookie.Value}, "Origin": {ws.Base}},
	})
	if err != nil {
		t.Fatalf("the event stream: %v", err)
	}
	defer stream.CloseNow()
	ended := make(chan error, 1)
	go func() {
		for {
			if _, _, err := stream.Read(ctx); err != nil {
				ended <- err
				return
			}
		}
	}()

	out, errOut, code := run(t, ws.Bin, "ui", "--rotate", "--no-open", "-w", ws.Dir)
	if code != 0 {
		t.Fatalf("shogun ui --rotate: exit %d: %s", code, errOut)
	}
	if ws.ReadToken(t) == old {
		t.Fatal("shogun ui --rotate left runtime/state/ui.token as it was")
	}
	select {
	case err := <-ended:
		t.Logf("the old session's event stream ended: %v", err)
	case <-time.After(10 * time.Second):
		t.Error("the old session's event stream is still open 10 s after the rotation")
	}
	refused := []call{
		{method: "GET", path: "/v1/status", cookie: true},
		{method: "POST", path: "/v1/console/login-link", cookie: true, header: map[string]string{"X-Shogun-CSRF": csrf}},
		{method: "GET", path: "/v1/status", header: map[string]string{"Authorization": "Bearer " + old}},
		{method: "GET", path: strings.TrimPrefix(unused, ws.Base)},
	}
	for _, c := range refused {
		if resp, body := do(t, ws, cookie, c); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("after the rotation %s %s (cookie %v): %d %s; want 401", c.method, c.path, c.cookie, resp.StatusCode, body)
		}
	}
	// The new link logs in, and the new token works as a bearer.
	loginWith(t, ws, strings.TrimSpace(out))
	ws.Status(t)
}

// A browser stays logged in across a restart of the supervisor; `shogun
// start --rotate-token` begins with a new token and no sessions.
func TestStartRotateTokenReplacesIt(t *testing.T) {
	ws := consoletest.Start(t, bin, consoletest.SimRole("ashigaru1"))
	old := ws.Token
	cookie, _ := login(t, ws)
	ws.Stop(t)
	stop := startAgain(t, ws)
	if ws.ReadToken(t) != old {
		t.Fatal("a restart replaced the token")
	}
	if resp, body := do(t, ws, cookie, call{method: "GET", path: "/v1/status", cookie: true}); resp.StatusCode != http.StatusOK {
		t.Errorf("a session after a restart: %d %s; want 200", resp.StatusCode, body)
	}
	stop()
	startAgain(t, ws, "--rotate-token")
	if ws.ReadToken(t) == old {
		t.Fatal("shogun start --rotate-token kept the old token")
	}
	for _, c := range []call{
		{method: "GET", path: "/v1/status", header: map[string]string{"Authorization": "Bearer " + old}},
		{method: "GET", path: "/v1/status", cookie: true},
	} {
		if resp, _ := do(t, ws, cookie, c); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("after --rotate-token, the old token or session (cookie %v): %d; want 401", c.cookie, resp.StatusCode)
		}
	}
	ws.Status(t)
}

// startAgain runs `shogun start` on ws's workspace once more, with args,
// until its console answers. The function it returns stops it and waits;
// it runs when the test ends too.
func startAgain(t *testing.T, ws *consoletest.Workspace, args ...string) func() {
	t.Helper()
	cmd := exec.Command(ws.Bin, append([]string{"start", "-w", ws.Dir}, args...)...)
	out := &consoletest.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	stop := func() {
		select {
		case <-exited:
			return
		default:
		}
		_, _, _ = run(t, ws.Bin, "stop", "-w", ws.Dir)
		<-exited
	}
	t.Cleanup(stop)
	shoguntest.WaitFor(t, "the console's address", 60*time.Second, func() bool { return strings.Contains(out.String(), "web console: ") })
	return stop
}
