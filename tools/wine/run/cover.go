//go:build unix

package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"sort"
	"strconv"
	"strings"
)

// coveredPackages are the packages whose Windows coverage the run prints:
// the pseudo console, the named pipe, the supervisor that drives them, and
// the simulated agent's console code.
var coveredPackages = []string{"ptyhost", "control", "supervisor", "agentsim"}

// covered reports whether pk's tests are built with -cover.
func covered(pk pkg) bool {
	for _, name := range coveredPackages {
		if strings.HasSuffix(pk.path, "/"+name) {
			return true
		}
	}
	return false
}

// coverage is what one package's coverage profile says: statements in all
// its files, and in its _windows.go files, and how many of each ran.
type coverage struct {
	stmts, ran               int
	windowsStmts, windowsRan int
	windowsFiles             map[string][2]int // file name → statements, ran
}

func (c coverage) percent() string { return percent(c.ran, c.stmts) }

func percent(n, of int) string {
	if of == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(n)/float64(of))
}

// readCoverage reads a coverage profile ("mode: set", then one line per
// block: file:start,end statements count) and the counters that child
// processes left in childDir (converted by go tool covdata): a block ran
// when it ran in any of them.
func readCoverage(profile, childDir string) (coverage, error) {
	f, err := os.Open(profile)
	if err != nil {
		return coverage{}, err
	}
	defer f.Close()
	readers := []io.Reader{f}
	if entries, _ := os.ReadDir(childDir); len(entries) > 0 {
		text := childDir + ".txt"
		cmd := exec.Command("go", "tool", "covdata", "textfmt", "-i="+childDir, "-o="+text)
		if b, err := cmd.CombinedOutput(); err != nil {
			return coverage{}, fmt.Errorf("go tool covdata: %w: %s", err, b)
		}
		g, err := os.Open(text)
		if err != nil {
			return coverage{}, err
		}
		defer g.Close()
		readers = append(readers, g)
	}
	return parseCoverage(readers...)
}

func parseCoverage(readers ...io.Reader) (coverage, error) {
	type block struct {
		stmts int
		ran   bool
	}
	blocks := map[string]*block{}
	for _, r := range readers {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			line := sc.Text()
			if strings.HasPrefix(line, "mode:") || line == "" {
				continue
			}
			fields := strings.Fields(line)
			if len(fields) != 3 || !strings.Contains(fields[0], ":") {
				return coverage{}, fmt.Errorf("coverage profile: bad line %q", line)
			}
			stmts, err1 := strconv.Atoi(fields[1])
			count, err2 := strconv.Atoi(fields[2])
			if err1 != nil || err2 != nil {
				return coverage{}, fmt.Errorf("coverage profile: bad line %q", line)
			}
			b := blocks[fields[0]]
			if b == nil {
				b = &block{stmts: stmts}
				blocks[fields[0]] = b
			}
			b.ran = b.ran || count > 0
		}
		if err := sc.Err(); err != nil {
			return coverage{}, err
		}
	}
	c := coverage{windowsFiles: map[string][2]int{}}
	for key, b := range blocks {
		ran := 0
		if b.ran {
			ran = b.stmts
		}
		c.stmts += b.stmts
		c.ran += ran
		file := path.Base(key[:strings.LastIndexByte(key, ':')])
		if strings.HasSuffix(file, "_windows.go") {
			c.windowsStmts += b.stmts
			c.windowsRan += ran
			f := c.windowsFiles[file]
			c.windowsFiles[file] = [2]int{f[0] + b.stmts, f[1] + ran}
		}
	}
	return c, nil
}

// printCoverage prints the Windows coverage of coveredPackages: all of
// each package's statements, and those of its _windows.go files, file by
// file.
func printCoverage(w io.Writer, results []result) {
	printed := false
	for _, r := range results {
		if r.cover == nil {
			continue
		}
		if !printed {
			fmt.Fprintln(w, "\nWindows coverage (statements run under Wine by the package's tests and the processes they start of its test binary):")
			printed = true
		}
		c := r.cover
		fmt.Fprintf(w, "  %-12s %6s of all, %6s of its _windows.go files", path.Base(r.pkg.path), c.percent(), percent(c.windowsRan, c.windowsStmts))
		var files []string
		for f := range c.windowsFiles {
			files = append(files, f)
		}
		sort.Strings(files)
		var parts []string
		for _, f := range files {
			n := c.windowsFiles[f]
			parts = append(parts, fmt.Sprintf("%s %s", f, percent(n[1], n[0])))
		}
		if len(parts) > 0 {
			fmt.Fprintf(w, " (%s)", strings.Join(parts, ", "))
		}
		fmt.Fprintln(w)
	}
}
