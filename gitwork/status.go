package gitwork

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Status is a role's worktree as `shogun worktrees` shows it (and prints
// with --json).
type Status struct {
	// Role is the role id (for an orphan, the name of its folder).
	Role string `json:"role"`
	// Branch is the role's branch.
	Branch string `json:"branch"`
	// Base is the branch it started from and merges into.
	Base string `json:"base"`
	// Repo is the main checkout of the repository.
	Repo string `json:"repo"`
	// Path is the worktree's folder.
	Path string `json:"path"`
	// Exists is false for a worktree that `shogun start` has yet to make.
	Exists bool `json:"exists"`
	// Head is the commit checked out in the worktree.
	Head string `json:"head,omitempty"`
	// Ahead counts the branch's commits that are not in base yet (a
	// squash merge counts as merging them); Behind the base's commits
	// the branch lacks.
	Ahead  int `json:"ahead"`
	Behind int `json:"behind"`
	// DirtyFiles are the worktree's uncommitted files, untracked ones
	// included, as git status names them.
	DirtyFiles []string `json:"dirty_files"`
	// Orphan: no role of the configuration asks for this worktree any
	// more; `shogun worktrees prune` removes it.
	Orphan bool `json:"orphan"`
	// Problem says why the worktree could not be located or read; the
	// other fields are then partly empty.
	Problem string `json:"problem,omitempty"`
}

// Unsaved lists what removing the worktree would lose: uncommitted files
// and commits not in base. Empty means nothing.
func (s Status) Unsaved() []string {
	var out []string
	if s.Problem != "" {
		out = append(out, "it could not be checked: "+s.Problem)
	}
	if n := len(s.DirtyFiles); n > 0 {
		out = append(out, fmt.Sprintf("%d uncommitted %s (%s)", n, plural(n, "file", "files"), listShort(s.DirtyFiles, 3)))
	}
	if s.Ahead > 0 {
		out = append(out, fmt.Sprintf("%d %s not merged into %s", s.Ahead, plural(s.Ahead, "commit", "commits"), s.Base))
	}
	return out
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// listShort names the first n items and counts the rest.
func listShort(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:n], ", ") + fmt.Sprintf(" and %d more", len(items)-n)
}

// StatusOf reads w's branch, its commits against the base and its
// uncommitted files. A failure to read is in Problem, not an error, so
// that a listing shows every worktree.
func (g Git) StatusOf(ctx context.Context, w Worktree) Status {
	st := Status{Role: w.Role, Branch: w.Branch, Base: w.Base, Repo: w.Repo, Path: w.Path, Exists: w.Exists, DirtyFiles: []string{}}
	var problems []string
	if w.Exists {
		var err error
		if st.Head, err = g.Head(ctx, w.Path); err != nil {
			problems = append(problems, err.Error())
		}
		if files, err := g.Changes(ctx, w.Path, true); err != nil {
			problems = append(problems, err.Error())
		} else if files != nil {
			st.DirtyFiles = files
		}
	}
	if ok, err := g.branchExists(ctx, w.Repo, w.Branch); err != nil {
		problems = append(problems, err.Error())
	} else if ok {
		var err error
		if st.Ahead, st.Behind, err = g.unmerged(ctx, w.Repo, w.Base, w.Branch); err != nil {
			problems = append(problems, err.Error())
		}
	}
	st.Problem = strings.Join(problems, "; ")
	return st
}

// unmerged counts branch's commits that neither base nor the last squash
// merge of branch holds, and base's commits that branch lacks.
func (g Git) unmerged(ctx context.Context, repo, base, branch string) (ahead, behind int, err error) {
	ahead, behind, err = g.AheadBehind(ctx, repo, base, branch)
	if err != nil || ahead == 0 {
		return ahead, behind, err
	}
	squashed, err := g.config(ctx, repo, branchKey(branch, keySquashed))
	if err != nil || squashed == "" {
		return ahead, behind, err
	}
	if err := checkObjectID(fmt.Sprintf("the squash merge recorded in %s's git config (%s)", repo, branchKey(branch, keySquashed)), squashed); err != nil {
		return 0, 0, err
	}
	if ok, err := g.commitExists(ctx, repo, squashed); err != nil || !ok {
		return ahead, behind, err
	}
	out, err := g.Run(ctx, repo, "rev-list", "--count", "--end-of-options", branch, "^"+base, "^"+squashed, "--")
	if err != nil {
		return 0, 0, fmt.Errorf("count commits of %s not yet merged: %w", branch, err)
	}
	ahead, err = strconv.Atoi(out)
	return ahead, behind, err
}

