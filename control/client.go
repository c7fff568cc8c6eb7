package control

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"github.com/shogun-dev/shogun/supervisor"
	"github.com/shogun-dev/shogun/workspace"
)

// ErrNoSupervisor means no supervisor answers on the workspace's socket.
var ErrNoSupervisor = errors.New("no supervisor is running")

// ErrNoAnswer means the workspace's endpoint took the request but the
// supervisor did not answer it within its deadline: it is stuck or starved.
var ErrNoAnswer = errors.New("the supervisor did not answer")

// The deadlines of the client's requests. A supervisor answers at once: it
// reads its state or hands work on, and what may take it longer it bounds
// itself (typing waits up to 60 s for the role, and every answer is written
// within httpWriteTimeout). So a request without an answer by its deadline
// means the supervisor is stuck, and the command says so instead of waiting
// for ever. Streams (attach, events, a followed log) have a deadline only
// until they are connected.
const (
	// dialTimeout bounds connecting, tries again included, where the
	// caller gives no deadline (every request has its own, which bounds
	// it). firstAttempt bounds the first try, connecting and the ping
	// together; each further try has twice as long, up to dialAttempt;
	// dialPause is the pause between tries.
	dialTimeout  = 5 * time.Second
	firstAttempt = 500 * time.Millisecond
	dialAttempt  = 2 * time.Second
	dialPause    = 100 * time.Millisecond
	// requestTimeout bounds a request and its answer, connecting included.
	requestTimeout = 15 * time.Second
	// slowRequestTimeout bounds typing and reloading, which the supervisor
	// answers within its write timeout.
	slowRequestTimeout = httpWriteTimeout + 5*time.Second
)

// APIError is a refusal the supervisor answered: the HTTP status and the
// error line of its ErrorReply, which is what Error says.
type APIError struct {
	Status  int
	Message string
}

func (e *APIError) Error() string { return e.Message }

// Client talks to the supervisor of a workspace.
type Client struct {
	ws   string
	path string
	http *http.Client
	// timeout and slowTimeout are requestTimeout and slowRequestTimeout
	// (shorter in tests).
	timeout, slowTimeout time.Duration
}

// NewClient returns a client for the workspace's socket.
func NewClient(workspace string) *Client {
	c := &Client{ws: workspace, path: Endpoint(workspace), timeout: requestTimeout, slowTimeout: slowRequestTimeout}
	dialer := func(ctx context.Context, _, _ string) (net.Conn, error) { return c.dial(ctx) }
	c.http = &http.Client{Transport: &http.Transport{DialContext: dialer}}
	return c
}

// Endpoint is the socket or named pipe the client talks to.
func (c *Client) Endpoint() string { return c.path }

// dial connects to the endpoint within ctx's deadline (dialTimeout without
// one) and makes sure the supervisor serves the connection: it sends GET
// /v1/ping on it and waits for the answer, whatever its status (an older supervisor says 404). A
// try that fails in a way that passes (the socket's backlog full, a pipe
// whose instances are all busy, no answer to the ping in time) is made
// again on a new connection after a short pause; the ping is harmless to
// repeat, and once it is answered the request itself is sent once only.
//
// The ping is what makes a connection that lands where nobody serves it
// cost one short try instead of the request's whole deadline. Under Wine 8
// the first client of a named pipe made by go-winio lands on the instance
// go-winio creates only to reserve the name (on Windows that instance
// takes no clients), and waited there for ever.
//
// A missing endpoint, a refused connection and a denied permission are
// answers, returned at once. Every error is a *net.OpError with Op "dial",
// on every platform, so that the caller says no supervisor answers.
func (c *Client) dial(ctx context.Context) (net.Conn, error) {
	asDial := func(err error) error {
		var op *net.OpError
		switch {
		case !errors.As(err, &op):
			// A named pipe's dial fails with a plain path error, and
			// trustedEndpoint's refusal is one of ours.
			network := "unix"
			if runtime.GOOS == "windows" {
				network = "pipe"
			}
			err = &net.OpError{Op: "dial", Net: network, Err: err}
		case op.Op != "dial":
			// The ping's write or read: connecting is what failed.
			err = &net.OpError{Op: "dial", Net: op.Net, Source: op.Source, Addr: op.Addr, Err: op.Err}
		}
		return err
	}
	if err := trustedEndpoint(c.ws, c.path); err != nil {
		return nil, asDial(err)
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, dialTimeout)
		defer cancel()
	}
	for attempt := firstAttempt; ; attempt = min(2*attempt, dialAttempt) {
		try, stop := context.WithTimeout(ctx, attempt)
		conn, err := dial(try, c.path)
		if err == nil {
			if err = ping(try, conn); err != nil {
				conn.Close()
			}
		}
		stop()
		if err == nil {
			return conn, nil
		}
		passing := errors.Is(err, syscall.EAGAIN) || errors.Is(err, context.DeadlineExceeded) || os.IsTimeout(err)
		if !passing || ctx.Err() != nil {
			return nil, asDial(err)
		}
		select {
		case <-ctx.Done():
			return nil, asDial(err)
		case <-time.After(dialPause):
		}
	}
}

