//go:build !windows

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/control"
	"github.com/shogun-dev/shogun/gitwork"
	"github.com/shogun-dev/shogun/shoguntest"
)

// worktreeEntry is an agent-sim role with a worktree of its own that
// commits notes.md for every task.
func worktreeEntry(id string) string {
	return simEntry(id, "--work-time", "200ms", "--commit-work", "notes.md") + "    worktree: true\n"
}

// repoWorkspace is a workspace that is also a git repository on main, its
// configuration committed, as a team working on its own code would have.
func repoWorkspace(t *testing.T, entries ...string) string {
	t.Helper()
	shoguntest.GitEnv(t)
	ws, err := filepath.EvalSymlinks(teamWorkspace(t, entries...))
	if err != nil {
		t.Fatal(err)
	}
	shoguntest.GitRepo(t, ws, map[string]string{".gitignore": "/runtime/\n/data/\n/skills/\n", "notes.md": "notes\n"})
	return ws
}

func worktreesJSON(t *testing.T, ws string) map[string]gitwork.Status {
	t.Helper()
	out, errOut, code := shogun(t, "worktrees", "-w", ws, "--json")
	if code != 0 {
		t.Fatalf("worktrees --json: exit %d: %s", code, errOut)
	}
	shoguntest.CheckOutput(t, shoguntest.ReadDocShape(t, "json.md", docWorktrees), []gitwork.Status{}, []byte(out))
	var list []gitwork.Status
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("worktrees --json: %v\n%s", err, out)
	}
	byRole := map[string]gitwork.Status{}
	for _, s := range list {
		byRole[s.Role] = s
	}
	return byRole
}

