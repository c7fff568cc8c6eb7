//go:build realcli && linux

// The team as users have it: one workspace that is a git repository with a
// remote, the configuration `shogun init` writes (policy included) with
// only the roles edited as README's "Running with real CLIs" says, each
// CLI's home as a new user leaves it after the first-run questions (nothing
// allowed in the CLI's own settings), Claude Code, Codex and Gemini CLI as
// roles of one team at the same time plus a Claude Code role in a worktree
// of its own, each preset's between_tasks as shipped, and a sloppy model.
package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/store"
	"github.com/shogun-dev/shogun/tools/fakemodel"
)

// teamRole is one role of the users' team: its id, its CLI and the lines
// README tells a user to add to its roles.yaml entry.
type teamRole struct {
	id, cli string
	extra   string
}

var usersTeam = []teamRole{
	{id: "claude", cli: "claude"},
	{id: "codex", cli: "codex"},
	{id: "gemini", cli: "gemini"},
	{id: "claude-wt", cli: "claude", extra: "    worktree: true\n"},
}

// git runs git in dir and fails the test on an error.
func gitIn(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
	}
	return strings.TrimSpace(string(out))
}

// startUsersTeam sets the team up as a user would and starts it.
func startUsersTeam(t *testing.T) *e2eTeam {
	t.Helper()
	needNode(t)
	cache, err := cacheDir()
	if err != nil {
		t.Fatal(err)
	}
	if err := installAll(cache, []string{"claude", "codex", "gemini"}, t.Logf); err != nil {
		t.Fatalf("install the pinned CLIs: %v", err)
	}
	root := t.TempDir()
	ws, tmp, remote := filepath.Join(root, "ws"), filepath.Join(root, "tmp"), filepath.Join(root, "remote.git")
	for _, d := range []string{ws, tmp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	modelLog, err := os.Create(filepath.Join(root, "model.log"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	model := &fakemodel.Server{Log: modelLog, DumpDir: filepath.Join(root, "model-requests")}
	if err := model.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = model.Close() })
	marker := newMarker()
	t.Cleanup(func() { _ = killMarked(marker) })
	supHome := filepath.Join(root, "home")
	env := append(baseEnv(supHome, cache), runMarker+"="+marker, "TMPDIR="+tmp, "NO_COLOR=1",
		"GIT_AUTHOR_NAME=A User", "GIT_AUTHOR_EMAIL=user@example.com",
		"GIT_COMMITTER_NAME=A User", "GIT_COMMITTER_EMAIL=user@example.com")

	// A project with history and a remote, as people have them.
	gitIn(t, root, env, "init", "-q", "--bare", "-b", "main", remote)
	gitIn(t, ws, env, "init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(ws, "README.md"), []byte("# A project\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn(t, ws, env, "add", "README.md")
	gitIn(t, ws, env, "commit", "-q", "-m", "first")
	gitIn(t, ws, env, "remote", "add", "origin", remote)
	gitIn(t, ws, env, "push", "-q", "-u", "origin", "main")

	shogun(t, env, "init", ws)
	// README: "shogun init and edit config/roles.yaml"; everything else,
	// policy.yaml included, as init wrote it.
	var entries strings.Builder
	entries.WriteString("roles:\n")
	for _, r := range usersTeam {
		c := mustCLI(t, r.cli)
		home := filepath.Join(root, "home-"+r.id)
		s := Ready
		s.Model, s.AsNewUser = model.URL(), true
		roleEnv, err := prepare(c, s, cache, home, ws)
		if err != nil {
			t.Fatal(err)
		}
		entry := modelRoleEntry(r.id, c, s, cache, append(roleEnv, runMarker+"="+marker))
		entries.WriteString(strings.Replace(entry, "    cli: "+r.cli+"\n", "    cli: "+r.cli+"\n"+r.extra, 1))
	}
	if err := os.WriteFile(filepath.Join(ws, "config", "roles.yaml"), []byte(entries.String()), 0o644); err != nil {
		t.Fatal(err)
	}

	ids := make([]string, len(usersTeam))
	for i, r := range usersTeam {
		ids[i] = r.id
	}
	tm := runSupervisor(t, ws, env, model, modelLog.Name(), marker, ids, 3*time.Minute)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("shogun start's output:\n%s", tail([]byte(tm.supOut.String()), 40))
		}
	})
	return tm
}