// ping sends GET /v1/ping on a new connection and reads the answer, within
// ctx. The connection is left as it was: nothing of the answer remains
// unread, and it has no deadline.
func ping(ctx context.Context, conn net.Conn) error {
	if d, ok := ctx.Deadline(); ok {
		if err := conn.SetDeadline(d); err != nil {
			return err
		}
	}
	req, err := http.NewRequest(http.MethodGet, "http://shogun/v1/ping", nil)
	if err != nil {
		return err
	}
	if err := req.Write(conn); err != nil {
		return err
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil {
		return err
	}
	if resp.Close || br.Buffered() > 0 {
		return fmt.Errorf("ping: the connection cannot carry a request after the answer")
	}
	return conn.SetDeadline(time.Time{})
}

// dialError explains why the socket could not be reached: permission
// denied says so (the supervisor belongs to another user), a connection
// that timed out within d is a supervisor that does not answer, everything
// else means no supervisor answers, with the reason.
func (c *Client) dialError(what string, err error, d time.Duration) error {
	why := fmt.Sprintf("nothing answers on %s: %v", c.path, errors.Unwrap(err))
	switch {
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("permission denied on the control socket %s: the supervisor runs as another user (use that user): %w", c.path, err)
	case errors.Is(err, context.DeadlineExceeded) || os.IsTimeout(err):
		return c.noAnswer(what, d)
	case errors.Is(err, fs.ErrNotExist):
		why = "no socket at " + c.path
	case errors.Is(err, syscall.ECONNREFUSED):
		why = "nothing answers on " + c.path + "; a killed supervisor leaves it behind"
	}
	return fmt.Errorf("%w for this workspace (%s); start it with `shogun start`", ErrNoSupervisor, why)
}

// noAnswer is the error of a request what that got no answer within d:
// it names the endpoint, and what to look at.
func (c *Client) noAnswer(what string, d time.Duration) error {
	l := workspace.New(c.ws)
	check := fmt.Sprintf("no supervisor holds this workspace's lock, so something else listens there; see %s", l.SupervisorLog())
	if pid := supervisor.Owner(l.Lock()); pid != 0 {
		check = fmt.Sprintf("it may be stuck or starved: see its log %s; ending its process (pid %d) lets `shogun start` begin a new one",
			l.SupervisorLog(), pid)
	}
	return fmt.Errorf("%w %s on %s within %s: %s", ErrNoAnswer, what, c.path, d, check)
}

// do sends a request and decodes a JSON answer into out, all within
// c.timeout.
func (c *Client) do(method, path string, body, out any) error {
	return c.doWithin(c.timeout, method, path, body, out)
}

// doWithin is do within d.
func (c *Client) doWithin(d time.Duration, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, "http://shogun"+path, rd)
	if err != nil {
		return err
	}
	what := method + " " + path
	resp, err := c.http.Do(req)
	if err != nil {
		var op *net.OpError
		if errors.As(err, &op) && op.Op == "dial" {
			return c.dialError(what, err, d)
		}
		if ctx.Err() != nil {
			return c.noAnswer(what, d)
		}
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		var e ErrorReply
		if json.NewDecoder(resp.Body).Decode(&e) == nil && e.Error != "" {
			return &APIError{Status: resp.StatusCode, Message: e.Error}
		}
		if ctx.Err() != nil {
			return c.noAnswer(what, d)
		}
		return fmt.Errorf("%s %s: %s", method, path, resp.Status)
	}
	if out == nil {
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		if ctx.Err() != nil {
			return c.noAnswer(what, d)
		}
		return fmt.Errorf("%s: read the answer: %w", what, err)
	}
	return nil
}

