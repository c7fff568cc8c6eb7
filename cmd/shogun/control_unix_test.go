//go:build !windows

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/shogun-dev/shogun/control"
	"github.com/shogun-dev/shogun/shoguntest"
	"github.com/shogun-dev/shogun/supervisor"
	"github.com/shogun-dev/shogun/workspace"
)

// teamWorkspace is a workspace with the given roles.yaml entries.
func teamWorkspace(t *testing.T, entries ...string) string {
	t.Helper()
	return teamWorkspaceIn(t, t.TempDir(), entries...)
}

// teamWorkspaceIn is teamWorkspace made in the folder ws.
func teamWorkspaceIn(t *testing.T, ws string, entries ...string) string {
	t.Helper()
	shogun(t, "init", ws)
	if err := os.WriteFile(filepath.Join(ws, "config", "roles.yaml"), []byte("roles:\n"+strings.Join(entries, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	return ws
}

// setAgent adds keys (indented lines) to the agent: section of the
// workspace's config/settings.yaml.
func setAgent(t *testing.T, ws, keys string) {
	t.Helper()
	settings := filepath.Join(ws, "config", "settings.yaml")
	data, err := os.ReadFile(settings)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(data), "agent:\n", "agent:\n"+keys, 1)
	if edited == string(data) {
		t.Fatal("settings.yaml has no agent: section")
	}
	if err := os.WriteFile(settings, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
}

func simEntry(id string, args ...string) string {
	q := []string{`"agent-sim"`}
	for _, a := range args {
		q = append(q, fmt.Sprintf("%q", a))
	}
	return fmt.Sprintf(`  - id: %s
    prompt_path: roles/ashigaru.md
    command: {exec: "${SHOGUN_EXE}", args: [%s]}
    cli: generic
    ready_pattern: "› "
    busy_pattern: "esc to interrupt"
    submit_delay: 80ms
    stop: {keys: "/exit\r", timeout: 5s}
`, id, strings.Join(q, ", "))
}

func shEntry(id, script, extra string) string {
	return fmt.Sprintf(`  - id: %s
    prompt_path: roles/ashigaru.md
    command: {exec: /bin/sh, args: ["-c", %q]}
    stop: {keys: "", timeout: 2s}
%s`, id, script, extra)
}

func waitStatus(t *testing.T, ws string, what string, cond func(control.StatusReply) bool) control.StatusReply {
	t.Helper()
	var last control.StatusReply
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, _, code := shogun(t, "status", "--json", "-w", ws)
		// A fresh value each time: decoding into the last one would keep
		// the keys this answer leaves out (pid, config_error).
		var st control.StatusReply
		if code == 0 && json.Unmarshal([]byte(out), &st) == nil {
			if last = st; cond(st) {
				return st
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s; last status: %+v", what, last.Roles)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func stateOf(st control.StatusReply, id string) string {
	for _, r := range st.Roles {
		if r.ID == id {
			return r.State
		}
	}
	return ""
}

func TestStatusShowsEveryState(t *testing.T) {
	ws := teamWorkspace(t,
		simEntry("idle"),
		shEntry("worker", "echo loaded; sleep 2.5; while :; do echo tick; sleep 0.2; done", ""),
		shEntry("crashy", "exit 1", "    restart: {policy: on-failure, max_restarts: 50, window: 10m}\n"),
		shEntry("broken", "exit 1", "    restart: {policy: on-failure, max_restarts: 0, window: 10m}\n"),
	)
	if _, _, code := shogun(t, "status", "-w", ws); code != 3 {
		t.Fatalf("status without a supervisor: exit %d, want 3", code)
	}
	cmd, _ := startBackground(t, ws)
	st := waitStatus(t, ws, "ready, busy, backoff and fatal at once", func(s control.StatusReply) bool {
		return stateOf(s, "idle") == "ready" && stateOf(s, "worker") == "busy" &&
			stateOf(s, "crashy") == "backoff" && stateOf(s, "broken") == "fatal"
	})
	if st.Pid != cmd.Process.Pid || st.RunID == "" {
		t.Errorf("status pid %d run %q, want pid %d", st.Pid, st.RunID, cmd.Process.Pid)
	}
	for _, r := range st.Roles {
		if r.ID == "crashy" && r.Restarts < 1 {
			t.Errorf("crashy restarts = %d", r.Restarts)
		}
		if r.ID == "idle" && (r.Pid == 0 || r.UptimeS <= 0) {
			t.Errorf("idle role = %+v", r)
		}
	}
	out, _, _ := shogun(t, "status", "-w", ws)
	for _, want := range []string{"ROLE", "idle", "fatal", "supervisor pid"} {
		if !strings.Contains(out, want) {
			t.Errorf("status table lacks %q:\n%s", want, out)
		}
	}
	if _, errOut, code := shogun(t, "stop", "-w", ws); code != 0 {
		t.Fatalf("stop: %s", errOut)
	}
	_ = cmd.Wait()
	if _, _, code := shogun(t, "status", "-w", ws); code != 3 {
		t.Errorf("status after stop: exit %d, want 3", code)
	}
	if b, _ := os.ReadFile(workspace.New(ws).SupervisorLog()); !strings.Contains(string(b), "asked to stop (shogun stop") {
		t.Errorf("the supervisor's log does not say the supervisor was asked to stop")
	}
}

// A role whose program prints an error, a hint and a link and exits 1 (as
// Claude Code does offline from a fresh home) is fatal for its error line,
// not the link, and everything that reports it counts the same restarts:
// status --json, the status table, the status's attention line, the log
// and the notification.
func TestFatalRoleSaysWhyWithOneCount(t *testing.T) {
	notes := filepath.Join(t.TempDir(), "notes.jsonl")
	ws := teamWorkspace(t, shEntry("offline",
		"echo ' Unable to connect to Anthropic services'; echo; echo ' Failed to connect to api.anthropic.com: ENOTFOUND'; echo; "+
			"echo ' Note: Claude Code might not be available in your country. Check supported countries at'; "+
			"echo ' https://anthropic.com/supported-countries'; exit 1",
		"    restart: {policy: on-failure, max_restarts: 2, window: 10m}\n"))
	settings := filepath.Join(ws, "config", "settings.yaml")
	b, _ := os.ReadFile(settings)
	b = append(b, fmt.Sprintf("\nnotify:\n  command: [\"sh\", \"-c\", \"cat >> '%s'; echo >> '%s'\"]\n", notes, notes)...)
	if err := os.WriteFile(settings, b, 0o644); err != nil {
		t.Fatal(err)
	}
	startBackground(t, ws)
	st := waitStatus(t, ws, "fatal", func(s control.StatusReply) bool { return stateOf(s, "offline") == "fatal" })

	const line = "Failed to connect to api.anthropic.com: ENOTFOUND"
	const reason = "last output: " + line + "; given up after 2 restarts within 10m0s"
	r := st.Roles[0]
	if r.Restarts != 2 || r.LastLine != line || r.LastError != reason {
		t.Errorf("status --json: restarts %d, last line %q, last error %q; want 2, %q, %q", r.Restarts, r.LastLine, r.LastError, line, reason)
	}
	if len(st.Attention) != 1 || !strings.Contains(st.Attention[0], "role offline is fatal ("+reason+")") {
		t.Errorf("status attention = %q, want the fatal role with %q", st.Attention, reason)
	}
	out, _, _ := shogun(t, "status", "-w", ws)
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 5 && f[0] == "offline" && (f[2] != "fatal" || f[5] != "2") {
			t.Errorf("status table row %q: want fatal with 2 restarts", l)
		}
	}
	if !strings.Contains(out, "attention: role offline is fatal ("+reason+")") {
		t.Errorf("status table lacks the reason %q:\n%s", reason, out)
	}
	shoguntest.WaitFor(t, "the fatal notification", 15*time.Second, func() bool {
		b, _ := os.ReadFile(notes)
		return strings.Contains(string(b), `"kind":"fatal"`)
	})
	b, _ = os.ReadFile(notes)
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var ev struct{ Kind, Message string }
		if json.Unmarshal([]byte(l), &ev) == nil && ev.Kind == "fatal" && ev.Message != reason {
			t.Errorf("the fatal notification says %q, want %q", ev.Message, reason)
		}
	}
	log, _ := os.ReadFile(workspace.New(ws).SupervisorLog())
	if !strings.Contains(string(log), reason) || strings.Contains(string(log), "more than") {
		t.Errorf("the supervisor's log does not give the fatal reason %q alone:\n%s", reason, log)
	}
}

// `shogun type` into a role waiting for a person is refused at once, with
// how to answer it, rather than after a minute of waiting; nothing reaches
// the program. (It used to wait 60 s and then say the role "did not become
// ready".)
func TestTypeIntoAttentionIsRefusedAtOnce(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "rec.jsonl")
	ws := teamWorkspace(t, simEntry("asking", "--dialog", "trust", "--record", rec)+
		"    attention_pattern: \"Yes, I trust this folder\"\n")
	startBackground(t, ws)
	waitStatus(t, ws, "the trust dialog", func(s control.StatusReply) bool { return stateOf(s, "asking") == "attention" })

	// The deadline only guards against the old minute-long wait.
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "type", "asking", "hello there", "--submit", "-w", ws)
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("shogun type into a role in attention was still waiting after 15 s")
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("shogun type into a role in attention: %v, want exit 1; stderr:\n%s", err, errOut.String())
	}
	want := "role asking is waiting for a person (attention): answer it with shogun attach asking, or in the console's terminal; nothing was typed"
	if !strings.Contains(errOut.String(), want) || strings.Count(strings.TrimSpace(errOut.String()), "\n") != 0 {
		t.Errorf("stderr = %q, want one line saying %q", errOut.String(), want)
	}
	if recs := shoguntest.Records(t, rec); len(recs) != 0 {
		t.Errorf("the agent got %+v", recs)
	}
	scr, _, _ := shogun(t, "screen", "asking", "-w", ws)
	if !strings.Contains(scr, "Yes, I trust this folder") || strings.Contains(scr, "hello there") {
		t.Errorf("the screen after the refusal:\n%s", scr)
	}
}

