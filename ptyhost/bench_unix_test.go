//go:build !windows

package ptyhost

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkSessionDrain runs `cat` of a 16 MiB file through a session that
// logs to a file: the whole reader path, end to end.
func BenchmarkSessionDrain(b *testing.B) {
	dir := b.TempDir()
	src := filepath.Join(dir, "in.txt")
	f, err := os.Create(src)
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < (16<<20)/len(benchText); i++ {
		f.Write(benchText)
	}
	f.Close()
	fi, _ := os.Stat(src)
	b.SetBytes(fi.Size())
	for b.Loop() {
		log, err := os.Create(filepath.Join(dir, "out.log"))
		if err != nil {
			b.Fatal(err)
		}
		s, err := Open(Options{Command: Command{Path: "cat", Args: []string{src}, Env: os.Environ(), Cols: 120, Rows: 40}, Log: log})
		if err != nil {
			b.Fatal(err)
		}
		s.Wait()
		<-s.OutputDone()
		s.Close()
		log.Close()
	}
}
