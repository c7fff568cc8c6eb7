package control

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shogun-dev/shogun/store"
)

// The event stream, GET /v1/events/stream: server-sent events telling the
// console's pages what changed, so that no page polls. The whole status
// when the stream opens and every statusEvery (event "status", a
// StatusReply: the seconds since output move on), a role's state, task or
// queue changes (event "role", a RoleReply), a task's status changes
// (event "task", a Task), the configuration is reloaded (event "config", a
// ConfigEvent), what waits for a person's answer changes (event
// "questions", a QuestionsReply), the status cannot be read (event
// "error", an ErrorReply).
// A client that does not keep up loses events, never slows the team: each
// has a bounded buffer, an event that does not fit is dropped, and the
// client is then told ("dropped") so it fetches the state afresh.

// Limits of the event and log streams.
const (
	// maxStreams bounds the event and log streams one server serves at
	// once; one more gets 503.
	maxStreams = 32
	// eventBuffer is how many events wait for a client before new ones are
	// dropped.
	eventBuffer = 256
	// keepAlive is how often an idle stream gets a comment, so that a
	// client gone without a word is noticed and proxies keep it open.
	keepAlive = 15 * time.Second
	// streamWriteTimeout is how long a client may take to accept one
	// write before its stream is ended.
	streamWriteTimeout = 10 * time.Second
	// coalesce is how long the watcher waits after a change for the next
	// ones: a burst of changes costs one look.
	coalesce = 50 * time.Millisecond
	// statusEvery is how often the whole status is sent; the watcher then
	// also looks at the list of roles, in case one was added without any
	// other change.
	statusEvery = 5 * time.Second
)

// ConfigEvent is the data of a "config" event: the outcome of a reload.
type ConfigEvent struct {
	// Error, when set, is why the configuration files as they are now are
	// not in effect; absent when the last reload was applied.
	Error *ConfigErrorReply `json:"error,omitempty"`
}

// DroppedEvent is the data of a "dropped" event: the client did not keep
// up and this many events were not sent. Fetch the state again.
type DroppedEvent struct {
	Events int64 `json:"events"`
}

// sseEvent is one event, its data encoded once for every client.
type sseEvent struct {
	kind string
	data []byte
}

func newEvent(kind string, v any) (sseEvent, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return sseEvent{}, fmt.Errorf("event %s: %w", kind, err)
	}
	return sseEvent{kind: kind, data: b}, nil
}

// write sends e in the text/event-stream format; the data is one line of
// JSON, which never holds a newline.
func (e sseEvent) write(w io.Writer) error {
	_, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", e.kind, e.data)
	return err
}

// eventHub hands the team's changes to the stream clients. Its watcher
// goroutine (watcher.watch) runs only while a client is subscribed: the
// first subscriber starts it and the last one to leave ends it, so a
// supervisor nobody watches pays nothing.
type eventHub struct {
	s *Server

	mu      sync.Mutex
	clients map[*eventClient]struct{}
	stop    context.CancelFunc // ends the watcher; nil while none runs
}

// eventClient is one stream's buffer.
type eventClient struct {
	ch      chan sseEvent
	dropped atomic.Int64
}

func newEventHub(s *Server) *eventHub {
	return &eventHub{s: s, clients: map[*eventClient]struct{}{}}
}

func (h *eventHub) subscribe() *eventClient {
	c := &eventClient{ch: make(chan sseEvent, eventBuffer)}
	h.mu.Lock()
	h.clients[c] = struct{}{}
	var ctx context.Context
	start := h.stop == nil
	if start {
		ctx, h.stop = context.WithCancel(context.Background())
	}
	h.mu.Unlock()
	if start {
		// The watcher's view of the team is taken now, before the
		// subscriber reads the state it shows first: a change after that
		// is published.
		w := &watcher{h: h, roles: map[string]RoleReply{}, inFlight: map[string]taskKey{}, sent: map[string]taskKey{}}
		ticker := time.NewTicker(statusEvery)
		cases, cfg := w.cases(ctx, ticker.C)
		w.look(false)
		go w.watch(ctx, ticker, cases, cfg)
	}
	return c
}

func (h *eventHub) unsubscribe(c *eventClient) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.clients, c)
	if len(h.clients) == 0 && h.stop != nil {
		h.stop()
		h.stop = nil
	}
}

// publish offers e to every client without waiting: a full buffer drops it.
func (h *eventHub) publish(e sseEvent) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for c := range h.clients {
		select {
		case c.ch <- e:
		default:
			c.dropped.Add(1)
		}
	}
}

