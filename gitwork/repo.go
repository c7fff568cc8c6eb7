package gitwork

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/shogun-dev/shogun/atomicfile"
)

// Location is where a folder sits in a git repository.
type Location struct {
	// Main is the repository's main checkout: the folder `git clone` made,
	// whatever linked worktree the folder is in.
	Main string
	// Top is the top folder of the work tree holding the folder (Main,
	// unless the folder is in a linked worktree).
	Top string
	// Prefix is the folder relative to Top, slash separated; "" for Top.
	Prefix string
}

// Locate finds the repository that holds dir. A folder outside any
// repository is ErrNotRepository; a bare repository, which has no main
// checkout to merge into, is refused too.
func (g Git) Locate(ctx context.Context, dir string) (Location, error) {
	out, err := g.Run(ctx, dir, "rev-parse", "--show-toplevel", "--show-prefix")
	if err != nil {
		if isNotRepository(err) {
			return Location{}, fmt.Errorf("%s: %w", dir, ErrNotRepository)
		}
		return Location{}, fmt.Errorf("locate the repository of %s: %w", dir, err)
	}
	lines := strings.Split(out, "\n")
	if len(lines) < 1 || lines[0] == "" {
		return Location{}, fmt.Errorf("%s is inside a git folder but not in a work tree (a bare repository or .git itself)", dir)
	}
	loc := Location{Top: osPath(lines[0])}
	if err := checkAbsPath("the top folder git names for "+dir, loc.Top); err != nil {
		return Location{}, err
	}
	if len(lines) > 1 {
		loc.Prefix = strings.TrimSuffix(lines[1], "/")
	}
	list, err := g.worktrees(ctx, dir)
	if err != nil {
		return Location{}, err
	}
	if len(list) == 0 || list[0].Bare {
		return Location{}, fmt.Errorf("%s belongs to a bare repository: worktrees need a main checkout to merge into", dir)
	}
	loc.Main = list[0].Path
	return loc, nil
}

// isNotRepository recognises git's "not a git repository" refusal.
func isNotRepository(err error) bool {
	var ge *Error
	return errors.As(err, &ge) && strings.Contains(strings.ToLower(ge.Stderr), "not a git repository")
}

// osPath turns a path git printed (forward slashes, also on Windows) into
// one for this OS.
func osPath(p string) string { return filepath.Clean(filepath.FromSlash(p)) }

// samePath compares two paths as the file system does: without case on
// Windows, where C:\Work and c:\work are one folder.
func samePath(a, b string) bool {
	a, b = filepath.Clean(a), filepath.Clean(b)
	if runtime.GOOS == "windows" {
		return strings.EqualFold(a, b)
	}
	return a == b
}

// entry is one worktree of `git worktree list --porcelain`.
type entry struct {
	Path     string
	Head     string
	Branch   string // short name; "" when detached
	Bare     bool
	Prunable bool // registered, but its folder is gone
	Locked   bool
}

// worktrees lists every worktree of the repository holding dir, the main
// checkout first. A worktree whose folder is not an absolute path, or whose
// branch is not a name a configuration could give (see checkBranch), is an
// error: git reads both from files an agent can edit (.git/worktrees/*).
func (g Git) worktrees(ctx context.Context, dir string) ([]entry, error) {
	out, err := g.output(ctx, dir, "worktree", "list", "--porcelain")
	if err != nil {
		return nil, fmt.Errorf("list worktrees: %w", err)
	}
	var list []entry
	for _, block := range strings.Split(strings.ReplaceAll(string(out), "\r\n", "\n"), "\n\n") {
		var e entry
		for _, line := range strings.Split(block, "\n") {
			key, val, _ := strings.Cut(line, " ")
			switch key {
			case "worktree":
				e.Path = osPath(val)
			case "HEAD":
				e.Head = val
			case "branch":
				e.Branch = strings.TrimPrefix(val, "refs/heads/")
			case "bare":
				e.Bare = true
			case "prunable":
				e.Prunable = true
			case "locked":
				e.Locked = true
			}
		}
		if e.Path == "" {
			continue
		}
		if err := checkAbsPath("a worktree's folder in git worktree list", e.Path); err != nil {
			return nil, err
		}
		if e.Branch != "" {
			if err := checkBranch("the branch of worktree "+e.Path, e.Branch); err != nil {
				return nil, err
			}
		}
		list = append(list, e)
	}
	return list, nil
}

// Head is the commit checked out in dir; "" in a repository without commits.
func (g Git) Head(ctx context.Context, dir string) (string, error) {
	out, err := g.Run(ctx, dir, "rev-parse", "--verify", "-q", "HEAD")
	if exitCode(err) == 1 {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read HEAD: %w", err)
	}
	if err := checkObjectID("HEAD of "+dir, out); err != nil {
		return "", err
	}
	return out, nil
}

