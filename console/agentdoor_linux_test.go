package console_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/console/consoletest"
	"github.com/shogun-dev/shogun/shoguntest"
)

// The console's port is the same door as the control socket: a request
// from inside a role's process tree is refused whatever token or cookie it
// carries, because the console asks the OS which process holds the other
// end of the connection. The role here is an agent that runs what the test
// drops into its folder (a file named go), as an agent runs commands; the
// person, from outside the team, keeps the console.
func TestAnAgentCannotUseTheConsole(t *testing.T) {
	role := `  - id: dev
    prompt_path: roles/ashigaru.md
    command: {exec: "/bin/sh", args: ["-c", "while :; do if [ -f go ]; then sh ./go; rm -f go; fi; sleep 0.05; done"]}
    cli: generic
    stop: {timeout: 2s}
`
	ws := consoletest.Start(t, bin, role)
	cookie, csrf := login(t, ws)
	link := ws.LoginLink(t)
	out := filepath.Join(t.TempDir(), "out")
	cmd := "curl -sS -H 'Authorization: Bearer " + ws.Token + "' " + ws.Base + "/v1/status >'" + out + "' 2>&1\n" +
		"curl -sS -X POST -H 'Cookie: " + cookie.Name + "=" + cookie.Value + "' -H 'X-Shogun-CSRF: " + csrf + "' -H 'Origin: " + ws.Base + "' " +
		ws.Base + "/v1/roles/dev/restart >>'" + out + "' 2>&1\n" +
		"curl -sS '" + link + "' >>'" + out + "' 2>&1\n" +
		"echo rc=$? >>'" + out + "'\n"
	if err := os.WriteFile(filepath.Join(ws.Dir, "go.tmp"), []byte(cmd), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(ws.Dir, "go.tmp"), filepath.Join(ws.Dir, "go")); err != nil {
		t.Fatal(err)
	}
	var got string
	shoguntest.WaitFor(t, "the agent's requests to the console", 60*time.Second, func() bool {
		b, _ := os.ReadFile(out)
		got = string(b)
		return strings.Contains(got, "rc=")
	})
	for _, want := range []string{"in role dev's process tree may not use the web console: it is a person's, whatever token or cookie an agent holds"} {
		if strings.Count(got, want) != 3 {
			t.Errorf("the agent's requests with the token, with a session and with a login link got %q; want each refused with %q", got, want)
		}
	}
	if strings.Contains(got, `"roles"`) || strings.Contains(got, "restarting") {
		t.Errorf("the agent was answered: %q", got)
	}
	// The person, from outside the team, with the same token, cookie and
	// login link, which the agent could not spend.
	loginWith(t, ws, link)
	if b, code := ws.Get(t, "/v1/status"); code != http.StatusOK {
		t.Errorf("the person's GET /v1/status: %d %s", code, b)
	}
	if resp, body := do(t, ws, cookie, call{method: "POST", path: "/v1/roles/dev/restart", cookie: true,
		header: map[string]string{"X-Shogun-CSRF": csrf, "Origin": ws.Base}}); resp.StatusCode != http.StatusOK {
		t.Errorf("the person's restart: %d %s", resp.StatusCode, body)
	}
}
