package atomicfile

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

func TestWriteGivesTheModeAskedForAndLeavesNothingBehind(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows files have no Unix permission bits")
	}
	dir := t.TempDir()
	cases := []struct {
		name  string
		mode  fs.FileMode
		write func(string, []byte, fs.FileMode) error
	}{
		{"roles.yaml", 0o644, Write},
		{"tasks.yaml", 0o600, Write},
		{"status.yaml", 0o644, WriteUnsynced},
		{"pids.json", 0o600, WriteUnsynced},
	}
	for _, c := range cases {
		path := filepath.Join(dir, c.name)
		if err := os.WriteFile(path, []byte("old"), 0o666); err != nil {
			t.Fatal(err)
		}
		if err := c.write(path, []byte("new "+c.name), c.mode); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(path)
		if err != nil || fi.Mode().Perm() != c.mode {
			t.Errorf("%s: mode %v (%v), want %v", c.name, fi.Mode().Perm(), err, c.mode)
		}
		if b, _ := os.ReadFile(path); string(b) != "new "+c.name {
			t.Errorf("%s holds %q", c.name, b)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != len(cases) {
		t.Errorf("folder holds %d entries, want %d (a temporary file left behind?)", len(entries), len(cases))
	}
}

func TestWriteFailureNamesThePathAndKeepsTheOldFile(t *testing.T) {
	dir := t.TempDir()
	if err := Write(filepath.Join(dir, "missing", "x.yaml"), []byte("x"), 0o600); err == nil ||
		!strings.Contains(err.Error(), filepath.Join("missing", "x.yaml")) || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("write into a missing folder: %v", err)
	}
	// The target is a folder: the rename fails, the folder stays, and the
	// temporary file is gone.
	target := filepath.Join(dir, "tasks.yaml")
	if err := os.Mkdir(target, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(target, "keep"), []byte("k"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Write(target, []byte("x"), 0o600); err == nil {
		t.Fatal("replaced a folder holding a file")
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}

// A reader looking at the file while it is replaced again and again sees
// one whole version each time, never a mix or an empty file.
func TestReadersNeverSeeAPart(t *testing.T) {
	for _, synced := range []bool{true, false} {
		t.Run(map[bool]string{true: "synced", false: "unsynced"}[synced], func(t *testing.T) {
			readersNeverSeeAPart(t, map[bool]func(string, []byte, fs.FileMode) error{true: Write, false: WriteUnsynced}[synced])
		})
	}
}

func readersNeverSeeAPart(t *testing.T, write func(string, []byte, fs.FileMode) error) {
	path := filepath.Join(t.TempDir(), "dashboard.md")
	a, b := bytes.Repeat([]byte("a"), 256<<10), bytes.Repeat([]byte("b"), 256<<10)
	if err := write(path, a, 0o600); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			next := a
			if i%2 == 0 {
				next = b
			}
			if err := write(path, next, 0o600); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	for i := 0; i < 200; i++ {
		got, err := os.ReadFile(path)
		if err != nil {
			if runtime.GOOS == "windows" {
				continue // a rename in progress may deny the open there
			}
			t.Fatal(err)
		}
		if !bytes.Equal(got, a) && !bytes.Equal(got, b) {
			t.Fatalf("read %d bytes that are neither version", len(got))
		}
	}
	close(stop)
	wg.Wait()
}