// Branch is the branch checked out in dir; "" when HEAD is detached.
func (g Git) Branch(ctx context.Context, dir string) (string, error) {
	out, err := g.Run(ctx, dir, "symbolic-ref", "--short", "-q", "HEAD")
	if exitCode(err) == 1 {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read the current branch: %w", err)
	}
	if err := checkBranch("the branch checked out in "+dir, out); err != nil {
		return "", err
	}
	return out, nil
}

// Changes lists the files of dir's work tree that differ from its HEAD:
// modified, added, deleted, renamed, and with untracked also the files
// git does not track (ignored ones never), as `git status` names them.
func (g Git) Changes(ctx context.Context, dir string, untracked bool) ([]string, error) {
	mode := "--untracked-files=normal"
	if !untracked {
		mode = "--untracked-files=no"
	}
	// --no-optional-locks: a status taken while an agent works in the same
	// tree must never make the agent's own git command fail on index.lock.
	out, err := g.output(ctx, dir, "--no-optional-locks", "status", "--porcelain=v1", "-z", mode)
	if err != nil {
		return nil, fmt.Errorf("read uncommitted changes: %w", err)
	}
	var files []string
	fields := splitZ(out)
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		if len(f) < 4 {
			continue
		}
		files = append(files, f[3:])
		// A rename or copy is followed by the name it had.
		if f[0] == 'R' || f[0] == 'C' || f[1] == 'R' || f[1] == 'C' {
			i++
		}
	}
	return files, nil
}

// AheadBehind counts the commits of branch that base lacks (ahead) and
// those of base that branch lacks (behind).
func (g Git) AheadBehind(ctx context.Context, dir, base, branch string) (ahead, behind int, err error) {
	out, err := g.Run(ctx, dir, "rev-list", "--left-right", "--count", "--end-of-options", base+"..."+branch, "--")
	if err != nil {
		return 0, 0, fmt.Errorf("count commits between %s and %s: %w", base, branch, err)
	}
	f := strings.Fields(out)
	if len(f) != 2 {
		return 0, 0, fmt.Errorf("count commits between %s and %s: unexpected output %q", base, branch, out)
	}
	if behind, err = strconv.Atoi(f[0]); err == nil {
		ahead, err = strconv.Atoi(f[1])
	}
	if err != nil {
		return 0, 0, fmt.Errorf("count commits between %s and %s: %w", base, branch, err)
	}
	return ahead, behind, nil
}

// commitExists says whether rev names a commit in dir's repository.
func (g Git) commitExists(ctx context.Context, dir, rev string) (bool, error) {
	_, err := g.Run(ctx, dir, "rev-parse", "--verify", "-q", "--end-of-options", rev+"^{commit}")
	switch code := exitCode(err); {
	case err == nil:
		return true, nil
	case code == 1:
		return false, nil
	default:
		return false, fmt.Errorf("look up %s: %w", rev, err)
	}
}

// branchExists says whether refs/heads/name exists.
func (g Git) branchExists(ctx context.Context, dir, name string) (bool, error) {
	_, err := g.Run(ctx, dir, "show-ref", "--verify", "--quiet", "--end-of-options", "refs/heads/"+name)
	switch code := exitCode(err); {
	case err == nil:
		return true, nil
	case code == 1:
		return false, nil
	default:
		return false, fmt.Errorf("look up branch %s: %w", name, err)
	}
}

// config reads a repository setting; "" when it is not set.
func (g Git) config(ctx context.Context, dir, key string) (string, error) {
	out, err := g.Run(ctx, dir, "config", "--get", key)
	if exitCode(err) == 1 {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read git setting %s: %w", key, err)
	}
	return out, nil
}

// exclude makes git ignore pattern in the repository of dir without
// touching any tracked file: .git/info/exclude is the repository's own,
// never committed. Nested worktrees would otherwise show as untracked
// files in the main checkout.
func (g Git) exclude(ctx context.Context, dir, pattern string) error {
	p, err := g.Run(ctx, dir, "rev-parse", "--git-path", "info/exclude")
	if err != nil {
		return fmt.Errorf("find info/exclude: %w", err)
	}
	path := osPath(p)
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("read %s: %w", path, err)
	}
	for _, line := range strings.Split(strings.ReplaceAll(string(old), "\r\n", "\n"), "\n") {
		if strings.TrimSpace(line) == pattern {
			return nil
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("add %s to %s: %w", pattern, path, err)
	}
	text := append([]byte{}, old...)
	if len(text) > 0 && text[len(text)-1] != '\n' {
		text = append(text, '\n')
	}
	text = append(text, "# shogun: role worktrees\n"+pattern+"\n"...)
	if err := atomicfile.Write(path, text, 0o644); err != nil {
		return fmt.Errorf("add %s to %s: %w", pattern, path, err)
	}
	return nil
}

// InRepository says whether dir is inside a git work tree; false also when
// git cannot be run.
func (g Git) InRepository(ctx context.Context, dir string) bool {
	out, err := g.Run(ctx, dir, "rev-parse", "--is-inside-work-tree")
	return err == nil && out == "true"
}
