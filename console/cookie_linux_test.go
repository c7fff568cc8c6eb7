//go:build linux

package console_test

import (
	"net/http"
	"strconv"
	"testing"

	"github.com/shogun-dev/shogun/console/consoletest"
)

// A browser stays logged in when the supervisor starts again on another
// port (ui.port unset picks a new one each start): the session cookie is
// named by the workspace, which browsers send to every port of the host,
// not by the port, which changed.
func TestASessionLastsWhenTheConsolesPortChanges(t *testing.T) {
	ws := consoletest.Start(t, bin, consoletest.SimRole("ashigaru1"))
	cookie, _ := login(t, ws)
	ws.Stop(t)
	ws.Port = consoletest.FreePort(t)
	consoletest.SetUI(t, ws.Dir, "127.0.0.1", ws.Port)
	ws.Base = "http://127.0.0.1:" + strconv.Itoa(ws.Port)
	startAgain(t, ws)
	if resp, body := do(t, ws, cookie, call{method: "GET", path: "/v1/status", cookie: true}); resp.StatusCode != http.StatusOK {
		t.Errorf("the session's cookie (%s) at the console's new port: %d %s; want 200", cookie.Name, resp.StatusCode, body)
	}
}
