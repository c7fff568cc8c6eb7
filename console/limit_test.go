//go:build linux

package console_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/console/consoletest"
)

// openFDs is how many file descriptors process pid holds.
func openFDs(t *testing.T, pid int) int {
	t.Helper()
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// stalled is a connection to the console that never finishes its request,
// as anyone on the machine can open without a token.
type stalled struct {
	conn   net.Conn
	kind   string
	opened time.Time
}

// The stalled requests of the flood: a connection that sends nothing, one
// whose header never ends, and one whose announced body never comes.
var stallKinds = []struct{ name, send string }{
	{"silent", ""},
	{"header never ends", "GET /v1/status HTTP/1.1\r\nHost: %s\r\nX-Slow: "},
	{"body never comes", "POST /v1/roles HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n"},
}

// A flood of 2,000 connections that never finish a request, from someone
// without the token, costs the supervisor at most a bounded number of file
// descriptors: meanwhile the control socket answers `shogun status`, an
// authenticated request to the console is served, a request whose body
// never comes is answered 401 and closed at once, and every stalled
// connection is closed within the header deadline (5 s).
func TestStalledConnectionsCannotTakeTheSupervisorDown(t *testing.T) {
	const flood = 2000 // and 2,000 more descriptors in this test process
	ws := consoletest.Start(t, bin, consoletest.SimRole("ashigaru1"))
	ws.WaitState(t, "ashigaru1", "ready")
	pid := ws.Pid()
	before := openFDs(t, pid)
	addr := strings.TrimPrefix(ws.Base, "http://")

	// Alone, a request whose body never comes is answered at once and its
	// connection closed: the console does not read a body without a token.
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = fmt.Fprintf(c, stallKinds[2].send, addr)
	_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
	answer, err := io.ReadAll(c)
	c.Close()
	if err != nil || !strings.HasPrefix(string(answer), "HTTP/1.1 401") || !strings.Contains(string(answer), "Connection: close") {
		t.Errorf("a request without a token whose body never comes: %q, %v; want 401 and the connection closed within 2 s", answer, err)
	}

	// The supervisor's descriptors, sampled throughout.
	var peak atomic.Int64
	sampling := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			if ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid)); err == nil && int64(len(ents)) > peak.Load() {
				peak.Store(int64(len(ents)))
			}
			select {
			case <-sampling:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()

	conns := make([]stalled, flood)
	var wg sync.WaitGroup
	var dialErrs atomic.Int64
	next := atomic.Int64{}
	start := time.Now()
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= flood {
					return
				}
				k := stallKinds[i%len(stallKinds)]
				c, err := net.DialTimeout("tcp", addr, 5*time.Second)
				if err != nil {
					dialErrs.Add(1)
					continue
				}
				conns[i] = stalled{conn: c, kind: k.name, opened: time.Now()}
				if k.send != "" {
					_, _ = fmt.Fprintf(c, k.send, addr)
				}
			}
		}()
	}
	// While the flood comes: the control socket and the console answer.
	statusTook, consoleTook := time.Duration(0), time.Duration(0)
	for i := 0; i < 3 || next.Load() < flood; i++ {
		t0 := time.Now()
		if out, err := exec.Command(ws.Bin, "status", "-w", ws.Dir).CombinedOutput(); err != nil || !strings.Contains(string(out), "ashigaru1") {
			t.Errorf("shogun status during the flood: %v\n%s", err, out)
		}
		statusTook = max(statusTook, time.Since(t0))
		t0 = time.Now()
		if resp, body := do(t, ws, nil, call{method: "GET", path: "/v1/status", header: map[string]string{"Authorization": "Bearer " + ws.Token}}); resp.StatusCode != 200 {
			t.Errorf("an authenticated console request during the flood: %d %s", resp.StatusCode, body)
		}
		consoleTook = max(consoleTook, time.Since(t0))
	}
	wg.Wait()
	opened := time.Since(start)
	t.Logf("%d stalled connections opened in %v (%d refused at connect); during the flood `shogun status` took ≤ %v, an authenticated console request ≤ %v",
		flood, opened.Round(time.Millisecond), dialErrs.Load(), statusTook.Round(time.Millisecond), consoleTook.Round(time.Millisecond))
	if statusTook > 5*time.Second || consoleTook > 5*time.Second {
		t.Errorf("during the flood `shogun status` took %v and a console request %v; want each under 5 s", statusTook, consoleTook)
	}
	// After it too.
	t0 := time.Now()
	if out, err := exec.Command(ws.Bin, "status", "-w", ws.Dir).CombinedOutput(); err != nil {
		t.Errorf("shogun status after the flood: %v\n%s", err, out)
	}
	ws.Status(t)
	t.Logf("after the flood, with its connections still open on this side: status %v", time.Since(t0).Round(time.Millisecond))

	// Every stalled connection is closed by the console within the header
	// deadline; one whose body never came was answered 401 first.
	const headerDeadline = 5 * time.Second
	var late, unanswered []string
	var closedMu sync.Mutex
	var lastClose time.Duration
	for i := range conns {
		s := conns[i]
		if s.conn == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer s.conn.Close()
			_ = s.conn.SetReadDeadline(s.opened.Add(headerDeadline + 3*time.Second))
			first, err := bufio.NewReader(s.conn).ReadString('\n')
			for err == nil {
				var b [512]byte
				_, err = s.conn.Read(b[:])
			}
			closedMu.Lock()
			defer closedMu.Unlock()
			lastClose = max(lastClose, time.Since(s.opened))
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				late = append(late, s.kind)
			}
			if s.kind == "body never comes" && !strings.HasPrefix(first, "HTTP/1.1 401") && !strings.HasPrefix(first, "HTTP/1.1 403") && first != "" {
				unanswered = append(unanswered, first)
			}
		}()
	}
	wg.Wait()
	close(sampling)
	<-sampled
	if len(late) > 0 {
		t.Errorf("%d stalled connections were still open %v after they connected (kinds: %v)", len(late), headerDeadline+3*time.Second, late[:min(len(late), 5)])
	}
	if len(unanswered) > 0 {
		t.Errorf("requests whose body never came were answered %q; want 401 without reading the body", unanswered[:min(len(unanswered), 3)])
	}
	t.Logf("the supervisor held %d descriptors before the flood, %d at most during it; the last stalled connection closed %v after it connected",
		before, peak.Load(), lastClose.Round(time.Millisecond))
	// 256 connections at most (console.maxConns), and room for the
	// supervisor's own files and the status requests.
	if limit := before + 256 + 40; peak.Load() > int64(limit) {
		t.Errorf("the supervisor held %d descriptors during the flood (%d before); want at most %d", peak.Load(), before, limit)
	}
	if out, err := exec.Command(ws.Bin, "status", "-w", ws.Dir).CombinedOutput(); err != nil {
		t.Errorf("shogun status at the end: %v\n%s", err, out)
	}
}
