//go:build windows

package gitwork

// longPathsDefault: Windows limits paths to 260 characters unless git is
// told otherwise, and a worktree nested in .shogun/worktrees/<role> adds to
// every path of the repository.
const longPathsDefault = true
