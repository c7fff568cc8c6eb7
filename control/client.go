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
	"strconv"
	"syscall"
	"time"
)

// ErrNoSupervisor means no supervisor answers on the workspace's socket.
var ErrNoSupervisor = errors.New("no supervisor is running")

// Client talks to the supervisor of a workspace.
type Client struct {
	path string
	http *http.Client
}

// NewClient returns a client for the workspace's socket.
func NewClient(workspace string) *Client {
	path := Endpoint(workspace)
	dialer := func(ctx context.Context, _, _ string) (net.Conn, error) {
		conn, err := dial(ctx, path)
		var op *net.OpError
		if err != nil && !errors.As(err, &op) {
			// A named pipe's dial fails with a plain path error: mark it as a
			// dial, so every platform's client says no supervisor answers.
			err = &net.OpError{Op: "dial", Net: "pipe", Err: err}
		}
		return conn, err
	}
	return &Client{path: path, http: &http.Client{Transport: &http.Transport{DialContext: dialer}}}
}

// Endpoint is the socket or named pipe the client talks to.
func (c *Client) Endpoint() string { return c.path }

// dialError explains why the socket could not be reached: permission
// denied says so (the supervisor belongs to another user), everything else
// means no supervisor answers, with the reason.
func (c *Client) dialError(err error) error {
	why := fmt.Sprintf("nothing answers on %s: %v", c.path, errors.Unwrap(err))
	switch {
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("permission denied on the control socket %s: the supervisor runs as another user (use that user): %w", c.path, err)
	case errors.Is(err, fs.ErrNotExist):
		why = "no socket at " + c.path
	case errors.Is(err, syscall.ECONNREFUSED):
		why = "nothing answers on " + c.path + "; a killed supervisor leaves it behind"
	}
	return fmt.Errorf("%w for this workspace (%s); start it with `shogun start`", ErrNoSupervisor, why)
}

// do sends a request and decodes a JSON answer into out.
func (c *Client) do(method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, "http://shogun"+path, rd)
	if err != nil {
		return err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		var op *net.OpError
		if errors.As(err, &op) && op.Op == "dial" {
			return c.dialError(err)
		}
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		var e ErrorReply
		if json.NewDecoder(resp.Body).Decode(&e) == nil && e.Error != "" {
			return errors.New(e.Error)
		}
		return fmt.Errorf("%s %s: %s", method, path, resp.Status)
	}
	if out == nil {
		return nil
	}
	return json.NewDecoder(resp.Body).Decode(out)
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
	return r, c.do(http.MethodPost, "/v1/roles/"+url.PathEscape(role)+"/type", TypeRequest{Text: text, Submit: submit}, &r)
}

// Restart restarts a role's program.
func (c *Client) Restart(role string) error {
	return c.do(http.MethodPost, "/v1/roles/"+url.PathEscape(role)+"/restart", nil, nil)
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

// Attach opens an attach stream to a role.
func (c *Client) Attach(role string, readOnly bool, cols, rows int) (*Stream, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	conn, err := dial(ctx, c.path)
	cancel()
	if err != nil {
		return nil, c.dialError(err)
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
	if err := req.Write(conn); err != nil {
		conn.Close()
		return nil, err
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("attach %s: %w", role, err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		defer conn.Close()
		var e ErrorReply
		if json.NewDecoder(resp.Body).Decode(&e) == nil && e.Error != "" {
			return nil, errors.New(e.Error)
		}
		return nil, fmt.Errorf("attach %s: %s", role, resp.Status)
	}
	return &Stream{Conn: conn, R: br}, nil
}
