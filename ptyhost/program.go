package ptyhost

import (
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
)

// LookPath finds the program a Command with this Path and Dir runs, exactly
// as Start finds it, without starting anything: a name without a path
// separator in the supervisor's PATH (on Windows also with each PATHEXT
// extension, so "codex" finds codex.cmd), a relative path with a separator
// from dir (as a Unix exec after chdir, and Go's StartProcess on Windows,
// take it). The path comes back absolute. The error is os/exec's, which
// names the program (`exec: "claude": executable file not found in $PATH`);
// ProgramNotFound recognises it, also inside Start's.
func LookPath(path, dir string) (string, error) {
	return resolveProgram(path, dir)
}

// ProgramNotFound reports whether err says that a program could not be
// found or is not executable (LookPath's error, also wrapped in Start's):
// starting it again will not help until someone installs it or changes the
// command.
func ProgramNotFound(err error) bool {
	var e *exec.Error
	return errors.As(err, &e)
}

// resolveProgram is LookPath.
func resolveProgram(path, dir string) (string, error) {
	if dir != "" && strings.ContainsAny(path, `\/`) && !filepath.IsAbs(path) &&
		filepath.VolumeName(path) == "" && !strings.HasPrefix(path, `\`) && !strings.HasPrefix(path, "/") {
		path = filepath.Join(dir, path)
	}
	found, err := exec.LookPath(path)
	if err != nil {
		return "", err
	}
	abs, err := filepath.Abs(found)
	if err != nil {
		return "", fmt.Errorf("program path %s: %w", found, err)
	}
	return abs, nil
}
