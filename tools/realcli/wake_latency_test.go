//go:build realcli && linux

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/store"
)

// WakeLatencies are what TestRealCLIWakeLatency measured for one CLI: send
// → delivered, in milliseconds, for a task sent while the role slept (its
// program gone; the task wakes it with its preset's resume_args) and for
// one sent right after, while it is awake.
type WakeLatencies struct {
	Asleep []float64 `json:"asleep_ms"`
	Awake  []float64 `json:"awake_ms"`
}

// TestRealCLIWakeLatency is a measurement of `make bench`'s many-roles
// section (bench/slots.go), not a check: with $SHOGUN_REALCLI_WAKE_OUT
// set, Claude Code and Codex roles with a short idle_after are each sent
// $SHOGUN_REALCLI_WAKE_SAMPLES pairs of tasks (default 5): one once the
// role sleeps, one as soon as that one is done. The times go to that file
// as JSON (CLI → WakeLatencies); nothing here asserts a time.
func TestRealCLIWakeLatency(t *testing.T) {
	out := os.Getenv("SHOGUN_REALCLI_WAKE_OUT")
	if out == "" {
		t.Skip("a measurement for make bench: set SHOGUN_REALCLI_WAKE_OUT")
	}
	n := 5
	if v := os.Getenv("SHOGUN_REALCLI_WAKE_SAMPLES"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			t.Fatalf("SHOGUN_REALCLI_WAKE_SAMPLES=%q is not a number of samples", v)
		}
	}
	clis := []string{"claude", "codex"}
	// No between_tasks: each task continues the conversation, as a woken
	// role's does.
	tm := startE2E(t, clis, func(string) string { return "    idle_after: 2s\n    between_tasks: \"\"\n" })
	results := map[string]*WakeLatencies{}
	deliver := func(cli, title string) float64 {
		sent := time.Now()
		id := tm.send(cli, title, fmt.Sprintf("fakemodel: report done via write %s\n", title))
		task, ok := tm.waitTask(id, 3*time.Minute)
		if !ok || task.Status != store.StatusDone || task.DeliveredAt.IsZero() {
			t.Fatalf("%s: task %q = %+v (closed %v); screen:\n%s", cli, title, task, ok, screen(t, tm.env, tm.ws, cli))
		}
		return ms(task.DeliveredAt.Sub(sent))
	}
	for _, cli := range clis {
		lat := &WakeLatencies{}
		deliver(cli, "warm-up") // the first start, with the startup prompt
		for i := range n {
			if !tm.waitState(cli, "sleeping", time.Minute) {
				t.Fatalf("%s never went to sleep after idle_after; screen:\n%s", cli, screen(t, tm.env, tm.ws, cli))
			}
			lat.Asleep = append(lat.Asleep, deliver(cli, fmt.Sprintf("asleep-%d", i)))
			// Awake: its turn over, well within idle_after.
			if !tm.waitState(cli, "ready", time.Minute) {
				t.Fatalf("%s not ready after a task; screen:\n%s", cli, screen(t, tm.env, tm.ws, cli))
			}
			lat.Awake = append(lat.Awake, deliver(cli, fmt.Sprintf("awake-%d", i)))
		}
		results[cli] = lat
	}
	tm.stop()
	b, err := json.MarshalIndent(results, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
