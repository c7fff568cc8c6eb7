//go:build !windows

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// SHOGUN_BENCH_PROFILE makes a shogun process write its CPU and heap
// profiles into the folder named, for the bench to find what the
// supervisor spends.
func TestBenchProfileSwitchWritesProfiles(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(bin, "--version")
	cmd.Env = append(os.Environ(), "SHOGUN_BENCH_PROFILE="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("shogun --version: %v\n%s", err, out)
	}
	for _, kind := range []string{"cpu", "heap"} {
		got, _ := filepath.Glob(filepath.Join(dir, kind+"-*.pprof"))
		if len(got) != 1 {
			t.Errorf("%s profiles written: %v, want one", kind, got)
			continue
		}
		if fi, err := os.Stat(got[0]); err != nil || fi.Size() == 0 {
			t.Errorf("%s profile %s is empty (%v)", kind, got[0], err)
		}
	}
}
