package control_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/shogun-dev/shogun/config"
	"github.com/shogun-dev/shogun/control"
	"github.com/shogun-dev/shogun/team"
	"github.com/shogun-dev/shogun/workspace"
)

// The control endpoint of a workspace, on every platform (a socket on Unix,
// a named pipe on Windows): a client finds it from the workspace alone, a
// second server for the same workspace is refused, and nothing answers once
// the server ended.
func TestEndpointServesStatusAndEndsCleanly(t *testing.T) {
	ws := t.TempDir()
	if _, err := config.Scaffold(ws, config.ScaffoldOptions{}); err != nil {
		t.Fatal(err)
	}
	// The team is never run, so its role never starts: the endpoint is what
	// is tested.
	roles := "roles:\n  - id: idle\n    prompt_path: roles/ashigaru.md\n    command: {exec: codex}\n"
	if err := os.WriteFile(filepath.Join(ws, filepath.FromSlash(workspace.RolesFile)), []byte(roles), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(ws, nil)
	if err != nil {
		t.Fatal(err)
	}
	tm, err := team.Open(team.Options{Config: cfg, Logger: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	defer tm.Close()

	cl := control.NewClient(ws)
	if _, err := cl.Status(); !errors.Is(err, control.ErrNoSupervisor) {
		t.Fatalf("status before any server: %v, want ErrNoSupervisor", err)
	}
	srv, err := control.Listen(ws, tm, func() {}, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx) }()

	st, err := cl.Status()
	if err != nil {
		t.Fatalf("status through %s: %v", control.Endpoint(ws), err)
	}
	if st.Pid != os.Getpid() || st.RunID != tm.RunID() {
		t.Errorf("status = pid %d run %q, want pid %d run %q", st.Pid, st.RunID, os.Getpid(), tm.RunID())
	}
	if second, err := control.Listen(ws, tm, func() {}, zerolog.Nop()); err == nil {
		t.Error("a second server for the same workspace was allowed")
		ended, stop := context.WithCancel(context.Background())
		stop()
		second.Serve(ended) // closes its endpoint
	}

	cancel()
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not end")
	}
	_, err = cl.Status()
	if !errors.Is(err, control.ErrNoSupervisor) || !strings.Contains(err.Error(), "shogun start") {
		t.Errorf("status after the server ended: %v, want ErrNoSupervisor saying how to start one", err)
	}
}
