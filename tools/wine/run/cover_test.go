//go:build unix

package main

import (
	"strings"
	"testing"
)

// The coverage line test-windows prints for a package: all its statements,
// and those of its _windows.go files, each file on its own; a block counts
// once, as run when the test binary or a child process ran it.
func TestCoverageCountsWindowsFilesApart(t *testing.T) {
	profile := `mode: set
github.com/shogun-dev/shogun/ptyhost/process_windows.go:10.2,12.3 4 1
github.com/shogun-dev/shogun/ptyhost/process_windows.go:14.2,15.3 6 0
github.com/shogun-dev/shogun/ptyhost/probe_windows.go:3.1,4.2 5 2
github.com/shogun-dev/shogun/ptyhost/session.go:20.1,30.2 5 1
`
	// A child process ran the block the test binary did not.
	child := `mode: set
github.com/shogun-dev/shogun/ptyhost/process_windows.go:14.2,15.3 6 1
github.com/shogun-dev/shogun/ptyhost/probe_windows.go:3.1,4.2 5 0
`
	c, err := parseCoverage(strings.NewReader(profile), strings.NewReader(child))
	if err != nil {
		t.Fatal(err)
	}
	if c.stmts != 20 || c.ran != 20 || c.windowsStmts != 15 || c.windowsRan != 15 {
		t.Errorf("coverage = %+v", c)
	}
	var b strings.Builder
	printCoverage(&b, []result{{pkg: pkg{path: "github.com/shogun-dev/shogun/ptyhost"}, cover: &c}})
	want := "ptyhost      100.0% of all, 100.0% of its _windows.go files (probe_windows.go 100.0%, process_windows.go 100.0%)"
	if !strings.Contains(b.String(), want) {
		t.Errorf("printed\n%s\nwant a line with\n%s", b.String(), want)
	}
}
