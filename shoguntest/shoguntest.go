// Package shoguntest holds what the integration tests of several packages
// share: building the real shogun binary once per test binary, reading what
// a simulated agent recorded, and waiting for a condition. It is imported by
// tests only, in the manner of net/http/httptest.
package shoguntest

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// Main builds the shogun binary from the module's cmd/shogun into a
// temporary folder, stores its path in *bin, runs the tests and exits. Call
// it from TestMain. With SHOGUN_TEST_BIN set it uses that binary instead:
// the Wine harness (make test-windows) cross-compiles it, having no Go
// toolchain inside Wine.
func Main(m *testing.M, bin *string) {
	if prebuilt := os.Getenv("SHOGUN_TEST_BIN"); prebuilt != "" {
		*bin = prebuilt
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "shogun-test-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	*bin = filepath.Join(dir, "shogun")
	if runtime.GOOS == "windows" {
		*bin += ".exe"
	}
	build := exec.Command("go", "build", "-o", *bin, "github.com/shogun-dev/shogun/cmd/shogun")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build shogun:", err)
		os.Exit(2)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// Record is one line of an `agent-sim --record` file: a submitted line
// (kind "submit"), the start of work on a task ("task"), or a report
// written ("report").
type Record struct {
	Kind   string `json:"kind"`
	TaskID string `json:"task_id"`
	Line   string `json:"line"`
}

// Records reads an agent's record file; a file not yet written is empty.
func Records(t testing.TB, path string) []Record {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []Record
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if l == "" {
			continue
		}
		var r Record
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("record %q: %v", l, err)
		}
		out = append(out, r)
	}
	return out
}

// Submits reads an agent's record file and keeps the submitted lines: what
// the agent really took as input, without its newlines, dialog answers,
// tasks and reports.
func Submits(t testing.TB, path string) []Record {
	t.Helper()
	return Kinds(Records(t, path), "submit")
}

// Kinds keeps the records of the given kinds ("submit", "newline",
// "dialog", "task", "report").
func Kinds(recs []Record, kinds ...string) []Record {
	var out []Record
	for _, r := range recs {
		for _, k := range kinds {
			if r.Kind == k {
				out = append(out, r)
			}
		}
	}
	return out
}

// WaitFor polls cond until it holds and fails the test if it does not
// within the given time. The deadline only catches a hang; it measures
// nothing.
func WaitFor(t testing.TB, what string, within time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", within, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
