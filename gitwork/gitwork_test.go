package gitwork_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/shogun-dev/shogun/gitwork"
	"github.com/shogun-dev/shogun/shoguntest"
)

var ctx = context.Background()

// repo is a fresh repository on main with one commit; its path has
// symbolic links resolved, as git reports paths.
func repo(t *testing.T, files map[string]string) string {
	t.Helper()
	shoguntest.GitEnv(t)
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if files == nil {
		files = map[string]string{"README.md": "hello\n"}
	}
	shoguntest.GitRepo(t, dir, files)
	return dir
}

// same compares paths as the OS does (Windows: without case, where git may
// spell the drive letter differently from Go).
func same(a, b string) bool {
	if runtime.GOOS == "windows" {
		return strings.EqualFold(filepath.Clean(a), filepath.Clean(b))
	}
	return a == b
}

func ensure(t *testing.T, g gitwork.Git, s gitwork.Spec) gitwork.Worktree {
	t.Helper()
	w, err := g.Resolve(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if w, err = g.Ensure(ctx, w, "/ws"); err != nil {
		t.Fatal(err)
	}
	return w
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// commit writes a file in dir and commits it, as an agent would.
func commit(t *testing.T, dir, file, content string) {
	t.Helper()
	write(t, filepath.Join(dir, file), content)
	shoguntest.Git(t, dir, "add", file)
	shoguntest.Git(t, dir, "commit", "-q", "-m", "change "+file)
}

// A role's worktree is made under .shogun/worktrees/<role> on its own
// branch from the base, the main checkout does not see it as untracked,
// and the next start reuses it as it is.
func TestEnsureMakesAndReusesTheWorktree(t *testing.T) {
	r := repo(t, map[string]string{"README.md": "hello\n", "app/main.go": "package main\n"})
	g := gitwork.Git{}
	w, err := g.Resolve(ctx, gitwork.Spec{Role: "a1", Cwd: filepath.Join(r, "app"), Branch: "shogun/a1"})
	if err != nil {
		t.Fatal(err)
	}
	wantPath := filepath.Join(r, ".shogun", "worktrees", "a1")
	if w.Exists || !same(w.Repo, r) || !same(w.Path, wantPath) || !same(w.Dir, filepath.Join(wantPath, "app")) || w.Base != "main" {
		t.Fatalf("resolved %+v", w)
	}
	if _, err := os.Stat(wantPath); !os.IsNotExist(err) {
		t.Fatalf("Resolve changed something: %v", err)
	}
	if w, err = g.Ensure(ctx, w, "/ws"); err != nil || !w.Exists {
		t.Fatalf("Ensure: %+v, %v", w, err)
	}
	if b, err := os.ReadFile(filepath.Join(w.Dir, "main.go")); err != nil || string(b) != "package main\n" {
		t.Fatalf("worktree lacks the base's files: %q, %v", b, err)
	}
	if got := shoguntest.Git(t, w.Path, "branch", "--show-current"); got != "shogun/a1" {
		t.Errorf("worktree is on %q, want shogun/a1", got)
	}
	if got := shoguntest.Git(t, r, "status", "--porcelain"); got != "" {
		t.Errorf("the main checkout shows the worktree:\n%s", got)
	}
	write(t, filepath.Join(w.Path, "work.txt"), "in progress\n")
	again, err := g.Resolve(ctx, gitwork.Spec{Role: "a1", Cwd: filepath.Join(r, "app"), Branch: "shogun/a1"})
	if err != nil || !again.Exists || !same(again.Path, w.Path) {
		t.Fatalf("second Resolve: %+v, %v", again, err)
	}
	if _, err := g.Ensure(ctx, again, "/ws"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(w.Path, "work.txt")); string(b) != "in progress\n" {
		t.Error("reusing the worktree lost its uncommitted work")
	}
	// The base is remembered: after the main checkout moved to another
	// branch, the role's base is still main.
	shoguntest.Git(t, r, "switch", "-q", "-c", "other")
	again, err = g.Resolve(ctx, gitwork.Spec{Role: "a1", Cwd: r, Branch: "shogun/a1"})
	if err != nil || again.Base != "main" {
		t.Errorf("base after the main checkout moved: %+v, %v", again, err)
	}
}

// A worktree whose folder a person deleted is made again.
func TestEnsureAfterTheFolderWasDeleted(t *testing.T) {
	r := repo(t, nil)
	g := gitwork.Git{}
	w := ensure(t, g, gitwork.Spec{Role: "a1", Cwd: r, Branch: "shogun/a1"})
	commit(t, w.Path, "kept.txt", "committed\n")
	if err := os.RemoveAll(w.Path); err != nil {
		t.Fatal(err)
	}
	w = ensure(t, g, gitwork.Spec{Role: "a1", Cwd: r, Branch: "shogun/a1"})
	if b, err := os.ReadFile(filepath.Join(w.Path, "kept.txt")); err != nil || string(b) != "committed\n" {
		t.Errorf("the branch's commit is not in the new worktree: %q, %v", b, err)
	}
}

// On Windows (LongPaths), the worktree's repository gets core.longpaths.
func TestLongPathsIsSetInTheRepository(t *testing.T) {
	r := repo(t, nil)
	w := ensure(t, gitwork.Git{LongPaths: true}, gitwork.Spec{Role: "a1", Cwd: r, Branch: "shogun/a1"})
	if got := shoguntest.Git(t, w.Path, "config", "--get", "core.longpaths"); got != "true" {
		t.Errorf("core.longpaths = %q, want true", got)
	}
}

// What stops a worktree from being made is said before anything is made.
func TestResolveRefusesWithAReason(t *testing.T) {
	shoguntest.GitEnv(t)
	plain := t.TempDir()
	empty := t.TempDir()
	shoguntest.Git(t, empty, "init", "-q", "-b", "main")
	r := repo(t, nil)
	inTheWay := repo(t, nil)
	write(t, filepath.Join(inTheWay, ".shogun", "worktrees", "a1", "mine.txt"), "x")
	taken := repo(t, nil)
	shoguntest.Git(t, taken, "branch", "shogun/a1")
	shoguntest.Git(t, taken, "worktree", "add", "-q", filepath.Join(t.TempDir(), "elsewhere"), "shogun/a1")
	detached := repo(t, nil)
	shoguntest.Git(t, detached, "checkout", "-q", "--detach")
	untracked := repo(t, nil)
	if err := os.Mkdir(filepath.Join(untracked, "new"), 0o755); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name string
		git  gitwork.Git
		spec gitwork.Spec
		is   error
		want string
	}{
		{"git missing", gitwork.Git{Program: filepath.Join(plain, "no-git")}, gitwork.Spec{Cwd: r}, gitwork.ErrNotInstalled, "git is not installed"},
		{"not a repository", gitwork.Git{}, gitwork.Spec{Cwd: plain}, gitwork.ErrNotRepository, "not inside a git repository"},
		{"no commits", gitwork.Git{}, gitwork.Spec{Cwd: empty}, nil, "base main does not exist in"},
		{"unknown base", gitwork.Git{}, gitwork.Spec{Cwd: r, Base: "develop"}, nil, "base develop does not exist in"},
		{"folder in the way", gitwork.Git{}, gitwork.Spec{Cwd: inTheWay}, nil, "is in the way: it exists but is not a worktree"},
		{"branch checked out elsewhere", gitwork.Git{}, gitwork.Spec{Cwd: taken}, nil, "branch shogun/a1 is already checked out in"},
		{"detached main checkout without base", gitwork.Git{}, gitwork.Spec{Cwd: detached}, nil, "is not on a branch (detached HEAD), so the worktree has no base: set worktree: {base: BRANCH}"},
		{"cwd not committed", gitwork.Git{}, gitwork.Spec{Cwd: filepath.Join(untracked, "new")}, nil, "is new in the repository, which main does not have"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.spec.Role = "a1"
			tt.spec.Branch = "shogun/a1"
			_, err := tt.git.Resolve(ctx, tt.spec)
			if err == nil {
				t.Fatal("Resolve succeeded")
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %v is not %v", err, tt.is)
			}
			if !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "worktree of role a1: ") {
				t.Errorf("error %q, want it to name the role and say %q", err, tt.want)
			}
		})
	}
}

