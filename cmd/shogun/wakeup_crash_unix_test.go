//go:build !windows

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/shoguntest"
	"github.com/shogun-dev/shogun/store"
)

// Issue 33 item 1. The supervisor is killed with -9 after a part's report
// closed its task and before the sender (karo, busy with its own task) was
// woken. The next supervisor wakes karo, once.
func TestKill9BeforeTheSendersWakeupTypesItAfterTheRestart(t *testing.T) {
	ws := t.TempDir()
	shogun(t, "init", ws)
	recs := t.TempDir()
	karoRec, ashiRec := filepath.Join(recs, "karo.jsonl"), filepath.Join(recs, "a.jsonl")
	roles := func(karoWork string) string {
		entry := func(id, rec, work string) string {
			return fmt.Sprintf(`  - id: %s
    prompt_path: roles/ashigaru.md
    command: {exec: "${SHOGUN_EXE}", args: ["agent-sim", "--work-time", %q, "--record", %q]}
    cli: generic
    ready_pattern: "› "
    busy_pattern: "esc to interrupt"
    submit_delay: 60ms
    stop: {keys: "/exit\r", timeout: 5s}
`, id, work, rec)
		}
		return "roles:\n" + entry("karo", karoRec, karoWork) + entry("ashigaru1", ashiRec, "0s")
	}
	rolesFile := filepath.Join(ws, "config", "roles.yaml")
	if err := os.WriteFile(rolesFile, []byte(roles("120s")), 0o644); err != nil {
		t.Fatal(err)
	}
	cmds := filepath.Join(ws, "runtime", "queue", "commands")
	drop := func(name, body string) {
		tmp := filepath.Join(cmds, "."+name+".tmp")
		if err := os.WriteFile(tmp, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(cmds, name)); err != nil {
			t.Fatal(err)
		}
	}
	db := filepath.Join(ws, "data", "shogun.db")
	waitTasks := func(what string, cond func([]store.Task) bool) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for !cond(readTasks(t, db)) {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s: %+v", what, readTasks(t, db))
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	woken := func() int {
		n := 0
		for _, rc := range shoguntest.Records(t, karoRec) {
			if rc.Kind == "submit" && strings.HasPrefix(rc.Line, "Report from ashigaru1 on 'Part one'") {
				n++
			}
		}
		return n
	}

	first, _ := startBackground(t, ws)
	drop("own.yaml", "id: karo-own\nto: karo\ntitle: Plan the release\nbody: b\n")
	waitTasks("karo busy on its own task", func(ts []store.Task) bool {
		return len(ts) == 1 && ts[0].Status == store.StatusDelivered
	})
	drop("part.yaml", "id: part-1\nto: ashigaru1\nfrom: karo\ntitle: Part one\nbody: b\n")
	waitTasks("the part done", func(ts []store.Task) bool {
		for _, tk := range ts {
			if tk.CommandID == "part-1" && tk.Status == store.StatusDone {
				return true
			}
		}
		return false
	})
	if err := first.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_, _ = first.Process.Wait()
	if n := woken(); n != 0 {
		t.Fatalf("karo was woken %d times while busy", n)
	}

	// The next supervisor, with a karo that finishes at once.
	if err := os.WriteFile(rolesFile, []byte(roles("0s")), 0o644); err != nil {
		t.Fatal(err)
	}
	second, errOut := startBackground(t, ws)
	shoguntest.WaitFor(t, "karo woken after the restart", 60*time.Second, func() bool { return woken() >= 1 })
	waitTasks("karo's own task done", func(ts []store.Task) bool {
		return len(ts) == 2 && ts[0].Status == store.StatusDone && ts[1].Status == store.StatusDone
	})
	_ = second.Process.Signal(syscall.SIGTERM)
	_ = second.Wait()
	if n := woken(); n != 1 {
		t.Errorf("karo was woken %d times, want once\n%s", n, lastLines(errOut.String(), 20))
	}
}
