//go:build !windows

package queue_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/store"
)

// wakeupsTyped counts the lines typed into a role that report on title.
func wakeupsTyped(t *testing.T, rec, title string) int {
	t.Helper()
	n := 0
	for _, rc := range records(t, rec) {
		if rc.Kind == "submit" && strings.HasPrefix(rc.Line, "Report from ashigaru1 on '"+title+"'") {
			n++
		}
	}
	return n
}

// Issue 33 item 1. A supervisor that stops after a part's report closed its
// task and before its sender (karo, busy) was woken: after the restart
// karo is woken, once. karo, having lost its conversation, sends the part
// again: the duplicate is not worked again, and karo is told the part's
// result again instead of waiting for it forever.
func TestSendersWakeupSurvivesARestart(t *testing.T) {
	dir := t.TempDir()
	karoRec, ashiRec := filepath.Join(dir, "karo.jsonl"), filepath.Join(dir, "a.jsonl")
	busyKaro := sim("karo", karoRec, "--work-time", "60s")
	ws := testWorkspace(t, busyKaro, sim("ashigaru1", ashiRec, "--work-time", "0s"))
	r := startTeam(t, ws)
	r.drop(t, "own.yaml", "id: karo-own\nto: karo\ntitle: Plan the release\nbody: b\n")
	r.waitTasks(t, "karo busy on its own task", 20*time.Second, func(ts []store.Task) bool {
		return len(ts) == 1 && ts[0].Status == store.StatusDelivered
	})
	part := "id: part-1\nto: ashigaru1\nfrom: karo\ntitle: Part one\nbody: do part one\n"
	r.drop(t, "part.yaml", part)
	r.waitTasks(t, "the part done", 20*time.Second, func(ts []store.Task) bool {
		return len(ts) == 2 && countStatus(ts, store.StatusDone) == 1
	})
	// The supervisor goes while karo is still busy: the wake-up was never
	// typed.
	r.stop(t)
	r.team.Close()
	if n := wakeupsTyped(t, karoRec, "Part one"); n != 0 {
		t.Fatalf("karo was woken %d times while busy", n)
	}

	// The next supervisor; karo's program is one that finishes at once.
	write(t, filepath.Join(ws, "config", "roles.yaml"), "roles:\n"+
		sim("karo", karoRec, "--work-time", "0s")+sim("ashigaru1", ashiRec, "--work-time", "0s"))
	r = startTeam(t, ws)
	waitFor(t, "karo woken after the restart", 30*time.Second, func() bool { return wakeupsTyped(t, karoRec, "Part one") >= 1 })
	r.waitTasks(t, "karo's own task done", 30*time.Second, func(ts []store.Task) bool {
		return countStatus(ts, store.StatusDone) == 2
	})

	// karo sends the part again.
	r.drop(t, "part-again.yaml", part)
	waitFor(t, "karo told the part's result again", 30*time.Second, func() bool { return wakeupsTyped(t, karoRec, "Part one") >= 2 })
	if ts, _ := r.team.Store().Tasks(store.TaskFilter{}); len(ts) != 2 {
		t.Errorf("%d tasks, want 2: the part sent again was queued", len(ts))
	}
	worked := 0
	for _, rc := range records(t, ashiRec) {
		if rc.Kind == "task" {
			worked++
		}
	}
	if worked != 1 {
		t.Errorf("ashigaru1 worked on the part %d times, want once", worked)
	}
	r.stop(t)
	if n := wakeupsTyped(t, karoRec, "Part one"); n != 2 {
		t.Errorf("karo was woken %d times, want 2: once after the restart, once for the part sent again", n)
	}
}
