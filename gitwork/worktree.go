package gitwork

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/shogun-dev/shogun/config"
	"github.com/shogun-dev/shogun/workspace"
)

// Folder is where role worktrees live, relative to the main checkout of
// their repository and slash separated: Folder/<role id>. It is added to
// the repository's .git/info/exclude, so the main checkout never shows
// the worktrees as untracked files.
const Folder = workspace.WorktreesDir

// The settings Ensure records on a role's branch (branch.<name>.<key> in
// the repository's config): the base the worktree was made from, for a
// role whose configuration names none; the workspace that made it, so
// that pruning in one workspace never removes another's; and the last
// commit of the branch a squash merge took in, which counts as merged.
const (
	keyBase      = "shogunbase"
	keyWorkspace = "shogunworkspace"
	keySquashed  = "shogunsquashed"
)

// Spec is the worktree a role asks for.
type Spec struct {
	// Role is the role id; it names the worktree's folder.
	Role string
	// Cwd is the role's configured working directory, absolute: the
	// repository holding it is the one the worktree belongs to, and the
	// role runs at the same place inside its worktree.
	Cwd string
	// Base is the branch to start from and merge into; "" means the one
	// recorded when the worktree was made, else the main checkout's.
	Base string
	// Branch is the role's own branch.
	Branch string
}

// SpecOf is the worktree r asks for; false when r has no worktree key.
func SpecOf(r config.Role) (Spec, bool) {
	if r.Worktree == nil {
		return Spec{}, false
	}
	return Spec{Role: r.ID, Cwd: r.Command.Cwd, Base: r.Worktree.Base, Branch: r.Worktree.Branch}, true
}

// Worktree is a role's worktree, located in its repository. Resolve finds
// it without changing anything; Ensure makes it.
type Worktree struct {
	// Role is the role id.
	Role string
	// Repo is the main checkout of the repository.
	Repo string
	// Path is the worktree's folder: Repo/.shogun/worktrees/<role>.
	Path string
	// Dir is where the role runs: Path, plus the place of the role's
	// configured cwd inside the repository.
	Dir string
	// Branch is the branch checked out in the worktree.
	Branch string
	// Base is the branch it started from and merges into.
	Base string
	// Exists is true when the worktree is there (registered with git and
	// its folder present).
	Exists bool

	prefix string // Dir relative to Path, slash separated
	stale  bool   // registered with git, but its folder is gone
}

// Resolve locates the worktree s asks for and checks that it can be made
// or reused, changing nothing: the checks of `shogun start --dry-run`. It
// fails when git is missing, when s.Cwd is not in a repository, when the
// base cannot be found, or when something is in the way.
func (g Git) Resolve(ctx context.Context, s Spec) (Worktree, error) {
	w, err := g.resolve(ctx, s)
	if err != nil {
		return Worktree{}, fmt.Errorf("worktree of role %s: %w", s.Role, err)
	}
	return w, nil
}

func (g Git) resolve(ctx context.Context, s Spec) (Worktree, error) {
	if err := checkBranch("the role's branch", s.Branch); err != nil {
		return Worktree{}, err
	}
	if s.Base != "" {
		if err := checkBranch("the role's base", s.Base); err != nil {
			return Worktree{}, err
		}
	}
	loc, err := g.Locate(ctx, s.Cwd)
	if err != nil {
		return Worktree{}, err
	}
	w := Worktree{
		Role:   s.Role,
		Repo:   loc.Main,
		Path:   filepath.Join(loc.Main, filepath.FromSlash(Folder), s.Role),
		Branch: s.Branch,
		prefix: loc.Prefix,
	}
	w.Dir = filepath.Join(w.Path, filepath.FromSlash(loc.Prefix))
	list, err := g.worktrees(ctx, w.Repo)
	if err != nil {
		return Worktree{}, err
	}
	if w.Base, err = g.baseOf(ctx, w.Repo, s.Base, s.Branch); err != nil {
		return Worktree{}, err
	}
	for _, e := range list {
		switch {
		case samePath(e.Path, w.Path) && e.Prunable:
			w.stale = true
		case samePath(e.Path, w.Path) && e.Branch != w.Branch:
			on := "a detached HEAD"
			if e.Branch != "" {
				on = "branch " + e.Branch
			}
			return Worktree{}, fmt.Errorf("%s is on %s, but the role's branch is %s: switch it (git -C %q switch %s) or remove it (git worktree remove %q)",
				w.Path, on, w.Branch, w.Path, w.Branch, w.Path)
		case samePath(e.Path, w.Path):
			w.Exists = true
		case e.Branch == w.Branch:
			return Worktree{}, fmt.Errorf("branch %s is already checked out in %s; a branch can be checked out in one worktree only", w.Branch, e.Path)
		}
	}
	if w.Exists {
		if fi, err := os.Stat(w.Dir); err != nil || !fi.IsDir() {
			return Worktree{}, fmt.Errorf("%s (the role's cwd inside its worktree) is not a folder: %v", w.Dir, describeStat(err))
		}
		return w, nil
	}
	if inTheWay(w.Path) {
		return Worktree{}, fmt.Errorf("%s is in the way: it exists but is not a worktree of %s; move it away", w.Path, w.Repo)
	}
	start := w.Base
	if ok, err := g.branchExists(ctx, w.Repo, w.Branch); err != nil {
		return Worktree{}, err
	} else if ok {
		start = w.Branch
	} else if ok, err := g.commitExists(ctx, w.Repo, w.Base); err != nil {
		return Worktree{}, err
	} else if !ok {
		return Worktree{}, fmt.Errorf("base %s does not exist in %s (a repository needs a first commit before roles get worktrees)", w.Base, w.Repo)
	}
	if w.prefix != "" {
		if _, err := g.Run(ctx, w.Repo, "cat-file", "-e", "--end-of-options", start+":"+w.prefix); err != nil {
			return Worktree{}, fmt.Errorf("the role's cwd %s is %s in the repository, which %s does not have: commit it first, or give the role a cwd that is in the repository",
				s.Cwd, w.prefix, start)
		}
	}
	return w, nil
}

