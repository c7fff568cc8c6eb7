//go:build !windows

package ptyhost

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// LookPath finds a program as Start runs it: a bare name in PATH, a
// relative path from the command's folder (not from the supervisor's), and
// says which program is missing in os/exec's words.
func TestLookPathFindsTheProgramStartRuns(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	tool := filepath.Join(dir, "bin", "tool")
	if err := os.WriteFile(tool, []byte("#!/bin/sh\necho tool ran\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got, err := LookPath("bin/tool", dir); err != nil || got != tool {
		t.Errorf("LookPath(bin/tool, %s) = %q, %v; want %q", dir, got, err, tool)
	}
	if got, err := LookPath("sh", dir); err != nil || !filepath.IsAbs(got) {
		t.Errorf("LookPath(sh) = %q, %v; want an absolute path from PATH", got, err)
	}
	for _, missing := range []string{"shogun-test-no-such-program", "bin/none", filepath.Join(dir, "bin")} {
		_, err := LookPath(missing, dir)
		if err == nil || !ProgramNotFound(err) {
			t.Errorf("LookPath(%s) = %v; want an error ProgramNotFound recognises", missing, err)
		}
	}
	_, err := LookPath("shogun-test-no-such-program", dir)
	if want := `exec: "shogun-test-no-such-program": executable file not found in $PATH`; err == nil || err.Error() != want {
		t.Errorf("LookPath of a missing program says %v, want %q", err, want)
	}

	// Start runs the relative program from the command's folder, and its
	// error for a missing one is recognised too.
	p, err := Start(Command{Path: "bin/tool", Dir: dir, Env: os.Environ(), Cols: 80, Rows: 24})
	if err != nil {
		t.Fatalf("start bin/tool from %s: %v", dir, err)
	}
	defer p.Close()
	if _, err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	_, err = Start(Command{Path: "shogun-test-no-such-program", Dir: dir, Env: os.Environ(), Cols: 80, Rows: 24})
	if err == nil || !ProgramNotFound(err) || !strings.Contains(err.Error(), "executable file not found") {
		t.Errorf("start of a missing program: %v; want os/exec's not-found error", err)
	}
	if ProgramNotFound(os.ErrNotExist) {
		t.Error("ProgramNotFound takes any missing file for a missing program")
	}
}
