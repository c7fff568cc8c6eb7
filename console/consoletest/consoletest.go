// Package consoletest drives the web console in a real browser for tests:
// it starts a real `shogun start` on a workspace of simulated agents, opens
// headless Chromium (Debian's /usr/bin/chromium) through chromedp, logs in
// with a login link and hands the test a chromedp context. Tests of
// every console page use it; it is imported by tests only, in the manner of
// net/http/httptest.
//
//	var bin string
//	func TestMain(m *testing.M) { shoguntest.Main(m, &bin) }
//
//	func TestTeamPage(t *testing.T) {
//		ws := consoletest.Start(t, bin, consoletest.SimRole("ashigaru1"))
//		ctx := ws.Browser(t)
//		if err := chromedp.Run(ctx, ws.Navigate("#/team"), chromedp.WaitVisible(`.role`)); err != nil { … }
//	}
package consoletest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"

	"github.com/shogun-dev/shogun/control"
	"github.com/shogun-dev/shogun/workspace"
)

// ChromiumPath is where Debian's chromium package puts the browser;
// SHOGUN_CHROMIUM overrides it.
const ChromiumPath = "/usr/bin/chromium"

// Chromium returns the browser's path, or skips the test when it is not
// installed.
func Chromium(t testing.TB) string {
	t.Helper()
	p := ChromiumPath
	if env := os.Getenv("SHOGUN_CHROMIUM"); env != "" {
		p = env
	}
	if _, err := os.Stat(p); err != nil {
		t.Skipf("browser tests need Chromium at %s (apt-get install chromium, or set SHOGUN_CHROMIUM): %v", p, err)
	}
	return p
}

// SimRole is a roles.yaml entry (under roles:) for a simulated agent with
// the given agent-sim arguments, as the CLI's own tests write them.
func SimRole(id string, args ...string) string {
	q := []string{`"agent-sim"`}
	for _, a := range args {
		q = append(q, strconv.Quote(a))
	}
	return fmt.Sprintf(`  - id: %s
    prompt_path: roles/ashigaru.md
    command: {exec: "${SHOGUN_EXE}", args: [%s]}
    cli: generic
    ready_pattern: "› "
    busy_pattern: "esc to interrupt"
    submit_delay: 80ms
    stop: {keys: "/exit\r", timeout: 5s}
`, id, strings.Join(q, ", "))
}

// Workspace is a running `shogun start` with its console.
type Workspace struct {
	// Dir is the workspace folder.
	Dir string
	// Bin is the shogun binary.
	Bin string
	// Base is the console's address without the token
	// (http://127.0.0.1:PORT).
	Base string
	// Address is the address `shogun start` printed (no login in it).
	Address string
	// Token is the login token, read from runtime/state/ui.token as
	// `shogun ui` reads it.
	Token string
	// Port is the console's port.
	Port int
	// Out holds what `shogun start` wrote on stdout and stderr.
	Out *Buffer

	cmd    *exec.Cmd
	exited chan struct{} // closed when the supervisor has exited
}

// Start makes a workspace with `shogun init`, writes the roles.yaml entries
// (see SimRole), puts the console on a free port of 127.0.0.1, runs
// `shogun start` and waits until it has printed the console's address. The
// supervisor is stopped when the test ends.
func Start(t testing.TB, bin string, roles ...string) *Workspace {
	t.Helper()
	return StartWithAgent(t, bin, "", roles...)
}

