package notify

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// received collects what a local webhook got.
type received struct {
	mu     sync.Mutex
	events []Event
}

func (r *received) handler(w http.ResponseWriter, req *http.Request) {
	b, _ := io.ReadAll(req.Body)
	var e Event
	if req.Header.Get("Content-Type") != "application/json" || json.Unmarshal(b, &e) != nil {
		http.Error(w, "bad body", http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

func (r *received) all() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Event(nil), r.events...)
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within 10 s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func run(t *testing.T, n *Notifier) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { n.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
}

func TestWebhookAndCommandGetTheEventJSON(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the hook command is a POSIX shell script")
	}
	got := &received{}
	srv := httptest.NewServer(http.HandlerFunc(got.handler))
	defer srv.Close()
	dir := t.TempDir()
	out := filepath.Join(dir, "events.jsonl")
	n := New(Options{
		Command: []string{"/bin/sh", "-c", "cat >> '" + out + "'; echo >> '" + out + "'"},
		Dir:     dir,
		Webhook: srv.URL + "/shogun-topic",
		Logger:  zerolog.New(zerolog.NewTestWriter(t)),
	})
	run(t, n)
	at := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	if !n.Send(Event{Kind: KindStalled, Role: "ashigaru1", TaskID: "t-20261123-0004", Title: "Add the login form", Message: "no report after two reminders", At: at}) {
		t.Fatal("event not queued")
	}
	waitFor(t, "webhook event", func() bool { return len(got.all()) == 1 })
	e := got.all()[0]
	if e.Kind != KindStalled || e.Role != "ashigaru1" || e.TaskID != "t-20261123-0004" || !e.At.Equal(at) || e.Workspace != dir {
		t.Errorf("webhook got %+v", e)
	}
	waitFor(t, "the command's record", func() bool {
		b, _ := os.ReadFile(out)
		return strings.Contains(string(b), "t-20261123-0004")
	})
	b, _ := os.ReadFile(out)
	var fromCmd map[string]any
	if err := json.Unmarshal([]byte(strings.TrimSpace(string(b))), &fromCmd); err != nil {
		t.Fatalf("command got %q: %v", b, err)
	}
	for _, k := range []string{"kind", "role", "task_id", "title", "message", "workspace", "at"} {
		if _, ok := fromCmd[k]; !ok {
			t.Errorf("command's JSON lacks %q: %s", k, b)
		}
	}
}

func TestAtMostOnePerRoleAndKindPerInterval(t *testing.T) {
	got := &received{}
	srv := httptest.NewServer(http.HandlerFunc(got.handler))
	defer srv.Close()
	n := New(Options{Webhook: srv.URL, Every: time.Minute, Logger: zerolog.Nop()})
	run(t, n)
	t0 := time.Now()
	sent := []bool{
		n.Send(Event{Kind: KindAttention, Role: "karo", At: t0}),
		n.Send(Event{Kind: KindAttention, Role: "karo", At: t0.Add(10 * time.Second)}), // too soon
		n.Send(Event{Kind: KindFatal, Role: "karo", At: t0.Add(10 * time.Second)}),     // another kind
		n.Send(Event{Kind: KindAttention, Role: "ashigaru1", At: t0.Add(10 * time.Second)}),
		n.Send(Event{Kind: KindAttention, Role: "karo", At: t0.Add(61 * time.Second)}), // a minute later
	}
	want := []bool{true, false, true, true, true}
	for i := range want {
		if sent[i] != want[i] {
			t.Errorf("event %d queued = %v, want %v", i, sent[i], want[i])
		}
	}
	waitFor(t, "four events", func() bool { return len(got.all()) == 4 })
}

// A webhook that never answers and a command that fails are logged; Send
// never waits for them, and events after them still go out.
func TestAFailingHookNeverBlocks(t *testing.T) {
	hang := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-hang }))
	defer slow.Close()
	defer close(hang)
	var logs strings.Builder
	var mu sync.Mutex
	logw := zerolog.New(zerolog.SyncWriter(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return logs.Write(p)
	})))
	n := New(Options{Webhook: slow.URL, Command: []string{"definitely-not-a-program-shogun"}, Timeout: 300 * time.Millisecond, Logger: logw})
	run(t, n)
	began := time.Now()
	for i := range queueSize * 2 {
		n.Send(Event{Kind: KindFailed, Role: "r" + string(rune('a'+i%26)) + string(rune('a'+i/26)), Message: "x"})
	}
	if took := time.Since(began); took > time.Second {
		t.Fatalf("Send blocked for %v behind a hanging webhook", took)
	}
	waitFor(t, "the failures logged", func() bool {
		mu.Lock()
		defer mu.Unlock()
		s := logs.String()
		return strings.Contains(s, "notify.webhook failed") && strings.Contains(s, "notify.command failed") && strings.Contains(s, "dropped")
	})
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func TestNothingConfiguredSendsNothing(t *testing.T) {
	n := New(Options{Logger: zerolog.Nop()})
	if n.Enabled() || n.Send(Event{Kind: KindFatal}) {
		t.Error("a notifier without hooks accepted an event")
	}
}

// At stop, a webhook that never answers gets the drain time and no more:
// the POST in flight is cut off, and the events not sent are counted in
// one log line.
func TestStopDropsWhatAHangingWebhookCouldNotTake(t *testing.T) {
	hang := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-hang }))
	defer slow.Close()
	defer close(hang)
	var logs strings.Builder
	var mu sync.Mutex
	logw := zerolog.New(zerolog.SyncWriter(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return logs.Write(p)
	})))
	n := New(Options{Webhook: slow.URL, Drain: 300 * time.Millisecond, Logger: logw})
	for i := range 5 {
		n.Send(Event{Kind: KindBlocked, Role: "r" + string(rune('a'+i)), Message: "x"})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	began := time.Now()
	n.Run(ctx)
	if took := time.Since(began); took > 2*time.Second {
		t.Errorf("Run took %v after the stop, want about the drain time (300 ms)", took)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(logs.String(), `5 notifications dropped at stop: the hooks did not finish within 300ms`) {
		t.Errorf("log:\n%s", logs.String())
	}
}
