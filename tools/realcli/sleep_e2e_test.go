//go:build realcli && linux

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/store"
)

// TestRealCLIsWakeWithTheirConversation: a role of each CLI with
// idle_after sleeps once idle (its program gone), and the next task wakes
// it with its preset's resume_args (Claude Code --resume, Codex resume,
// Gemini CLI --resume, each with the role's session id): the model is sent
// the conversation from before the sleep (the first task's words) along
// with the new task, and the woken CLI finishes it.
func TestRealCLIsWakeWithTheirConversation(t *testing.T) {
	for _, cli := range []string{"claude", "codex", "gemini"} {
		t.Run(cli, func(t *testing.T) { wakesWithItsConversation(t, cli) })
	}
}

func wakesWithItsConversation(t *testing.T, cli string) {
	// No between_tasks: the second task continues the first conversation.
	tm := startE2E(t, []string{cli}, func(string) string { return "    idle_after: 5s\n    between_tasks: \"\"\n" })
	const word = "PAPAYA-7731"
	first := tm.send(cli, "Remember a word", "The word is "+word+".\nfakemodel: report done via write first done\n")
	if task, ok := tm.waitTask(first, 3*time.Minute); !ok || task.Status != store.StatusDone {
		t.Fatalf("first task: %+v (closed %v); screen:\n%s", task, ok, screen(t, tm.env, tm.ws, cli))
	}
	if !tm.waitState(cli, "sleeping", time.Minute) {
		t.Fatalf("%s never went to sleep after idle_after; screen:\n%s", cli, screen(t, tm.env, tm.ws, cli))
	}
	if st, _ := status(t, tm.env, tm.ws); len(st.Roles) != 1 || st.Roles[0].Pid != 0 {
		t.Errorf("a sleeping role shows a program: %+v", st.Roles)
	}
	dumps := filepath.Join(filepath.Dir(tm.ws), "model-requests")
	second := tm.send(cli, "Carry on", "fakemodel: report done via write second done\n")
	task, ok := tm.waitTask(second, 3*time.Minute)
	if !ok || task.Status != store.StatusDone || task.Attempts != 1 {
		t.Fatalf("second task: %+v (closed %v), want done in one attempt; screen:\n%s", task, ok, screen(t, tm.env, tm.ws, cli))
	}
	all, _ := os.ReadDir(dumps)
	resumed := false
	for _, e := range all {
		b, err := os.ReadFile(filepath.Join(dumps, e.Name()))
		if err == nil && strings.Contains(string(b), word) && strings.Contains(string(b), "Carry on") {
			resumed = true
			break
		}
	}
	if !resumed {
		t.Errorf("no request to the model after the wake holds both the first task's %q and the second task: the conversation was not resumed", word)
	}
	tm.stop()
}
