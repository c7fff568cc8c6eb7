//go:build !windows

package supervisor

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/config"
	"github.com/shogun-dev/shogun/sandbox"
	"github.com/shogun-dev/shogun/shoguntest"
)

func TestRoleRunsInATerminalOfItsSize(t *testing.T) {
	ws := testWorkspace(t, `
roles:
  - id: worker
    name: Worker
    prompt_path: roles/worker.md
    command: {exec: /bin/sh, args: ["-c", "stty size; echo \"term=$TERM role=$SHOGUN_ROLE task=$SHOGUN_TASK_FILE\"; exec sleep 60"]}
    terminal: {cols: 101, rows: 33}
    startup_prompt: ""
`)
	r := start(t, ws, nil)
	sess := func() string {
		if s := r.role(t, "worker").Session(); s != nil {
			return s.Screen().Text()
		}
		return ""
	}
	waitFor(t, "the role's output on its screen", 10*time.Second, func() bool { return strings.Contains(sess(), "role=worker") })
	screen := sess()
	for _, want := range []string{"33 101", "term=xterm-256color"} {
		if !strings.Contains(screen, want) {
			t.Errorf("screen lacks %q:\n%s", want, screen)
		}
	}
	// The log has the raw bytes, unwrapped.
	logPath := filepath.Join(ws, "runtime", "logs", "worker.log")
	wantTask := "task=" + filepath.Join(ws, "runtime", "queue", "tasks", "worker.yaml")
	waitFor(t, "the role's log", 5*time.Second, func() bool {
		b, _ := os.ReadFile(logPath)
		return strings.Contains(string(b), wantTask)
	})
	// Quiet for ready_quiet (generic preset) means ready.
	r.waitState(t, "worker", Ready, 10*time.Second)
}

// simRole is a roles.yaml entry running the simulated agent.
func simRole(id string, extra string, simArgs ...string) string {
	args := append([]string{"agent-sim"}, simArgs...)
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = strconv.Quote(a)
	}
	return fmt.Sprintf(`
  - id: %s
    name: "%s"
    prompt_path: roles/%s.md
    command: {exec: "${SHOGUN_EXE}", args: [%s]}
    cli: generic
    ready_pattern: "› "
    busy_pattern: "esc to interrupt"
    submit_delay: 100ms
%s`, id, id, id, strings.Join(quoted, ", "), extra)
}

func TestStartupPromptIsSubmittedAsOneLine(t *testing.T) {
	dir := t.TempDir()
	rec := filepath.Join(dir, "received.jsonl")
	ws := testWorkspace(t, "roles:"+simRole("ashigaru1", "", "--record", rec))
	r := start(t, ws, nil)
	r.waitEvent(t, "startup prompt delivered", 15*time.Second, func(e Event) bool {
		return e.Role == "ashigaru1" && e.Kind == EventPrompted
	})
	recs := readRecords(t, rec)
	if len(recs) != 1 {
		t.Fatalf("agent received %d submits, want 1: %+v", len(recs), recs)
	}
	want := "Read roles/ashigaru1.md and follow it from now on. You are ashigaru1 (role id: ashigaru1)"
	if !strings.HasPrefix(recs[0].Line, want) {
		t.Errorf("agent received %q, want it to start with %q", recs[0].Line, want)
	}
	if strings.Contains(recs[0].Line, "\n") {
		t.Errorf("prompt arrived split into lines: %q", recs[0].Line)
	}
	if !r.role(t, "ashigaru1").Status().Prompted {
		t.Error("status does not say the prompt was delivered")
	}
}

// The control for the test above: the same agent does NOT submit text and
// "\r" sent in one write, so the typing procedure is what made it work.
func TestTextAndReturnInOneWriteIsNotSubmitted(t *testing.T) {
	dir := t.TempDir()
	rec := filepath.Join(dir, "received.jsonl")
	ws := testWorkspace(t, "roles:"+simRole("ashigaru1", `    startup_prompt: ""`+"\n", "--record", rec))
	r := start(t, ws, nil)
	r.waitState(t, "ashigaru1", Ready, 15*time.Second)
	sess := r.role(t, "ashigaru1").Session()
	if _, err := sess.Write([]byte("hello in one burst\r")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the text in the composer", 5*time.Second, func() bool {
		return strings.Contains(sess.Screen().Text(), "hello in one burst")
	})
	time.Sleep(500 * time.Millisecond) // give a wrong submit time to show
	if recs := readRecords(t, rec); len(recs) != 0 {
		t.Fatalf("text+\\r in one write was submitted: %+v", recs)
	}
	// Typed the right way, the same text is submitted.
	d, err := r.role(t, "ashigaru1").Type(t.Context(), "second line", TypeOptions{})
	if err != nil {
		t.Fatalf("type: %v (%+v)", err, d)
	}
	recs := readRecords(t, rec)
	if len(recs) != 1 || !strings.HasSuffix(recs[0].Line, "second line") {
		t.Fatalf("records = %+v, want one submit ending in %q", recs, "second line")
	}
}