func TestScreenTypeAndUnknownRole(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "rec.jsonl")
	ws := teamWorkspace(t, simEntry("ashigaru1", "--record", rec))
	startBackground(t, ws)
	waitStatus(t, ws, "ready", func(s control.StatusReply) bool { return stateOf(s, "ashigaru1") == "ready" })
	shoguntest.WaitFor(t, "the startup prompt", 15*time.Second, func() bool { return len(shoguntest.Submits(t, rec)) == 1 })
	if _, errOut, code := shogun(t, "type", "ashigaru1", "paste burst safe", "--submit", "-w", ws); code != 0 {
		t.Fatalf("type --submit: %s", errOut)
	}
	recs := shoguntest.Submits(t, rec)
	if len(recs) != 2 || recs[1].Line != "paste burst safe" {
		t.Fatalf("agent received %+v, want one submitted line %q", recs, "paste burst safe")
	}
	// Keys smuggled in the text (end the paste, Ctrl-C, submit) are refused
	// whole: the agent receives nothing of them.
	if _, errOut, code := shogun(t, "type", "ashigaru1", "zz\r\x1b[201~\x03EVIL\r", "--submit", "-w", ws); code == 0 || !strings.Contains(errOut, "escape character") {
		t.Errorf("type with control characters: exit %d, %q; want a refusal naming the escape character", code, errOut)
	}
	time.Sleep(300 * time.Millisecond)
	if recs := shoguntest.Submits(t, rec); len(recs) != 2 {
		t.Fatalf("agent received %+v after a refused type", recs[2:])
	}
	out, _, code := shogun(t, "screen", "ashigaru1", "-w", ws)
	if code != 0 || !strings.Contains(out, "Understood: paste burst safe") || !strings.Contains(out, "? for shortcuts") {
		t.Errorf("screen (exit %d):\n%s", code, out)
	}
	// An unknown role is named with the roles that run, as attach and send
	// name them.
	for _, cmd := range []string{"screen", "restart"} {
		if _, errOut, code := shogun(t, cmd, "ashigaru2", "-w", ws); code != 1 || errOut != "shogun: unknown role \"ashigaru2\" (did you mean \"ashigaru1\"? roles: ashigaru1)\n" {
			t.Errorf("%s of an unknown role: exit %d, %q", cmd, code, errOut)
		}
	}
}

