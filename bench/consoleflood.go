package main

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// fdLimit is the soft limit of open files of /proc/<pid> ("self" for this
// process), as /proc/<pid>/limits says it.
func fdLimit(pid string) string {
	b, err := os.ReadFile("/proc/" + pid + "/limits")
	if err != nil {
		return "?"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); strings.HasPrefix(l, "Max open files") && len(f) > 3 {
			return f[3]
		}
	}
	return "?"
}

// floodConns is how many stalled connections the console's flood attempts,
// from floodDialers at once, each held until the console closes it.
const (
	floodConns   = 10000
	floodDialers = 200
)

// floodFigures is what a flood of stalled connections cost the supervisor.
type floodFigures struct {
	attempts, connected int
	took                time.Duration // to make every attempt
	fdsBefore, fdsPeak  int
	fdsAfter            int
	fdLimit             string
	statusBefore        []time.Duration // `shogun status` over the control socket
	statusDuring        []time.Duration
	consoleBefore       []time.Duration // GET /v1/status on the console with the token, a new connection each
	consoleDuring       []time.Duration
	failures            []string        // requests that failed during the flood
	closedWithin        []time.Duration // from connect to the console's close, per stalled connection
	stillOpen           int             // stalled connections not closed 15 s after they connected
}

// measureConnectionFlood floods the console at base (loopback) with
// connection attempts that never finish a request and no token, as anyone
// on the machine could: a third send nothing, a third a header that never
// ends, a third a header announcing a body that never comes. Each is held
// until the console closes it. Meanwhile it counts the supervisor's file
// descriptors and times `shogun status` (the control socket) and an
// authenticated console request, against the same before the flood.
func measureConnectionFlood(shogun, ws, base string, pid int) (floodFigures, error) {
	var f floodFigures
	tok, err := os.ReadFile(filepath.Join(ws, "runtime", "state", "ui.token"))
	if err != nil {
		return f, err
	}
	token := strings.TrimSpace(string(tok))
	addr := strings.TrimPrefix(base, "http://")
	f.attempts = floodConns
	if own, err := strconv.Atoi(fdLimit("self")); err == nil && own < floodConns+2000 {
		f.attempts = own - 2000 // this process holds them all
	}
	f.fdLimit = fdLimit(strconv.Itoa(pid))
	fds := func() int {
		ents, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
		return len(ents)
	}
	fresh := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	status := func() (time.Duration, error) {
		t0 := time.Now()
		out, err := exec.Command(shogun, "status", "--workspace", ws).CombinedOutput()
		if err != nil {
			return 0, fmt.Errorf("shogun status: %v: %s", err, out)
		}
		return time.Since(t0), nil
	}
	console := func() (time.Duration, error) {
		req, _ := http.NewRequest(http.MethodGet, base+"/v1/status", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		t0 := time.Now()
		resp, err := fresh.Do(req)
		if err != nil {
			return 0, fmt.Errorf("console GET /v1/status: %w", err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return 0, fmt.Errorf("console GET /v1/status: %s", resp.Status)
		}
		return time.Since(t0), nil
	}
	f.fdsBefore = fds()
	for range 5 {
		d, err := status()
		if err != nil {
			return f, err
		}
		f.statusBefore = append(f.statusBefore, d)
		if d, err = console(); err != nil {
			return f, err
		}
		f.consoleBefore = append(f.consoleBefore, d)
	}

	var peak atomic.Int64
	stopSampling := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			if n := int64(fds()); n > peak.Load() {
				peak.Store(n)
			}
			select {
			case <-stopSampling:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	kinds := []string{
		"",
		"GET /v1/status HTTP/1.1\r\nHost: " + addr + "\r\nX-Slow: ",
		"POST /v1/roles HTTP/1.1\r\nHost: " + addr + "\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n",
	}
	type held struct {
		c      net.Conn
		opened time.Time
	}
	conns := make([]held, f.attempts)
	var next atomic.Int64
	var wg sync.WaitGroup
	t0 := time.Now()
	for range floodDialers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= f.attempts {
					return
				}
				c, err := net.DialTimeout("tcp", addr, 3*time.Second)
				if err != nil {
					continue
				}
				conns[i] = held{c, time.Now()}
				if k := kinds[i%len(kinds)]; k != "" {
					_, _ = c.Write([]byte(k))
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	// While the flood comes, and for 2 s after its last attempt: the
	// control socket and the console, one request after another.
	var mu sync.Mutex
	probing := sync.WaitGroup{}
	probe := func(fn func() (time.Duration, error), into *[]time.Duration) {
		defer probing.Done()
		var until time.Time
		for {
			select {
			case <-done:
				if until.IsZero() {
					until = time.Now().Add(2 * time.Second)
				}
			default:
			}
			if !until.IsZero() && time.Now().After(until) {
				return
			}
			d, err := fn()
			mu.Lock()
			if err != nil {
				f.failures = append(f.failures, err.Error())
			} else {
				*into = append(*into, d)
			}
			mu.Unlock()
			time.Sleep(20 * time.Millisecond)
		}
	}
	probing.Add(2)
	go probe(status, &f.statusDuring)
	go probe(console, &f.consoleDuring)
	<-done
	f.took = time.Since(t0)
	probing.Wait()

	// Each stalled connection, until the console closes it.
	var closedMu sync.Mutex
	for _, h := range conns {
		if h.c == nil {
			continue
		}
		f.connected++
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer h.c.Close()
			_ = h.c.SetReadDeadline(h.opened.Add(15 * time.Second))
			r := bufio.NewReader(h.c)
			var err error
			for err == nil {
				_, err = r.ReadByte()
			}
			closedMu.Lock()
			defer closedMu.Unlock()
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				f.stillOpen++
				return
			}
			f.closedWithin = append(f.closedWithin, time.Since(h.opened))
		}()
	}
	wg.Wait()
	close(stopSampling)
	<-sampled
	f.fdsPeak = int(peak.Load())
	time.Sleep(time.Second)
	f.fdsAfter = fds()
	return f, nil
}

// report is the flood's section of the console's report.
func (f floodFigures) report() string {
	pct := func(ds []time.Duration, p float64) time.Duration {
		if len(ds) == 0 {
			return 0
		}
		s := append([]time.Duration(nil), ds...)
		sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
		return s[min(len(s)-1, int(p*float64(len(s))))]
	}
	ms := func(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }
	ratio := func(during, before []time.Duration) string {
		if len(during) == 0 || pct(before, 0.5) == 0 {
			return "–"
		}
		return fmt.Sprintf("%.1f×", float64(pct(during, 0.5))/float64(pct(before, 0.5)))
	}
	failures := "none"
	if len(f.failures) > 0 {
		failures = fmt.Sprintf("%d, the first: %s", len(f.failures), f.failures[0])
	}
	return fmt.Sprintf(`
A flood of stalled connections on the console's port, from a process without the token (loopback): %d connection
attempts from %d at once, a third sending nothing, a third a header that never ends, a third a header announcing
a 1,000-byte body that never comes, each held until the console closes it. The attempts took %.2f s; %d connected.

| | before the flood | during it (and 2 s after its last attempt) | ratio |
|---|---|---|---|
| file descriptors of the supervisor (limit %s) | %d | %d at most | %+d |
| `+"`shogun status`"+` (control socket), median / max | %s / %s | %s / %s (%d runs) | %s |
| authenticated console request (new connection), median / max | %s / %s | %s / %s (%d runs) | %s |

Requests that failed during the flood: %s. The console closed every stalled connection within %s of its
connect (median %s; %d still open after 15 s); the supervisor held %d descriptors a second later.
`, f.attempts, floodDialers, f.took.Seconds(), f.connected,
		f.fdLimit, f.fdsBefore, f.fdsPeak, f.fdsPeak-f.fdsBefore,
		ms(pct(f.statusBefore, 0.5)), ms(pct(f.statusBefore, 1)), ms(pct(f.statusDuring, 0.5)), ms(pct(f.statusDuring, 1)), len(f.statusDuring), ratio(f.statusDuring, f.statusBefore),
		ms(pct(f.consoleBefore, 0.5)), ms(pct(f.consoleBefore, 1)), ms(pct(f.consoleDuring, 0.5)), ms(pct(f.consoleDuring, 1)), len(f.consoleDuring), ratio(f.consoleDuring, f.consoleBefore),
		failures, ms(pct(f.closedWithin, 1)), ms(pct(f.closedWithin, 0.5)), f.stillOpen, f.fdsAfter)
}