// Two roles commit changes to the same file: each diff shows its own, the
// first merges, the second stops at the conflict, names the file, and
// leaves the main checkout exactly as the first merge left it.
func TestDiffMergeAndAConflictThatIsAbortedCleanly(t *testing.T) {
	r := repo(t, map[string]string{"notes.md": "start\n"})
	g := gitwork.Git{}
	a := ensure(t, g, gitwork.Spec{Role: "a1", Cwd: r, Branch: "shogun/a1"})
	b := ensure(t, g, gitwork.Spec{Role: "a2", Cwd: r, Branch: "shogun/a2"})
	commit(t, a.Path, "notes.md", "from a1\n")
	commit(t, b.Path, "notes.md", "from a2\n")
	write(t, filepath.Join(b.Path, "scratch.txt"), "not committed\n")

	sts := g.Survey(ctx, []gitwork.Spec{{Role: "a1", Cwd: r, Branch: "shogun/a1"}, {Role: "a2", Cwd: r, Branch: "shogun/a2"}}, "/ws", nil)
	if len(sts) != 2 || sts[0].Ahead != 1 || sts[1].Ahead != 1 || len(sts[0].DirtyFiles) != 0 ||
		!reflect.DeepEqual(sts[1].DirtyFiles, []string{"scratch.txt"}) || sts[0].Orphan || sts[0].Problem != "" {
		t.Fatalf("survey: %+v", sts)
	}
	for w, want := range map[*gitwork.Worktree]string{&a: "+from a1", &b: "+from a2"} {
		var out bytes.Buffer
		if err := g.Diff(ctx, *w, gitwork.DiffOptions{}, &out); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), want) || !strings.Contains(out.String(), "-start") {
			t.Errorf("diff of %s:\n%s", w.Role, out.String())
		}
	}
	var withDirty bytes.Buffer
	write(t, filepath.Join(b.Path, "notes.md"), "from a2, edited\n")
	if err := g.Diff(ctx, b, gitwork.DiffOptions{Uncommitted: true}, &withDirty); err != nil || !strings.Contains(withDirty.String(), "+from a2, edited") {
		t.Errorf("diff with uncommitted changes: %v\n%s", err, withDirty.String())
	}
	shoguntest.Git(t, b.Path, "checkout", "--", "notes.md")

	res, err := g.Merge(ctx, a, false)
	if err != nil || res.Commits != 1 || res.Commit == "" {
		t.Fatalf("merge a1: %+v, %v", res, err)
	}
	if got, _ := os.ReadFile(filepath.Join(r, "notes.md")); string(got) != "from a1\n" {
		t.Errorf("after merging a1 notes.md is %q", got)
	}
	head := shoguntest.Git(t, r, "rev-parse", "HEAD")

	res, err = g.Merge(ctx, b, false)
	var ce *gitwork.ConflictError
	if !errors.As(err, &ce) || !reflect.DeepEqual(ce.Files, []string{"notes.md"}) {
		t.Fatalf("merge a2: %+v, %v; want a conflict in notes.md", res, err)
	}
	if !strings.Contains(err.Error(), "conflict in notes.md; the merge was aborted") {
		t.Errorf("conflict message: %v", err)
	}
	if got := shoguntest.Git(t, r, "status", "--porcelain"); got != "" {
		t.Errorf("main checkout not clean after the aborted merge:\n%s", got)
	}
	if got := shoguntest.Git(t, r, "rev-parse", "HEAD"); got != head {
		t.Errorf("HEAD moved to %s", got)
	}
	if got, _ := os.ReadFile(filepath.Join(r, "notes.md")); string(got) != "from a1\n" {
		t.Errorf("after the aborted merge notes.md is %q", got)
	}
	// The same with --squash.
	if _, err := g.Merge(ctx, b, true); !errors.As(err, &ce) {
		t.Fatalf("squash merge a2: %v, want a conflict", err)
	}
	if got := shoguntest.Git(t, r, "status", "--porcelain"); got != "" {
		t.Errorf("main checkout not clean after the aborted squash:\n%s", got)
	}
	// Nothing left to merge for a1.
	if res, err := g.Merge(ctx, a, false); err != nil || res.Commits != 0 {
		t.Errorf("merge a1 again: %+v, %v", res, err)
	}
}

