//go:build !windows

package team

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/notify"
	"github.com/shogun-dev/shogun/shoguntest"
	"github.com/shogun-dev/shogun/workspace"
)

// The queue's task events reach the webhook: a command a person sent is
// finished, and a failed report is told as failed.
func TestTaskEventsAreNotified(t *testing.T) {
	srv := notifySink(t)
	roles := `roles:
  - id: good
    prompt_path: roles/ashigaru.md
    command: {exec: "${SHOGUN_EXE}", args: ["agent-sim", "--work-time", "100ms"]}
    cli: generic
    ready_pattern: "› "
    submit_delay: 50ms
  - id: bad
    prompt_path: roles/ashigaru.md
    command: {exec: "${SHOGUN_EXE}", args: ["agent-sim", "--work-time", "100ms", "--fail"]}
    cli: generic
    ready_pattern: "› "
    submit_delay: 50ms
`
	tm := runTeam(t, roles, "notify:\n  webhook: "+srv.URL+"\nkeep_awake: false\n", nil)
	// The history is data/shogun.db in the workspace.
	dir := workspace.New(filepath.Dir(filepath.Dir(tm.Store().Path()))).Commands()
	for name, body := range map[string]string{
		"a.yaml": "to: good\ntitle: Tidy up\nbody: tidy\n",
		"b.yaml": "to: bad\ntitle: Break it\nbody: fail\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, "."+name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(filepath.Join(dir, "."+name), filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	shoguntest.WaitFor(t, "finished and failed notifications", 40*time.Second, func() bool {
		good, _ := srv.last(notify.KindFinished, "good")
		bad, _ := srv.last(notify.KindFailed, "bad")
		return good.TaskID != "" && bad.TaskID != ""
	})
	if e, _ := srv.last(notify.KindFinished, "good"); e.Title != "Tidy up" || e.Message == "" {
		t.Errorf("finished notification = %+v", e)
	}
	if _, ok := srv.last(notify.KindFinished, "bad"); ok {
		t.Error("a failed report was also told as finished")
	}
}
