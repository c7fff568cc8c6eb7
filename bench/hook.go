package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shogun-dev/shogun/control"
)

// hookCall is one tool call as Claude Code hands it to its PreToolUse
// hook, the same action as the hook asks the supervisor, and the decision
// `shogun init`'s policy gives it.
type hookCall struct {
	tool  string
	input string // tool_input, JSON
	req   control.ApprovalRequest
	want  string
}

// hookCalls are actions the default policy decides alone (no ask, which
// would wait for a person): two allowed, two denied.
func hookCalls(ws string) []hookCall {
	readme, policy := filepath.Join(ws, "README.md"), filepath.Join(ws, "config", "policy.yaml")
	return []hookCall{
		{"Read", fmt.Sprintf(`{"file_path":%q}`, readme), control.ApprovalRequest{Kind: "read", Path: readme}, "allow"},
		{"Bash", `{"command":"go test ./..."}`, control.ApprovalRequest{Kind: "shell", Command: "go test ./..."}, "allow"},
		{"Bash", `{"command":"git push --force origin main"}`, control.ApprovalRequest{Kind: "shell", Command: "git push --force origin main"}, "deny"},
		{"Write", fmt.Sprintf(`{"file_path":%q,"content":"default: allow\n"}`, policy), control.ApprovalRequest{Kind: "write", Path: policy}, "deny"},
	}
}

// hookSeries are the times of one run of calls: each `shogun hook claude`
// process from start to exit, and each POST /v1/approvals alone.
type hookSeries struct{ process, request, bare []time.Duration }

