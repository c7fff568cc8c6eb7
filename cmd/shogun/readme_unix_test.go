//go:build !windows

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/control"
)

// readmeBlock is the first ```yaml block after heading in the README.
func readmeBlock(t *testing.T, heading string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(b), "\n"+heading+"\n")
	if !ok {
		t.Fatalf("README has no heading %q", heading)
	}
	_, block, ok := strings.Cut(after, "```yaml\n")
	if !ok {
		t.Fatalf("README has no yaml block after %q", heading)
	}
	block, _, _ = strings.Cut(block, "```\n")
	return block
}

// The command file the README shows, dropped as written into a fresh
// workspace (the demo team: the same role ids as `shogun init`'s, without
// real CLIs), becomes a task; nothing lands in failed/.
func TestReadmeCommandExampleIsAccepted(t *testing.T) {
	example := readmeBlock(t, "## The file protocol")
	ws := t.TempDir()
	if _, errOut, code := shogun(t, "init", "--demo", ws); code != 0 {
		t.Fatalf("init --demo: %s", errOut)
	}
	cmd, _ := startBackground(t, ws)
	waitStatus(t, ws, "ashigaru1 ready", func(s control.StatusReply) bool { return stateOf(s, "ashigaru1") == "ready" })
	commands := filepath.Join(ws, "runtime", "queue", "commands")
	if err := os.WriteFile(filepath.Join(commands, "example.tmp"), []byte(example), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(commands, "example.tmp"), filepath.Join(commands, "example.yaml")); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		ts := tasksJSON(t, ws)
		if len(ts) == 1 && ts[0].Title == "Add the login form" && ts[0].Role == "ashigaru1" {
			break
		}
		failed, _ := os.ReadDir(filepath.Join(ws, "runtime", "queue", "failed"))
		for _, f := range failed {
			b, _ := os.ReadFile(filepath.Join(ws, "runtime", "queue", "failed", f.Name()))
			t.Fatalf("the README's example was refused: %s\n%s", f.Name(), b)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the README's example made no task: %+v\n%s", ts, example)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if _, errOut, code := shogun(t, "stop", "-w", ws); code != 0 {
		t.Fatalf("stop: %s", errOut)
	}
	_ = cmd.Wait()
}