// attachClient runs `shogun attach` in a real PTY of the given size.
type attachClient struct {
	cmd *exec.Cmd
	pty *os.File
	mu  sync.Mutex
	out bytes.Buffer
}

func attach(t *testing.T, ws, role string, cols, rows int, read bool, extra ...string) *attachClient {
	t.Helper()
	args := append([]string{"attach", role, "-w", ws}, extra...)
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: uint16(cols), Rows: uint16(rows)})
	if err != nil {
		t.Fatal(err)
	}
	a := &attachClient{cmd: cmd, pty: f}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_, _ = cmd.Process.Wait()
		f.Close()
	})
	if read {
		go func() {
			buf := make([]byte, 4096)
			for {
				n, err := f.Read(buf)
				a.mu.Lock()
				a.out.Write(buf[:n])
				a.mu.Unlock()
				if err != nil {
					return
				}
			}
		}()
	}
	return a
}

func (a *attachClient) seen(s string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return strings.Contains(a.out.String(), s)
}

func (a *attachClient) wait(t *testing.T) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- a.cmd.Wait() }()
	select {
	case <-done:
		return a.cmd.ProcessState.ExitCode()
	case <-time.After(20 * time.Second):
		t.Fatal("attach did not exit")
		return -1
	}
}

func TestAttachTypesShowsResizesAndDetaches(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "rec.jsonl")
	// The role prints its terminal size whenever it changes.
	sizer := shEntry("sizer", `trap 'stty size' WINCH; stty size; while :; do sleep 0.05; done`, "    terminal: {cols: 120, rows: 40}\n")
	ws := teamWorkspace(t, simEntry("ashigaru1", "--record", rec), sizer)
	startBackground(t, ws)
	waitStatus(t, ws, "ready", func(s control.StatusReply) bool {
		return stateOf(s, "ashigaru1") == "ready" && stateOf(s, "sizer") == "ready"
	})
	shoguntest.WaitFor(t, "the startup prompt", 15*time.Second, func() bool { return len(shoguntest.Submits(t, rec)) == 1 })

	a := attach(t, ws, "ashigaru1", 100, 30, true)
	shoguntest.WaitFor(t, "the painted screen", 10*time.Second, func() bool { return a.seen("? for shortcuts") })
	watcher := attach(t, ws, "ashigaru1", 80, 24, true, "--read-only")
	shoguntest.WaitFor(t, "the read-only painted screen", 10*time.Second, func() bool { return watcher.seen("? for shortcuts") })

	// A person types, pauses, and presses Enter on its own.
	if _, err := a.pty.Write([]byte("hello from a person")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if _, err := a.pty.Write([]byte("\r")); err != nil {
		t.Fatal(err)
	}
	shoguntest.WaitFor(t, "the agent's answer on both terminals", 10*time.Second, func() bool {
		return a.seen("Understood: hello from a person") && watcher.seen("Understood: hello from a person")
	})
	if recs := shoguntest.Submits(t, rec); recs[len(recs)-1].Line != "hello from a person" {
		t.Errorf("agent received %+v", recs)
	}
	// A second typing attachment is refused.
	_, errOut, code := shogun(t, "attach", "ashigaru1", "-w", ws)
	if code == 0 || !strings.Contains(errOut, "already attached") && !strings.Contains(errOut, "needs a terminal") {
		t.Errorf("second attach: exit %d, %q", code, errOut)
	}
	if _, err := a.pty.Write([]byte{0x1d}); err != nil { // Ctrl-]
		t.Fatal(err)
	}
	if code := a.wait(t); code != 0 {
		t.Errorf("detach exit code %d, want 0", code)
	}
	if _, err := watcher.pty.Write([]byte{0x1d}); err != nil {
		t.Fatal(err)
	}
	watcher.wait(t)

	// Resize follows the person's terminal and is undone after detach.
	logPath := filepath.Join(ws, "runtime", "logs", "sizer.log")
	s := attach(t, ws, "sizer", 90, 25, true)
	shoguntest.WaitFor(t, "the role to take the person's size", 10*time.Second, func() bool { return s.seen("25 90") })
	if err := pty.Setsize(s.pty, &pty.Winsize{Cols: 100, Rows: 33}); err != nil {
		t.Fatal(err)
	}
	shoguntest.WaitFor(t, "the role to follow a resize", 10*time.Second, func() bool { return s.seen("33 100") })
	if _, err := s.pty.Write([]byte{0x1d}); err != nil {
		t.Fatal(err)
	}
	s.wait(t)
	shoguntest.WaitFor(t, "the configured size back", 10*time.Second, func() bool {
		b, _ := os.ReadFile(logPath)
		i := bytes.LastIndex(b, []byte("33 100"))
		return i >= 0 && bytes.Contains(b[i:], []byte("40 120"))
	})
}