// StartWithAgent is Start with agent lines added under agent: in
// config/settings.yaml first ("  max_running: 1\n"), for the settings that
// are read only at start.
func StartWithAgent(t testing.TB, bin, agent string, roles ...string) *Workspace {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command(bin, "init", dir).CombinedOutput(); err != nil {
		t.Fatalf("shogun init: %v\n%s", err, out)
	}
	if agent != "" {
		path := filepath.Join(dir, "config", "settings.yaml")
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		s := strings.Replace(string(b), "\nagent:\n", "\nagent:\n"+agent, 1)
		if s == string(b) {
			t.Fatalf("%s has no agent: section to add %q to", path, agent)
		}
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "config", "roles.yaml"), []byte("roles:\n"+strings.Join(roles, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	port := FreePort(t)
	SetUI(t, dir, "127.0.0.1", port)
	ws := &Workspace{Dir: dir, Bin: bin, Port: port, Base: fmt.Sprintf("http://127.0.0.1:%d", port), Out: &Buffer{}}
	ws.cmd = exec.Command(bin, "start", "-w", dir)
	ws.cmd.Stdout, ws.cmd.Stderr = ws.Out, ws.Out
	if err := ws.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ws.exited = make(chan struct{})
	go func() { _ = ws.cmd.Wait(); close(ws.exited) }()
	t.Cleanup(func() { ws.Stop(t) })
	re := regexp.MustCompile(`web console: (http://\S+)`)
	deadline := time.Now().Add(60 * time.Second)
	for {
		if m := re.FindStringSubmatch(ws.Out.String()); m != nil {
			ws.Address = m[1]
			break
		}
		select {
		case <-ws.exited:
			t.Fatalf("shogun start exited before it printed the console's address:\n%s", ws.Out.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("shogun start did not print the console's address within 60 s:\n%s", ws.Out.String())
		}
	}
	ws.ReadToken(t)
	return ws
}

// ReadToken reads the login token from runtime/state/ui.token into Token
// (again after a rotation) and returns it.
func (ws *Workspace) ReadToken(t testing.TB) string {
	t.Helper()
	b, err := os.ReadFile(workspace.New(ws.Dir).UIToken())
	if err != nil {
		t.Fatal(err)
	}
	ws.Token = strings.TrimSpace(string(b))
	return ws.Token
}

// LoginLink asks the console for a login link, as `shogun ui` does: an
// address that logs a browser in once, within a minute.
func (ws *Workspace) LoginLink(t testing.TB) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, ws.Base+"/v1/console/login-link", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+ws.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var link struct{ URL string }
	if err := json.NewDecoder(resp.Body).Decode(&link); err != nil || resp.StatusCode != http.StatusOK || link.URL == "" {
		t.Fatalf("POST /v1/console/login-link: %s, %v", resp.Status, err)
	}
	return link.URL
}

// FreePort returns a TCP port of 127.0.0.1 that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// SetUI points the workspace's console (ui.host, ui.port in
// config/settings.yaml) at host:port.
func SetUI(t testing.TB, dir, host string, port int) {
	t.Helper()
	path := filepath.Join(dir, "config", "settings.yaml")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := regexp.MustCompile(`(?m)^  port: \d+$`).ReplaceAllString(string(b), fmt.Sprintf("  port: %d", port))
	s = regexp.MustCompile(`(?m)^  host: .*$`).ReplaceAllString(s, fmt.Sprintf("  host: %q", host))
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Pid is the supervisor's process id.
func (ws *Workspace) Pid() int { return ws.cmd.Process.Pid }

// Stop stops the supervisor (shogun stop, then a kill if it hangs) and
// waits for it.
func (ws *Workspace) Stop(t testing.TB) {
	if ws.cmd == nil {
		return
	}
	select {
	case <-ws.exited:
		return
	default:
	}
	_ = exec.Command(ws.Bin, "stop", "-w", ws.Dir).Run()
	select {
	case <-ws.exited:
	case <-time.After(30 * time.Second):
		_ = ws.cmd.Process.Kill()
		<-ws.exited
		t.Errorf("shogun start did not stop within 30 s:\n%s", ws.Out.String())
	}
}

// Status asks the running supervisor for its status over the console's
// API, with the token as a bearer.
func (ws *Workspace) Status(t testing.TB) control.StatusReply {
	t.Helper()
	var st control.StatusReply
	b, code := ws.Get(t, "/v1/status")
	if code != http.StatusOK {
		t.Fatalf("GET /v1/status: %d %s", code, b)
	}
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	return st
}

// Get fetches path from the console with the token as a bearer.
func (ws *Workspace) Get(t testing.TB, path string) ([]byte, int) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, ws.Base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+ws.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return b, resp.StatusCode
}

// WaitState polls the status until the role is in state.
func (ws *Workspace) WaitState(t testing.TB, role, state string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	last := ""
	for {
		for _, r := range ws.Status(t).Roles {
			if r.ID == role {
				last = r.State
			}
		}
		if last == state {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("role %s is %q after 60 s, want %q", role, last, state)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Browser starts headless Chromium with a fresh profile, logs in with a
// login link (LoginLink), and returns the browser's context, which
// ends with the test. Width and height are the window's.
func (ws *Workspace) Browser(t testing.TB) context.Context {
	t.Helper()
	return ws.BrowserSized(t, 1280, 900)
}

// BrowserSized is Browser with a window of the given size.
func (ws *Workspace) BrowserSized(t testing.TB, width, height int) context.Context {
	t.Helper()
	ctx := NewBrowser(t, width, height)
	if err := chromedp.Run(ctx, chromedp.Navigate(ws.LoginLink(t)), chromedp.WaitReady("#page")); err != nil {
		t.Fatalf("open the console at its login address: %v", err)
	}
	return ctx
}

// NewBrowser starts headless Chromium with a fresh profile and returns its
// context, not logged in anywhere.
func NewBrowser(t testing.TB, width, height int) context.Context {
	t.Helper()
	path := Chromium(t)
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(width, height),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf))
	// A generous bound that only catches a hang; every wait polls.
	ctx, cancelTimeout := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(func() {
		cancelTimeout()
		cancel()
		cancelAlloc()
	})
	if err := chromedp.Run(ctx); err != nil {
		t.Fatalf("start %s: %v", path, err)
	}
	return ctx
}

// Navigate goes to a route of the console (a hash such as "#/team") in a
// browser logged in by Browser. It changes the page's hash, as a click on a
// link does: chromedp.Navigate waits for a page load that a change of hash
// alone may never bring.
func (ws *Workspace) Navigate(route string) chromedp.Action {
	return Route(route)
}

// Route sets the hash of the console's page (see Workspace.Navigate).
func Route(route string) chromedp.Action {
	return chromedp.Evaluate(fmt.Sprintf("location.hash = %q", route), nil)
}

// Buffer collects a process's output for several goroutines.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String is everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// TypeInto types text into the element sel (a terminal's input textarea) as
// a person does: each stretch of text arrives as one input event, and each
// "\r" is an Enter key pressed a moment later, so an agent that tells a
// paste from typing takes it as a submit. (chromedp.SendKeys sends each
// character as both a key and a character event, which xterm.js reads
// twice.)
func TypeInto(sel, text string) chromedp.Action {
	return chromedp.ActionFunc(func(ctx context.Context) error {
		if err := chromedp.Focus(sel, chromedp.ByQuery).Do(ctx); err != nil {
			return err
		}
		for i, part := range strings.Split(text, "\r") {
			if i > 0 {
				time.Sleep(300 * time.Millisecond)
				for _, typ := range []input.KeyType{input.KeyRawDown, input.KeyUp} {
					if err := input.DispatchKeyEvent(typ).WithKey("Enter").WithCode("Enter").WithWindowsVirtualKeyCode(13).Do(ctx); err != nil {
						return err
					}
				}
			}
			if part != "" {
				if err := input.InsertText(part).Do(ctx); err != nil {
					return err
				}
			}
		}
		return nil
	})
}
