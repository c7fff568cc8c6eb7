//go:build !windows

package team

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/notify"
	"github.com/shogun-dev/shogun/shoguntest"
	"github.com/shogun-dev/shogun/store"
	"github.com/shogun-dev/shogun/workspace"
)

// A role's daily budget as a person sees it: told at 80 %, told again when
// it is all spent, a task sent then stays queued with the reason on the
// role's status, and once the budget is raised in settings.yaml the task
// is typed and done. The tokens come from the role's Claude Code
// transcript, written as the CLI writes it.
func TestARoleOverItsBudgetGetsNoNewTaskUntilItIsRaised(t *testing.T) {
	srv := notifySink(t)
	toldKinds := func() []string {
		var out []string
		for _, e := range srv.events() {
			if strings.HasPrefix(e.Kind, "budget-") {
				out = append(out, e.Kind+" "+e.Role)
			}
		}
		return out
	}

	claudeHome := t.TempDir()
	roles := fmt.Sprintf(`roles:
  - id: coder
    prompt_path: roles/ashigaru.md
    command: {exec: "${SHOGUN_EXE}", args: ["agent-sim", "--work-time", "200ms"], env: {CLAUDE_CONFIG_DIR: %q}}
    cli: claude
    ready_pattern: "› "
    submit_delay: 50ms
    startup_prompt: ""
`, claudeHome)
	settings := func(tokens string) string {
		return "keep_awake: false\nnotify:\n  webhook: " + srv.URL + "\nusage:\n  budgets:\n    roles:\n      coder: {tokens: " + tokens + "}\n"
	}
	tm := runTeam(t, roles, settings("1k"), func(o *Options) {
		o.UsageEvery = 50 * time.Millisecond
		o.ConfigPoll = time.Hour // the reload below is explicit
		o.Lookup = func(k string) (string, bool) {
			if k == "SHOGUN_EXE" {
				return shogunBin, true
			}
			return os.LookupEnv(k)
		}
	})
	ws := tm.Config().Workspace
	cwd, err := filepath.EvalSymlinks(ws)
	if err != nil {
		t.Fatal(err)
	}
	project := filepath.Join(claudeHome, "projects", regexp.MustCompile(`[^a-zA-Z0-9]`).ReplaceAllString(cwd, "-"))
	if err := os.MkdirAll(project, 0o700); err != nil {
		t.Fatal(err)
	}
	transcript := filepath.Join(project, "s1.jsonl")
	reply := func(id string, in, out int64) {
		t.Helper()
		f, err := os.OpenFile(transcript, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(claudeReply(id, time.Now(), cwd, in, out)); err != nil {
			t.Fatal(err)
		}
	}

	reply("msg_1", 800, 50) // 850 of 1000
	shoguntest.WaitFor(t, "the 80 % notification", 20*time.Second, func() bool { return len(toldKinds()) == 1 })
	reply("msg_2", 300, 50) // 1200 of 1000
	shoguntest.WaitFor(t, "the all-spent notification", 20*time.Second, func() bool { return len(toldKinds()) == 2 })
	if got := toldKinds(); got[0] != notify.KindBudgetWarning+" coder" || got[1] != notify.KindBudgetReached+" coder" {
		t.Errorf("told %q, want the warning then the budget reached, for coder", got)
	}

	dir := workspace.New(ws).Commands()
	if err := os.WriteFile(filepath.Join(dir, ".a.yaml"), []byte("to: coder\ntitle: Tidy up\nbody: tidy\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(dir, ".a.yaml"), filepath.Join(dir, "a.yaml")); err != nil {
		t.Fatal(err)
	}
	var task store.Task
	shoguntest.WaitFor(t, "the task held for the budget", 20*time.Second, func() bool {
		ts, err := tm.Store().Tasks(store.TaskFilter{Role: "coder"})
		if err != nil || len(ts) != 1 {
			return false
		}
		task = ts[0]
		evs, err := tm.Store().EventsForTask(task.ID)
		for _, e := range evs {
			if e.Kind == "budget-hold" {
				return err == nil
			}
		}
		return false
	})
	if got, _ := tm.Store().Task(task.ID); got.Status != store.StatusQueued {
		t.Errorf("the task over budget is %s, want queued", got.Status)
	}
	snap, err := tm.Queue().Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Roles) != 1 || snap.Roles[0].Budget != "budget reached: 1.2k of 1k tokens today" {
		t.Errorf("the role's status = %+v, want it to say its budget is reached", snap.Roles)
	}

	// The person raises the budget.
	if err := os.WriteFile(filepath.Join(ws, filepath.FromSlash(workspace.SettingsFile)), []byte(settings("1M")), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := tm.Reload(); err != nil {
		t.Fatal(err)
	}
	shoguntest.WaitFor(t, "the task done after the budget was raised", 40*time.Second, func() bool {
		got, err := tm.Store().Task(task.ID)
		return err == nil && got.Status == store.StatusDone
	})
	if got := toldKinds(); len(got) != 2 {
		t.Errorf("told %q, want each once", got)
	}
}
