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
	"github.com/shogun-dev/shogun/notify"
	"github.com/shogun-dev/shogun/shoguntest"
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

// Roles that work in git worktrees keep them across reloads: a role with
// a worktree whose nudge changes is updated, not restarted into the
// workspace, and a role added with a worktree gets one made and runs in it.
func TestReloadKeepsAndMakesWorktrees(t *testing.T) {
	shoguntest.GitEnv(t)
	ws := t.TempDir()
	if _, err := config.Scaffold(ws, config.ScaffoldOptions{}); err != nil {
		t.Fatal(err)
	}
	shoguntest.GitRepo(t, ws, map[string]string{"README": "the project\n"})
	rolesFile := filepath.Join(ws, filepath.FromSlash(workspace.RolesFile))
	write := func(s string) {
		if err := os.WriteFile(rolesFile, []byte("roles:\n"+s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(shRole("a") + "    worktree: true\n")
	cfg, err := config.Load(ws, nil)
	if err != nil {
		t.Fatal(err)
	}
	tm, err := Open(Options{Config: cfg, Logger: zerolog.New(zerolog.NewTestWriter(t)), ConfigPoll: time.Hour})
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
	inWorktree := func(id string) bool {
		r, ok := tm.Supervisor().Role(id)
		return ok && strings.Contains(filepath.ToSlash(r.Config().Command.Cwd), ".shogun/worktrees/"+id)
	}
	if !inWorktree("a") {
		t.Fatalf("role a does not run in its worktree")
	}

	write(shRole("a") + "    worktree: true\n    nudge: \"Do {task_file}.\"\n" + shRole("w") + "    worktree: true\n")
	res, err := tm.Reload()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range res.Changes {
		got = append(got, c.String())
	}
	if want := []string{"update a (nudge)", "start w (added)"}; !slices.Equal(got, want) {
		t.Errorf("reload changes %q, want %q", got, want)
	}
	waitRunning(t, tm, "a", "w")
	if !inWorktree("a") || !inWorktree("w") {
		t.Errorf("after the reload, a in its worktree: %v, w in its worktree: %v", inWorktree("a"), inWorktree("w"))
	}
	if r, _ := tm.Supervisor().Role("w"); r != nil {
		if _, err := os.Stat(r.Config().Command.Cwd); err != nil {
			t.Errorf("w's worktree: %v", err)
		}
	}
}

// An agent edits config/roles.yaml so that a role runs another program,
// and adds a role of its own. The live reload applies both within seconds,
// and a person hears of each: a warning in the log naming the new command,
// a config-changed notification, and a line under attention (status, the
// dashboard, the console's Team page). A change of a template is an info
// line only.
func TestReloadThatChangesWhatARoleRunsIsTold(t *testing.T) {
	srv := notifySink(t)
	var logged shoguntest.Buffer
	tm := runTeam(t, "roles:\n"+shRole("a")+shRole("b"), "notify:\n  webhook: "+srv.URL+"\nkeep_awake: false\n", func(o *Options) {
		o.Logger = zerolog.New(&logged)
		o.ConfigSettle, o.ConfigPoll = 50*time.Millisecond, 100*time.Millisecond
	})
	waitRunning(t, tm, "a", "b")

	evil := strings.Replace(shRole("a"), "echo a;", "echo pwned;", 1)
	b := shRole("b") + "    nudge: \"Read {task_file} now.\"\n"
	rolesFile := filepath.Join(tm.Config().Workspace, filepath.FromSlash(workspace.RolesFile))
	if err := os.WriteFile(rolesFile, []byte("roles:\n"+evil+b+shRole("c")), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("log:\n%s", logged.String())
		}
	})
	waitRunning(t, tm, "a", "b", "c")
	shoguntest.WaitFor(t, "config-changed notifications for a and c", 15*time.Second, func() bool {
		_, a := srv.last(notify.KindConfigChanged, "a")
		_, c := srv.last(notify.KindConfigChanged, "c")
		return a && c
	})
	wantA := `role a runs a new command (command.args changed in config/roles.yaml): "/bin/sh" "-c" "echo pwned; exec sleep 1000" in ` + tm.Config().Workspace
	if e, _ := srv.last(notify.KindConfigChanged, "a"); !strings.HasPrefix(e.Message, wantA) || !strings.Contains(e.Message, "an agent may have") {
		t.Errorf("notification for a: %q\nwant it to start %q", e.Message, wantA)
	}
	if e, _ := srv.last(notify.KindConfigChanged, "c"); !strings.HasPrefix(e.Message, "role c was added to config/roles.yaml and starts: ") {
		t.Errorf("notification for c: %q", e.Message)
	}
	if e, ok := srv.last(notify.KindConfigChanged, "b"); ok {
		t.Errorf("a new nudge was notified as a change of program: %+v", e)
	}

	st, err := tm.Queue().Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, a := range st.Attention {
		if strings.Contains(a, "an agent may have") {
			lines = append(lines, a)
		}
	}
	if len(lines) != 2 || !strings.HasPrefix(lines[0], wantA) || !strings.HasPrefix(lines[1], "role c was added") {
		t.Errorf("attention: %q", st.Attention)
	}
	log := logged.String()
	for _, want := range []string{`"level":"warn","role":"a"`, `"level":"warn","role":"c"`, `"level":"info","role":"b","action":"update"`} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %s:\n%s", want, log)
		}
	}
	if strings.Contains(log, `"level":"warn","role":"b"`) {
		t.Errorf("a new nudge was logged as a warning:\n%s", log)
	}

	// The API's role edits are told alike: a cwd outside the workspace is
	// the owner's choice, so it is applied, and announced.
	if _, err := tm.EditRoles(config.RoleEdit{Op: config.EditUpdate, ID: "b", Fields: map[string]any{"command.cwd": "/"}}); err != nil {
		t.Fatal(err)
	}
	if st, err = tm.Queue().Snapshot(); err != nil {
		t.Fatal(err)
	}
	if a := st.Attention[len(st.Attention)-1]; !strings.HasPrefix(a, `role b runs a new command (command.cwd changed in config/roles.yaml): "/bin/sh" "-c" "echo b; exec sleep 1000" in /;`) {
		t.Errorf("attention after the API edit: %q", st.Attention)
	}
}
