package supervisor

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A daemon an agent left behind is re-parented to the supervisor (a
// subreaper); once it exits it is reaped, not left as a zombie.
func TestADaemonLeftBehindIsReapedWhenItExits(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "daemon.pid")
	ws := testWorkspace(t, `
roles:
  - id: leaver
    prompt_path: roles/leaver.md
    command: {exec: /bin/sh, args: ["-c", "setsid sleep 1 & echo $! > `+pidFile+`; printf 'ok> '; exec sleep 60"]}
    cli: generic
    ready_pattern: "ok> "
`)
	r := start(t, ws, nil)
	r.waitState(t, "leaver", Ready, 20*time.Second)
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	daemon := strings.TrimSpace(string(b))
	// Its own session: the role's stop leaves it be, and it is
	// re-parented to the supervisor once the role's program is gone.
	r.role(t, "leaver").Stop()
	r.waitState(t, "leaver", Stopped, 20*time.Second)
	me := strconv.Itoa(os.Getpid())
	deadline := time.Now().Add(20 * time.Second)
	for {
		stat, err := os.ReadFile(filepath.Join("/proc", daemon, "stat"))
		if err != nil {
			return // gone: reaped
		}
		f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if time.Now().After(deadline) {
			t.Fatalf("the daemon %s the role left behind is still there: state %s, parent %s (the supervisor: %s)", daemon, f[0], f[1], me)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
