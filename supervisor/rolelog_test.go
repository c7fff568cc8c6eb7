package supervisor

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// A burst larger than the log's whole file (output gathered while the log
// lagged) is rotated, not lost: lumberjack refuses such a write outright.
func TestABurstLargerThanTheLogRotatesIt(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "karo.log")
	log := newRoleLog(path, logSettings{maxSizeMB: 1, maxFiles: 5})
	t.Cleanup(func() { _ = log.Close() }) // Windows removes no open file
	burst := append(bytes.Repeat([]byte("x"), 3<<19), "the end"...)
	if n, err := log.Write(burst); n != len(burst) || err != nil {
		t.Fatalf("write of 1.5 MB: %d bytes, %v", n, err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "karo*.log"))
	var total int64
	for _, f := range files {
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() > 1<<20 {
			t.Errorf("%s holds %d bytes, over its 1 MB", f, fi.Size())
		}
		total += fi.Size()
	}
	if len(files) != 2 || total != int64(len(burst)) {
		t.Errorf("1.5 MB in 1 MB files: %d files hold %d bytes", len(files), total)
	}
	if b, _ := os.ReadFile(path); !bytes.HasSuffix(b, []byte("xxthe end")) {
		t.Errorf("the log does not end with the burst's end: %d bytes", len(b))
	}
}
