//go:build realcli && linux

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/store"
)

// TestWokenRoleResumesItsOwnConversation: two roles of one CLI share a
// working folder and a CLI home, as `shogun init`'s roles do. The first
// does a task and sleeps; the second does a task after it, so the folder's
// most recent conversation is the second's; a task then wakes the first.
// The woken CLI must resume the first role's conversation, by its session
// id, and finish the task: the model's request for the new task holds the
// first role's earlier words and none of the second's (with --continue,
// resume --last or --resume latest it got the second role's conversation
// and worked on as that role).
func TestWokenRoleResumesItsOwnConversation(t *testing.T) {
	// Gemini CLI 0.61 resumes its own session by id here too, and
	// finishes the task (TestRealCLIsWakeWithTheirConversation runs it),
	// but with a second Gemini CLI writing the same chats folder its
	// `--resume ID` once in six runs answered `Invalid session identifier`
	// for the session it had just named on exit (exit 42; the role then
	// started afresh after the crash): not run here until that is
	// understood. SHOGUN_E2E_RESUME_GEMINI=1 runs it.
	clis := []string{"claude", "codex"}
	if os.Getenv("SHOGUN_E2E_RESUME_GEMINI") != "" {
		clis = append(clis, "gemini")
	}
	for _, cli := range clis {
		t.Run(cli, func(t *testing.T) { resumesItsOwn(t, cli) })
	}
}

func resumesItsOwn(t *testing.T, cli string) {
	other := cli + "-b"
	// The second role: the first's entry (same home, same folder) under
	// another id, awake throughout.
	twin := func(ws string) error {
		file := filepath.Join(ws, "config", "roles.yaml")
		b, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		entry := strings.TrimPrefix(string(b), "roles:\n")
		entry = strings.Replace(entry, "  - id: "+cli+"\n", "  - id: "+other+"\n", 1)
		entry = strings.Replace(entry, "    idle_after: 5s\n", "", 1)
		return os.WriteFile(file, append(b, entry...), 0o644)
	}
	tm := startE2ESetup(t, []string{cli}, func(string) string { return "    idle_after: 5s\n    between_tasks: \"\"\n" }, e2ePolicy, false, twin)
	if !tm.waitState(other, "ready", 2*time.Minute) {
		t.Fatalf("%s never became ready; screen:\n%s", other, screen(t, tm.env, tm.ws, other))
	}
	const mine, theirs = "PAPAYA-7731", "QUINCE-4402"
	first := tm.send(cli, "Remember a word", "The word is "+mine+".\nfakemodel: report done via write first done\n")
	if task, ok := tm.waitTask(first, 3*time.Minute); !ok || task.Status != store.StatusDone {
		t.Fatalf("first task: %+v (closed %v); screen:\n%s", task, ok, screen(t, tm.env, tm.ws, cli))
	}
	if !tm.waitState(cli, "sleeping", time.Minute) {
		t.Fatalf("%s never went to sleep after idle_after; screen:\n%s", cli, screen(t, tm.env, tm.ws, cli))
	}
	second := tm.send(other, "Another word", "The word is "+theirs+".\nfakemodel: report done via write other done\n")
	if task, ok := tm.waitTask(second, 3*time.Minute); !ok || task.Status != store.StatusDone {
		t.Fatalf("the other role's task: %+v (closed %v); screen:\n%s", task, ok, screen(t, tm.env, tm.ws, other))
	}
	third := tm.send(cli, "Carry on", "fakemodel: report done via write third done\n")
	task, ok := tm.waitTask(third, 3*time.Minute)
	if !ok || task.Status != store.StatusDone || task.Attempts != 1 {
		t.Fatalf("the task after the wake: %+v (closed %v), want done in one attempt; screen:\n%s", task, ok, screen(t, tm.env, tm.ws, cli))
	}
	dumps := filepath.Join(filepath.Dir(tm.ws), "model-requests")
	all, _ := os.ReadDir(dumps)
	seen := 0
	for _, e := range all {
		b, err := os.ReadFile(filepath.Join(dumps, e.Name()))
		if err != nil || !strings.Contains(string(b), "Carry on") {
			continue
		}
		seen++
		if strings.Contains(string(b), theirs) {
			t.Errorf("a request for the woken %s's task holds the other role's word %q: it resumed %s's conversation (%s)", cli, theirs, other, e.Name())
		}
		if !strings.Contains(string(b), mine) {
			t.Errorf("a request for the woken %s's task lacks its own earlier word %q: its conversation was not resumed (%s)", cli, mine, e.Name())
		}
	}
	if seen == 0 {
		t.Errorf("no request to the model holds the task after the wake")
	}
	tm.stop()
}

// TestWakeFollowsTheSessionAfterBetweenTasks: between_tasks (/clear)
// starts a new session in Claude Code and Codex; the role's hook tells the
// new one, and the wake resumes the latest, not the role's first.
func TestWakeFollowsTheSessionAfterBetweenTasks(t *testing.T) {
	for _, cli := range []string{"claude", "codex"} {
		t.Run(cli, func(t *testing.T) {
			tm := startE2E(t, []string{cli}, func(string) string { return "    idle_after: 5s\n" })
			for i, title := range []string{"One", "Two"} {
				id := tm.send(cli, title, "fakemodel: report done via write "+title+" done\n")
				if task, ok := tm.waitTask(id, 3*time.Minute); !ok || task.Status != store.StatusDone {
					t.Fatalf("task %d: %+v (closed %v); screen:\n%s", i+1, task, ok, screen(t, tm.env, tm.ws, cli))
				}
			}
			if !tm.waitState(cli, "sleeping", time.Minute) {
				t.Fatalf("%s never went to sleep; screen:\n%s", cli, screen(t, tm.env, tm.ws, cli))
			}
			id := tm.send(cli, "Three", "fakemodel: report done via write three done\n")
			if task, ok := tm.waitTask(id, 3*time.Minute); !ok || task.Status != store.StatusDone {
				t.Fatalf("the task after the wake: %+v (closed %v); screen:\n%s", task, ok, screen(t, tm.env, tm.ws, cli))
			}
			tm.stop()
			b, err := os.ReadFile(filepath.Join(tm.ws, "runtime", "logs", "supervisor", "shogun.log"))
			if err != nil {
				t.Fatal(err)
			}
			var told []string
			woke := ""
			for _, line := range strings.Split(string(b), "\n") {
				var e struct{ Role, Session, State, Reason, Message string }
				if json.Unmarshal([]byte(line), &e) != nil || e.Role != cli {
					continue
				}
				switch {
				case e.Message == "the CLI's conversation" && woke == "":
					told = append(told, e.Session)
				case e.State == "waking" && woke == "":
					woke = e.Reason
				}
			}
			if len(told) < 2 {
				t.Fatalf("sessions told before the wake: %q, want a new one after between_tasks", told)
			}
			// between_tasks (typed after each report) ends the conversation:
			// Claude Code tells its new one at once (SessionStart after
			// /clear), and the wake resumes that; Codex 0.169 only at the
			// new conversation's first turn, so its wake starts afresh, as
			// between_tasks asked, rather than resume task Two's.
			latest := told[len(told)-1]
			switch {
			case strings.Contains(woke, told[0]):
				t.Errorf("the wake %q resumed the first session %s, before between_tasks", woke, told[0])
			case cli == "codex" && strings.HasPrefix(woke, "waking: starting"):
			case !strings.Contains(woke, latest):
				t.Errorf("the wake %q, want it to resume the latest session %s", woke, latest)
			}
		})
	}
}
