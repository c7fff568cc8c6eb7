// Package notify tells a person when something needs them while shogun runs
// unattended: a role waiting for a person, a fatal or rate-limited role, a
// stalled or undelivered task, a failed or blocked report, a finished
// command nobody asked to be told about, a configuration change of what a
// role runs. Each event goes, as one JSON object,
// to a command's standard input (settings notify.command) and as the body of
// an HTTP POST (notify.webhook; an ntfy topic URL works), at most once per
// role and kind per interval. Sending happens on the Notifier's own
// goroutine: a slow or failing hook is logged and never holds the supervisor,
// and at stop the hooks get a few seconds in all (Options.Drain), after which
// what is left is dropped with one log line.
package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"sync"
	"time"

	"github.com/rs/zerolog"
)

// The kinds of events.
const (
	KindAttention   = "attention"   // a role's screen asks for a person
	KindFatal       = "fatal"       // a role restarted too often and is left down
	KindLimited     = "limited"     // a role hit a usage or rate limit
	KindStalled     = "stalled"     // a delivered task got no report after every reminder
	KindUndelivered = "undelivered" // a task's nudge was never confirmed
	KindFailed      = "failed"      // a report said failed
	KindBlocked     = "blocked"     // a report said blocked
	KindFinished    = "finished"    // a command without a from role was reported done
	// KindConfigChanged: a live reload changed what a role runs (its
	// command's exec, args, env or cwd, or a role added or enabled). An
	// agent can edit config/roles.yaml as well as a person.
	KindConfigChanged = "config-changed"
	// KindQuestion: an action of an agent waits for a person's answer
	// (config/policy.yaml said ask).
	KindQuestion = "question"
	// KindMemory: a role's process tree went over its memory_max and its
	// program was restarted, its open task delivered again.
	KindMemory = "memory"
	// KindBudgetWarning: a daily budget (usage.budgets) is 80 % spent;
	// KindBudgetReached: it is all spent, and no new task is typed to
	// the role (any role, for the team's) until it is raised or the day
	// turns. Each is sent once a day per budget.
	KindBudgetWarning = "budget-warning"
	KindBudgetReached = "budget-reached"
)

// Event is what a hook receives: one JSON object (docs/notify.md).
type Event struct {
	// Kind is one of the Kind constants.
	Kind string `json:"kind"`
	// Role is the role concerned, if any.
	Role string `json:"role,omitempty"`
	// TaskID and Title name the task concerned, if any.
	TaskID string `json:"task_id,omitempty"`
	Title  string `json:"title,omitempty"`
	// Message says what happened and what a person can do, in one line.
	Message string `json:"message"`
	// Workspace is the workspace folder.
	Workspace string `json:"workspace"`
	// At is when it happened.
	At time.Time `json:"at"`
}

// Options configure a Notifier. With neither Command nor Webhook it sends
// nothing.
type Options struct {
	// Command is run once per event with the event's JSON on its standard
	// input, in Dir.
	Command []string
	Dir     string
	// Webhook receives an HTTP POST of the event's JSON.
	Webhook string
	// Every is the least time between two events of the same role and kind
	// (default one minute).
	Every time.Duration
	// Timeout bounds one command run or one POST (default 10 s).
	Timeout time.Duration
	// Drain bounds how long Run goes on sending once its context has
	// ended, all events and hooks together (default 3 s). At the end of it
	// the hook running is cut off (a command is killed, with the processes
	// it started on Unix) and the events not sent are dropped and counted
	// in one log line.
	Drain time.Duration
	// Logger receives a line per event sent and per failure.
	Logger zerolog.Logger
	// Client sends the webhook (default a client with Timeout).
	Client *http.Client
}

// queueSize bounds the events waiting to be sent; past it, new events are
// dropped with a log line rather than held in memory.
const queueSize = 64

// Notifier sends events. Send never blocks; Run does the sending.
type Notifier struct {
	opts Options
	ch   chan Event

	mu   sync.Mutex
	last map[string]time.Time // role + kind → when the last one was accepted
	now  func() time.Time
}

// New makes a Notifier; call Run to start sending.
func New(opts Options) *Notifier {
	if opts.Every <= 0 {
		opts.Every = time.Minute
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 10 * time.Second
	}
	if opts.Drain <= 0 {
		opts.Drain = 3 * time.Second
	}
	if opts.Client == nil {
		opts.Client = &http.Client{Timeout: opts.Timeout}
	}
	return &Notifier{opts: opts, ch: make(chan Event, queueSize), last: map[string]time.Time{}, now: time.Now}
}

// Enabled reports whether any hook is configured.
func (n *Notifier) Enabled() bool {
	return n != nil && (len(n.opts.Command) > 0 || n.opts.Webhook != "")
}