func TestIgnoredInputIsUndelivered(t *testing.T) {
	ws := testWorkspace(t, "roles:"+simRole("deaf", `    startup_prompt: ""`+"\n", "--ignore-input"))
	r := start(t, ws, func(o *Options) { o.VerifyTimeout = 200 * time.Millisecond })
	r.waitState(t, "deaf", Ready, 15*time.Second)
	d, err := r.role(t, "deaf").Type(t.Context(), "are you there?", TypeOptions{})
	if !errors.Is(err, ErrUndelivered) {
		t.Fatalf("type into an agent ignoring input: err = %v, want ErrUndelivered", err)
	}
	if d.Attempts != 1+len(submitPauses) || d.Confirmed {
		t.Errorf("delivery = %+v, want %d unconfirmed attempts", d, 1+len(submitPauses))
	}
}

func TestCrashLoopBacksOffThenGoesFatal(t *testing.T) {
	ws := testWorkspace(t, `
roles:
  - id: crashy
    prompt_path: roles/crashy.md
    command: {exec: /bin/sh, args: ["-c", "echo starting; exit 3"]}
    restart: {policy: on-failure, max_restarts: 3, window: 1m}
`)
	r := start(t, ws, func(o *Options) {
		o.Backoff = RestartBackoff{Base: 40 * time.Millisecond, Max: time.Second, Jitter: func() float64 { return 0.5 }}
	})
	r.waitState(t, "crashy", Fatal, 20*time.Second)
	var delays []time.Duration
	re := regexp.MustCompile(`restart \d+ in (\S+)`)
	for _, e := range r.events.all() {
		if e.Kind == EventState && e.State == Backoff {
			m := re.FindStringSubmatch(e.Message)
			d, err := time.ParseDuration(m[1])
			if m == nil || err != nil {
				t.Fatalf("backoff event %q", e.Message)
			}
			delays = append(delays, d)
		}
	}
	want := []time.Duration{40 * time.Millisecond, 80 * time.Millisecond, 160 * time.Millisecond}
	if fmt.Sprint(delays) != fmt.Sprint(want) {
		t.Errorf("backoff delays = %v, want %v", delays, want)
	}
	st := r.role(t, "crashy").Status()
	if st.Restarts != 3 || st.LastExit != "exit code 3" {
		t.Errorf("status = %+v, want 3 restarts and last exit code 3", st)
	}
	// Fatal is final: no more starts.
	time.Sleep(300 * time.Millisecond)
	if s := r.role(t, "crashy").State(); s != Fatal {
		t.Errorf("state after fatal = %s", s)
	}
}

func TestRestartPolicies(t *testing.T) {
	cases := []struct {
		policy, script string
		want           State
		restarts       int
	}{
		{"never", "exit 3", Stopped, 0},
		{"on-failure", "exit 0", Stopped, 0},
		{"always", "exit 0", Fatal, 2},
	}
	for _, c := range cases {
		t.Run(c.policy+"/"+c.script, func(t *testing.T) {
			ws := testWorkspace(t, fmt.Sprintf(`
roles:
  - id: once
    prompt_path: roles/once.md
    command: {exec: /bin/sh, args: ["-c", %q]}
    restart: {policy: %s, max_restarts: 2, window: 1m}
`, c.script, c.policy))
			r := start(t, ws, nil)
			r.waitState(t, "once", c.want, 20*time.Second)
			time.Sleep(300 * time.Millisecond)
			st := r.role(t, "once").Status()
			if st.State != c.want || st.Restarts != c.restarts {
				t.Errorf("state %s after %d restarts, want %s after %d", st.State, st.Restarts, c.want, c.restarts)
			}
		})
	}
}

