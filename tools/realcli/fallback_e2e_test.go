//go:build realcli && linux

package main

import (
	"strings"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/control"
	"github.com/shogun-dev/shogun/store"
	"github.com/shogun-dev/shogun/tools/fakemodel"
)

// TestFallbackFinishesALimitedCodexsTasks: a Codex role with no free
// account (the scripted model answers its key, and its key only, with a
// usage limit of an hour) hands its tasks to its fallback, Claude Code: the
// one it was working on when the limit came, with a note of where it was,
// and the one queued behind it. The real Claude Code finishes both, and
// the history shows each hand-over.
func TestFallbackFinishesALimitedCodexsTasks(t *testing.T) {
	tm := startE2E(t, []string{"codex", "claude"}, func(id string) string {
		if id == "codex" {
			return "    fallback: claude\n"
		}
		return ""
	})
	limit := "fakemodel: limit 1h for " + fakemodel.CredentialKey(dummyOpenAIKey) + "\n"
	first := tm.send("codex", "Cut short by the limit", "Write the report.\n"+limit+
		"fakemodel: report done via write claude finished what codex began\n")
	second := tm.send("codex", "Queued behind it", "Write the report.\nfakemodel: report done via write claude did the queued one\n")
	want := map[string]string{first: "claude finished what codex began", second: "claude did the queued one"}
	for id, summary := range want {
		task, ok := tm.waitTask(id, 2*time.Minute)
		if !ok || task.Status != store.StatusDone || task.Role != "claude" || task.Summary != summary {
			t.Fatalf("task %s = %+v (closed %v), want done by claude: %q; codex's screen:\n%s\nclaude's screen:\n%s",
				id, task, ok, summary, screen(t, tm.env, tm.ws, "codex"), screen(t, tm.env, tm.ws, "claude"))
		}
		if h := task.HandedOver; len(h) != 1 || h[0].From != "codex" || h[0].To != "claude" ||
			!strings.HasPrefix(h[0].Reason, "codex is at its usage limit until ") {
			t.Errorf("task %s handed over %+v, want once from codex to claude at codex's limit", id, h)
		}
	}
	var interrupted control.Task
	for _, tk := range tasks(t, tm.env, tm.ws) {
		if tk.CommandID == first {
			interrupted = tk
		}
	}
	if !strings.Contains(interrupted.Body, "Handed over from codex, which had this task in flight when it reached its usage limit") ||
		!strings.Contains(interrupted.Body, "The last lines of codex's terminal:\n> ") {
		t.Errorf("the interrupted task's body does not say where codex left it:\n%s", interrupted.Body)
	}
	if st, ok := status(t, tm.env, tm.ws); !ok || stateOf(st, "codex") != "limited" {
		t.Errorf("codex is %q, want still limited", stateOf(st, "codex"))
	}
	tm.stop()
}
