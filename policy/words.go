package policy

import (
	"os"
	"path/filepath"
	"strings"
)

// This file finds the paths a shell word names: the word itself, the
// value of --opt=PATH and key=PATH (dd of=FILE), and what a glob or a
// brace in it expands to.

// maxExpansions bounds what one word may expand to (braces, then files
// matching a glob), and maxGlobReads the folder entries read to find
// them: past either, the word counts as a path that cannot be known.
const (
	maxExpansions = 256
	maxGlobReads  = 20000
)

// notFiles are redirection targets that are devices, not files.
var notFiles = map[string]bool{"/dev/null": true, "/dev/stdout": true, "/dev/stderr": true, "/dev/stdin": true, "/dev/tty": true, "NUL": true, "nul": true}

// pathsOf is every path word w may name, run from cwd. redirect is true
// for a redirection's target, which is a path whole.
func (r *commandReader) pathsOf(w word, cwd string, redirect bool) []pathArg {
	if notFiles[w.text] {
		return nil
	}
	texts := []string{w.text}
	if !redirect {
		if name, val, ok := strings.Cut(w.text, "="); ok && val != "" {
			if strings.HasPrefix(name, "-") || !strings.ContainsAny(name, "/") {
				// --output=FILE, of=FILE: the value is a path; the whole
				// word too, in case it is a file named so.
				texts = append(texts, val)
			}
		}
		if strings.HasPrefix(w.text, "-") && !strings.Contains(w.text, "=") {
			return nil // a flag
		}
		if strings.HasPrefix(w.text, "--") {
			texts = texts[1:]
		}
	}
	var out []pathArg
	for _, t := range texts {
		if isURL(t) {
			out = append(out, pathArg{}) // somewhere else, not a file here
			continue
		}
		if w.dynamic {
			out = append(out, pathArg{})
			continue
		}
		out = append(out, r.expand(t, w, cwd)...)
	}
	return out
}

// isURL reports whether s starts with a URL scheme (https://).
func isURL(s string) bool {
	scheme, _, ok := strings.Cut(s, "://")
	if !ok || scheme == "" {
		return false
	}
	for i, c := range scheme {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '.' || c == '-')) {
			return false
		}
	}
	return true
}

// expand resolves t, a word's text, to the paths the shell would give:
// braces expanded, then each glob matched against the files there (a
// glob that matches none stays as written, as the shell leaves it).
func (r *commandReader) expand(t string, w word, cwd string) []pathArg {
	alts := []string{t}
	if w.brace {
		var ok bool
		if alts, ok = expandBraces(t); !ok {
			return []pathArg{{}}
		}
	}
	var out []pathArg
	for _, a := range alts {
		if !w.glob || !strings.ContainsAny(a, "*?[") {
			out = append(out, resolvePath(r.place, cwd, a))
			continue
		}
		matches, ok := globFiles(r.place, cwd, a)
		if !ok {
			return []pathArg{{}}
		}
		if len(matches) == 0 {
			out = append(out, resolvePath(r.place, cwd, a))
		}
		for _, m := range matches {
			out = append(out, resolvePath(r.place, cwd, m))
		}
	}
	return out
}

// expandBraces expands a word's braces as bash does ({a,b}c is ac bc;
// {1..3} is 1 2 3); ok is false past maxExpansions.
func expandBraces(s string) ([]string, bool) {
	open := -1
	depth := 0
	for i, c := range s {
		switch c {
		case '{':
			if depth == 0 {
				open = i
			}
			depth++
		case '}':
			if depth == 0 {
				continue
			}
			depth--
			if depth > 0 {
				continue
			}
			inner, pre, post := s[open+1:i], s[:open], s[i+1:]
			parts := splitTopCommas(inner)
			if len(parts) < 2 {
				seq, ok := braceSequence(inner)
				if !ok && seq != nil {
					return nil, false // a sequence too long to follow
				}
				if !ok {
					// Not an expansion: {x} stays, the rest may have one.
					rest, ok := expandBraces(post)
					out := make([]string, len(rest))
					for k, r := range rest {
						out[k] = s[:i+1] + r
					}
					return out, ok
				}
				parts = seq
			}
			var out []string
			for _, p := range parts {
				ex, ok := expandBraces(pre + p + post)
				if !ok || len(out)+len(ex) > maxExpansions {
					return nil, false
				}
				out = append(out, ex...)
			}
			return out, true
		}
	}
	return []string{s}, true
}