// Status returns the supervisor's status.
func (c *Client) Status() (StatusReply, error) {
	var r StatusReply
	return r, c.do(http.MethodGet, "/v1/status", nil, &r)
}

// DismissRejected clears the status's alerts of the files rejected so
// far and returns how many there were.
func (c *Client) DismissRejected() (int, error) {
	var r DismissReply
	err := c.do(http.MethodPost, "/v1/attention/dismiss", nil, &r)
	return r.Dismissed, err
}

// Screen returns a role's current screen.
func (c *Client) Screen(role string) (ScreenReply, error) {
	var r ScreenReply
	return r, c.do(http.MethodGet, "/v1/roles/"+url.PathEscape(role)+"/screen", nil, &r)
}

// Type types text into a role by the typing rules. A submit the screen
// never confirmed is no error: the reply says Confirmed false, with the
// Reason and the submits made.
func (c *Client) Type(role, text string, submit bool) (TypeReply, error) {
	var r TypeReply
	return r, c.doWithin(c.slowTimeout, http.MethodPost, "/v1/roles/"+url.PathEscape(role)+"/type", TypeRequest{Text: text, Submit: submit}, &r)
}

// Restart restarts a role's program.
func (c *Client) Restart(role string) (RestartReply, error) {
	var r RestartReply
	return r, c.do(http.MethodPost, "/v1/roles/"+url.PathEscape(role)+"/restart", nil, &r)
}

// Retry asks the supervisor to deliver a stalled, undelivered or failed
// task again.
func (c *Client) Retry(taskID string) (TaskReply, error) {
	var r TaskReply
	return r, c.do(http.MethodPost, "/v1/tasks/"+url.PathEscape(taskID)+"/retry", nil, &r)
}

// Cancel asks the supervisor to cancel a queued or open task.
func (c *Client) Cancel(taskID, reason string) (TaskReply, error) {
	var r TaskReply
	return r, c.do(http.MethodPost, "/v1/tasks/"+url.PathEscape(taskID)+"/cancel", CancelRequest{Reason: reason}, &r)
}

// Stop asks the supervisor to stop every role and exit.
func (c *Client) Stop() error { return c.do(http.MethodPost, "/v1/stop", nil, nil) }

// Stream is an attach connection: read frames from R, write frames to W.
type Stream struct {
	Conn net.Conn
	R    *bufio.Reader
}

// Attach opens an attach stream to a role. Connecting and the handshake
// have c.timeout; the stream has no deadline.
func (c *Client) Attach(role string, readOnly bool, cols, rows int) (*Stream, error) {
	what := "attach " + role
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	conn, err := c.dial(ctx)
	cancel()
	if err != nil {
		return nil, c.dialError(what, err, c.timeout)
	}
	if err := conn.SetDeadline(time.Now().Add(c.timeout)); err != nil {
		conn.Close()
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	q := url.Values{"cols": {strconv.Itoa(cols)}, "rows": {strconv.Itoa(rows)}}
	if readOnly {
		q.Set("read_only", "1")
	}
	req, err := http.NewRequest(http.MethodGet, "http://shogun/v1/roles/"+url.PathEscape(role)+"/attach?"+q.Encode(), nil)
	if err != nil {
		conn.Close()
		return nil, err
	}
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", upgradeName)
	noAnswer := func(err error) error {
		conn.Close()
		if os.IsTimeout(err) {
			return c.noAnswer(what, c.timeout)
		}
		return fmt.Errorf("%s: %w", what, err)
	}
	if err := req.Write(conn); err != nil {
		return nil, noAnswer(err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		return nil, noAnswer(err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		defer conn.Close()
		var e ErrorReply
		if json.NewDecoder(resp.Body).Decode(&e) == nil && e.Error != "" {
			return nil, errors.New(e.Error)
		}
		return nil, fmt.Errorf("attach %s: %s", role, resp.Status)
	}
	if err := conn.SetDeadline(time.Time{}); err != nil {
		conn.Close()
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return &Stream{Conn: conn, R: br}, nil
}
