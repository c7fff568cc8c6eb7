//go:build realcli && linux

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/store"
)

// Latencies are what TestRealCLILatency measured for one CLI: from just
// before `shogun send` to the task's delivery and to its report, one entry
// per task, in milliseconds.
type Latencies struct {
	Delivered []float64 `json:"delivered_ms"`
	Done      []float64 `json:"done_ms"`
	Submits   int       `json:"submits"`
	Tasks     int       `json:"tasks"`
}

// TestRealCLILatency is `make bench`'s real-CLI section, not a check: with
// $SHOGUN_REALCLI_BENCH_OUT set, each CLI is sent $SHOGUN_REALCLI_BENCH_TASKS
// tasks (default 20) one after another, each once the role is idle again,
// the CLIs side by side, and the
// times are written to that file as JSON (CLI → Latencies). bench/realcli.go
// runs it and reports percentiles; nothing here asserts a time.
func TestRealCLILatency(t *testing.T) {
	out := os.Getenv("SHOGUN_REALCLI_BENCH_OUT")
	if out == "" {
		t.Skip("a measurement for make bench: set SHOGUN_REALCLI_BENCH_OUT")
	}
	n := 20
	if v := os.Getenv("SHOGUN_REALCLI_BENCH_TASKS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			t.Fatalf("SHOGUN_REALCLI_BENCH_TASKS=%q is not a number of tasks", v)
		}
	}
	tm := startE2E(t, e2eCLIs, nil)
	// A task is sent to an idle role, as the measurement is of shogun's
	// path: the previous turn over and the between_tasks keys typed (the
	// history's between-tasks event after the previous report).
	hist, err := store.Open(filepath.Join(tm.ws, "data", "shogun.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer hist.Close()
	idleAfter := func(role string, since time.Time) bool {
		for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			evs, err := hist.Events(50)
			if err != nil {
				return false
			}
			for _, e := range evs {
				if e.Role == role && e.Kind == "between-tasks" && !e.At.Before(since) {
					return true
				}
			}
		}
		return false
	}
	var mu sync.Mutex
	results := map[string]*Latencies{}
	var wg sync.WaitGroup
	for _, role := range e2eCLIs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lat := &Latencies{}
			for i := range n {
				route := reportRoutes[i%len(reportRoutes)]
				body := fmt.Sprintf("fakemodel: write bench-%s-%d.txt %d\nfakemodel: report done via %s bench %d\n", role, i, i, route, i)
				sent := time.Now()
				// Not tm.send: it ends the test, which only its own goroutine may.
				id, errOut, err := runShogun(tm.env, "send", "-w", tm.ws, "--to", role, "--title", fmt.Sprintf("Bench %d", i), "--body", body)
				if err != nil {
					t.Errorf("%s: shogun send: %v\n%s", role, err, errOut)
					return
				}
				id = strings.TrimSpace(id)
				task, ok := tm.waitTask(id, 2*time.Minute)
				if !ok || task.Status != store.StatusDone {
					t.Errorf("%s: bench task %d = %+v (closed %v)", role, i, task, ok)
					return
				}
				lat.Delivered = append(lat.Delivered, ms(task.DeliveredAt.Sub(sent)))
				lat.Done = append(lat.Done, ms(task.FinishedAt.Sub(sent)))
				lat.Submits += task.Submits
				lat.Tasks++
				if !idleAfter(role, task.FinishedAt) {
					t.Errorf("%s: between_tasks not typed within a minute of the report on bench task %d", role, i)
					return
				}
			}
			mu.Lock()
			results[role] = lat
			mu.Unlock()
		}()
	}
	wg.Wait()
	tm.stop()
	b, err := json.MarshalIndent(results, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
