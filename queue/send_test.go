package queue

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/config"
	"github.com/shogun-dev/shogun/workspace"
)

// SendTo writes a command for an enabled role and refuses, writing nothing,
// one the configuration cannot take, with the reason a person reads.
func TestSendToChecksTheRoles(t *testing.T) {
	ws := t.TempDir()
	if _, err := config.Scaffold(ws, config.ScaffoldOptions{}); err != nil {
		t.Fatal(err)
	}
	roles := `roles:
  - id: worker
    prompt_path: roles/ashigaru.md
    command: {exec: sh}
  - id: resting
    prompt_path: roles/ashigaru.md
    enabled: false
    command: {exec: sh}
`
	if err := os.WriteFile(filepath.Join(ws, filepath.FromSlash(workspace.RolesFile)), []byte(roles), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(ws, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		cmd  Command
		want string
	}{
		{Command{To: "nobody", Title: "t", Body: "b"}, `send: unknown role "nobody" in to`},
		{Command{To: "resting", Title: "t", Body: "b"}, `send: role "resting" in to is disabled in config/roles.yaml`},
		{Command{To: "worker", From: "ghost", Title: "t", Body: "b"}, `send: unknown role "ghost" in from`},
		{Command{To: "worker", Title: "two\nlines", Body: "b"}, "title"},
		{Command{To: "worker", Title: "t"}, "body"},
	} {
		_, _, err := SendTo(cfg, c.cmd, time.Now())
		if err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, ErrCommandRefused) {
			t.Errorf("SendTo(%+v) = %v, want a refusal saying %q", c.cmd, err, c.want)
		}
	}
	if left, _ := os.ReadDir(workspace.New(ws).Commands()); len(left) != 0 {
		t.Errorf("refused commands left files: %v", left)
	}
	id, path, err := SendTo(cfg, Command{To: "worker", From: "resting", Title: "Tidy", Body: "tidy up"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cmds, err := DecodeCommands(filepath.Base(path), data, Limits{})
	if err != nil || len(cmds) != 1 || cmds[0].ID != id || cmds[0].To != "worker" || cmds[0].From != "resting" {
		t.Errorf("sent %s = %+v, %v", path, cmds, err)
	}
	if _, _, err := SendTo(cfg, Command{ID: id, To: "worker", Title: "Again", Body: "b"}, time.Now()); !errors.Is(err, ErrCommandRefused) {
		t.Errorf("an id already written: %v, want a refusal", err)
	}
}
