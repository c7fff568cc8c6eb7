//go:build realcli && linux

package main

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/control"
	"github.com/shogun-dev/shogun/store"
)

// TestUsageEqualsWhatTheModelServed: a Claude Code, a Codex, a Gemini CLI
// and a Copilot CLI role each do a task; `shogun usage` then shows, token
// for token, what the scripted model answered each of them in its
// conversation (Copilot CLI's from the OpenTelemetry file shogun has it
// write), and the task carries its own tokens. The side requests the CLIs do not write
// down (Claude Code's title request, Codex's JSON side requests, Gemini
// CLI's routing classifier) are not counted, and the test logs how many
// tokens those were.
func TestUsageEqualsWhatTheModelServed(t *testing.T) {
	clis := []string{"claude", "codex", "gemini", "copilot"}
	tm := startE2E(t, clis, nil)
	ids := map[string]string{}
	for _, role := range clis {
		body := fmt.Sprintf("Write the file, then report.\nfakemodel: write tokens-%s.txt counted\nfakemodel: report done via write %s counted\n", role, role)
		ids[role] = tm.send(role, "Count my tokens", body)
	}
	taskOf := map[string]control.Task{}
	for _, role := range clis {
		task, ok := tm.waitTask(ids[role], 3*time.Minute)
		if !ok || task.Status != store.StatusDone {
			t.Fatalf("%s: task not done within 3 min (%q); screen:\n%s", role, task.Status, screen(t, tm.env, tm.ws, role))
		}
		taskOf[role] = task
	}
	// The report comes before the CLI's last answer of the task: wait for
	// that turn to end, or stopping the CLI may cut it before it writes
	// the answer down (the model served it; the CLI recorded nothing).
	for _, role := range clis {
		if !tm.waitState(role, "ready", time.Minute) {
			t.Fatalf("%s not ready again after its task; screen:\n%s", role, screen(t, tm.env, tm.ws, role))
		}
	}
	tm.stop() // the supervisor reads the records a last time as it stops
	// Right after the last task, as here, Claude Code lost a lone /exit
	// while its between_tasks /clear started a new session.
	noRoleTerminated(t, tm.ws)

	apiOf := map[string]string{"anthropic": "claude", "responses": "codex", "gemini": "gemini", "chat": "copilot"}
	type sum struct{ in, out, calls int }
	served, side := map[string]sum{}, map[string]sum{}
	for _, r := range tm.model.Requests() {
		role, ok := apiOf[r.API]
		if !ok || r.InputTokens == 0 {
			continue
		}
		m := served
		if r.Step == "json" {
			m = side
		}
		s := m[role]
		s.in, s.out, s.calls = s.in+r.InputTokens, s.out+r.OutputTokens, s.calls+1
		m[role] = s
	}
	var rep control.UsageReply
	out := shogun(t, tm.env, "usage", "-w", tm.ws, "--by", "role", "--json")
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("usage --json: %v\n%s", err, out)
	}
	got := map[string]control.UsageRow{}
	for _, r := range rep.Rows {
		got[r.Key] = r
	}
	for _, role := range clis {
		g, w := got[role], served[role]
		t.Logf("%s: counted %d in, %d out in %d calls; the model served %d in, %d out in %d calls, and %d in, %d out in %d side requests",
			role, g.Tokens.Input, g.Tokens.Output, g.Calls, w.in, w.out, w.calls, side[role].in, side[role].out, side[role].calls)
		if g.Tokens.Input != int64(w.in) || g.Tokens.Output != int64(w.out) || g.Calls != int64(w.calls) {
			t.Errorf("%s: shogun usage counted %+v in %d calls, the model served %+v", role, g.Tokens, g.Calls, w)
			logRecords(t, filepath.Join(filepath.Dir(tm.ws), "home-"+role))
		}
		if g.Tokens.CacheRead != 0 || g.Tokens.CacheWrite != 0 {
			t.Errorf("%s: cache tokens %+v; the model served none", role, g.Tokens)
		}
	}
	for _, task := range tasks(t, tm.env, tm.ws) {
		if task.ID == taskOf[task.Role].ID && (task.Tokens == nil || task.Tokens.Input == 0 || task.Tokens.Output == 0) {
			t.Errorf("%s's task %s has no tokens: %+v", task.Role, task.ID, task.Tokens)
		}
	}
}

// logRecords logs the lines of a CLI's records under home that carry
// usage, for a failure message.
func logRecords(t *testing.T, home string) {
	_ = filepath.WalkDir(home, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".jsonl") {
			return nil
		}
		b, _ := os.ReadFile(path)
		for _, l := range strings.Split(string(b), "\n") {
			if strings.Contains(l, "usage") {
				t.Logf("%s: %.400s", path, l)
			}
		}
		return nil
	})
}
