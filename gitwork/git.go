// Package gitwork gives roles git worktrees of their own, so that agents
// working side by side never edit the same checkout: it makes a role's
// worktree (git worktree add) or reuses it, reports on it (branch, commits
// ahead of and behind its base, uncommitted files), shows its changes,
// merges them into the base in the main checkout, and removes the
// worktrees no role uses any more.
//
// It runs the git program, the one the user already has and configured,
// rather than a library: hooks, attributes, credentials and settings then
// behave exactly as in the user's own git commands, and what shogun does
// can be repeated by hand. Every failure names the git command, the folder
// it ran in and what git said.
package gitwork

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/shogun-dev/shogun/config"
)

// ErrNotInstalled means the git program could not be found.
var ErrNotInstalled = errors.New("git is not installed, or not on PATH")

// ErrNotRepository means a folder is not inside a git work tree.
var ErrNotRepository = errors.New("not inside a git repository")

// Git runs git commands. The zero value runs "git" from PATH with this
// process's environment; New adds what the platform needs.
type Git struct {
	// Program is the git executable; "" means "git", looked up in PATH.
	Program string
	// Env is added to this process's environment for every command (tests
	// give git an author this way on a machine without a global config).
	Env []string
	// LongPaths passes core.longpaths=true to every command, and Ensure
	// sets it in the repository, so that paths longer than 260 characters
	// work on Windows. New sets it on Windows.
	LongPaths bool
}

// New returns the Git of this platform: long paths on Windows.
func New() Git { return Git{LongPaths: longPathsDefault} }

// Error is a git command that failed.
type Error struct {
	// Dir is the folder the command ran in.
	Dir string
	// Args are git's arguments, without the -c options Git adds.
	Args []string
	// Stderr is what git printed on its error output, trimmed.
	Stderr string
	// Err is the reason the command failed (usually an *exec.ExitError).
	Err error
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("git %s (in %s): %v", strings.Join(e.Args, " "), e.Dir, e.Err)
	if e.Stderr != "" {
		msg += ": " + oneLine(e.Stderr)
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

// ExitCode is git's exit status, or -1 when it did not run to an exit.
func (e *Error) ExitCode() int {
	var ee *exec.ExitError
	if errors.As(e.Err, &ee) {
		return ee.ExitCode()
	}
	return -1
}

// oneLine joins git's message lines (hints included) for an error that is
// printed on one line.
func oneLine(s string) string {
	var parts []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, " ")
}

// Run runs git with args in dir and returns its standard output, with the
// final line break removed. A failure is an *Error; git missing is
// ErrNotInstalled.
func (g Git) Run(ctx context.Context, dir string, args ...string) (string, error) {
	out, err := g.output(ctx, dir, args...)
	return strings.TrimSuffix(string(out), "\n"), err
}

// output runs git and returns its standard output as it is.
func (g Git) output(ctx context.Context, dir string, args ...string) ([]byte, error) {
	var stdout bytes.Buffer
	err := g.runTo(ctx, dir, &stdout, args...)
	// Some refusals go to standard output ("nothing to commit").
	var ge *Error
	if errors.As(err, &ge) && ge.Stderr == "" {
		msg := strings.TrimSpace(stdout.String())
		if len(msg) > 1000 {
			msg = msg[:1000] + "…"
		}
		ge.Stderr = msg
	}
	return stdout.Bytes(), err
}

// runTo runs git with its standard output going to stdout.
func (g Git) runTo(ctx context.Context, dir string, stdout io.Writer, args ...string) error {
	prog := g.Program
	if prog == "" {
		prog = "git"
	}
	full := make([]string, 0, len(args)+4)
	if g.LongPaths {
		full = append(full, "-c", "core.longpaths=true")
	}
	full = append(full, args...)
	cmd := exec.CommandContext(ctx, prog, full...)
	cmd.Dir = dir
	// Messages in English, so that what is matched below means the same
	// on every machine; never a prompt for credentials or an editor, which
	// would hang a supervisor that has no terminal to answer them.
	cmd.Env = append(os.Environ(), "LC_ALL=C", "LANGUAGE=C", "GIT_TERMINAL_PROMPT=0", "GIT_EDITOR=true", "GIT_MERGE_AUTOEDIT=no")
	cmd.Env = append(cmd.Env, g.Env...)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = stdout, &stderr
	if err := cmd.Run(); err != nil {
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) && isNotFound(err) {
			return fmt.Errorf("%w: %v", ErrNotInstalled, err)
		}
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (%v)", ctx.Err(), err)
		}
		return &Error{Dir: dir, Args: args, Stderr: strings.TrimSpace(stderr.String()), Err: err}
	}
	return nil
}

// isNotFound tells a missing git program from a missing working folder,
// both of which exec reports as "no such file".
func isNotFound(err error) bool {
	var pe *os.PathError
	return errors.As(err, &pe) && pe.Op != "chdir"
}

// exitCode is err's git exit status, or -1 for any other failure.
func exitCode(err error) int {
	var ge *Error
	if errors.As(err, &ge) {
		return ge.ExitCode()
	}
	return -1
}

// splitZ splits -z output into its fields.
func splitZ(b []byte) []string {
	s := strings.TrimSuffix(string(b), "\x00")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\x00")
}

// checkBranch refuses a branch name that configured names could not be
// (config.CheckBranchName): git would take "--output=/tmp/x" for an
// option. Names read back from git — a base recorded in the repository's
// config, the branch a checkout or a worktree is on — are checked too,
// because an agent can edit .git/config and .git/HEAD; what names the
// value says where it came from.
func checkBranch(what, name string) error {
	if problem := config.CheckBranchName(name); problem != "" {
		return fmt.Errorf("%s is %q, which is refused as a branch name: %s", what, name, problem)
	}
	return nil
}

// checkObjectID refuses anything but a full object id (40 or 64 hex
// digits), for commits read from git or from its config.
func checkObjectID(what, id string) error {
	if len(id) != 40 && len(id) != 64 || strings.Trim(id, "0123456789abcdef") != "" {
		return fmt.Errorf("%s is %q, which is not a commit id", what, id)
	}
	return nil
}

// checkAbsPath refuses a path read from git that is not absolute: every
// folder git names for a work tree is, and a relative one (or one that
// starts with "-") would be read from the wrong place or as an option.
func checkAbsPath(what, p string) error {
	if !filepath.IsAbs(p) {
		return fmt.Errorf("%s is %q, which is not an absolute path", what, p)
	}
	return nil
}
