package config

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
)

// Agents work inside the workspace and can create symbolic links there, so
// a path that is inside the workspace as written (roles/x.md) may lead
// anywhere once its links are followed (roles/x.md -> /etc/passwd). Paths
// from the configuration that must stay in the workspace are therefore
// checked twice: as written, and after resolving every link.

// resolveLinks returns p with every symbolic link resolved. The part of p
// that does not exist yet is kept as written after its longest existing
// prefix, so a folder that is created later is checked all the same.
func resolveLinks(p string) (string, error) {
	p = filepath.Clean(p)
	var rest []string
	for {
		real, err := filepath.EvalSymlinks(p)
		if err == nil {
			return filepath.Join(append([]string{real}, rest...)...), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		parent := filepath.Dir(p)
		if parent == p {
			return "", err
		}
		rest = append([]string{filepath.Base(p)}, rest...)
		p = parent
	}
}

// within reports whether p is root or lies below it. Both must be clean
// absolute paths.
func within(root, p string) bool {
	if p == root {
		return true
	}
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// escapesByLink reports where p really leads when p lies inside the
// workspace as written but outside it once symbolic links are followed;
// "" means p stays inside, or was outside as written (the owner's choice).
func escapesByLink(workspace, p string) (string, error) {
	if !within(filepath.Clean(workspace), filepath.Clean(p)) {
		return "", nil
	}
	root, err := resolveLinks(workspace)
	if err != nil {
		return "", err
	}
	real, err := resolveLinks(p)
	if err != nil {
		return "", err
	}
	if within(root, real) {
		return "", nil
	}
	return real, nil
}