// A squash merge is one commit, and counts as merged from then on.
func TestSquashMerge(t *testing.T) {
	r := repo(t, nil)
	g := gitwork.Git{}
	a := ensure(t, g, gitwork.Spec{Role: "a1", Cwd: r, Branch: "shogun/a1"})
	commit(t, a.Path, "one.txt", "1\n")
	commit(t, a.Path, "two.txt", "2\n")
	before := shoguntest.Git(t, r, "rev-list", "--count", "HEAD")
	res, err := g.Merge(ctx, a, true)
	if err != nil || res.Commits != 2 || !res.Squash {
		t.Fatalf("squash: %+v, %v", res, err)
	}
	if after := shoguntest.Git(t, r, "rev-list", "--count", "HEAD"); after != "2" || before != "1" {
		t.Errorf("commits on main: %s → %s, want 1 → 2", before, after)
	}
	if msg := shoguntest.Git(t, r, "log", "-1", "--format=%B"); !strings.Contains(msg, "Role a1: 2 commits of branch shogun/a1, squashed") || !strings.Contains(msg, "- change two.txt") {
		t.Errorf("squash message:\n%s", msg)
	}
	if st := g.StatusOf(ctx, a); st.Ahead != 0 {
		t.Errorf("after the squash the branch is %d ahead, want 0", st.Ahead)
	}
	commit(t, a.Path, "three.txt", "3\n")
	if st := g.StatusOf(ctx, a); st.Ahead != 1 {
		t.Errorf("after another commit the branch is %d ahead, want 1", st.Ahead)
	}
	if res, err := g.Merge(ctx, a, true); err != nil || res.Commits != 1 {
		t.Errorf("second squash: %+v, %v", res, err)
	}
}

