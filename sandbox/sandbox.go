// Package sandbox confines a role's process tree to the files it needs, where
// the operating system offers a way: Landlock on Linux. A Spec says what the
// tree may write and what it may not read; Apply restricts the calling
// process (and everything it starts later) to it, and cannot be undone.
//
// Go cannot restrict a child between fork and exec, so the supervisor starts
// `shogun sandbox-exec` (Args) in the role's terminal instead of the role's
// program: it applies the Spec to itself and then replaces itself with the
// program, which inherits the restriction with every process it starts.
//
// Landlock only grants: a rule on a folder allows its whole subtree, and
// nothing can take a subfolder back out. So a folder that must stay out of
// reach inside an allowed one (runtime/state inside the workspace, ~/.ssh
// inside the home folder) is handled by granting its siblings one by one
// instead of their parent (Beneath). Listing folders stays allowed
// everywhere: a file's name is not its content, and without it no program
// could walk from / to the files it may read.
package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Spec is what a sandboxed process tree may touch. Paths are absolute.
type Spec struct {
	// Write are folders and files the tree may create, change and remove
	// things in (and read).
	Write []string
	// NoWrite are places inside Write folders that stay read-only: they
	// are left out of the grant by granting their siblings instead.
	NoWrite []string
	// Hide are folders and files whose contents the tree may not read (or
	// run), wherever they are: everything else on the machine is readable.
	Hide []string
	// Show are places inside Hide that are readable after all (the CLI
	// configuration shogun writes under runtime/state).
	Show []string
}

// Mode is how a role asks for the sandbox (the role key sandbox).
type Mode string

// The sandbox modes.
const (
	// Off runs the role as any other program of its owner.
	Off Mode = ""
	// Required runs the role sandboxed or not at all: where the system
	// has no sandbox the role is fatal, with the reason.
	Required Mode = "required"
	// Preferred runs the role sandboxed where the system has one, and
	// unsandboxed (said once at start) where it has none.
	Preferred Mode = "preferred"
)

// ErrUnavailable is wrapped by Available's error on a system without a
// sandbox shogun can use.
var ErrUnavailable = errors.New("no sandbox")

// Subcommand is the hidden shogun command that applies a Spec and runs a
// program inside it (see Args).
const Subcommand = "sandbox-exec"

// Args are the arguments of `shogun sandbox-exec` that run program with
// args inside spec; program should be absolute, as the subcommand looks it
// up in PATH only when it has no slash.
func (s Spec) Args(program string, args []string) []string {
	out := []string{Subcommand}
	for _, f := range []struct {
		flag  string
		paths []string
	}{{"--write", s.Write}, {"--no-write", s.NoWrite}, {"--hide", s.Hide}, {"--show", s.Show}} {
		for _, p := range f.paths {
			out = append(out, f.flag, p)
		}
	}
	out = append(out, "--", program)
	return append(out, args...)
}

// ParseArgs is the reverse of Args, without the subcommand's name: the spec
// and the program with its arguments.
func ParseArgs(args []string) (Spec, []string, error) {
	var s Spec
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			if i+1 >= len(args) {
				return s, nil, errors.New("sandbox-exec: no program after --")
			}
			return s, args[i+1:], nil
		}
		if i+1 >= len(args) {
			return s, nil, fmt.Errorf("sandbox-exec: %s needs a path", a)
		}
		p := args[i+1]
		if !filepath.IsAbs(p) {
			return s, nil, fmt.Errorf("sandbox-exec: %s %q: the path must be absolute", a, p)
		}
		switch a {
		case "--write":
			s.Write = append(s.Write, p)
		case "--no-write":
			s.NoWrite = append(s.NoWrite, p)
		case "--hide":
			s.Hide = append(s.Hide, p)
		case "--show":
			s.Show = append(s.Show, p)
		default:
			return s, nil, fmt.Errorf("sandbox-exec: unknown flag %q", a)
		}
		i++
	}
	return s, nil, errors.New("sandbox-exec: no -- before the program")
}

// Beneath returns the largest places under root (root itself when it can)
// that contain none of out, so that granting each of them grants root
// without out. A folder that holds one of out is not returned: its entries
// are, one by one, down to out's siblings; a symbolic link is never
// returned, as a grant through it would reach its target, which is granted
// (or not) at its own place. Entries that come and go later are not
// covered: a file created later in such a folder is outside every grant.
// Paths should be free of symbolic links (see Resolve).
func Beneath(root string, out []string) []string {
	if slices.ContainsFunc(out, func(o string) bool { return within(o, root) }) {
		return nil
	}
	if !slices.ContainsFunc(out, func(o string) bool { return within(root, o) }) {
		if fi, err := os.Lstat(root); err != nil || fi.Mode()&os.ModeSymlink != 0 {
			return nil
		}
		return []string{root}
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil
	}
	var grants []string
	for _, e := range entries {
		grants = append(grants, Beneath(filepath.Join(root, e.Name()), out)...)
	}
	return grants
}

// Splits reports whether the grant of folder dir would be split into its
// entries (Beneath): a NoWrite or Hide place lies inside it. A new file made
// directly in such a folder later is outside every grant, so a temp folder
// that splits is no temp folder at all.
func (s Spec) Splits(dir string) bool {
	dirs := Resolve([]string{dir})
	for _, k := range Resolve(append(slices.Clone(s.NoWrite), s.Hide...)) {
		if k != dirs[0] && within(dirs[0], k) {
			return true
		}
	}
	return false
}

// within reports whether path is dir or inside it.
func within(dir, path string) bool {
	if dir == path {
		return true
	}
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// Resolve makes each path absolute and free of symbolic links, as the
// kernel sees it; a path that does not exist yet keeps its resolved parent.
func Resolve(paths []string) []string {
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		p = filepath.Clean(p)
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		} else if dir, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
			p = filepath.Join(dir, filepath.Base(p))
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}