// A person whose terminal stops reading is dropped; the role never waits.
func TestStalledAttachIsDroppedWithoutStallingTheRole(t *testing.T) {
	ws := teamWorkspace(t, simEntry("noisy", "--flood", "2000000"))
	startBackground(t, ws)
	waitStatus(t, ws, "running", func(s control.StatusReply) bool { return s.Roles[0].Pid > 0 })
	stuck := attach(t, ws, "noisy", 80, 24, false, "--read-only") // nobody reads its terminal
	logPath := filepath.Join(ws, "runtime", "logs", "noisy.log")
	size := func() int64 {
		fi, err := os.Stat(logPath)
		if err != nil {
			return 0
		}
		return fi.Size()
	}
	time.Sleep(6 * time.Second) // well past the 3 s write deadline
	before := size()
	shoguntest.WaitFor(t, "the role's output to keep flowing while a client is stuck", 30*time.Second, func() bool {
		return size() > before+256<<10
	})
	if _, _, code := shogun(t, "status", "-w", ws); code != 0 {
		t.Fatalf("status does not answer while a client is stuck")
	}
	// Now read what the stuck client got: it was told why it was dropped.
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		_, _ = io_Copy(stuck)
	}()
	if code := stuck.wait(t); code != 0 {
		t.Errorf("dropped client exit %d", code)
	}
	select { // its last words are read once its terminal reports the end
	case <-drained:
	case <-time.After(5 * time.Second):
	}
	// It says why it ended: the supervisor's reason when that could still
	// reach it, else that the connection was closed.
	if !stuck.seen("did not keep up") && !stuck.seen("closed the connection") && !stuck.seen("input closed") {
		t.Errorf("dropped client did not say why it ended")
	}
}

