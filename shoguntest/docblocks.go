package shoguntest

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// DocBlock is one fenced example of the user documentation.
type DocBlock struct {
	File string // relative to the module's root: README.md, docs/api.md
	Line int    // of the opening fence
	Lang string // what follows the fence: sh, yaml, json, powershell, or ""
	Text string
}

// Where names the block for a test's message: "README.md:55 (sh)".
func (b DocBlock) Where() string {
	return b.File + ":" + strconv.Itoa(b.Line) + " (" + b.Lang + ")"
}

// DocFiles are the documents a newcomer copies from: README.md, docs/*.md
// and the READMEs of the tools the README sends people to.
func DocFiles(t testing.TB) []string {
	t.Helper()
	root := moduleRoot(t)
	files := []string{"README.md"}
	for _, glob := range []string{"docs/*.md", "tools/*/README.md"} {
		m, err := filepath.Glob(filepath.Join(root, glob))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range m {
			rel, _ := filepath.Rel(root, f)
			files = append(files, filepath.ToSlash(rel))
		}
	}
	return files
}

// DocBlocks are the fenced blocks of every DocFiles document, in order.
func DocBlocks(t testing.TB) []DocBlock {
	t.Helper()
	root := moduleRoot(t)
	var out []DocBlock
	for _, f := range DocFiles(t) {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f)))
		if err != nil {
			t.Fatalf("read the documentation: %v", err)
		}
		var cur *DocBlock
		var text strings.Builder
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(nil, 1<<20)
		for n := 1; sc.Scan(); n++ {
			line := sc.Text()
			if fence, ok := strings.CutPrefix(line, "```"); ok {
				if cur == nil {
					cur = &DocBlock{File: f, Line: n, Lang: strings.TrimSpace(fence)}
					text.Reset()
					continue
				}
				cur.Text = text.String()
				out = append(out, *cur)
				cur = nil
				continue
			}
			if cur != nil {
				text.WriteString(line + "\n")
			}
		}
		if cur != nil {
			t.Fatalf("%s: the block opened at line %d is never closed", f, cur.Line)
		}
	}
	return out
}

// ModuleRoot is the folder of go.mod above the test's folder.
func ModuleRoot(t testing.TB) string { return moduleRoot(t) }