// Merge refuses a main checkout that is not on the base or has
// uncommitted changes, and changes nothing.
func TestMergeRefusesAnUnreadyMainCheckout(t *testing.T) {
	r := repo(t, nil)
	g := gitwork.Git{}
	a := ensure(t, g, gitwork.Spec{Role: "a1", Cwd: r, Branch: "shogun/a1"})
	commit(t, a.Path, "one.txt", "1\n")

	write(t, filepath.Join(r, "README.md"), "edited by a person\n")
	if _, err := g.Merge(ctx, a, false); err == nil || !strings.Contains(err.Error(), "has uncommitted changes (README.md): commit or stash them first") {
		t.Errorf("merge into a dirty checkout: %v", err)
	}
	if got, _ := os.ReadFile(filepath.Join(r, "README.md")); string(got) != "edited by a person\n" {
		t.Error("the person's edit was touched")
	}
	shoguntest.Git(t, r, "checkout", "--", "README.md")
	shoguntest.Git(t, r, "switch", "-q", "-c", "feature")
	if _, err := g.Merge(ctx, a, false); err == nil || !strings.Contains(err.Error(), "is on feature, not on main, the base") {
		t.Errorf("merge into another branch: %v", err)
	}
	if n := shoguntest.Git(t, r, "rev-list", "--count", "HEAD"); n != "1" {
		t.Errorf("feature has %s commits", n)
	}
}