// splitTopCommas splits s at the commas outside nested braces.
func splitTopCommas(s string) []string {
	var parts []string
	depth, last := 0, 0
	for i, c := range s {
		switch c {
		case '{':
			depth++
		case '}':
			depth--
		case ',':
			if depth == 0 {
				parts = append(parts, s[last:i])
				last = i + 1
			}
		}
	}
	return append(parts, s[last:])
}

// braceSequence expands a..b of letters or numbers; ok is false for
// anything else (nil) or a sequence too long (not nil).
func braceSequence(s string) ([]string, bool) {
	a, b, ok := strings.Cut(s, "..")
	if !ok || a == "" || b == "" {
		return nil, false
	}
	var from, to int
	switch {
	case len(a) == 1 && len(b) == 1 && !isDigits(a) && !isDigits(b):
		from, to = int(a[0]), int(b[0])
	case isDigits(strings.TrimPrefix(a, "-")) && isDigits(strings.TrimPrefix(strings.Split(b, "..")[0], "-")):
		var err error
		if from, err = atoiBounded(a); err != nil {
			return []string{}, false
		}
		if to, err = atoiBounded(strings.Split(b, "..")[0]); err != nil {
			return []string{}, false
		}
	default:
		return nil, false
	}
	step := 1
	if to < from {
		step = -1
	}
	if (to-from)*step >= maxExpansions {
		return []string{}, false
	}
	var out []string
	for v := from; ; v += step {
		if len(a) == 1 && !isDigits(a) {
			out = append(out, string(rune(v)))
		} else {
			out = append(out, itoa(v))
		}
		if v == to {
			return out, true
		}
	}
}

func atoiBounded(s string) (int, error) {
	n := 0
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	if len(s) > 6 {
		return 0, os.ErrInvalid
	}
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	if neg {
		n = -n
	}
	return n, nil
}

func itoa(n int) string {
	if n < 0 {
		return "-" + itoa(-n)
	}
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

// globFiles is what pattern matches among the files from cwd, segment
// by segment as the shell does (a segment without a glob character is
// taken as written); ok is false when finding them reads more than
// maxGlobReads entries or finds more than maxExpansions files.
func globFiles(place Place, cwd, pattern string) ([]string, bool) {
	pattern = filepath.FromSlash(pattern)
	var base string
	switch {
	case strings.HasPrefix(pattern, "~"):
		return nil, false // a home folder and a glob: judged unknown
	case filepath.IsAbs(pattern):
		base = filepath.VolumeName(pattern) + string(filepath.Separator)
		pattern = pattern[len(base):]
	case cwd == "":
		return nil, false
	default:
		base = cwd
	}
	segs := strings.Split(pattern, string(filepath.Separator))
	cands := []string{""} // relative to base
	reads := 0
	for si, seg := range segs {
		if seg == "" {
			continue
		}
		var next []string
		for _, c := range cands {
			if !strings.ContainsAny(seg, "*?[") {
				next = append(next, filepath.Join(c, seg))
				continue
			}
			entries, err := os.ReadDir(filepath.Join(base, c))
			if err != nil {
				continue
			}
			reads += len(entries)
			if reads > maxGlobReads {
				return nil, false
			}
			for _, e := range entries {
				if strings.HasPrefix(e.Name(), ".") && !strings.HasPrefix(seg, ".") {
					continue // the shell skips dot files unless asked
				}
				if m, err := filepath.Match(seg, e.Name()); err == nil && m {
					next = append(next, filepath.Join(c, e.Name()))
				} else if err != nil {
					return nil, false
				}
			}
			if len(next) > maxExpansions {
				return nil, false
			}
		}
		if si < len(segs)-1 {
			// Only what exists can be a folder to go on from.
			kept := next[:0]
			for _, n := range next {
				if _, err := os.Stat(filepath.Join(base, n)); err == nil {
					kept = append(kept, n)
				}
			}
			next = kept
		}
		cands = next
	}
	var out []string
	for _, c := range cands {
		if _, err := os.Lstat(filepath.Join(base, c)); err == nil {
			out = append(out, filepath.Join(base, c))
		}
	}
	return out, true
}
