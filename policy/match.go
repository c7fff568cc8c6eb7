package policy

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// Pattern is a shell-command pattern: words separated by spaces, matched
// against the first words of a simple command (what follows the pattern's
// last word is free, as in a CLI's own "Bash(git push:*)"). The word "*"
// stands for any number of words, none included; in any other word "*"
// stands for any characters and "?" for one. "git push * --force" matches "git push --force" and
// "git push origin main --force"; "rm * -*r*" matches "rm -rf build" and
// "rm -v -r x".
type Pattern struct {
	words []string
}

// ParsePattern reads a pattern; it must have at least one word.
func ParsePattern(s string) (Pattern, error) {
	ws := strings.Fields(s)
	if len(ws) == 0 {
		return Pattern{}, errors.New("a command pattern needs at least one word")
	}
	return Pattern{words: ws}, nil
}

// String is the pattern as written, spaces normalised.
func (p Pattern) String() string { return strings.Join(p.words, " ") }

// Match reports whether the command's words start with a match of the
// pattern.
func (p Pattern) Match(words []string) bool {
	return matchWords(append(p.words[:len(p.words):len(p.words)], "*"), words)
}

func matchWords(pat, words []string) bool {
	if len(pat) == 0 {
		return len(words) == 0
	}
	if pat[0] == "*" {
		for k := 0; k <= len(words); k++ {
			if matchWords(pat[1:], words[k:]) {
				return true
			}
		}
		return false
	}
	return len(words) > 0 && Glob(pat[0], words[0]) && matchWords(pat[1:], words[1:])
}