// Send queues e unless an event of the same role and kind was accepted less
// than Every ago, or the queue is full. It reports whether e was queued.
func (n *Notifier) Send(e Event) bool {
	if !n.Enabled() {
		return false
	}
	if e.At.IsZero() {
		e.At = n.now()
	}
	if e.Workspace == "" {
		e.Workspace = n.opts.Dir
	}
	key := e.Role + "\x00" + e.Kind
	n.mu.Lock()
	if at, ok := n.last[key]; ok && e.At.Sub(at) < n.opts.Every {
		n.mu.Unlock()
		return false
	}
	n.last[key] = e.At
	n.mu.Unlock()
	select {
	case n.ch <- e:
		return true
	default:
		n.opts.Logger.Warn().Str("kind", e.Kind).Str("role", e.Role).Msg("notification dropped: too many waiting")
		return false
	}
}

// Run sends queued events until ctx ends, then those still queued for at
// most Drain in all: the hook running at the end of it is cut off, and the
// events not sent to every hook are counted in one log line.
func (n *Notifier) Run(ctx context.Context) {
	sendCtx, cancel := endAfter(ctx, n.opts.Drain)
	defer cancel()
	for {
		select {
		case e := <-n.ch:
			if !n.deliver(sendCtx, e) {
				n.drain(sendCtx, 1)
				return
			}
		case <-ctx.Done():
			n.drain(sendCtx, 0)
			return
		}
	}
}

// drain sends the queued events until there are none or sendCtx ends, and
// logs how many could not be sent (dropped of them already).
func (n *Notifier) drain(sendCtx context.Context, dropped int) {
	for {
		select {
		case e := <-n.ch:
			if sendCtx.Err() != nil || !n.deliver(sendCtx, e) {
				dropped++
			}
		default:
			if dropped > 0 {
				n.opts.Logger.Warn().Int("dropped", dropped).Dur("drain", n.opts.Drain).
					Msgf("%d %s dropped at stop: the hooks did not finish within %s", dropped, plural(dropped, "notification", "notifications"), n.opts.Drain)
			}
			return
		}
	}
}

// endAfter is a context that ends grace after ctx ends.
func endAfter(ctx context.Context, grace time.Duration) (context.Context, context.CancelFunc) {
	out, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var mu sync.Mutex
	var timer *time.Timer
	stop := context.AfterFunc(ctx, func() {
		mu.Lock()
		timer = time.AfterFunc(grace, cancel)
		mu.Unlock()
	})
	return out, func() {
		stop()
		mu.Lock()
		if timer != nil {
			timer.Stop()
		}
		mu.Unlock()
		cancel()
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// deliver sends e to every hook; a failure is logged. It returns false
// when ctx ended (the drain time ran out) before every hook had it; such a
// cut-off is counted by the caller, not logged per hook.
func (n *Notifier) deliver(ctx context.Context, e Event) bool {
	body, err := json.Marshal(e)
	if err != nil {
		n.opts.Logger.Error().Err(err).Msg("notification")
		return true
	}
	log := n.opts.Logger.With().Str("kind", e.Kind).Str("role", e.Role).Str("task_id", e.TaskID).Logger()
	if len(n.opts.Command) > 0 {
		err := n.runCommand(ctx, body)
		switch {
		case ctx.Err() != nil:
			return false
		case err != nil:
			log.Warn().Err(err).Strs("command", n.opts.Command).Msg("notify.command failed")
		default:
			log.Info().Msg("notify.command ran")
		}
	}
	if n.opts.Webhook != "" {
		err := n.post(ctx, body)
		switch {
		case ctx.Err() != nil:
			return false
		case err != nil:
			log.Warn().Err(err).Msg("notify.webhook failed")
		default:
			log.Info().Msg("notify.webhook sent")
		}
	}
	return true
}

func (n *Notifier) runCommand(ctx context.Context, body []byte) error {
	ctx, cancel := context.WithTimeout(ctx, n.opts.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, n.opts.Command[0], n.opts.Command[1:]...)
	killTree(cmd)
	cmd.Dir = n.opts.Dir
	cmd.Stdin = bytes.NewReader(body)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = 500 * time.Millisecond
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("run %s: timed out after %s", n.opts.Command[0], n.opts.Timeout)
		}
		return fmt.Errorf("run %s: %w: %s", n.opts.Command[0], err, bytes.TrimSpace(lastBytes(out.Bytes(), 300)))
	}
	return nil
}

func (n *Notifier) post(ctx context.Context, body []byte) error {
	ctx, cancel := context.WithTimeout(ctx, n.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, n.opts.Webhook, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("post webhook: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "shogun")
	resp, err := n.opts.Client.Do(req)
	if err != nil {
		return fmt.Errorf("post webhook: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("post webhook: %w: %s", errStatus, resp.Status)
	}
	return nil
}

var errStatus = errors.New("the webhook answered with an error")

func lastBytes(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
