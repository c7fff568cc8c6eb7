package queue

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// A file a process holds open for writing is seen as such; once it has
// closed it, or when it only reads, it is not.
func TestOpenForWritingSeesAWriter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.yaml")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		script string
		want   bool
	}{{`exec 3>> "$1"; echo ready; exec sleep 5`, true}, {`exec 3< "$1"; echo ready; exec sleep 5`, false}} {
		cmd := exec.Command("sh", "-c", tc.script, "sh", path)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 6)
		if _, err := out.Read(buf); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 20; i++ {
			if got := openForWriting(fi); got != tc.want {
				t.Errorf("%s: openForWriting = %v, want %v (try %d)", tc.script, got, tc.want, i)
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		cmd.Process.Kill()
		cmd.Wait()
	}
	if openForWriting(fi) {
		t.Error("openForWriting after every writer is gone")
	}
}