// Glob matches s against a pattern where "*" is any run of characters and
// "?" any one character; everything else stands for itself.
func Glob(pattern, s string) bool {
	p, t := []rune(pattern), []rune(s)
	// The classic two-pointer match with one remembered star: linear in
	// practice, and no recursion on agent-provided text.
	pi, ti, star, mark := 0, 0, -1, 0
	for ti < len(t) {
		switch {
		case pi < len(p) && (p[pi] == '?' || p[pi] == t[ti]):
			pi++
			ti++
		case pi < len(p) && p[pi] == '*':
			star, mark = pi, ti
			pi++
		case star >= 0:
			pi = star + 1
			mark++
			ti = mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}

// PathCond is one entry of a rule's paths: "inside" (the role's working
// directory, links followed), "outside", or a glob of slash-separated
// segments where "**" is any number of segments, relative to the
// workspace: "config/**" is the workspace's config/ and everything in it.
// A glob that starts with "**/" matches anywhere, in the workspace or not:
// "**/.git/**" is every .git folder. A path that cannot be known before
// the command runs ($HOME, ~other) is outside and matches no glob.
// "{role}" in a glob stands for the id of the role that acts:
// "runtime/queue/reports/{role}.*" is each role's own report; "{other}"
// for any name but that id: "runtime/queue/reports/{other}.*" is every
// other role's.
type PathCond struct {
	inside, outside bool
	glob            []string
	text            string
}

// ParsePathCond reads a path condition.
func ParsePathCond(s string) (PathCond, error) {
	switch s {
	case "inside":
		return PathCond{inside: true, text: s}, nil
	case "outside":
		return PathCond{outside: true, text: s}, nil
	case "":
		return PathCond{}, errors.New("a path pattern must not be empty")
	}
	clean := strings.Trim(strings.ReplaceAll(s, `\`, "/"), "/")
	segs := strings.Split(clean, "/")
	for _, seg := range segs {
		if seg == ".." || seg == "." || seg == "" {
			return PathCond{}, fmt.Errorf("path pattern %q: use plain folder names and * or **, not %q", s, seg)
		}
		if rest := strings.NewReplacer(roleVar, "", otherVar, "").Replace(seg); strings.ContainsAny(rest, "{}") {
			return PathCond{}, fmt.Errorf("path pattern %q: braces only as %s or %s", s, roleVar, otherVar)
		}
	}
	return PathCond{glob: segs, text: s}, nil
}

// String is the condition as written.
func (c PathCond) String() string { return c.text }

func (c PathCond) match(place Place, role string, pa pathArg) bool {
	dir := realPath(place.Dir)
	switch {
	case c.inside:
		return pa.known && within(dir, pa.abs)
	case c.outside:
		return !pa.known || !within(dir, pa.abs)
	case !pa.known:
		return false
	}
	glob := c.glob
	if strings.Contains(c.text, roleVar) {
		glob = make([]string, len(c.glob))
		for i, g := range c.glob {
			glob[i] = strings.ReplaceAll(g, roleVar, role)
		}
	}
	if glob[0] == "**" {
		return matchSegs(glob, strings.FieldsFunc(filepath.ToSlash(pa.abs), func(r rune) bool { return r == '/' }), role)
	}
	root := realPath(place.Workspace)
	if !within(root, pa.abs) {
		return false
	}
	rel, err := filepath.Rel(root, pa.abs)
	if err != nil {
		return false
	}
	var segs []string
	if rel != "." {
		segs = strings.Split(filepath.ToSlash(rel), "/")
	}
	return matchSegs(glob, segs, role)
}

// roleVar in a path glob stands for the acting role's id, otherVar for
// any other name.
const (
	roleVar  = "{role}"
	otherVar = "{other}"
)

func matchSegs(pat, segs []string, role string) bool {
	if len(pat) == 0 {
		return len(segs) == 0
	}
	if pat[0] == "**" {
		for k := 0; k <= len(segs); k++ {
			if matchSegs(pat[1:], segs[k:], role) {
				return true
			}
		}
		return false
	}
	return len(segs) > 0 && matchSeg(pat[0], segs[0], role) && matchSegs(pat[1:], segs[1:], role)
}

// matchSeg matches one segment; {other} is what * matches, less what the
// role's id would.
func matchSeg(pat, seg, role string) bool {
	if !strings.Contains(pat, otherVar) {
		return Glob(pat, seg)
	}
	return Glob(strings.ReplaceAll(pat, otherVar, "*"), seg) && !Glob(strings.ReplaceAll(pat, otherVar, role), seg)
}

// pathArg is a path an action touches: where it really leads (absolute,
// cleaned, links followed), or unknown.
type pathArg struct {
	abs   string
	known bool
}

// resolveWord is resolvePath for a shell word: one with a $ expansion
// cannot be known.
func resolveWord(place Place, cwd string, w word) pathArg {
	if w.dynamic {
		return pathArg{}
	}
	return resolvePath(place, cwd, w.text)
}

// resolvePath finds where p leads from cwd ("" when unknown): "~" is the
// place's home, ".." is taken lexically as the shell does, and links are
// followed for the part that exists.
func resolvePath(place Place, cwd, p string) pathArg {
	if strings.ContainsAny(p, "$`\x00") {
		return pathArg{}
	}
	if p == "~" || strings.HasPrefix(p, "~/") {
		if place.Home == "" {
			return pathArg{}
		}
		p = filepath.Join(place.Home, p[1:])
	} else if strings.HasPrefix(p, "~") {
		return pathArg{} // ~other: someone else's home
	}
	p = filepath.FromSlash(p)
	if !filepath.IsAbs(p) {
		switch {
		case cwd == "":
			return pathArg{}
		case p != "" && os.IsPathSeparator(p[0]):
			// Rooted on the current drive: on Windows \etc\hosts is C:\etc\hosts.
			p = filepath.VolumeName(cwd) + p
		default:
			p = filepath.Join(cwd, p)
		}
	}
	return pathArg{abs: realPath(filepath.Clean(p)), known: true}
}

// realPath returns p with every symbolic link resolved; the part of p that
// does not exist yet is kept as written after its longest existing prefix,
// so a file about to be created is judged by the folder it goes into.
func realPath(p string) string {
	if p == "" {
		return ""
	}
	p = filepath.Clean(p)
	var rest []string
	for {
		real, err := filepath.EvalSymlinks(p)
		if err == nil {
			return filepath.Join(append([]string{real}, rest...)...)
		}
		parent := filepath.Dir(p)
		if !errors.Is(err, fs.ErrNotExist) || parent == p {
			// Unreadable: judged as written.
			return filepath.Join(append([]string{p}, rest...)...)
		}
		rest = append([]string{filepath.Base(p)}, rest...)
		p = parent
	}
}

// within reports whether p is root or lies below it; both clean and
// absolute.
func within(root, p string) bool {
	if root == "" || p == "" {
		return false
	}
	if p == root {
		return true
	}
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// hostOf is the lower-case host name of a URL, "" when there is none.
func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return strings.ToLower(u.Hostname())
}
