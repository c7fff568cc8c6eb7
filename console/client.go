package console

import (
	"encoding/json"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/shogun-dev/shogun/atomicfile"
	"github.com/shogun-dev/shogun/config"
	"github.com/shogun-dev/shogun/workspace"
)

// What `shogun ui` asks of a running console, with the login token as a
// bearer: the token goes in a request header over the console's own
// connection, never on a command line or in a URL.

// Probe asks the console at ui whether it runs and takes token, as `shogun
// ui` does before it asks for a login link.
func Probe(ui config.UISettings, token string) error {
	return call(ui, token, http.MethodGet, "/v1/console/session", nil)
}

// NewLoginLink asks the console at ui for a login link: an address that
// logs a browser in once, within a minute.
func NewLoginLink(ui config.UISettings, token string) (LoginLinkReply, error) {
	var r LoginLinkReply
	err := call(ui, token, http.MethodPost, "/v1/console/login-link", &r)
	return r, err
}

// RotateToken asks the console at ui to replace its login token, which
// ends every session; the new token is in runtime/state/ui.token.
func RotateToken(ui config.UISettings, token string) error {
	return call(ui, token, http.MethodPost, "/v1/console/rotate-token", nil)
}

func call(ui config.UISettings, token, method, path string, out any) error {
	u := "http://" + net.JoinHostPort(ui.Host, strconv.Itoa(ui.Port)) + path
	req, err := http.NewRequest(method, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	cl := &http.Client{Timeout: 5 * time.Second}
	resp, err := cl.Do(req)
	if err != nil {
		return fmt.Errorf("the web console does not answer at %s (ui.host, ui.port); the supervisor's log says why: %w", u, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answers %s: it is not this workspace's web console (ui.port is taken by something else?)", u, resp.Status)
	}
	if out == nil {
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("%s %s: %w", method, u, err)
	}
	return nil
}

// WriteLoginPage writes a page that sends a browser to link into
// runtime/state/ui-login.html, readable by its owner only, and returns
// the page's file:// URL: what `shogun ui` hands the browser, as Jupyter
// does. Other users of the machine see that URL on the browser's command
// line but cannot read the file; the link in it works once, within a
// minute. Each call replaces the page.
func WriteLoginPage(ws, link string) (string, error) {
	path := workspace.New(ws).UILoginPage()
	l := html.EscapeString(link)
	page := `<!doctype html>
<meta charset="utf-8">
<meta name="referrer" content="no-referrer">
<meta http-equiv="refresh" content="0;url=` + l + `">
<title>shogun console</title>
<p>Opening the <a href="` + l + `">shogun web console</a>. This link logs in once, within a minute of <code>shogun ui</code>.</p>
`
	if err := atomicfile.Write(path, []byte(page), 0o600); err != nil {
		return "", fmt.Errorf("write the console's login page: %w", err)
	}
	return fileURL(path)
}

// fileURL is the file:// URL of path, every byte that is not plain in a
// path escaped (a Windows command line splits at "&").
func fileURL(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("file://")
	p := filepath.ToSlash(abs)
	if !strings.HasPrefix(p, "/") {
		b.WriteByte('/') // C:/… on Windows
	}
	for _, seg := range strings.SplitAfter(p, "/") {
		name, slash := strings.CutSuffix(seg, "/")
		b.WriteString(strings.ReplaceAll(url.PathEscape(name), "&", "%26"))
		if slash {
			b.WriteByte('/')
		}
	}
	return b.String(), nil
}