// io_Copy drains a client's terminal into its buffer.
func io_Copy(a *attachClient) (int, error) {
	buf := make([]byte, 64<<10)
	total := 0
	for {
		n, err := a.pty.Read(buf)
		a.mu.Lock()
		a.out.Write(buf[:n])
		a.mu.Unlock()
		total += n
		if err != nil {
			return total, err
		}
	}
}

func TestLogsFollowAcrossRotation(t *testing.T) {
	ws := teamWorkspace(t, simEntry("noisy", "--flood", "400000"))
	settings := filepath.Join(ws, "config", "settings.yaml")
	b, _ := os.ReadFile(settings)
	b = bytes.Replace(b, []byte("max_size_mb: 20"), []byte("max_size_mb: 1"), 1)
	if err := os.WriteFile(settings, b, 0o644); err != nil {
		t.Fatal(err)
	}
	startBackground(t, ws)
	shoguntest.WaitFor(t, "the role's log", 15*time.Second, func() bool {
		_, err := os.Stat(filepath.Join(ws, "runtime", "logs", "noisy.log"))
		return err == nil
	})
	logs := exec.Command(bin, "logs", "noisy", "-f", "--raw", "-n", "1", "-w", ws)
	var out shoguntest.Buffer
	logs.Stdout = &out
	if err := logs.Start(); err != nil {
		t.Fatal(err)
	}
	shoguntest.WaitFor(t, "the log to rotate and the follower to carry on", 40*time.Second, func() bool {
		rotated, _ := filepath.Glob(filepath.Join(ws, "runtime", "logs", "noisy-*.log"))
		return len(rotated) > 0 && len(out.String()) > 1500<<10
	})
	_ = logs.Process.Signal(syscall.SIGINT)
	_ = logs.Wait()
}

// After kill -9 the socket is left behind; the next start replaces it.
func TestStaleSocketAfterKill9(t *testing.T) {
	ws := teamWorkspace(t, simEntry("ashigaru1"))
	cmd, _ := startBackground(t, ws)
	waitStatus(t, ws, "up", func(s control.StatusReply) bool { return len(s.Roles) == 1 })
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_, _ = cmd.Process.Wait()
	sock := control.Endpoint(ws)
	if _, err := os.Stat(sock); err != nil {
		t.Fatalf("expected a stale socket after kill -9: %v", err)
	}
	if _, _, code := shogun(t, "status", "-w", ws); code != 3 {
		t.Errorf("status against a stale socket: exit %d, want 3", code)
	}
	next, errOut := startBackground(t, ws)
	st := waitStatus(t, ws, "the new supervisor", func(s control.StatusReply) bool { return len(s.Roles) == 1 })
	if st.Pid != next.Process.Pid {
		t.Errorf("status answered by pid %d, want %d\n%s", st.Pid, next.Process.Pid, errOut)
	}
}

