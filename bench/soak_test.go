package main

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/store"
)

func TestSlopeFitsTheTrendThroughNoise(t *testing.T) {
	// RSS of 120 MiB growing 2 MiB an hour, sampled every 6 minutes for two
	// hours, with ±1 MiB of alternating noise.
	var xs, ys []float64
	for i := 0; i <= 20; i++ {
		h := float64(i) / 10
		noise := 1.0
		if i%2 == 1 {
			noise = -1
		}
		xs, ys = append(xs, h), append(ys, 120+2*h+noise)
	}
	got, ok := slope(xs, ys)
	if !ok || math.Abs(got-2) > 0.1 {
		t.Fatalf("slope = %.3f, %v; want about 2 MiB/h", got, ok)
	}
	if k, ok := slope([]float64{0, 1, 2}, []float64{54, 54, 54}); !ok || k != 0 {
		t.Errorf("flat fds: slope = %v, %v; want 0", k, ok)
	}
	if _, ok := slope([]float64{1}, []float64{5}); ok {
		t.Error("one sample gave a slope")
	}
	if _, ok := slope([]float64{3, 3}, []float64{5, 9}); ok {
		t.Error("two samples at the same time gave a slope")
	}
}

// A soak's end as the issue saw it: a command taken once, one refused, one
// not yet taken, one lost, one doubled, and a karo whose task was handed out
// again after a crash, after its parts' reports had been typed to the
// process that died.
func TestReconcileAccountsForEveryCommandAndSaysWhyTasksAreOpen(t *testing.T) {
	at := func(s int) time.Time { return time.Date(2026, 11, 28, 10, 0, s, 0, time.UTC) }
	sent := []sentCommand{
		{ID: "soak-1", Via: "send", To: "ashigaru1", At: at(1)},
		{ID: "soak-2", Via: "file", To: "karo", At: at(2)},
		{ID: "soak-3", Via: "file", To: "ashigaru2", At: at(3)},
		{ID: "soak-4", Via: "send", To: "ashigaru3", At: at(4)},
		{ID: "soak-5", Via: "file", To: "ashigaru4", At: at(5)},
		{ID: "soak-6", Via: "send", To: "karo", At: at(6)},
		{ID: "soak-7", Via: "file", To: "karo", At: at(7)},
	}
	tasks := []store.Task{
		{ID: "t-1", CommandID: "soak-1", Role: "ashigaru1", Status: store.StatusDone},
		{ID: "t-5a", CommandID: "soak-5", Role: "ashigaru4", Status: store.StatusDone},
		{ID: "t-5b", CommandID: "soak-5", Role: "ashigaru4", Status: store.StatusDone},
		{ID: "t-6", CommandID: "soak-6", Role: "karo", Status: store.StatusDelivered, Attempts: 2, AssignedAt: at(40)},
		{ID: "t-7", CommandID: "soak-7", Role: "karo", Status: store.StatusQueued},
		{ID: "t-8", CommandID: "t-6-ashigaru1", Role: "ashigaru1", From: "karo", Parent: "t-6", Status: store.StatusDone},
		{ID: "t-9", CommandID: "t-6-ashigaru3", Role: "ashigaru3", From: "karo", Parent: "t-6", Status: store.StatusDone},
		{ID: "t-10", CommandID: "soak-9", Role: "ashigaru3", Status: store.StatusQueued},
	}
	notified := map[string][]time.Time{"t-8": {at(30)}}
	left := queueLeftovers{
		Refused: map[string]string{"soak-2": "loop guard: 20 commands between karo and ashigaru2 within 10m0s already"},
		Waiting: map[string]bool{"soak-3": true},
	}
	rc := reconcile(sent, tasks, notified, left, map[string]string{"karo": "ready", "ashigaru3": "starting"})

	if len(rc.Lost) != 1 || !strings.HasPrefix(rc.Lost[0], "soak-4 (send to ashigaru3") {
		t.Errorf("lost = %q, want soak-4 only", rc.Lost)
	}
	if len(rc.Doubled) != 1 || rc.Doubled[0] != "soak-5: 2 tasks" {
		t.Errorf("doubled = %q, want soak-5 with 2 tasks", rc.Doubled)
	}
	if len(rc.Waiting) != 1 || rc.Waiting[0] != "soak-3" {
		t.Errorf("waiting = %q, want soak-3", rc.Waiting)
	}
	if rc.Refused["loop guard"] != 1 {
		t.Errorf("refused = %v, want 1 by the loop guard", rc.Refused)
	}
	if rc.Tasks != 8 || rc.Closed != 5 {
		t.Errorf("tasks %d, closed %d; want 8, 5", rc.Tasks, rc.Closed)
	}
	if rc.WakeupsTyped != 1 || len(rc.WakeupsMissing) != 1 || rc.WakeupsMissing[0] != "t-9 (ashigaru3 → karo)" {
		t.Errorf("wake-ups typed %d, missing %q; want t-8 typed, t-9 missing", rc.WakeupsTyped, rc.WakeupsMissing)
	}
	want := []string{
		"t-10 queued for ashigaru3: role ashigaru3 is starting (attempts 0)",
		"t-6 delivered for karo: part t-8 done and karo told at 10:00:30, before the task was handed out again at 10:00:40 (attempt 2): nothing tells it again; " +
			"part t-9 done but karo was never told (lost wake-up)",
		"t-7 queued for karo: queued behind t-6 (delivered)",
	}
	if strings.Join(rc.Open, "\n") != strings.Join(want, "\n") {
		t.Errorf("open:\n%s\nwant:\n%s", strings.Join(rc.Open, "\n"), strings.Join(want, "\n"))
	}
}

func TestMergeIntoReplacesOnlyTheSectionsMeasured(t *testing.T) {
	old := "# Benchmarks\n\nheader\n\n## Idle cost\n\nidle figures\n\n## Soak: kill -9 cycles under load\n\nold soak\n\n## Go benchmarks\n\ngo figures\n"
	r := &report{}
	r.add("Soak: kill -9 cycles under load", "new soak")
	got := r.mergeInto(old)
	want := "# Benchmarks\n\nheader\n\n## Idle cost\n\nidle figures\n\n## Soak: kill -9 cycles under load\n\nnew soak\n\n## Go benchmarks\n\ngo figures\n"
	if got != want {
		t.Fatalf("merged:\n%s\nwant:\n%s", got, want)
	}
	r.add("Ingest", "ingest figures")
	if got := r.mergeInto(old); !strings.HasSuffix(got, "## Go benchmarks\n\ngo figures\n\n## Ingest\n\ningest figures\n") {
		t.Fatalf("a new section is not added at the end:\n%s", got)
	}
}

func TestOpenTasksWithTheSameReasonReadAsOneLine(t *testing.T) {
	var open []string
	for _, id := range []string{"t-2", "t-3", "t-4", "t-5"} {
		open = append(open, id+" queued for karo: queued behind t-1 (delivered)")
	}
	open = append(open, "t-1 delivered for karo: role karo is ready (attempts 3)")
	got := groupByWhy(open)
	want := []string{
		"t-2, t-3 … t-5 (4 tasks) queued for karo: queued behind t-1 (delivered)",
		"t-1 delivered for karo: role karo is ready (attempts 3)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("grouped:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
