//go:build !windows

package team

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/shogun-dev/shogun/config"
	"github.com/shogun-dev/shogun/notify"
	"github.com/shogun-dev/shogun/shoguntest"
	"github.com/shogun-dev/shogun/workspace"
)

var shogunBin string

func TestMain(m *testing.M) { shoguntest.Main(m, &shogunBin) }

// runTeam runs a team on a workspace with the given roles and settings.
func runTeam(t *testing.T, roles, settings string, tune func(*Options)) *Team {
	t.Helper()
	return runTeamIn(t, t.TempDir(), roles, settings, tune)
}

// runTeamIn is runTeam in the folder ws.
func runTeamIn(t *testing.T, ws, roles, settings string, tune func(*Options)) *Team {
	t.Helper()
	if _, err := config.Scaffold(ws, config.ScaffoldOptions{}); err != nil {
		t.Fatal(err)
	}
	for file, body := range map[string]string{workspace.RolesFile: roles, workspace.SettingsFile: settings} {
		if err := os.WriteFile(filepath.Join(ws, filepath.FromSlash(file)), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := config.Load(ws, func(k string) (string, bool) {
		if k == "SHOGUN_EXE" {
			return shogunBin, true
		}
		return os.LookupEnv(k)
	})
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Config: cfg, Logger: zerolog.New(zerolog.NewTestWriter(t)), Executable: shogunBin}
	if tune != nil {
		tune(&opts)
	}
	tm, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = tm.Run(ctx); close(done) }()
	t.Cleanup(func() {
		cancel()
		<-done
		tm.Close()
	})
	return tm
}

// A role waiting for a person sends one notification to the webhook, with
// the documented JSON.
func TestAttentionIsNotified(t *testing.T) {
	srv := notifySink(t)
	roles := `roles:
  - id: careful
    prompt_path: roles/ashigaru.md
    command: {exec: "${SHOGUN_EXE}", args: ["agent-sim", "--trust-prompt"]}
    cli: generic
    ready_pattern: "› "
    attention_pattern: "Do you trust"
`
	runTeam(t, roles, "notify:\n  webhook: "+srv.URL+"/topic\nkeep_awake: false\n", nil)
	shoguntest.WaitFor(t, "the attention notification", 20*time.Second, func() bool {
		return len(srv.events()) > 0
	})
	e := srv.events()[0]
	if e.Kind != notify.KindAttention || e.Role != "careful" || e.Workspace == "" || e.At.IsZero() {
		t.Errorf("notification = %+v", e)
	}
}

// While a role works the machine is kept from sleeping, and after the
// work it may sleep again.
func TestKeepAwakeWhileARoleWorks(t *testing.T) {
	// systemd-inhibit needs a system bus, which test machines lack: a
	// stand-in on PATH records that it was asked and holds until killed.
	bin := t.TempDir()
	asked := filepath.Join(bin, "asked")
	script := "#!/bin/sh\necho $$ >> '" + asked + "'\nexec sleep 600\n"
	if err := os.WriteFile(filepath.Join(bin, "systemd-inhibit"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
	roles := `roles:
  - id: worker
    prompt_path: roles/ashigaru.md
    command: {exec: "${SHOGUN_EXE}", args: ["agent-sim", "--work-time", "3s"]}
    cli: generic
    ready_pattern: "› "
    busy_pattern: "esc to interrupt"
    submit_delay: 100ms
`
	runTeam(t, roles, "keep_awake: true\n", func(o *Options) { o.AwakeLinger = 500 * time.Millisecond })
	// The startup prompt keeps it working for a moment; then it idles.
	var pid int
	shoguntest.WaitFor(t, "the inhibitor started", 20*time.Second, func() bool {
		b, _ := os.ReadFile(asked)
		f := strings.Fields(string(b))
		if len(f) == 0 {
			return false
		}
		pid = atoi(f[0])
		return pid > 0
	})
	shoguntest.WaitFor(t, "the inhibitor released after the work", 30*time.Second, func() bool {
		return syscall.Kill(pid, 0) != nil
	})
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0
		}
		n = n*10 + int(c-'0')
	}
	return n
}
