//go:build !windows

package supervisor

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/term"
)

// A program that never shows its ready prompt is not waited for: after
// its start_timeout the role waits for a person (attention), and the
// state's reason, which the notification and the log carry, says so and
// shows what the screen ends with.
func TestNotReadyWithinTheStartTimeoutNeedsAPerson(t *testing.T) {
	ws := testWorkspace(t, `
roles:
  - id: loading
    prompt_path: roles/loading.md
    command: {exec: /bin/sh, args: ["-c", "stty raw -echo; printf 'Loading configuration\r\nstill loading plugins'; exec cat > /dev/null"]}
    cli: generic
    ready_pattern: "(?m)^› $"
    start_timeout: 1s
`)
	r := start(t, ws, nil)
	r.waitState(t, "loading", Attention, 15*time.Second)
	ev := r.waitEvent(t, "the attention event", time.Second, func(e Event) bool {
		return e.Role == "loading" && e.Kind == EventState && e.State == Attention
	})
	for _, want := range []string{"not ready within 1s", "Loading configuration / still loading plugins"} {
		if !strings.Contains(ev.Message, want) {
			t.Errorf("attention reason %q does not say %q", ev.Message, want)
		}
	}
	// It stays so: the screen's changes do not make it starting again.
	time.Sleep(500 * time.Millisecond)
	if st := r.role(t, "loading").Status(); st.State != Attention || st.Reason != ev.Message {
		t.Errorf("status %s (%q), want attention for the same reason until the program gets ready", st.State, st.Reason)
	}
}

// tickerEnv makes the test binary the ticker program (runTicker).
const tickerEnv = "SHOGUN_TEST_TICKER"

// runTicker draws a prompt ("› ") on its fifth row and rewrites its first
// row every 5 ms for ever, as a CLI with a clock or a log pane does: its
// terminal is never quiet for the supervisor's settle time.
func runTicker() int {
	old, err := term.MakeRaw(0)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = term.Restore(0, old) }()
	go func() { _, _ = io.Copy(io.Discard, os.Stdin) }()
	_, _ = os.Stdout.WriteString("\x1b[H\x1b[2J\x1b[5;1H› ")
	for i := 0; ; i++ {
		_, _ = fmt.Fprintf(os.Stdout, "\x1b7\x1b[1;1Hlog line %d\x1b8", i)
		time.Sleep(5 * time.Millisecond)
	}
}

// A program whose prompt is on the screen while it keeps writing elsewhere
// on it is ready: readiness is what the screen shows, not silence on the
// terminal. Such a role (agent-sim flooding its terminal) sat starting for
// 45 minutes of a soak.
func TestReadyUnderConstantOutput(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ws := testWorkspace(t, fmt.Sprintf(`
roles:
  - id: ticker
    prompt_path: roles/ticker.md
    command: {exec: %q, env: {%s: "1"}}
    cli: generic
    ready_pattern: "(?m)^› "
    startup_prompt: ""
`, self, tickerEnv))
	// A settle time far above the program's pauses, even on a loaded
	// machine: silence never makes it ready here.
	r := start(t, ws, func(o *Options) { o.Settle = 500 * time.Millisecond })
	r.waitState(t, "ticker", Ready, 30*time.Second)
	if quiet := time.Since(r.role(t, "ticker").Session().LastOutput()); quiet > 100*time.Millisecond {
		t.Errorf("the program was quiet for %v: the test needs one that writes all the time", quiet)
	}
}

// A role flooding its terminal (agent-sim --flood, the soak's ashigaru4)
// takes one task after another: after each, once its prompt shows without
// the busy line, it is ready for the next, though its output never stops.
// It was read busy for two minutes after every task (output during a turn
// held it), and the soak ended with its tasks queued and none delivered.
func TestFloodingRoleTakesTasksInARow(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "received.jsonl")
	ws := testWorkspace(t, "roles:"+markedSimRole("flood", "›", "",
		"--record", rec, "--work-time", "2s", "--flood", "30000"))
	r := start(t, ws, nil)
	role := r.role(t, "flood")
	for i := range 3 {
		// Far below the two minutes it took, far above a loaded machine's
		// delays.
		r.waitState(t, "flood", Ready, 30*time.Second)
		task := filepath.Join(ws, fmt.Sprintf("task%d.yaml", i+1))
		report := filepath.Join(ws, fmt.Sprintf("report%d.yaml", i+1))
		if err := os.WriteFile(task, []byte(fmt.Sprintf(
			"task_id: t-%d\ntitle: Task %d\nbody: say hello\nreport_to: %s\nrole: flood\nfrom: shogun\n", i+1, i+1, report)), 0o644); err != nil {
			t.Fatal(err)
		}
		d, err := role.Type(t.Context(), "Read "+task+" and do the task.", TypeOptions{})
		if err != nil || !d.Confirmed {
			t.Fatalf("task %d: type: %+v, %v", i+1, d, err)
		}
		waitFor(t, fmt.Sprintf("the report of task %d", i+1), 30*time.Second, func() bool {
			_, err := os.Stat(report)
			return err == nil
		})
	}
	r.waitState(t, "flood", Ready, 30*time.Second)
	if quiet := time.Since(role.Session().LastOutput()); quiet > 200*time.Millisecond {
		t.Errorf("the program was quiet for %v: the test needs one that writes all the time", quiet)
	}
}
