package gitwork

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
)

// DiffOptions choose what Diff shows.
type DiffOptions struct {
	// Uncommitted adds the worktree's uncommitted changes to tracked files
	// (untracked files are never in a diff); without it Diff shows exactly
	// what Merge would take in: the branch's commits.
	Uncommitted bool
	// Stat prints a summary per file instead of the changes.
	Stat bool
}

// Diff writes the role's changes against its base to out, as git diff
// prints them: the branch's changes since it left the base.
func (g Git) Diff(ctx context.Context, w Worktree, opts DiffOptions, out io.Writer) error {
	if err := g.needBranch(ctx, w); err != nil {
		return fmt.Errorf("diff of role %s: %w", w.Role, err)
	}
	args := []string{"diff", "--no-color", "--no-ext-diff"}
	if opts.Stat {
		args = append(args, "--stat")
	}
	dir := w.Repo
	if opts.Uncommitted {
		if !w.Exists {
			return fmt.Errorf("diff of role %s: its worktree %s does not exist yet", w.Role, w.Path)
		}
		fork, err := g.Run(ctx, w.Repo, "merge-base", "--end-of-options", w.Base, w.Branch)
		if err == nil {
			err = checkObjectID("git merge-base", fork)
		}
		if err != nil {
			return fmt.Errorf("diff of role %s: find where %s left %s: %w", w.Role, w.Branch, w.Base, err)
		}
		// Run in the worktree, a commit against the work tree.
		dir, args = w.Path, append(args, "--end-of-options", fork, "--")
	} else {
		args = append(args, "--end-of-options", w.Base+"..."+w.Branch, "--")
	}
	if err := g.runTo(ctx, dir, out, args...); err != nil {
		return fmt.Errorf("diff of role %s: %w", w.Role, err)
	}
	return nil
}

// needBranch says why w has nothing to show or merge when its branch does
// not exist yet.
func (g Git) needBranch(ctx context.Context, w Worktree) error {
	ok, err := g.branchExists(ctx, w.Repo, w.Branch)
	if err == nil && !ok {
		err = fmt.Errorf("branch %s does not exist yet in %s: shogun start makes it with the role's worktree", w.Branch, w.Repo)
	}
	return err
}

// MergeResult is what Merge did.
type MergeResult struct {
	// Commits is how many of the branch's commits were merged; 0 means
	// there was nothing to merge and nothing changed.
	Commits int
	// Commit is the base's new head: the merge (or squash) commit.
	Commit string
	// Squash: the commits were taken in as one new commit.
	Squash bool
	// Uncommitted are files the worktree has not committed; they are not
	// part of a merge, which takes commits only.
	Uncommitted []string
}

// ConflictError means the merge stopped at conflicts; it was aborted, and
// the main checkout is as it was before.
type ConflictError struct {
	Role, Branch, Base, Repo string
	// Files are the files both sides changed differently.
	Files []string
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("merge of role %s (%s into %s) stopped at a conflict in %s; the merge was aborted and %s is as it was: resolve it in the role's worktree (merge %s into %s there) and merge again",
		e.Role, e.Branch, e.Base, strings.Join(e.Files, ", "), e.Repo, e.Base, e.Branch)
}

// Merge merges w's branch into its base in the main checkout: a merge
// commit (git merge --no-ff), or with squash one new commit holding all of
// the branch's changes. It refuses when the main checkout is not on the
// base, has uncommitted changes to tracked files, or is in the middle of
// another merge. A conflict is aborted at once (*ConflictError, naming
// the files): nothing is ever left half merged.
func (g Git) Merge(ctx context.Context, w Worktree, squash bool) (MergeResult, error) {
	res, err := g.merge(ctx, w, squash)
	if err != nil {
		var ce *ConflictError
		if errors.As(err, &ce) {
			return res, err
		}
		return res, fmt.Errorf("merge of role %s: %w", w.Role, err)
	}
	return res, nil
}