// watch publishes the team's changes until ctx ends. It waits on the
// roles' state changes, the history's writes and the configuration's
// reloads (cases, cfg); each time, it takes the channels to wait on next
// before it reads the state, so no change in between is missed.
func (w *watcher) watch(ctx context.Context, ticker *time.Ticker, cases []reflect.SelectCase, cfg <-chan struct{}) {
	defer ticker.Stop()
	for {
		chosen, _, _ := reflect.Select(cases)
		if chosen == 0 {
			return
		}
		if chosen != tickCase {
			select {
			case <-ctx.Done():
				return
			case <-time.After(coalesce):
			}
		}
		// A reload may have come with another change, which select chose.
		reloaded := closed(cfg)
		cases, cfg = w.cases(ctx, ticker.C)
		if reloaded {
			w.h.s.publishConfig()
		}
		if chosen == tickCase {
			w.status()
		}
		w.look(true)
	}
}

// closed says whether ch is closed, without waiting.
func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// watcher is the state of one watch: what it last published.
type watcher struct {
	h     *eventHub
	roles map[string]RoleReply // by id, with the ever-changing times zeroed
	// Tasks are found by what costs nothing however long the history: the
	// events recorded since lastEvent (a range of their ids), and the
	// tasks in flight (one per role at most), whose status can change
	// without an event (assigned, a submit more). inFlight is what they
	// were; sent what was last published of each task (bounded).
	lastEvent int64
	inFlight  map[string]taskKey
	sent      map[string]taskKey
	// questions is what waits for a person, as last published.
	questions QuestionsReply
}

// taskKey is what of a task a page shows changing.
type taskKey struct {
	status            string
	updated           time.Time
	attempts, submits int
}

func keyOf(t store.Task) taskKey {
	return taskKey{status: t.Status, updated: t.UpdatedAt, attempts: t.Attempts, submits: t.Submits}
}

// maxSent bounds the tasks the watcher remembers it published; past it, it
// forgets them all (a page gets an event it did not need, no more).
const maxSent = 10000

// tickCase is the index of the status tick among the watch's cases.
const tickCase = 3

// cases are what the watch waits on: ctx (index 0), the history's next
// write, a reload (whose channel is returned), the status tick (tickCase)
// and each role's next state change.
func (w *watcher) cases(ctx context.Context, tick <-chan time.Time) ([]reflect.SelectCase, <-chan struct{}) {
	recv := func(ch any) reflect.SelectCase {
		return reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(ch)}
	}
	t := w.h.s.team
	cfg := t.ConfigChanged()
	cases := []reflect.SelectCase{recv(ctx.Done()), recv(t.Store().Changed()), recv(cfg), recv(tick)}
	for _, r := range t.Supervisor().Roles() {
		cases = append(cases, recv(r.Changed()))
	}
	return cases, cfg
}

// status publishes the whole status, or why it cannot be read.
func (w *watcher) status() {
	st, err := w.h.s.statusReply()
	var e sseEvent
	if err != nil {
		e, err = newEvent("error", ErrorReply{Error: err.Error()})
	} else {
		e, err = newEvent("status", st)
	}
	if err == nil {
		w.h.publish(e)
	}
}

// look reads the roles and the tasks changed since the last look, and
// publishes what changed when publish is set.
func (w *watcher) look(publish bool) {
	t := w.h.s.team
	if snap, err := t.Queue().Snapshot(); err != nil {
		if publish {
			if e, err := newEvent("error", ErrorReply{Error: err.Error()}); err == nil {
				w.h.publish(e)
			}
		}
	} else {
		for _, rr := range w.h.s.roleReplies(snap) {
			// What moves on by itself (the memory with every look of
			// the supervisor's watch) goes with the status every
			// statusEvery, not as a role event.
			key := rr
			key.UptimeS, key.SinceOutput, key.MemoryBytes = 0, 0, 0
			if prev, ok := w.roles[rr.ID]; ok && reflect.DeepEqual(prev, key) {
				continue
			}
			w.roles[rr.ID] = key
			if publish {
				if e, err := newEvent("role", rr); err == nil {
					w.h.publish(e)
				}
			}
		}
	}
	w.tasks(publish)
	// A hook's question comes with a write to the history, a dialog with a
	// role's state (or, while a role stays waiting, the status tick).
	if qs := w.h.s.questionsReply(); !reflect.DeepEqual(qs, w.questions) {
		w.questions = qs
		if publish {
			if e, err := newEvent("questions", qs); err == nil {
				w.h.publish(e)
			}
		}
	}
}