// baseOf is the base of a role's branch: the configured one, else the one
// recorded when its worktree was made, else the main checkout's branch. A
// recorded base is checked as a configured one is: an agent can edit the
// repository's config.
func (g Git) baseOf(ctx context.Context, repo, configured, branch string) (string, error) {
	if configured != "" {
		return configured, nil
	}
	key := branchKey(branch, keyBase)
	recorded, err := g.config(ctx, repo, key)
	if err != nil {
		return "", err
	}
	if recorded != "" {
		if err := checkBranch(fmt.Sprintf("the base recorded in %s's git config (%s)", repo, key), recorded); err != nil {
			return "", fmt.Errorf("%w; set the role's base in config/roles.yaml (worktree: {base: BRANCH}) or correct it with git config %s BRANCH", err, key)
		}
		return recorded, nil
	}
	cur, err := g.Branch(ctx, repo)
	if err != nil {
		return "", err
	}
	if cur == "" {
		return "", fmt.Errorf("the main checkout %s is not on a branch (detached HEAD), so the worktree has no base: set worktree: {base: BRANCH} for the role", repo)
	}
	return cur, nil
}

// branchKey is a setting of a branch: branch.<name>.<key>.
func branchKey(branch, key string) string { return "branch." + branch + "." + key }

// inTheWay says whether path exists as anything but an empty folder.
func inTheWay(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return !errors.Is(err, os.ErrNotExist)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.IsDir() {
		return true
	}
	_, err = f.Readdirnames(1)
	return !errors.Is(err, io.EOF)
}

func describeStat(err error) string {
	if err == nil {
		return "it is a file"
	}
	if errors.Is(err, os.ErrNotExist) {
		return "it does not exist"
	}
	return err.Error()
}

// Ensure makes w's worktree when it is not there yet (git worktree add,
// on a new branch from the base or on the existing branch) and reuses it
// otherwise. workspace is recorded on the branch as the workspace that
// made it. It returns w with Exists set.
func (g Git) Ensure(ctx context.Context, w Worktree, workspace string) (Worktree, error) {
	if w.Exists {
		return w, nil
	}
	if err := g.ensure(ctx, w, workspace); err != nil {
		return Worktree{}, fmt.Errorf("make the worktree of role %s: %w", w.Role, err)
	}
	w.Exists, w.stale = true, false
	return w, nil
}

func (g Git) ensure(ctx context.Context, w Worktree, workspace string) error {
	if w.stale {
		// Its folder was deleted by hand: git must forget it before the
		// same path can be added again.
		if _, err := g.Run(ctx, w.Repo, "worktree", "prune"); err != nil {
			return err
		}
	}
	if err := g.exclude(ctx, w.Repo, "/"+Folder+"/"); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(w.Path), 0o755); err != nil {
		return err
	}
	exists, err := g.branchExists(ctx, w.Repo, w.Branch)
	if err != nil {
		return err
	}
	if exists {
		_, err = g.Run(ctx, w.Repo, "worktree", "add", "--end-of-options", w.Path, w.Branch)
	} else {
		_, err = g.Run(ctx, w.Repo, "worktree", "add", "--no-track", "-b", w.Branch, "--end-of-options", w.Path, w.Base)
	}
	if err != nil {
		return err
	}
	for _, kv := range [][2]string{{branchKey(w.Branch, keyBase), w.Base}, {branchKey(w.Branch, keyWorkspace), workspace}} {
		if _, err := g.Run(ctx, w.Repo, "config", kv[0], kv[1]); err != nil {
			return err
		}
	}
	if g.LongPaths {
		// The agent's own git commands in the worktree need it as well.
		if _, err := g.Run(ctx, w.Path, "config", "core.longpaths", "true"); err != nil {
			return err
		}
	}
	if fi, err := os.Stat(w.Dir); err != nil || !fi.IsDir() {
		return fmt.Errorf("%s (the role's cwd inside its worktree) is not a folder: %s", w.Dir, describeStat(err))
	}
	return nil
}

// ResolveRoles resolves the worktree of each role in rs that asks for one,
// in order, and reports every problem at once (one line per role).
func (g Git) ResolveRoles(ctx context.Context, rs []config.Role) ([]Worktree, error) {
	var out []Worktree
	var errs []error
	for _, r := range rs {
		s, ok := SpecOf(r)
		if !ok {
			continue
		}
		w, err := g.Resolve(ctx, s)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, w)
	}
	return out, errors.Join(errs...)
}

// WithWorktrees returns a copy of cfg in which every role that has one of
// wts runs in its worktree (Command.Cwd is the worktree's Dir). Its task
// file, report file and instructions stay where they are, in the
// workspace: the templates and the environment name them by absolute
// path once the cwd is elsewhere.
func WithWorktrees(cfg *config.Config, wts []Worktree) *config.Config {
	out := *cfg
	out.Roles = append([]config.Role(nil), cfg.Roles...)
	for _, w := range wts {
		for i := range out.Roles {
			if out.Roles[i].ID == w.Role {
				out.Roles[i].Command.Cwd = w.Dir
			}
		}
	}
	return &out
}
