//go:build unix

package notify

import (
	"context"
	"errors"
	"github.com/shogun-dev/shogun/shoguntest"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// A webhook that never answers and a command that sleeps (in a child of
// its shell) hold up a stop by Drain and no more: Run returns within it,
// the sleeping process is killed, and one log line counts every event
// that was not sent.
func TestStopWaitsForHangingHooksOnlyUntilTheDrainDeadline(t *testing.T) {
	hang := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-hang }))
	defer slow.Close()
	defer close(hang)
	dir := t.TempDir()
	started, pidFile := filepath.Join(dir, "started"), filepath.Join(dir, "sleep.pid")
	var logs shoguntest.Buffer
	n := New(Options{
		Command: []string{"/bin/sh", "-c", "cat >/dev/null; sleep 60 & echo $! > '" + pidFile + "'; touch '" + started + "'; wait"},
		Dir:     dir,
		Webhook: slow.URL,
		Drain:   time.Second,
		Logger:  zerolog.New(&logs),
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { n.Run(ctx); close(done) }()
	const events = 12
	for i := range events {
		if !n.Send(Event{Kind: KindStalled, Role: "r" + strconv.Itoa(i), Message: "x"}) {
			t.Fatalf("event %d not queued", i)
		}
	}
	waitFor(t, "the command to run", func() bool { _, err := os.Stat(started); return err == nil })
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	sleeper, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}

	began := time.Now()
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return within 5 s of the stop")
	}
	if took := time.Since(began); took < time.Second || took > 2500*time.Millisecond {
		t.Errorf("Run returned %v after the stop, want the drain time (1 s) and little more", took)
	}
	waitFor(t, "the hook's sleeping child killed", func() bool {
		return errors.Is(syscall.Kill(sleeper, 0), syscall.ESRCH)
	})
	got := logs.String()
	if want := `"dropped":12`; !strings.Contains(got, want) || !strings.Contains(got, "12 notifications dropped at stop: the hooks did not finish within 1s") {
		t.Errorf("log lacks the dropped count %s:\n%s", want, got)
	}
	if c := strings.Count(got, "dropped at stop"); c != 1 {
		t.Errorf("%d lines about dropped notifications, want one:\n%s", c, got)
	}
}
