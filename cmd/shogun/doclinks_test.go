package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/shogun-dev/shogun/shoguntest"
)

// Every relative link of the documentation leads somewhere: README.md,
// docs/*.md and the tools' READMEs link a file that exists, and a link's
// #anchor names a heading of its page as GitHub spells anchors. A section
// moved to another page without its links changed fails here, and so does
// a page under docs/ the README's map does not name.
func TestDocLinksResolve(t *testing.T) {
	root := shoguntest.ModuleRoot(t)
	anchors := map[string]map[string]bool{} // by slash path from the root
	anchorsOf := func(file string) map[string]bool {
		if a, ok := anchors[file]; ok {
			return a
		}
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(file)))
		if err != nil {
			t.Fatal(err)
		}
		a := headingAnchors(string(b))
		anchors[file] = a
		return a
	}
	checked := 0
	fromReadme := map[string]bool{}
	for _, file := range shoguntest.DocFiles(t) {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(file)))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range docLinks(string(b)) {
			where := file + ":" + strconv.Itoa(l.line) + ": (" + l.target + ")"
			path, anchor, _ := strings.Cut(l.target, "#")
			target := file
			if path != "" {
				target = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(file), filepath.FromSlash(path))))
				if target == ".." || strings.HasPrefix(target, "../") {
					t.Errorf("%s: leads out of the repository", where)
					continue
				}
				if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(target))); err != nil {
					t.Errorf("%s: no such file: %s", where, target)
					continue
				}
			}
			checked++
			if file == "README.md" {
				fromReadme[target] = true
			}
			if anchor == "" {
				continue
			}
			if !strings.HasSuffix(target, ".md") {
				t.Errorf("%s: an anchor into %s, which is not a Markdown page", where, target)
				continue
			}
			if !anchorsOf(target)[anchor] {
				t.Errorf("%s: %s has no heading whose anchor is #%s", where, target, anchor)
			}
		}
	}
	// The README's map of the docs names every page.
	for _, file := range shoguntest.DocFiles(t) {
		if strings.HasPrefix(file, "docs/") && !fromReadme[file] {
			t.Errorf("README.md never links %s: add it to the map of the docs", file)
		}
	}
	if checked < 40 {
		t.Errorf("only %d relative links were found: is the extraction broken?", checked)
	}
}

// A docLink is one relative link of a Markdown page, outside code.
type docLink struct {
	line   int
	target string
}

var (
	mdLink     = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)\)`)
	htmlAnchor = regexp.MustCompile(`<a (?:id|name)="([^"]+)"`)
	inlineCode = regexp.MustCompile("`[^`]*`")
)

// docLinks are the links of a page that point into the repository: not a
// URL, not inside a fenced block or a code span.
func docLinks(text string) []docLink {
	var out []docLink
	fenced := false
	for n, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		for _, m := range mdLink.FindAllStringSubmatch(inlineCode.ReplaceAllString(line, ""), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			out = append(out, docLink{line: n + 1, target: target})
		}
	}
	return out
}

// headingAnchors are the anchors GitHub gives a page's headings: the text
// lowercased, punctuation other than - and _ dropped, spaces turned to -,
// and a repeated anchor numbered -1, -2 …; and those of <a id="…">.
func headingAnchors(text string) map[string]bool {
	out := map[string]bool{}
	fenced := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		for _, m := range htmlAnchor.FindAllStringSubmatch(line, -1) {
			out[m[1]] = true
		}
		if !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.TrimLeft(line, "#")
		if len(line)-len(title) > 6 || !strings.HasPrefix(title, " ") {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(title)) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		for i := 1; out[a]; i++ {
			if !out[b.String()+"-"+strconv.Itoa(i)] {
				a = b.String() + "-" + strconv.Itoa(i)
			}
		}
		out[a] = true
	}
	return out
}