// Orphans (worktrees of roles that are gone) are found; prune refuses one
// with uncommitted or unmerged work unless forced, never deletes an
// unmerged branch, and leaves another workspace's worktrees alone.
func TestSurveyAndRemoveOrphans(t *testing.T) {
	r := repo(t, nil)
	g := gitwork.Git{}
	spec := func(role string) gitwork.Spec { return gitwork.Spec{Role: role, Cwd: r, Branch: "shogun/" + role} }
	ensure(t, g, spec("keep"))
	clean := ensure(t, g, spec("clean"))
	dirty := ensure(t, g, spec("dirty"))
	ahead := ensure(t, g, spec("ahead"))
	write(t, filepath.Join(dirty.Path, "wip.txt"), "x")
	commit(t, ahead.Path, "done.txt", "done\n")
	other, err := g.Resolve(ctx, spec("other"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Ensure(ctx, other, "/another-workspace"); err != nil {
		t.Fatal(err)
	}

	sts := g.Survey(ctx, []gitwork.Spec{spec("keep")}, "/ws", nil)
	var names []string
	byRole := map[string]gitwork.Status{}
	for _, s := range sts {
		names = append(names, s.Role)
		byRole[s.Role] = s
		if s.Orphan != (s.Role != "keep") {
			t.Errorf("%s: orphan = %v", s.Role, s.Orphan)
		}
	}
	if strings.Join(names, " ") != "keep ahead clean dirty" {
		t.Fatalf("survey lists %v, want keep, then the orphans ahead, clean, dirty (not the other workspace's)", names)
	}

	for role, want := range map[string]string{"dirty": "1 uncommitted file (wip.txt)", "ahead": "1 commit not merged into main"} {
		_, err := g.Remove(ctx, byRole[role], false)
		if !errors.Is(err, gitwork.ErrUnsaved) || !strings.Contains(err.Error(), want) {
			t.Errorf("remove %s: %v, want a refusal saying %q", role, err, want)
		}
		if _, err := os.Stat(byRole[role].Path); err != nil {
			t.Errorf("refused, yet %s is gone: %v", role, err)
		}
	}
	if rm, err := g.Remove(ctx, byRole["clean"], false); err != nil || !rm.BranchDeleted {
		t.Errorf("remove clean: %+v, %v", rm, err)
	}
	if _, err := os.Stat(clean.Path); !os.IsNotExist(err) {
		t.Errorf("clean worktree still there: %v", err)
	}
	if rm, err := g.Remove(ctx, byRole["ahead"], true); err != nil || rm.BranchDeleted || !strings.Contains(rm.BranchKept, "1 commit not in main") {
		t.Errorf("forced removal of ahead: %+v, %v", rm, err)
	}
	if got := shoguntest.Git(t, r, "log", "-1", "--format=%s", "shogun/ahead"); got != "change done.txt" {
		t.Errorf("the unmerged branch lost its commit: %q", got)
	}
	if rm, err := g.Remove(ctx, byRole["dirty"], true); err != nil || !rm.BranchDeleted {
		t.Errorf("forced removal of dirty: %+v, %v", rm, err)
	}
	left := g.Survey(ctx, []gitwork.Spec{spec("keep")}, "/ws", nil)
	if len(left) != 1 || left[0].Role != "keep" {
		t.Errorf("after pruning: %+v", left)
	}
}

func TestHead(t *testing.T) {
	r := repo(t, nil)
	g := gitwork.Git{}
	if h, err := g.Head(ctx, r); err != nil || h != shoguntest.Git(t, r, "rev-parse", "HEAD") {
		t.Errorf("Head = %q, %v", h, err)
	}
	empty := t.TempDir()
	shoguntest.Git(t, empty, "init", "-q")
	if h, err := g.Head(ctx, empty); err != nil || h != "" {
		t.Errorf("Head of a repository without commits = %q, %v", h, err)
	}
	if _, err := g.Head(ctx, t.TempDir()); err == nil {
		t.Error("Head outside a repository succeeded")
	}
}

// A file whose path in the main checkout is just under Windows' 260
// characters lies past them in a worktree, which New's git checks out all
// the same (core.longpaths on Windows), and which the agent's own git in
// the worktree handles too.
func TestLongPathsInAWorktree(t *testing.T) {
	shoguntest.GitEnv(t)
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	n := 250 - len(dir) - 1
	if n < 20 {
		t.Skipf("the temporary folder's path is too long already (%d characters)", len(dir))
	}
	var b strings.Builder
	for b.Len() < n {
		if b.Len() > 0 {
			b.WriteByte('/')
		}
		b.WriteString(strings.Repeat("d", max(min(49, n-b.Len()), 1)))
	}
	rel := b.String() + ".txt"
	shoguntest.GitRepo(t, dir, map[string]string{rel: "deep\n"})
	g := gitwork.New()
	w := ensure(t, g, gitwork.Spec{Role: "a1", Cwd: dir, Branch: "shogun/a1"})
	deep := filepath.Join(w.Path, filepath.FromSlash(rel))
	if len(deep) <= 260 {
		t.Fatalf("the worktree's path is %d characters, want more than 260", len(deep))
	}
	if b, err := os.ReadFile(deep); err != nil || string(b) != "deep\n" {
		t.Fatalf("the deep file in the worktree: %q, %v", b, err)
	}
	write(t, deep, "changed\n")
	if st := g.StatusOf(ctx, w); len(st.DirtyFiles) != 1 {
		t.Errorf("status of the changed deep file: %+v", st)
	}
	shoguntest.Git(t, w.Path, "commit", "-q", "-am", "deep change")
	if res, err := g.Merge(ctx, w, false); err != nil || res.Commits != 1 {
		t.Errorf("merge of the deep change: %+v, %v", res, err)
	}
}

// Before the first start there is no branch: diff and merge say so.
func TestDiffAndMergeBeforeTheWorktreeIsMade(t *testing.T) {
	r := repo(t, nil)
	g := gitwork.Git{}
	w, err := g.Resolve(ctx, gitwork.Spec{Role: "a1", Cwd: r, Branch: "shogun/a1"})
	if err != nil {
		t.Fatal(err)
	}
	want := "branch shogun/a1 does not exist yet in " + r + ": shogun start makes it"
	if err := g.Diff(ctx, w, gitwork.DiffOptions{}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("diff: %v", err)
	}
	if _, err := g.Merge(ctx, w, false); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("merge: %v", err)
	}
}

// An agent can edit the repository's .git/config and the HEAD files of
// its checkouts. A value read back from there that could reach git as an
// option — a recorded base or squash merge of "--output=FILE", a branch
// of that name — is refused by every command with an error that names it,
// and git never writes FILE. Refs handed to git directly come after
// --end-of-options, so even a worktree built by hand with such a base
// gets git's refusal, not a diff written to FILE.
func TestValuesAnAgentWroteIntoGitAreRefused(t *testing.T) {
	r := repo(t, nil)
	g := gitwork.Git{}
	spec := gitwork.Spec{Role: "evil", Cwd: r, Branch: "shogun/evil"}
	w := ensure(t, g, spec)
	commit(t, w.Path, "evil.txt", "x\n")
	outside := filepath.Join(t.TempDir(), "x")
	bad := "--output=" + outside
	gitConfig := filepath.Join(r, ".git", "config")
	clean, err := os.ReadFile(gitConfig)
	if err != nil {
		t.Fatal(err)
	}
	// editConfig appends a section to .git/config as an agent's editor
	// would, and puts the file back after the subtest.
	editConfig := func(t *testing.T, key, value string) {
		write(t, gitConfig, string(clean)+"[branch \"shogun/evil\"]\n\t"+key+" = "+value+"\n")
		t.Cleanup(func() { write(t, gitConfig, string(clean)) })
	}
	editHead := func(t *testing.T, head string) {
		old, err := os.ReadFile(head)
		if err != nil {
			t.Fatal(err)
		}
		write(t, head, "ref: refs/heads/"+bad+"\n")
		t.Cleanup(func() { write(t, head, string(old)) })
	}
	wantNamed := func(t *testing.T, what string, err error, want string) {
		t.Helper()
		if err == nil {
			t.Fatalf("%s succeeded", what)
		}
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v\nwant it to say %q", what, err, want)
		}
	}
	quoted := `"` + bad + `"`

	t.Run("recorded base", func(t *testing.T) {
		editConfig(t, "shogunbase", bad)
		_, err := g.Resolve(ctx, spec)
		wantNamed(t, "Resolve", err, "(branch.shogun/evil.shogunbase) is "+quoted+", which is refused as a branch name: must not start with \"-\"")
		sts := g.Survey(ctx, []gitwork.Spec{spec}, "/ws", nil)
		if len(sts) != 1 || !strings.Contains(sts[0].Problem, quoted) {
			t.Errorf("Survey: %+v", sts)
		}
		// The worktree as a caller might still hold it, with the bad base.
		held := w
		held.Base = bad
		wantNamed(t, "Diff", g.Diff(ctx, held, gitwork.DiffOptions{}, &bytes.Buffer{}), "bad revision")
		wantNamed(t, "Diff --uncommitted", g.Diff(ctx, held, gitwork.DiffOptions{Uncommitted: true}, &bytes.Buffer{}), "merge-base")
		if st := g.StatusOf(ctx, held); st.Problem == "" {
			t.Errorf("StatusOf with base %s: no problem: %+v", bad, st)
		}
		_, err = g.Merge(ctx, held, false)
		wantNamed(t, "Merge", err, "not on "+bad)
	})
	t.Run("recorded squash merge", func(t *testing.T) {
		editConfig(t, "shogunsquashed", bad)
		if st := g.StatusOf(ctx, w); !strings.Contains(st.Problem, "(branch.shogun/evil.shogunsquashed) is "+quoted+", which is not a commit id") {
			t.Errorf("StatusOf: problem %q", st.Problem)
		}
		_, err := g.Merge(ctx, w, false)
		wantNamed(t, "Merge", err, quoted)
	})
	t.Run("branch of the worktree", func(t *testing.T) {
		editHead(t, filepath.Join(shoguntest.Git(t, w.Path, "rev-parse", "--absolute-git-dir"), "HEAD"))
		_, err := g.Resolve(ctx, spec)
		wantNamed(t, "Resolve", err, "the branch of worktree "+w.Path+" is "+quoted)
	})
	t.Run("branch of the main checkout", func(t *testing.T) {
		editHead(t, filepath.Join(r, ".git", "HEAD"))
		_, err := g.Branch(ctx, r)
		wantNamed(t, "Branch", err, "the branch checked out in "+r+" is "+quoted)
		_, err = g.Resolve(ctx, gitwork.Spec{Role: "new", Cwd: r, Branch: "shogun/new"})
		wantNamed(t, "Resolve", err, quoted)
	})
	if _, err := os.Stat(outside); !os.IsNotExist(err) {
		t.Errorf("git wrote %s: %v", outside, err)
	}
	// With the files put back, everything works again.
	if _, err := g.Resolve(ctx, spec); err != nil {
		t.Errorf("Resolve after the repair: %v", err)
	}
}