// Survey reads the worktree of every spec, and finds the orphans: role
// worktrees (under Folder) of the same repositories, and of the
// repositories holding dirs, that no spec asks for any more and that this
// workspace made (or that record no workspace). Specs come first, in
// order; orphans follow by path.
func (g Git) Survey(ctx context.Context, specs []Spec, workspace string, dirs []string) []Status {
	var out []Status
	repos := map[string]bool{}
	wanted := map[string]map[string]bool{} // repo → role ids with a spec there
	for _, s := range specs {
		w, err := g.Resolve(ctx, s)
		if err != nil {
			out = append(out, Status{Role: s.Role, Branch: s.Branch, Base: s.Base, DirtyFiles: []string{}, Problem: unwrapRole(err, s.Role)})
			continue
		}
		out = append(out, g.StatusOf(ctx, w))
		repos[w.Repo] = true
		if wanted[w.Repo] == nil {
			wanted[w.Repo] = map[string]bool{}
		}
		wanted[w.Repo][s.Role] = true
	}
	// A spec that cannot be resolved still claims its name in every
	// repository: its worktree is not an orphan, only unreadable.
	named := map[string]bool{}
	for _, s := range specs {
		named[s.Role] = true
	}
	for _, d := range dirs {
		if loc, err := g.Locate(ctx, d); err == nil {
			repos[loc.Main] = true
		}
	}
	var orphans []Status
	for repo := range repos {
		list, err := g.worktrees(ctx, repo)
		if err != nil {
			continue
		}
		root := filepath.Join(repo, filepath.FromSlash(Folder))
		for _, e := range list {
			if !samePath(filepath.Dir(e.Path), root) {
				continue
			}
			role := filepath.Base(e.Path)
			if wanted[repo][role] || named[role] {
				continue
			}
			if owner, _ := g.config(ctx, repo, branchKey(e.Branch, keyWorkspace)); e.Branch != "" && owner != "" && !samePath(owner, workspace) {
				continue // another workspace's role
			}
			w := Worktree{Role: role, Repo: repo, Path: e.Path, Dir: e.Path, Branch: e.Branch, Exists: !e.Prunable, stale: e.Prunable}
			var st Status
			if e.Branch == "" {
				st = Status{Role: role, Repo: repo, Path: e.Path, Exists: w.Exists, Head: e.Head, DirtyFiles: []string{},
					Problem: "detached HEAD: no branch to compare"}
				if w.Exists {
					if files, err := g.Changes(ctx, e.Path, true); err == nil && files != nil {
						st.DirtyFiles = files
					}
				}
			} else if base, err := g.baseOf(ctx, repo, "", e.Branch); err != nil {
				st = Status{Role: role, Branch: e.Branch, Repo: repo, Path: e.Path, Exists: w.Exists, DirtyFiles: []string{}, Problem: err.Error()}
			} else {
				w.Base = base
				st = g.StatusOf(ctx, w)
			}
			st.Orphan = true
			orphans = append(orphans, st)
		}
	}
	sort.Slice(orphans, func(i, j int) bool { return orphans[i].Path < orphans[j].Path })
	return append(out, orphans...)
}

// unwrapRole drops the "worktree of role X: " that Resolve adds, for a
// listing that names the role already.
func unwrapRole(err error, role string) string {
	return strings.TrimPrefix(err.Error(), "worktree of role "+role+": ")
}

// ErrUnsaved means a worktree was not removed because that would lose
// work: uncommitted files, or commits not merged into its base.
var ErrUnsaved = errors.New("it holds work that is not merged")

// Removal is what Remove did.
type Removal struct {
	// BranchDeleted: the branch was merged into its base, so it went too.
	BranchDeleted bool
	// BranchKept says why the branch was kept, when it was.
	BranchKept string
}

// Remove removes an orphan's worktree (see Survey). Without force it
// refuses, with ErrUnsaved, one whose removal would lose work (see
// Status.Unsaved). Its branch is deleted when base holds all of it and
// kept otherwise, so that even a forced removal never loses a commit.
func (g Git) Remove(ctx context.Context, st Status, force bool) (Removal, error) {
	if unsaved := st.Unsaved(); len(unsaved) > 0 && !force {
		return Removal{}, fmt.Errorf("%w: %s", ErrUnsaved, strings.Join(unsaved, "; "))
	}
	var err error
	switch {
	case !st.Exists:
		_, err = g.Run(ctx, st.Repo, "worktree", "prune")
	case force:
		_, err = g.Run(ctx, st.Repo, "worktree", "remove", "--force", "--end-of-options", st.Path)
	default:
		_, err = g.Run(ctx, st.Repo, "worktree", "remove", "--end-of-options", st.Path)
	}
	if err != nil {
		return Removal{}, fmt.Errorf("remove the worktree %s: %w", st.Path, err)
	}
	switch {
	case st.Branch == "":
		return Removal{}, nil
	case st.Base == "" || st.Problem != "":
		return Removal{BranchKept: "it could not be compared with its base"}, nil
	case st.Ahead > 0:
		return Removal{BranchKept: fmt.Sprintf("%d %s not in %s", st.Ahead, plural(st.Ahead, "commit", "commits"), st.Base)}, nil
	}
	if _, err := g.Run(ctx, st.Repo, "branch", "-D", "--end-of-options", st.Branch); err != nil {
		return Removal{BranchKept: err.Error()}, nil
	}
	return Removal{BranchDeleted: true}, nil
}
