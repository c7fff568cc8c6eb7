//go:build !windows

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/config"
	"github.com/shogun-dev/shogun/control"
	"github.com/shogun-dev/shogun/policy"
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

// The policy the README shows under Approvals loads as written, and means
// what the README says of it.
func TestReadmePolicyExampleLoads(t *testing.T) {
	example := readmeBlock(t, "## Approvals")
	ws := t.TempDir()
	if _, errOut, code := shogun(t, "init", ws); code != 0 {
		t.Fatalf("init: %s", errOut)
	}
	if err := os.WriteFile(filepath.Join(ws, "config", "policy.yaml"), []byte(example), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(ws, nil)
	if err != nil {
		t.Fatalf("the README's policy does not load: %v\n%s", err, example)
	}
	place := policy.Place{Dir: ws, Workspace: ws}
	for _, tc := range []struct {
		role string
		a    policy.Action
		want policy.Decision
	}{
		{"ashigaru1", policy.Action{Kind: policy.Shell, Command: "go test ./..."}, policy.Allow},
		{"ashigaru1", policy.Action{Kind: policy.Shell, Command: "go test ./... && curl https://x"}, policy.Deny},
		{"karo", policy.Action{Kind: policy.Fetch, URL: "https://pkg.go.dev/x"}, policy.Allow},
		{"ashigaru1", policy.Action{Kind: policy.Fetch, URL: "https://pkg.go.dev/x"}, policy.Ask},
		{"ashigaru1", policy.Action{Kind: policy.Write, Path: "main.go"}, policy.Allow},
	} {
		if v := cfg.Policy.Decide(tc.role, place, tc.a); v.Decision != tc.want {
			t.Errorf("%s: %s %q = %s (%s), want %s", tc.role, tc.a.Kind, tc.a.Subject(), v.Decision, v.Reason, tc.want)
		}
	}
}
