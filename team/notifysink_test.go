package team

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/shogun-dev/shogun/notify"
)

// sink is a webhook for a team under test (notify.webhook: URL): it keeps
// every notification the team sends it, in order.
type sink struct {
	URL string

	mu  sync.Mutex
	got []notify.Event
}

// notifySink starts a sink, closed when the test ends.
func notifySink(t *testing.T) *sink {
	t.Helper()
	s := &sink{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var e notify.Event
		if json.Unmarshal(b, &e) == nil {
			s.mu.Lock()
			s.got = append(s.got, e)
			s.mu.Unlock()
		}
	}))
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

// events is what the sink was sent so far, in order.
func (s *sink) events() []notify.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]notify.Event(nil), s.got...)
}

// last is the latest notification of kind about role ("" for the team's),
// and whether there is one.
func (s *sink) last(kind, role string) (notify.Event, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.got) - 1; i >= 0; i-- {
		if e := s.got[i]; e.Kind == kind && e.Role == role {
			return e, true
		}
	}
	return notify.Event{}, false
}

// has reports whether the sink was sent a notification for which ok holds.
func (s *sink) has(ok func(notify.Event) bool) bool {
	for _, e := range s.events() {
		if ok(e) {
			return true
		}
	}
	return false
}