// bigBody is a 12 KB task body with code blocks, backquotes, $() and text
// in other scripts, which must arrive byte for byte.
func bigBody() string {
	var b strings.Builder
	b.WriteString("寿司の注文システムを直してください 🍣\n\n```sh\necho \"$(date)\" `uname -a` | tee log.txt\n```\n\n")
	for i := 0; b.Len() < 12*1024; i++ {
		fmt.Fprintf(&b, "- 手順 %d: `make test` を実行し、$(pwd) の結果を確認する ✅ — line %d with \"quotes\" and 'single' and \\backslash\n", i, i)
	}
	return b.String()
}

// TestTeamAsUsersHaveIt: the whole team works unattended on a sloppy
// model: every task done once, no role ever waits for a person, nothing
// left in failed/ for a person to clear, no process left after stop.
func TestTeamAsUsersHaveIt(t *testing.T) {
	tm := startUsersTeam(t)
	big := bigBody()
	type job struct {
		role, title, body, summary string
		id                         string
		kill                       bool // the CLI is killed while the task is under way
	}
	jobs := []*job{
		{role: "claude", title: "大きな注文 🍣 (12 KB)", summary: "大きな注文 done 🍣",
			body: big + "\nfakemodel: write big-claude.txt 寿司 🍣 done\nfakemodel: report done via write \"大きな注文 done 🍣\"\n"},
		{role: "claude", title: "Report twice", summary: "first report",
			body: "fakemodel: report done via write first report\nfakemodel: report done via shell second report\n"},
		{role: "claude", title: "Killed mid-task", summary: "done after a restart", kill: true,
			body: "fakemodel: slow 20s\nfakemodel: write killed.txt survived\nfakemodel: report done via write done after a restart\n"},
		{role: "codex", title: "A stale task id first", summary: "right id",
			body: "fakemodel: report done as t-20000101-0001 via shell stale id\nfakemodel: report done via shell right id\n"},
		{role: "codex", title: "A slow stream", summary: "slow one",
			body: "fakemodel: write codex-slow.txt slow\nfakemodel: report done via shell slow one\nfakemodel: slow 25s\n"},
		{role: "codex", title: "A third task after the reset", summary: "third",
			body: "fakemodel: report done via shell third\n"},
		{role: "gemini", title: "Empty, then filled", summary: "filled after empty",
			body: "fakemodel: write $REPORT \"\"\nfakemodel: report done via write filled after empty\n"},
		{role: "gemini", title: "日本語のタスク ✅", summary: "こんにちは done",
			body: "日本語で書いてください。🌸\nfakemodel: write gemini-ja.txt こんにちは 🌸\nfakemodel: report done via write \"こんにちは done\"\n"},
		{role: "claude-wt", title: "Commit in the worktree", summary: "committed on my branch",
			body: "fakemodel: write wt.txt from the worktree\nfakemodel: run git add wt.txt && git commit -q -m 'work from the worktree'\nfakemodel: report done via write committed on my branch\n"},
	}
	for _, j := range jobs {
		j.id = tm.send(j.role, j.title, j.body)
	}

	// A task file is text a person reads as written.
	for _, j := range jobs[:1] {
		file := filepath.Join(tm.ws, "runtime", "queue", "tasks", j.role+".yaml")
		var text string
		for deadline := time.Now().Add(3 * time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
			if b, err := os.ReadFile(file); err == nil && strings.Contains(string(b), "大きな注文") {
				text = string(b)
				break
			}
		}
		if !strings.Contains(text, "寿司の注文システムを直してください 🍣\n") || strings.Contains(text, `\U0001F363`) || strings.Contains(text, `\n`) {
			if len(text) > 800 {
				text = text[:800] + "…"
			}
			t.Errorf("%s's task file is not the body as written:\n%s", j.role, text)
		}
	}

	// The CLI killed while it works on a task: restarted, the task redelivered.
	for _, j := range jobs {
		if !j.kill {
			continue
		}
		var pid int
		for deadline := time.Now().Add(4 * time.Minute); pid == 0 && time.Now().Before(deadline); time.Sleep(300 * time.Millisecond) {
			st, ok := status(t, tm.env, tm.ws)
			if !ok {
				continue
			}
			for _, r := range st.Roles {
				if r.ID == j.role && r.TaskTitle == j.title && r.State == "busy" && r.Pid > 0 {
					pid = r.Pid
				}
			}
		}
		if pid == 0 {
			t.Fatalf("%s never got busy with %q; screen:\n%s", j.role, j.title, screen(t, tm.env, tm.ws, j.role))
		}
		time.Sleep(2 * time.Second)
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatalf("kill -9 %d (%s): %v", pid, j.role, err)
		}
		t.Logf("killed %s's CLI (pid %d) during %q", j.role, pid, j.title)
	}

	// One deadline for all: the roles work side by side.
	deadline := time.Now().Add(7 * time.Minute)
	for _, j := range jobs {
		task, ok := tm.waitTask(j.id, time.Until(deadline))
		if !ok {
			cur, _ := tm.task(j.id)
			t.Errorf("%s, %q: not closed within 7 min (status %q); screen:\n%s", j.role, j.title, cur.Status, screen(t, tm.env, tm.ws, j.role))
			continue
		}
		if task.Status != store.StatusDone || task.Summary != j.summary {
			t.Errorf("%s, %q: %s with %q, want done with %q", j.role, j.title, task.Status, task.Summary, j.summary)
		}
		t.Logf("%s, %q: done %.1fs after it was handed out, %d attempt(s)", j.role, j.title,
			task.FinishedAt.Sub(task.AssignedAt).Seconds(), task.Attempts)
	}

	// Nothing waits for a person.
	if st, ok := status(t, tm.env, tm.ws); ok && len(st.Attention) > 0 {
		t.Errorf("shogun status asks a person to look at:\n%s", strings.Join(st.Attention, "\n"))
	}
	if failed, _ := os.ReadDir(filepath.Join(tm.ws, "runtime", "queue", "failed")); len(failed) > 0 {
		t.Logf("runtime/queue/failed/ holds %v", dirNames(failed))
	}
	for _, r := range usersTeam {
		states := readLog(tm.ws, r.id).states
		if slices.Contains(states, "attention") {
			t.Errorf("%s was in attention (states %v)", r.id, states)
		}
		// Busy holds while an answer streams: a handful of changes a task.
		if ready := strings.Count(strings.Join(states, " "), "ready"); ready > 12 {
			t.Errorf("%s was ready %d times for a few tasks: it flapped (states %v)", r.id, ready, states)
		}
	}
	// The worktree role's commit is on its branch, not on main.
	branches := gitIn(t, tm.ws, tm.env, "branch", "--list", "--format=%(refname:short)")
	var wtBranch string
	for _, b := range strings.Fields(branches) {
		if strings.Contains(b, "claude-wt") {
			wtBranch = b
		}
	}
	if wtBranch == "" {
		t.Errorf("no branch of claude-wt among %q", branches)
	} else if log := gitIn(t, tm.ws, tm.env, "log", "--format=%s", wtBranch); !strings.Contains(log, "work from the worktree") {
		t.Errorf("claude-wt's branch %s has no commit of its work:\n%s", wtBranch, log)
	}
	tm.stop()
	for _, e := range tm.events() {
		if e.Kind == "report-rejected" {
			t.Logf("%s: %s", e.Role, e.Message)
		}
	}
}