func TestCrashedAgentIsRestartedAndPromptedAgain(t *testing.T) {
	dir := t.TempDir()
	rec := filepath.Join(dir, "received.jsonl")
	ws := testWorkspace(t, "roles:"+simRole("flaky", "", "--record", rec, "--crash-after", "1500ms", "--exit-code", "9"))
	r := start(t, ws, nil)
	r.waitEvent(t, "a restart", 20*time.Second, func(e Event) bool { return e.State == Backoff })
	waitFor(t, "a second startup prompt", 20*time.Second, func() bool { return len(readRecords(t, rec)) >= 2 })
	if st := r.role(t, "flaky").Status(); st.Restarts < 1 || !strings.Contains(st.LastExit, "9") {
		t.Errorf("status = %+v, want a restart after exit code 9", st)
	}
}

func alive(pid int) bool { return shoguntest.Alive(pid) }

// A role whose program ignores SIGTERM and has a grandchild ignoring SIGTERM
// and SIGHUP is gone, whole group included, once the stop returns; and the
// stop returns within the stop timeout plus a margin.
func TestStopKillsStubbornProcessTree(t *testing.T) {
	dir := t.TempDir()
	pids := filepath.Join(dir, "pids")
	script := fmt.Sprintf(`trap '' TERM HUP; (trap '' TERM HUP; exec sleep 1000) & echo "$$ $!" > %s; while :; do sleep 0.2; done`, pids)
	ws := testWorkspace(t, fmt.Sprintf(`
roles:
  - id: stubborn
    prompt_path: roles/stubborn.md
    command: {exec: /bin/sh, args: ["-c", %q]}
    stop: {keys: "", timeout: 1s}
`, script))
	r := start(t, ws, nil)
	var child, grandchild int
	waitFor(t, "the pid file", 10*time.Second, func() bool {
		b, err := os.ReadFile(pids)
		if err != nil {
			return false
		}
		_, err = fmt.Sscan(string(b), &child, &grandchild)
		return err == nil
	})
	began := time.Now()
	if err := r.stop(t); err != nil {
		t.Errorf("supervisor stop: %v", err)
	}
	took := time.Since(began)
	for _, pid := range []int{child, grandchild} {
		if alive(pid) {
			t.Errorf("pid %d survived the stop", pid)
		}
	}
	if took > 1*time.Second+10*time.Second {
		t.Errorf("stop took %v, want about the 1 s stop timeout", took)
	}
	if _, err := os.Stat(filepath.Join(ws, "runtime", "state", "pids.json")); !os.IsNotExist(err) {
		t.Errorf("pid ledger left behind after a clean stop: %v", err)
	}
}

// Stop keys come first: an agent that quits on /exit is never signalled.
func TestStopTypesStopKeysFirst(t *testing.T) {
	dir := t.TempDir()
	rec := filepath.Join(dir, "received.jsonl")
	ws := testWorkspace(t, "roles:"+simRole("polite", "    stop: {keys: \"/exit\\r\", timeout: 10s}\n", "--record", rec, "--ignore-term"))
	r := start(t, ws, nil)
	r.waitEvent(t, "prompt", 15*time.Second, func(e Event) bool { return e.Kind == EventPrompted })
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
	recs := readRecords(t, rec)
	if len(recs) == 0 || recs[len(recs)-1].Line != "/exit" {
		t.Fatalf("agent did not receive /exit as a submitted line: %+v", recs)
	}
	if st := r.role(t, "polite").Status(); st.LastExit != "exit code 0" {
		t.Errorf("last exit = %q, want a clean exit after /exit", st.LastExit)
	}
}

// A text typed but not submitted when the stop comes (a delivery the stop
// cut short) is cleared first: the stop keys arrive alone.
func TestStopKeysGoAloneAfterAnUnsubmittedText(t *testing.T) {
	dir := t.TempDir()
	rec := filepath.Join(dir, "received.jsonl")
	ws := testWorkspace(t, "roles:"+simRole("polite", "    stop: {keys: \"/exit\\r\", timeout: 10s}\n", "--record", rec, "--ignore-term"))
	r := start(t, ws, nil)
	r.waitEvent(t, "prompt", 15*time.Second, func(e Event) bool { return e.Kind == EventPrompted })
	if _, err := r.role(t, "polite").Type(t.Context(), "/clear", TypeOptions{NoSubmit: true}); err != nil {
		t.Fatal(err)
	}
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
	recs := readRecords(t, rec)
	if len(recs) == 0 || recs[len(recs)-1].Line != "/exit" {
		t.Fatalf("agent's last submitted line is not /exit alone: %+v", recs)
	}
}

