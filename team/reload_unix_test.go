//go:build !windows

package team

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/shogun-dev/shogun/config"
	"github.com/shogun-dev/shogun/supervisor"
	"github.com/shogun-dev/shogun/workspace"
)

// shRole is a roles.yaml entry whose program sleeps.
func shRole(id string) string {
	return "  - id: " + id + `
    prompt_path: roles/ashigaru.md
    command: {exec: /bin/sh, args: ["-c", "echo ` + id + `; exec sleep 1000"]}
    stop: {keys: "", timeout: 2s}
    ready_quiet: 100ms
`
}

func runningIDs(tm *Team) []string {
	var ids []string
	for _, r := range tm.Supervisor().Roles() {
		ids = append(ids, r.ID())
	}
	slices.Sort(ids)
	return ids
}

func waitRunning(t *testing.T, tm *Team, want ...string) {
	t.Helper()
	slices.Sort(want)
	deadline := time.Now().Add(30 * time.Second)
	for !slices.Equal(runningIDs(tm), want) {
		if time.Now().After(deadline) {
			t.Fatalf("running roles %v, want %v", runningIDs(tm), want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A team started with some roles only (start --roles) keeps to them when
// its configuration changes: a new role is not started, a selected one
// that is disabled stops, and StartRole adds an enabled one on request.
// Every reload, applied or refused, wakes ConfigChanged.
func TestReloadKeepsToTheSelectedRoles(t *testing.T) {
	ws := t.TempDir()
	if _, err := config.Scaffold(ws, config.ScaffoldOptions{}); err != nil {
		t.Fatal(err)
	}
	rolesFile := filepath.Join(ws, filepath.FromSlash(workspace.RolesFile))
	write := func(s string) {
		if err := os.WriteFile(rolesFile, []byte("roles:\n"+s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(shRole("a") + shRole("b"))
	cfg, err := config.Load(ws, nil)
	if err != nil {
		t.Fatal(err)
	}
	tm, err := Open(Options{Config: cfg, Roles: []string{"a"}, Logger: zerolog.New(zerolog.NewTestWriter(t)),
		ConfigPoll: time.Hour}) // only the explicit reloads below
	if err != nil {
		t.Fatal(err)
	}
	defer tm.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- tm.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	waitRunning(t, tm, "a")

	changed := tm.ConfigChanged()
	write(shRole("a") + shRole("b") + shRole("c"))
	res, err := tm.Reload()
	if err != nil || len(res.Changes) != 0 {
		t.Fatalf("reload adding a role outside the selection: %+v, %v", res, err)
	}
	select {
	case <-changed:
	default:
		t.Error("ConfigChanged was not woken by the reload")
	}
	if _, ok := tm.Config().Role("c"); !ok {
		t.Error("the configuration in effect lacks the new role")
	}
	waitRunning(t, tm, "a")

	if err := tm.StartRole("c"); err != nil {
		t.Fatal(err)
	}
	waitRunning(t, tm, "a", "c")
	if err := tm.StartRole("nobody"); !errors.Is(err, config.ErrRoleNotFound) {
		t.Errorf("StartRole of an unknown role: %v", err)
	}

	res, err = tm.EditRoles(config.RoleEdit{Op: config.EditDisable, ID: "a"})
	if err != nil || len(res.Changes) != 1 || res.Changes[0].String() != "stop a (disabled)" {
		t.Fatalf("disable a: %+v, %v", res, err)
	}
	waitRunning(t, tm, "c")
	if err := tm.StartRole("a"); !errors.Is(err, config.ErrRoleDisabled) {
		t.Errorf("StartRole of a disabled role: %v", err)
	}

	// A refused reload changes nothing and is kept until the files load.
	changed = tm.ConfigChanged()
	write("roles: [")
	if _, err := tm.Reload(); err == nil || tm.ConfigError() == nil || !strings.Contains(tm.ConfigError().Error(), "config/roles.yaml") {
		t.Fatalf("reload of a broken file: %v; ConfigError %v", err, tm.ConfigError())
	}
	<-changed
	waitRunning(t, tm, "c")
	if r, ok := tm.Supervisor().Role("c"); !ok || r.State() == supervisor.Stopped {
		t.Errorf("role c after a refused reload: %v", ok)
	}
}
