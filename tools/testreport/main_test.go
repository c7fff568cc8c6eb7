package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// A module of three packages run through the real go test: the fast one's
// line comes before the slow one ends, the failure's own output is shown,
// and the skip is named with its reason once at the end.
func TestReportOnARealRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test on a module of its own")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go is not on PATH (under Wine): this runs go test on a module of its own")
	}
	mod := t.TempDir()
	files := map[string]string{
		"go.mod": "module example.com/m\n\ngo 1.21\n",
		// The slow package is first in the list: plain go test prints the
		// fast one only after it.
		"aslow/a_test.go": `package aslow
import ("os"; "testing"; "time")
func TestSlow(t *testing.T) {
	// Until the fast package has finished (its marker file), at most 60 s.
	for i := 0; i < 600; i++ {
		if _, err := os.Stat(os.Getenv("FAST_DONE")); err == nil { return }
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("the fast package never finished")
}
`,
		"bfast/b_test.go": `package bfast
import ("os"; "testing")
func TestFast(t *testing.T) {}
func TestMain(m *testing.M) { c := m.Run(); os.WriteFile(os.Getenv("FAST_DONE"), nil, 0o644); os.Exit(c) }
`,
		"cmixed/c_test.go": `package cmixed
import "testing"
func TestBroken(t *testing.T) { t.Log("the reason it broke"); t.Fatal("want 2, got 3") }
func TestFine(t *testing.T) { t.Log("quiet when passing") }
func TestBrowser(t *testing.T) { t.Skip("browser tests need Chromium at /usr/bin/chromium") }
func TestBrowser2(t *testing.T) { t.Skip("browser tests need Chromium at /usr/bin/chromium") }
`,
	}
	for name, text := range files {
		p := filepath.Join(mod, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(mod)
	t.Setenv("FAST_DONE", filepath.Join(t.TempDir(), "fast-done"))
	t.Setenv("GOFLAGS", "-mod=mod")
	var out strings.Builder
	code := run([]string{"-count=1", "-p=2", "./..."}, &out, &out)
	got := out.String()
	if code != 1 {
		t.Errorf("exit code %d, want go test's 1\n%s", code, got)
	}
	fast := strings.Index(got, "ok   example.com/m/bfast")
	slow := strings.Index(got, "ok   example.com/m/aslow")
	if fast < 0 || slow < 0 || fast > slow {
		t.Errorf("want a line per package, the fast one before the slow one\n%s", got)
	}
	for _, want := range []string{
		"the reason it broke", "want 2, got 3", "--- FAIL: TestBroken",
		"FAIL example.com/m/cmixed",
		"skipped 2 in example.com/m/cmixed: browser tests need Chromium at /usr/bin/chromium (TestBrowser, TestBrowser2)",
		"FAILED after ",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("want %q in\n%s", want, got)
		}
	}
	if strings.Contains(got, "quiet when passing") {
		t.Errorf("a passing test's log was printed\n%s", got)
	}
}

// With nothing printed for a while, the packages still running are named.
func TestTickNamesRunningPackages(t *testing.T) {
	var out syncBuilder
	r := newReport(&out, time.Now())
	r.handle(event{Action: "start", Package: "github.com/shogun-dev/shogun/queue"})
	r.mu.Lock()
	r.lastOut = time.Now().Add(-time.Hour)
	r.mu.Unlock()
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { defer close(done); r.tick(stop, 40*time.Millisecond) }()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(out.String(), "running: queue (") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	close(stop)
	<-done
	if !strings.Contains(out.String(), "0 done, running: queue (") {
		t.Errorf("want the running package named, got %q", out.String())
	}
}

// syncBuilder is a strings.Builder safe for the ticker's goroutine.
type syncBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *syncBuilder) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuilder) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