// measureHook times the approvals hook as Claude Code runs it, on a team
// of agent-sim roles under `shogun init`'s policy: first with the
// supervisor idle, then while a command goes through the queue every
// `every` and three clients follow the event stream.
func measureHook(r *report, shogun string, n int, every time.Duration) error {
	const roles = 4
	var yaml strings.Builder
	yaml.WriteString("roles:\n")
	for i := 1; i <= roles; i++ {
		fmt.Fprintf(&yaml, "  - id: sim%d\n    name: \"sim %d\"\n    prompt_path: roles/ashigaru.md\n"+
			"    command: {exec: \"${SHOGUN_EXE}\", args: [\"agent-sim\"]}\n    cli: generic\n"+
			"    ready_pattern: \"› \"\n    busy_pattern: \"esc to interrupt\"\n    submit_delay: 100ms\n", i, i)
	}
	ws, err := benchWorkspace(shogun, yaml.String())
	if err != nil {
		return err
	}
	defer os.RemoveAll(ws)
	_, stop, err := supervise(shogun, ws)
	if err != nil {
		return err
	}
	defer stop()
	time.Sleep(8 * time.Second) // start-up, readiness, startup prompts (as the idle section)
	calls := hookCalls(ws)
	idle, err := runHookCalls(shogun, ws, "sim1", calls, n)
	if err != nil {
		return fmt.Errorf("idle supervisor: %w", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var sent, events atomic.Int64
	wg.Add(1)
	go func() { // the queue: a command every `every`, round robin
		defer wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for i := 0; ; i++ {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if dropCommand(ws, i, fmt.Sprintf("sim%d", i%roles+1)) == nil {
					sent.Add(1)
				}
			}
		}
	}()
	for range 3 {
		wg.Add(1)
		go func() { defer wg.Done(); followStream(ctx, ws, &events) }()
	}
	time.Sleep(3 * time.Second) // let the load settle in
	began, sent0, events0 := time.Now(), sent.Load(), events.Load()
	loaded, err := runHookCalls(shogun, ws, "sim1", calls, n)
	loadFor, sent1, events1 := time.Since(began), sent.Load(), events.Load()
	cancel()
	wg.Wait()
	if err != nil {
		return fmt.Errorf("supervisor under load: %w", err)
	}
	_, done, _ := countTasks(ws)

	var b strings.Builder
	fmt.Fprintf(&b, "`shogun hook claude` run as Claude Code runs it: a child process with a PreToolUse call on stdin and "+
		"SHOGUN_ROLE / SHOGUN_WORKSPACE set, %d times per run, against `shogun start` on %d `agent-sim` roles with `shogun init`'s "+
		"policy. The calls cycle through a Read inside the folder and Bash `go test ./...` (allowed), Bash `git push --force origin main` "+
		"and a Write to config/policy.yaml (denied); every decision was checked. *Request* is POST /v1/approvals of the same action "+
		"over the control socket with the control client, timed alone. The bench asks from outside the team, so the supervisor "+
		"looks through every role's process tree before deciding (a real hook's search ends at its own role): if anything slower "+
		"than for an agent. The machine is shared: see the load average.\n\n", n, roles)
	fmt.Fprintf(&b, "Load: a command through the queue every %s (%d sent, %d tasks of all done by the end) and 3 event-stream clients "+
		"(%d events read), over the %.1f s of the loaded run. Load average %s. *Start-up only* is the same process without "+
		"SHOGUN_ROLE, which reads its input and exits with no request: the cost of starting the binary.\n\n",
		every, sent1-sent0, done, events1-events0, loadFor.Seconds(), loadAverage())
	b.WriteString("| series | supervisor | p50 | p90 | p99 | max |\n|---|---|---|---|---|---|\n")
	row := func(name, state string, ds []time.Duration) {
		q := hookQuantiles(ds)
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", name, state, msText(q[0]), msText(q[1]), msText(q[2]), msText(q[3]))
	}
	row("hook process", "idle", idle.process)
	row("hook process", "under load", loaded.process)
	row("start-up only", "idle", idle.bare)
	row("start-up only", "under load", loaded.bare)
	row("request", "idle", idle.request)
	row("request", "under load", loaded.request)
	pi, pl := hookQuantiles(idle.process)[2], hookQuantiles(loaded.process)[2]
	ri, rl := hookQuantiles(idle.request)[2], hookQuantiles(loaded.request)[2]
	met := "met"
	if pl > 50*time.Millisecond {
		met = "**not met**"
	}
	fmt.Fprintf(&b, "\nTarget: the hook's p99 under load ≤ 50 ms: %s (%s). p99 under load / idle: hook process %.2f×, request %.2f×.\n",
		met, msText(pl), ratio(pl, pi), ratio(rl, ri))
	r.add("Approvals hook decision time", b.String())
	return nil
}

// runHookCalls runs n hook processes as role, cycling through calls, each
// followed by the same request made directly, and checks every decision.
func runHookCalls(shogun, ws, role string, calls []hookCall, n int) (hookSeries, error) {
	var s hookSeries
	c := control.NewClient(ws)
	// The bench's own SHOGUN_* (were it run by a role) must not reach the hook.
	plain := slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "SHOGUN_") })
	env := append(slices.Clip(plain), "SHOGUN_ROLE="+role, "SHOGUN_WORKSPACE="+ws)
	for i := range n {
		call := calls[i%len(calls)]
		in := fmt.Sprintf(`{"session_id":"bench","hook_event_name":"PreToolUse","tool_name":%q,"tool_input":%s,"cwd":%q}`,
			call.tool, call.input, ws)
		cmd := exec.Command(shogun, "hook", "claude")
		cmd.Dir, cmd.Env, cmd.Stdin = ws, env, strings.NewReader(in)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		t0 := time.Now()
		err := cmd.Run()
		s.process = append(s.process, time.Since(t0))
		if err != nil {
			return s, fmt.Errorf("hook for %s: %v: %s", call.input, err, out.Bytes())
		}
		var got struct {
			Out struct {
				Decision string `json:"permissionDecision"`
			} `json:"hookSpecificOutput"`
		}
		if err := json.Unmarshal(out.Bytes(), &got); err != nil || got.Out.Decision != call.want {
			return s, fmt.Errorf("hook for %s %s: want %s, got %q", call.tool, call.input, call.want, out.Bytes())
		}
		bare := exec.Command(shogun, "hook", "claude")
		bare.Dir, bare.Env, bare.Stdin = ws, plain, strings.NewReader(in)
		t0 = time.Now()
		if err := bare.Run(); err != nil {
			return s, fmt.Errorf("hook without a role: %w", err)
		}
		s.bare = append(s.bare, time.Since(t0))
		req := call.req
		req.Role, req.CLI, req.Cwd = role, "claude", ws
		t0 = time.Now()
		a, err := c.Ask(req)
		s.request = append(s.request, time.Since(t0))
		if err != nil || a.Decision != call.want {
			return s, fmt.Errorf("request %+v: want %s, got %q (%v)", req, call.want, a.Decision, err)
		}
	}
	return s, nil
}

// followStream keeps one client on the event stream until ctx ends and
// counts the events it reads.
func followStream(ctx context.Context, ws string, events *atomic.Int64) {
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", control.Endpoint(ws))
	}}}
	for ctx.Err() == nil {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://shogun/v1/events/stream", nil)
		if resp, err := hc.Do(req); err == nil {
			sc := bufio.NewScanner(resp.Body)
			sc.Buffer(make([]byte, 1<<20), 1<<20)
			for sc.Scan() {
				if strings.HasPrefix(sc.Text(), "event:") {
					events.Add(1)
				}
			}
			resp.Body.Close()
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

// hookQuantiles are p50, p90, p99 and the maximum of ds (nearest rank).
func hookQuantiles(ds []time.Duration) [4]time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	var q [4]time.Duration
	if len(s) == 0 {
		return q
	}
	for i, p := range []int{50, 90, 99, 100} {
		k := (len(s)*p + 99) / 100 // the smallest rank with p% of the values at or below it
		q[i] = s[max(k, 1)-1]
	}
	return q
}

// ratio is a/b, 0 when b is.
func ratio(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}