// A submit the screen never confirms is an answer, not a refusal: the API
// says 200 with the submits made and the reason, and `shogun type` says the
// text was typed but not confirmed and exits 4. (The API used to answer
// 409 and drop the submit count.)
func TestTypeUnconfirmedSaysSoAndExits4(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "rec.jsonl")
	ws := teamWorkspace(t, simEntry("deaf", "--ignore-input", "--record", rec)+"    startup_prompt: \"\"\n")
	startBackground(t, ws)
	waitStatus(t, ws, "ready", func(s control.StatusReply) bool { return stateOf(s, "deaf") == "ready" })

	_, errOut, code := shogun(t, "type", "deaf", "please take this", "--submit", "-w", ws)
	if code != 4 {
		t.Fatalf("type --submit into an agent ignoring input: exit %d, want 4; stderr:\n%s", code, errOut)
	}
	for _, want := range []string{"typed into deaf and submitted 5 time(s), but the screen never confirmed it: ", "input area"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	if strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
		t.Errorf("want one line on stderr, got:\n%s", errOut)
	}
	if recs := shoguntest.Submits(t, rec); len(recs) != 0 {
		t.Errorf("the agent ignoring input recorded %+v", recs)
	}
}

// Another user who makes the runtime folder of a long workspace path's
// socket (shogun-0 in the temporary folder) before the owner starts does
// not keep the supervisor from starting: the socket goes to a private
// folder of its own, which the pointer names and every command finds.
func TestSocketFolderOfAnotherUserIsSkipped(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give a folder to another user")
	}
	// A temporary folder of the test's own, so that what another user
	// makes there disturbs nothing else on the machine.
	tmp, err := os.MkdirTemp("/tmp", "sock-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	t.Setenv("TMPDIR", tmp)
	t.Setenv("XDG_RUNTIME_DIR", "")
	taken := filepath.Join(tmp, "shogun-0")
	if err := os.Mkdir(taken, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(taken, 1001, 1001); err != nil {
		t.Fatal(err)
	}

	ws := filepath.Join(t.TempDir(), strings.Repeat("deep-folder-", 9))
	if _, errOut, code := shogun(t, "init", ws); code != 0 {
		t.Fatalf("init: %s", errOut)
	}
	if err := os.WriteFile(filepath.Join(ws, "config", "roles.yaml"), []byte("roles:\n"+simEntry("ashigaru1")), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd, errOut := startBackground(t, ws)
	st := waitStatus(t, ws, "status to answer", func(s control.StatusReply) bool { return len(s.Roles) == 1 })
	if st.Pid != cmd.Process.Pid {
		t.Errorf("status answered by pid %d, want the supervisor %d", st.Pid, cmd.Process.Pid)
	}
	b, err := os.ReadFile(workspace.New(ws).SocketPointer())
	if err != nil {
		t.Fatalf("no pointer file: %v\n%s", err, errOut)
	}
	sock := strings.TrimSpace(string(b))
	dir := filepath.Dir(sock)
	if filepath.Dir(dir) != tmp || !strings.HasPrefix(filepath.Base(dir), "shogun-0-") {
		t.Errorf("socket at %s, want it in a private shogun-0-… folder in %s", sock, tmp)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 || fi.Sys().(*syscall.Stat_t).Uid != 0 {
		t.Errorf("socket folder %s: %v, want root's and 0700", dir, err)
	}
	if !strings.Contains(errOut.String(), "is owned by user 1001") {
		t.Errorf("the supervisor does not say why it skipped %s:\n%s", taken, errOut)
	}
	if _, stopErr, code := shogun(t, "stop", "-w", ws); code != 0 {
		t.Errorf("stop: %s", stopErr)
	}
	_ = cmd.Wait()
}

// A supervisor that takes the connection and never answers (seen under
// Wine) does not hold `shogun status` for minutes: it ends at its deadline,
// non-zero, saying which endpoint did not answer and what to look at.
func TestStatusWithoutAnswerEndsWithAMessage(t *testing.T) {
	ws := teamWorkspace(t, simEntry("ashigaru1"))
	l := workspace.New(ws)
	lock, err := supervisor.AcquireLock(l.Lock())
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	ln, err := net.Listen("unix", l.Socket())
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		var held []net.Conn
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()

	// A guard far beyond the deadline, not a measure of it.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "status", "-w", ws)
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err = cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("status still waited after %v", 2*time.Minute)
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() == 0 || ee.ExitCode() == 3 {
		t.Errorf("status exit: %v, want a failure other than 3 (no supervisor)", err)
	}
	want := fmt.Sprintf("the supervisor did not answer GET /v1/status on %s within 15s: it may be stuck or starved: see its log %s; ending its process (pid %d)",
		l.Socket(), l.SupervisorLog(), os.Getpid())
	if !strings.Contains(stderr.String(), want) {
		t.Errorf("status said:\n%s\nwant:\n%s", stderr.String(), want)
	}
}

// shogun restart of a sleeping role while the only slot is taken says that
// it waits for a slot, and which bound, rather than "restarting"; the role
// then starts once the idle one makes room. Before, it said "restarting"
// whether it started or waited.
func TestRestartSaysWhenTheRoleWaitsForASlot(t *testing.T) {
	ws := teamWorkspace(t, simEntry("a"), simEntry("b"))
	setAgent(t, ws, "  max_running: 1\n")
	startBackground(t, ws)
	waitStatus(t, ws, "a ready and b asleep", func(s control.StatusReply) bool {
		return stateOf(s, "a") == "ready" && stateOf(s, "b") == "sleeping"
	})
	_, errOut, code := shogun(t, "restart", "b", "-w", ws)
	if want := "shogun: b is waiting for a slot: no slot is free for it (agent.max_running 1): it starts when one frees\n"; code != 0 || errOut != want {
		t.Errorf("restart of a sleeping role with the slot taken: exit %d, %q; want %q", code, errOut, want)
	}
	waitStatus(t, ws, "b started in the slot a made room in", func(s control.StatusReply) bool {
		return stateOf(s, "b") == "ready" && stateOf(s, "a") == "sleeping"
	})
	if _, errOut, code := shogun(t, "restart", "b", "-w", ws); code != 0 || errOut != "shogun: restarting b\n" {
		t.Errorf("restart of a running role: exit %d, %q", code, errOut)
	}
}

// A task sent to a role whose program does not run is typed all the same,
// later: send says so, and why, rather than only "queued".
func TestSendSaysWhenTheRoleWakesOrWaitsForASlot(t *testing.T) {
	ws := teamWorkspace(t, simEntry("a", "--work-time", "6s"), simEntry("b"))
	setAgent(t, ws, "  max_running: 1\n")
	startBackground(t, ws)
	waitStatus(t, ws, "a ready and b asleep", func(s control.StatusReply) bool {
		return stateOf(s, "a") == "ready" && stateOf(s, "b") == "sleeping"
	})
	if _, errOut, code := shogun(t, "send", "-w", ws, "--to", "a", "--title", "Long work", "--body", "b"); code != 0 || strings.Contains(errOut, "shogun: a ") {
		t.Fatalf("send to a running role: exit %d, %q; want only where it went", code, errOut)
	}
	waitStatus(t, ws, "a busy", func(s control.StatusReply) bool { return stateOf(s, "a") == "busy" })
	_, errOut, code := shogun(t, "send", "-w", ws, "--to", "b", "--title", "Behind a busy role", "--body", "b")
	if want := "shogun: b has work; waits for a slot (agent.max_running 1): the task is typed once it has a slot and its program is ready\n"; code != 0 || !strings.HasSuffix(errOut, want) {
		t.Errorf("send to a role waiting for the only slot: exit %d, %q; want it to end %q", code, errOut, want)
	}
	shoguntest.WaitFor(t, "both tasks done", 60*time.Second, func() bool {
		out, _, _ := shogun(t, "tasks", "--status", "done", "-w", ws)
		return strings.Contains(out, "Long work") && strings.Contains(out, "Behind a busy role")
	})
	waitStatus(t, ws, "b running and a asleep", func(s control.StatusReply) bool {
		return stateOf(s, "b") == "ready" && stateOf(s, "a") == "sleeping"
	})
	_, errOut, code = shogun(t, "send", "-w", ws, "--to", "a", "--title", "To the sleeper", "--body", "b")
	if !regexp.MustCompile(`shogun: a (is asleep: it wakes for the task|is waking: |has work; waits for a slot \()`).MatchString(errOut) || code != 0 {
		t.Errorf("send to a sleeping role: exit %d, %q; want it to say the role wakes or waits for a slot", code, errOut)
	}
}
