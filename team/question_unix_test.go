//go:build !windows

package team

import (
	"strings"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/notify"
	"github.com/shogun-dev/shogun/shoguntest"
)

// A permission prompt on a role's screen is announced as a question a
// person can answer from anywhere, naming what it asks and how to answer.
func TestScreenPermissionIsAQuestion(t *testing.T) {
	srv := notifySink(t)
	roles := `roles:
  - id: asker
    prompt_path: roles/ashigaru.md
    command: {exec: "${SHOGUN_EXE}", args: ["agent-sim", "--dialog", "permission"]}
    cli: generic
    ready_pattern: "› "
    attention_pattern: "Do you want to proceed"
`
	runTeam(t, roles, "notify:\n  webhook: "+srv.URL+"/topic\nkeep_awake: false\n", nil)
	shoguntest.WaitFor(t, "the question notification", 20*time.Second, func() bool {
		return len(srv.events()) > 0
	})
	e := srv.events()[0]
	if e.Kind != notify.KindQuestion || e.Role != "asker" || !strings.Contains(e.Message, "Do you want to proceed? rm -rf build/") ||
		!strings.Contains(e.Message, "shogun answer asker yes|always|no") {
		t.Errorf("notification = %+v", e)
	}
}