// tasks publishes the tasks that changed since the last look.
func (w *watcher) tasks(publish bool) {
	st := w.h.s.team.Store()
	if !publish {
		// The start: where the events end, and what is in flight now.
		if id, err := st.LastEventID(); err == nil {
			w.lastEvent = id
		}
		if ts, err := st.InFlightTasks(); err == nil {
			for _, t := range ts {
				w.inFlight[t.ID], w.sent[t.ID] = keyOf(t), keyOf(t)
			}
		}
		return
	}
	// Each task to look at, and why: in flight (read already), out of
	// flight since the last look, or named by a new event, which adds to
	// its timeline and is told even when the task itself did not change.
	const (
		inFlight = iota + 1
		leftFlight
		named
	)
	why := map[string]int{}
	ts, err := st.InFlightTasks()
	if err != nil {
		w.h.s.log.Debug().Err(err).Msg("event stream: read the tasks in flight")
		return
	}
	flying := map[string]store.Task{}
	now := map[string]taskKey{}
	for _, t := range ts {
		flying[t.ID], now[t.ID], why[t.ID] = t, keyOf(t), inFlight
	}
	for id := range w.inFlight {
		if _, ok := now[id]; !ok {
			why[id] = leftFlight
		}
	}
	w.inFlight = now
	for {
		evIDs, last, err := st.TasksInEventsAfter(w.lastEvent, 1000)
		if err != nil {
			w.h.s.log.Debug().Err(err).Msg("event stream: read the events")
			break
		}
		for _, id := range evIDs {
			why[id] = named
		}
		if last == w.lastEvent {
			break
		}
		w.lastEvent = last
	}
	var changed []store.Task
	for id, r := range why {
		if r == named {
			delete(w.sent, id)
		}
		if t, ok := flying[id]; ok {
			changed = append(changed, t)
			continue
		}
		t, err := st.Task(id)
		if err != nil {
			continue // an event of a task since gone: nothing to show
		}
		changed = append(changed, t)
	}
	sort.Slice(changed, func(i, j int) bool { return changed[i].Seq < changed[j].Seq })
	if len(w.sent) > maxSent {
		w.sent = map[string]taskKey{}
	}
	for _, t := range changed {
		k := keyOf(t)
		if prev, ok := w.sent[t.ID]; ok && prev == k {
			continue
		}
		w.sent[t.ID] = k
		if e, err := newEvent("task", TaskFrom(t)); err == nil {
			w.h.publish(e)
		}
	}
}

// publishConfig tells the clients the outcome of a reload.
func (s *Server) publishConfig() {
	if e, err := newEvent("config", ConfigEvent{Error: ConfigErrorFrom(s.team.ConfigError())}); err == nil {
		s.events.publish(e)
	}
}

// eventStream is GET /v1/events/stream.
func (s *Server) eventStream(w http.ResponseWriter, r *http.Request) {
	if !s.streams.take() {
		fail(w, http.StatusServiceUnavailable, fmt.Errorf("too many event and log streams are open (%d)", maxStreams))
		return
	}
	defer s.streams.give()
	c := s.events.subscribe()
	defer s.events.unsubscribe(c)
	out := newStreamWriter(w)
	out.start()
	// The status as it is now comes first, so a page needs no other
	// request to show the roles; what changes after subscribe follows.
	st, err := s.statusReply()
	first, _ := newEvent("status", st)
	if err != nil {
		first, _ = newEvent("error", ErrorReply{Error: err.Error()})
	}
	if out.event(first) != nil || out.flush() != nil {
		return
	}
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case e := <-c.ch:
			if out.event(e) != nil {
				return
			}
			// Send what else waits before one flush.
			for more := true; more; {
				select {
				case e := <-c.ch:
					if out.event(e) != nil {
						return
					}
				default:
					more = false
				}
			}
		case <-tick.C:
			if out.comment("keep-alive") != nil {
				return
			}
		}
		if n := c.dropped.Swap(0); n > 0 {
			if e, err := newEvent("dropped", DroppedEvent{Events: n}); err == nil && out.event(e) != nil {
				return
			}
		}
		if out.flush() != nil {
			return
		}
	}
}

// streamWriter writes a text/event-stream answer, each write bounded in
// time: a client that stops reading ends its own stream and holds nothing.
type streamWriter struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

func newStreamWriter(w http.ResponseWriter) *streamWriter {
	return &streamWriter{w: w, rc: http.NewResponseController(w)}
}

func (s *streamWriter) start() {
	h := s.w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	s.w.WriteHeader(http.StatusOK)
}

func (s *streamWriter) deadline() {
	// The control socket's server has a write timeout for whole answers;
	// a stream sets its own per write instead.
	_ = s.rc.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
}

func (s *streamWriter) event(e sseEvent) error {
	s.deadline()
	return e.write(s.w)
}

func (s *streamWriter) comment(text string) error {
	s.deadline()
	_, err := fmt.Fprintf(s.w, ": %s\n\n", text)
	return err
}

func (s *streamWriter) flush() error {
	s.deadline()
	return s.rc.Flush()
}