func (g Git) merge(ctx context.Context, w Worktree, squash bool) (MergeResult, error) {
	res := MergeResult{Squash: squash}
	if err := g.needBranch(ctx, w); err != nil {
		return res, err
	}
	cur, err := g.Branch(ctx, w.Repo)
	if err != nil {
		return res, err
	}
	if cur != w.Base {
		on := "is not on a branch"
		if cur != "" {
			on = "is on " + cur
		}
		return res, fmt.Errorf("the main checkout %s %s, not on %s, the base: switch it first (git -C %q switch %s)", w.Repo, on, w.Base, w.Repo, w.Base)
	}
	if busy, err := g.commitExists(ctx, w.Repo, "MERGE_HEAD"); err != nil {
		return res, err
	} else if busy {
		return res, fmt.Errorf("the main checkout %s is in the middle of another merge: finish it or run git merge --abort first", w.Repo)
	}
	dirty, err := g.Changes(ctx, w.Repo, false)
	if err != nil {
		return res, err
	}
	if len(dirty) > 0 {
		return res, fmt.Errorf("the main checkout %s has uncommitted changes (%s): commit or stash them first", w.Repo, listShort(dirty, 5))
	}
	if w.Exists {
		if res.Uncommitted, err = g.Changes(ctx, w.Path, true); err != nil {
			return res, err
		}
	}
	if res.Commits, _, err = g.unmerged(ctx, w.Repo, w.Base, w.Branch); err != nil {
		return res, err
	}
	if res.Commits == 0 {
		return res, nil
	}
	before, err := g.Head(ctx, w.Repo)
	if err != nil {
		return res, err
	}
	tip, err := g.Run(ctx, w.Repo, "rev-parse", "--verify", "--end-of-options", w.Branch+"^{commit}")
	if err == nil {
		err = checkObjectID("the tip of "+w.Branch, tip)
	}
	if err != nil {
		return res, err
	}
	if squash {
		err = g.squash(ctx, w, res.Commits, tip)
	} else {
		msg := fmt.Sprintf("Merge role %s (branch %s) into %s", w.Role, w.Branch, w.Base)
		_, err = g.Run(ctx, w.Repo, "merge", "--no-ff", "--no-edit", "-m", msg, "--end-of-options", tip)
	}
	if err != nil {
		return res, g.undo(ctx, w, before, err)
	}
	if res.Commit, err = g.Head(ctx, w.Repo); err != nil {
		return res, err
	}
	return res, nil
}

// squash takes the branch's changes in as one commit and records its tip,
// which from then on counts as merged.
func (g Git) squash(ctx context.Context, w Worktree, commits int, tip string) error {
	log, err := g.Run(ctx, w.Repo, "log", "--format=- %s", "--end-of-options", w.Base+".."+tip, "--")
	if err != nil {
		return err
	}
	if _, err := g.Run(ctx, w.Repo, "merge", "--squash", "--end-of-options", tip); err != nil {
		return err
	}
	msg := fmt.Sprintf("Role %s: %d %s of branch %s, squashed\n\n%s", w.Role, commits, plural(commits, "commit", "commits"), w.Branch, log)
	if _, err := g.Run(ctx, w.Repo, "commit", "--no-edit", "-m", msg); err != nil {
		return err
	}
	_, err = g.Run(ctx, w.Repo, "config", branchKey(w.Branch, keySquashed), tip)
	return err
}

// undo puts the main checkout back as it was before a merge that failed,
// and says why it failed: the conflicting files when there were any.
func (g Git) undo(ctx context.Context, w Worktree, before string, cause error) error {
	conflicts, listErr := g.output(ctx, w.Repo, "diff", "--name-only", "--diff-filter=U", "-z")
	// reset --merge undoes a merge or a squash alike (a squash leaves no
	// MERGE_HEAD for merge --abort), keeping nothing of it; the checkout
	// was clean before, so nothing else is touched. reset takes no
	// --end-of-options (git 2.39); before is a commit id Head checked.
	if _, err := g.Run(ctx, w.Repo, "reset", "--merge", before); err != nil {
		return fmt.Errorf("%v; then undoing it failed too, so %s may be half merged: %w (look with git status, and run git merge --abort there)", cause, w.Repo, err)
	}
	if after, err := g.Head(ctx, w.Repo); err != nil || after != before {
		return fmt.Errorf("%v; and %s did not come back to %s after undoing it (look with git status)", cause, w.Repo, before)
	}
	if files := splitZ(conflicts); listErr == nil && len(files) > 0 {
		return &ConflictError{Role: w.Role, Branch: w.Branch, Base: w.Base, Repo: w.Repo, Files: files}
	}
	return cause
}
