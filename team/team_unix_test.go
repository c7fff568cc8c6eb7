//go:build !windows

package team

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/shogun-dev/shogun/config"
	"github.com/shogun-dev/shogun/workspace"
)

// A queue that cannot start does not leave the roles running with nothing
// to hand them work: the run ends, the roles' programs are gone, and the
// error says why.
func TestAQueueThatCannotStartStopsTheRoles(t *testing.T) {
	ws := t.TempDir()
	if _, err := config.Scaffold(ws, config.ScaffoldOptions{}); err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(ws, "worker.pid")
	roles := `roles:
  - id: worker
    prompt_path: roles/ashigaru.md
    command: {exec: /bin/sh, args: ["-c", "echo $$ > '` + pidFile + `'; exec sleep 1000"]}
    stop: {keys: "", timeout: 1s}
`
	if err := os.WriteFile(filepath.Join(ws, filepath.FromSlash(workspace.RolesFile)), []byte(roles), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(ws, nil)
	if err != nil {
		t.Fatal(err)
	}
	tm, err := Open(Options{Config: cfg, Logger: zerolog.New(zerolog.NewTestWriter(t))})
	if err != nil {
		t.Fatal(err)
	}
	defer tm.Close()
	// Between preparing the queue and running it, the folder of claimed
	// commands becomes a file: the queue cannot read what a crash left.
	claimed := filepath.Join(workspace.New(ws).Commands(), ".claimed")
	if err := os.RemoveAll(claimed); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(claimed, []byte("not a folder"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = tm.Run(ctx)
	if ctx.Err() != nil {
		t.Fatal("Run went on with a queue that could not start")
	}
	if err == nil || !strings.Contains(err.Error(), "queue could not run") || !strings.Contains(err.Error(), "claimed") {
		t.Fatalf("Run = %v, want an error saying the queue could not run and why", err)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		return // stopped before its program wrote its pid
	}
	var pid int
	if _, err := fmt.Sscan(strings.TrimSpace(string(b)), &pid); err == nil && syscall.Kill(pid, 0) == nil {
		t.Errorf("the role's program %d still runs", pid)
	}
}
