//go:build !windows

package supervisor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/shogun-dev/shogun/config"
	"github.com/shogun-dev/shogun/shoguntest"
)

// shogunBin is the real shogun binary, built once, for roles running
// `shogun agent-sim`.
var shogunBin string

func TestMain(m *testing.M) {
	if rec := os.Getenv(popupsEnv); rec != "" {
		os.Exit(runPopups(rec))
	}
	if mode := os.Getenv(zombieEnv); mode != "" {
		os.Exit(runZombie(mode))
	}
	if done := os.Getenv(streamerEnv); done != "" {
		os.Exit(runStreamer(done))
	}
	if os.Getenv(tickerEnv) != "" {
		os.Exit(runTicker())
	}
	if mode := os.Getenv(dumpableEnv); mode != "" {
		os.Exit(runDumpable(mode))
	}
	shoguntest.Main(m, &shogunBin)
}

// workspace writes a workspace with the given roles.yaml body and a role
// file for every prompt_path it names.
func testWorkspace(t *testing.T, rolesYAML string) string {
	t.Helper()
	ws := t.TempDir()
	for _, d := range []string{"config", "roles"} {
		if err := os.MkdirAll(filepath.Join(ws, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(ws, "config", "roles.yaml"), []byte(rolesYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(rolesYAML, "\n") {
		if _, p, ok := strings.Cut(line, "prompt_path:"); ok {
			p = strings.Trim(strings.TrimSpace(p), `"`)
			if err := os.WriteFile(filepath.Join(ws, p), []byte("# role\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return ws
}

// events collects what a supervisor reports.
type events struct {
	mu   sync.Mutex
	list []Event
}

func (e *events) add(ev Event) {
	e.mu.Lock()
	e.list = append(e.list, ev)
	e.mu.Unlock()
}

func (e *events) all() []Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]Event(nil), e.list...)
}

// running is a supervisor under test.
type running struct {
	sup    *Supervisor
	events *events
	cancel context.CancelFunc
	done   chan error
}

// start loads the workspace and runs a supervisor on it with fast timings.
func start(t *testing.T, ws string, tune func(*Options)) *running {
	t.Helper()
	return startWithWork(t, ws, tune, nil)
}

// startWithWork is start with a work check (SetWorkCheck) in place before
// Run, as the team sets the queue's; nil for none.
func startWithWork(t *testing.T, ws string, tune func(*Options), work func(role string) Work) *running {
	t.Helper()
	cfg, err := config.Load(ws, func(k string) (string, bool) {
		if k == "SHOGUN_EXE" {
			return shogunBin, true
		}
		return os.LookupEnv(k)
	})
	if err != nil {
		t.Fatalf("load config: %v", err)
	}
	ev := &events{}
	opts := Options{
		Workspace:     ws,
		Config:        cfg,
		Logger:        zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.InfoLevel),
		Executable:    shogunBin,
		OnEvent:       ev.add,
		Backoff:       RestartBackoff{Base: 50 * time.Millisecond, Max: time.Second},
		VerifyTimeout: time.Second,
		HumanQuiet:    time.Second,
		TreeGrace:     500 * time.Millisecond,
	}
	if tune != nil {
		tune(&opts)
	}
	sup, err := New(opts)
	if err != nil {
		t.Fatalf("new supervisor: %v", err)
	}
	if work != nil {
		sup.SetWorkCheck(work)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{sup: sup, events: ev, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- sup.Run(ctx) }()
	t.Cleanup(func() { r.stop(t) })
	return r
}

// stop ends the supervisor and waits for it; the deadline only catches a hang.
func (r *running) stop(t *testing.T) error {
	t.Helper()
	r.cancel()
	select {
	case err, ok := <-r.done:
		if ok {
			close(r.done)
		}
		return err
	case <-time.After(60 * time.Second):
		t.Fatal("supervisor did not stop")
		return nil
	}
}

func (r *running) role(t *testing.T, id string) *Role {
	t.Helper()
	role, ok := r.sup.Role(id)
	if !ok {
		t.Fatalf("no role %q", id)
	}
	return role
}

// waitState waits until the role is in state s.
func (r *running) waitState(t *testing.T, id string, s State, within time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	if got, err := r.role(t, id).WaitState(ctx, s); err != nil {
		t.Fatalf("role %s: still %s after %v, want %s; events:\n%s", id, got, within, s, r.describe())
	}
}

// waitEvent waits for an event matching ok.
func (r *running) waitEvent(t *testing.T, what string, within time.Duration, ok func(Event) bool) Event {
	t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		for _, e := range r.events.all() {
			if ok(e) {
				return e
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no %s within %v; events:\n%s", what, within, r.describe())
	return Event{}
}

func (r *running) describe() string {
	var b strings.Builder
	for _, e := range r.events.all() {
		fmt.Fprintf(&b, "  %s %s %s %s %s\n", e.Time.Format("15:04:05.000"), e.Role, e.Kind, e.State, e.Message)
	}
	return b.String()
}

// readRecords reads what the agent submitted.
func readRecords(t *testing.T, path string) []shoguntest.Record { return shoguntest.Submits(t, path) }

func waitFor(t *testing.T, what string, within time.Duration, cond func() bool) {
	t.Helper()
	shoguntest.WaitFor(t, what, within, cond)
}