// Two roles, each in its own worktree, do a task and commit a change to
// the same file: each diff shows its own change, the first merge
// succeeds, the second stops at the conflict, names the file and leaves
// the main checkout clean. Each task records its role's commit. After the
// second role is removed from the configuration, prune keeps its worktree
// (uncommitted and unmerged work) until --force, and keeps its branch.
func TestWorktreesDiffMergeAndPrune(t *testing.T) {
	ws := repoWorkspace(t, worktreeEntry("a1"), worktreeEntry("a2"))
	wt1 := filepath.Join(ws, ".shogun", "worktrees", "a1")

	out, errOut, code := shogun(t, "start", "--dry-run", "-w", ws)
	if code != 0 || !strings.Contains(out, "a1: cwd "+wt1+" (worktree of "+ws+" on branch shogun/a1 from main, made at start)") {
		t.Fatalf("dry run: exit %d\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(wt1); !os.IsNotExist(err) {
		t.Fatalf("the dry run made the worktree: %v", err)
	}

	cmd, serr := startBackground(t, ws)
	waitStatus(t, ws, "both ready", func(s control.StatusReply) bool {
		return stateOf(s, "a1") == "ready" && stateOf(s, "a2") == "ready"
	})
	for _, id := range []string{"a1", "a2"} {
		if _, errOut, code := shogun(t, "send", "-w", ws, "--to", id, "--title", "Notes from "+id, "--body", "write notes.md"); code != 0 {
			t.Fatalf("send: %s", errOut)
		}
	}
	var tasks []control.Task
	shoguntest.WaitFor(t, "both tasks done", time.Minute, func() bool {
		out, _, _ := shogun(t, "tasks", "-w", ws, "--json")
		tasks = nil
		if json.Unmarshal([]byte(out), &tasks) != nil || len(tasks) != 2 {
			return false
		}
		return tasks[0].Status == "done" && tasks[1].Status == "done"
	})
	for _, task := range tasks {
		branchHead := shoguntest.Git(t, ws, "rev-parse", "shogun/"+task.Role)
		if task.HeadCommit != branchHead {
			t.Errorf("task %s of %s records head %q, the branch is at %s", task.ID, task.Role, task.HeadCommit, branchHead)
		}
		detail, _, _ := shogun(t, "tasks", "-w", ws, task.ID)
		if !strings.Contains(detail, "head commit  "+branchHead) {
			t.Errorf("shogun tasks %s does not show the head commit:\n%s", task.ID, detail)
		}
	}
	// The task file and report stayed in the workspace's runtime/, named
	// by absolute path in the nudge the role was given.
	if _, err := os.Stat(filepath.Join(ws, "runtime", "queue", "tasks", "a1.yaml")); err != nil {
		t.Errorf("a1's task file is not in the workspace: %v", err)
	}
	if _, err := os.Stat(filepath.Join(wt1, "runtime", "queue", "tasks")); !os.IsNotExist(err) {
		t.Errorf("a task file went into the worktree: %v", err)
	}
	if got := shoguntest.Git(t, ws, "status", "--porcelain"); got != "" {
		t.Errorf("the main checkout shows changes while the roles work in worktrees:\n%s", got)
	}

	sts := worktreesJSON(t, ws)
	for _, id := range []string{"a1", "a2"} {
		if s := sts[id]; !s.Exists || s.Ahead != 1 || s.Behind != 0 || len(s.DirtyFiles) != 0 || s.Branch != "shogun/"+id || s.Base != "main" {
			t.Errorf("worktree of %s: %+v", id, s)
		}
		out, errOut, code := shogun(t, "diff", "-w", ws, id)
		if code != 0 || !strings.Contains(out, "+# Notes from "+id) || !strings.Contains(out, "-notes") {
			t.Errorf("diff %s: exit %d\n%s%s", id, code, out, errOut)
		}
	}
	table, _, _ := shogun(t, "worktrees", "-w", ws)
	if !strings.Contains(table, "a1    ready  shogun/a1  main  1      0") {
		t.Errorf("worktrees table:\n%s", table)
	}

	if out, errOut, code := shogun(t, "merge", "-w", ws, "a1"); code != 0 || !strings.Contains(out, "merged role a1: 1 commit of shogun/a1 into main with merge commit") {
		t.Fatalf("merge a1: exit %d\n%s%s", code, out, errOut)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "notes.md")); !strings.Contains(string(b), "# Notes from a1") {
		t.Errorf("after merging a1, notes.md is %q", b)
	}
	head := shoguntest.Git(t, ws, "rev-parse", "HEAD")
	_, errOut, code = shogun(t, "merge", "-w", ws, "a2")
	if code == 0 || !strings.Contains(errOut, "conflict in notes.md; the merge was aborted") {
		t.Fatalf("merge a2: exit %d, want a conflict in notes.md:\n%s", code, errOut)
	}
	if got := shoguntest.Git(t, ws, "status", "--porcelain"); got != "" {
		t.Errorf("main checkout not clean after the aborted merge:\n%s", got)
	}
	if got := shoguntest.Git(t, ws, "rev-parse", "HEAD"); got != head {
		t.Errorf("the aborted merge moved HEAD from %s to %s", head, got)
	}

	if _, errOut, code := shogun(t, "stop", "-w", ws); code != 0 {
		t.Fatalf("stop: %s", errOut)
	}
	waitGone(t, cmd.Process.Pid, 30*time.Second)
	if strings.Contains(serr.String(), `"level":"error"`) {
		t.Errorf("the supervisor logged errors:\n%s", serr.String())
	}

	// a2 is gone from the configuration; its worktree holds an unmerged
	// commit and an uncommitted file.
	wt2 := filepath.Join(ws, ".shogun", "worktrees", "a2")
	if err := os.WriteFile(filepath.Join(wt2, "scratch.txt"), []byte("wip\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "config", "roles.yaml"), []byte("roles:\n"+worktreeEntry("a1")), 0o644); err != nil {
		t.Fatal(err)
	}
	if s := worktreesJSON(t, ws)["a2"]; !s.Orphan || len(s.DirtyFiles) != 1 {
		t.Errorf("a2 after its role went: %+v", s)
	}
	out, errOut, code = shogun(t, "worktrees", "prune", "-w", ws)
	if code == 0 || !strings.Contains(out, "kept a2 ("+wt2+"): 1 uncommitted file (scratch.txt); 1 commit not merged into main") ||
		!strings.Contains(errOut, "1 worktree kept because removing them would lose work: a2") {
		t.Errorf("prune: exit %d\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(wt2, "scratch.txt")); err != nil {
		t.Fatalf("prune removed the refused worktree: %v", err)
	}
	out, errOut, code = shogun(t, "worktrees", "prune", "--force", "-w", ws)
	if code != 0 || !strings.Contains(out, "removed a2 ("+wt2+"); branch shogun/a2 kept: 1 commit not in main") {
		t.Errorf("prune --force: exit %d\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(wt2); !os.IsNotExist(err) {
		t.Errorf("a2's worktree is still there: %v", err)
	}
	if _, err := os.Stat(wt1); err != nil {
		t.Errorf("prune touched a1's worktree: %v", err)
	}
}

// Without git, or outside a repository, a role with a worktree stops the
// dry run and the start with a clear error, and nothing is started or made.
func TestWorktreeWithoutGitOrRepositoryIsRefused(t *testing.T) {
	shoguntest.GitEnv(t)
	ws := teamWorkspace(t, worktreeEntry("a1"))
	_, errOut, code := shogun(t, "start", "--dry-run", "-w", ws)
	if code == 0 || !strings.Contains(errOut, "role worktrees, nothing would start:") || !strings.Contains(errOut, "worktree of role a1: "+ws+": not inside a git repository") {
		t.Errorf("dry run outside a repository: exit %d\n%s", code, errOut)
	}
	_, errOut, code = shogun(t, "start", "-w", ws)
	if code == 0 || !strings.Contains(errOut, "role worktrees, nothing started:") {
		t.Errorf("start outside a repository: exit %d\n%s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(ws, "runtime", "logs", "a1.log")); !os.IsNotExist(err) {
		t.Errorf("the role was started: %v", err)
	}

	repo := repoWorkspace(t, worktreeEntry("a1"))
	t.Setenv("PATH", t.TempDir()) // no git anywhere
	_, errOut, code = shogun(t, "start", "--dry-run", "-w", repo)
	if code == 0 || !strings.Contains(errOut, "worktree of role a1: locate the repository of "+repo+": git is not installed, or not on PATH") {
		t.Errorf("dry run without git: exit %d\n%s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(repo, ".shogun")); !os.IsNotExist(err) {
		t.Errorf("something was made: %v", err)
	}
}

// An agent that edits .git/config so that its branch's recorded base reads
// "--output=FILE" gets no file written: diff, merge and worktrees each
// refuse, naming the setting and the value.
func TestWorktreeBaseAnAgentWroteIntoGitConfigIsRefused(t *testing.T) {
	ws := repoWorkspace(t, worktreeEntry("evil"))
	wt := filepath.Join(ws, ".shogun", "worktrees", "evil")
	shoguntest.Git(t, ws, "worktree", "add", "-q", "-b", "shogun/evil", wt, "main")
	if err := os.WriteFile(filepath.Join(wt, "notes.md"), []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	shoguntest.Git(t, wt, "commit", "-q", "-am", "work")
	outside := filepath.Join(t.TempDir(), "x")
	f, err := os.OpenFile(filepath.Join(ws, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("[branch \"shogun/evil\"]\n\tshogunbase = --output=" + outside + "\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()

	want := `(branch.shogun/evil.shogunbase) is "--output=` + outside + `", which is refused as a branch name`
	for _, args := range [][]string{{"diff", "evil"}, {"diff", "--uncommitted", "evil"}, {"merge", "evil"}, {"worktrees"}} {
		out, errOut, code := shogun(t, append(args, "-w", ws)...)
		if !strings.Contains(out+errOut, want) {
			t.Errorf("shogun %s: exit %d, want it to say %q\n%s%s", strings.Join(args, " "), code, want, out, errOut)
		}
		if args[0] != "worktrees" && code == 0 {
			t.Errorf("shogun %s succeeded", strings.Join(args, " "))
		}
	}
	if _, err := os.Stat(outside); !os.IsNotExist(err) {
		t.Errorf("git wrote %s: %v", outside, err)
	}
	if got := shoguntest.Git(t, ws, "log", "-1", "--format=%s", "main"); got == "work" {
		t.Error("the merge went ahead")
	}
}