func TestAttentionBlocksTypingUntilAnswered(t *testing.T) {
	dir := t.TempDir()
	rec := filepath.Join(dir, "received.jsonl")
	ws := testWorkspace(t, "roles:"+simRole("careful", "    attention_pattern: \"Do you trust\"\n", "--record", rec, "--trust-prompt"))
	r := start(t, ws, nil)
	r.waitState(t, "careful", Attention, 15*time.Second)
	time.Sleep(500 * time.Millisecond)
	if recs := readRecords(t, rec); len(recs) != 0 {
		t.Fatalf("typed into a role waiting for a person: %+v", recs)
	}
	// A person answers the dialog; the role becomes ready and gets its prompt.
	sess := r.role(t, "careful").Session()
	if _, err := sess.Write([]byte("1")); err != nil {
		t.Fatal(err)
	}
	r.waitEvent(t, "prompt after attention", 15*time.Second, func(e Event) bool { return e.Kind == EventPrompted })
}

// Where the system has no sandbox, a role that requires it is fatal at
// once with the reason and how to run it anyway, and is not restarted; a
// role that only prefers it runs unsandboxed.
func TestSandboxRequiredWithoutOneIsFatal(t *testing.T) {
	ws := testWorkspace(t, `
roles:
  - id: strict
    prompt_path: roles/strict.md
    command: {exec: /bin/sh, args: ["-c", "echo running; sleep 60"]}
    sandbox: true
  - id: easy
    prompt_path: roles/easy.md
    command: {exec: /bin/sh, args: ["-c", "echo running; sleep 60"]}
    sandbox: preferred
`)
	r := start(t, ws, func(o *Options) {
		o.SandboxAvailable = func() (string, error) {
			return "", fmt.Errorf("%w: this Linux kernel offers no Landlock", sandbox.ErrUnavailable)
		}
	})
	r.waitState(t, "strict", Fatal, 20*time.Second)
	st := r.role(t, "strict").Status()
	for _, want := range []string{"cannot run sandboxed", "offers no Landlock", "sandbox: preferred"} {
		if !strings.Contains(st.LastError+r.describe(), want) {
			t.Errorf("fatal role does not say %q: %+v", want, st)
		}
	}
	if st.Restarts != 0 {
		t.Errorf("the role was restarted %d times", st.Restarts)
	}
	waitFor(t, "the preferring role running", 20*time.Second, func() bool { return r.role(t, "easy").Status().Pid != 0 })
}

// start says in one line when roles ask for a sandbox the system does not
// have, naming them and what becomes of each; nothing when it has one.
func TestSandboxNoticeNamesTheRoles(t *testing.T) {
	ws := testWorkspace(t, `
roles:
  - id: strict
    prompt_path: roles/strict.md
    command: {exec: /bin/sh}
    sandbox: true
  - id: easy
    prompt_path: roles/easy.md
    command: {exec: /bin/sh}
    sandbox: preferred
  - id: plain
    prompt_path: roles/plain.md
    command: {exec: /bin/sh}
`)
	cfg, err := config.Load(ws, os.LookupEnv)
	if err != nil {
		t.Fatal(err)
	}
	none := func() (string, error) {
		return "", fmt.Errorf("%w: this Linux kernel offers no Landlock", sandbox.ErrUnavailable)
	}
	got := SandboxNotice(cfg, nil, none)
	if want := "sandbox: no sandbox: this Linux kernel offers no Landlock: easy (sandbox: preferred) run unsandboxed; strict (sandbox: true) are fatal"; got != want {
		t.Errorf("notice = %q, want %q", got, want)
	}
	if got := SandboxNotice(cfg, []string{"plain"}, none); got != "" {
		t.Errorf("notice for a run of roles without the sandbox = %q", got)
	}
	if got := SandboxNotice(cfg, nil, func() (string, error) { return "Landlock ABI 7", nil }); got != "" {
		t.Errorf("notice with a sandbox = %q", got)
	}
}
