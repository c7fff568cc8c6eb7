package control

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"time"
)

// GET /v1/events/stream is a server-sent event stream of the team's
// changes, for the web console's live pages: a "status" event (the
// StatusReply of GET /v1/status) when the stream opens and every
// eventsRefresh after, and a "role" event (the role's RoleReply) whenever a
// role's state changes. The stream is the client's own goroutine, woken by
// the roles' change signals, which never wait for it: a slow client only
// falls behind (a write that takes longer than eventsWriteTimeout ends its
// stream), and the team is never slowed.
const (
	eventsRefresh      = 5 * time.Second
	eventsWriteTimeout = 10 * time.Second
	// eventsBurst is the pause after a change before the changed roles are
	// sent, so a burst of changes costs one event per role.
	eventsBurst = 50 * time.Millisecond
)

func (s *Server) registerEvents(mux *http.ServeMux) {
	mux.HandleFunc("GET /v1/events/stream", s.eventStream)
}

func (s *Server) eventStream(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	send := func(event string, v any) bool {
		b, err := json.Marshal(v)
		if err != nil {
			return false
		}
		_ = rc.SetWriteDeadline(time.Now().Add(eventsWriteTimeout))
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	sendStatus := func() bool {
		st, err := s.statusReply()
		if err != nil {
			return send("error", ErrorReply{Error: err.Error()})
		}
		return send("status", st)
	}
	if !sendStatus() {
		return
	}
	ctx := r.Context()
	tick := time.NewTicker(eventsRefresh)
	defer tick.Stop()
	for {
		roles := s.team.Supervisor().Roles()
		// Wait for any role's next change, the refresh, or the client
		// leaving. The roles are taken anew each round: a reload may add
		// or remove some.
		cases := make([]reflect.SelectCase, 0, len(roles)+2)
		cases = append(cases,
			reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(ctx.Done())},
			reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(tick.C)})
		for _, role := range roles {
			cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(role.Changed())})
		}
		chosen, _, _ := reflect.Select(cases)
		switch chosen {
		case 0:
			return
		case 1:
			if !sendStatus() {
				return
			}
			continue
		}
		if !sleepCtx(ctx, eventsBurst) || !s.sendRoles(send) {
			return
		}
	}
}

// sendRoles sends a "role" event for every role. A role's change signal
// says something changed, not what, and the state of each is cheap to read.
func (s *Server) sendRoles(send func(string, any) bool) bool {
	st, err := s.statusReply()
	if err != nil {
		return send("error", ErrorReply{Error: err.Error()})
	}
	for _, rr := range st.Roles {
		if !send("role", rr) {
			return false
		}
	}
	return true
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
