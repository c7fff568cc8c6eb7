//go:build !windows

package main

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/config"
	"github.com/shogun-dev/shogun/control"
	"github.com/shogun-dev/shogun/shoguntest"
	"github.com/shogun-dev/shogun/store"
)

// streamEnd reads an attach stream until it ends and returns the reason the
// supervisor gave (its FrameEnd), or "" when the connection just closed.
func streamEnd(t *testing.T, s *control.Stream) string {
	t.Helper()
	_ = s.Conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	for {
		kind, p, err := control.ReadFrame(s.R)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatal("the attach stream neither ended nor said why within 20 s")
		}
		if err != nil {
			return ""
		}
		if kind == control.FrameEnd {
			return string(p)
		}
	}
}

// An attached client that asks for an absurd terminal size is refused and
// told why; the supervisor, whose screen model would have allocated a
// billion cells, keeps running and the role keeps its size.
func TestAttachResizeOutOfRangeIsRefused(t *testing.T) {
	sizer := shEntry("sizer", `trap 'stty size' WINCH; stty size; while :; do sleep 0.05; done`, "    terminal: {cols: 120, rows: 40}\n")
	ws := teamWorkspace(t, sizer)
	cmd, _ := startBackground(t, ws)
	waitStatus(t, ws, "ready", func(s control.StatusReply) bool { return stateOf(s, "sizer") == "ready" })
	cl := control.NewClient(ws)

	for _, size := range [][2]int{{1001, 40}, {32767, 32767}} {
		s, err := cl.Attach("sizer", false, 100, 30)
		if err != nil {
			t.Fatal(err)
		}
		if err := control.WriteFrame(s.Conn, control.FrameResize, control.ResizePayload(size[0], size[1])); err != nil {
			t.Fatal(err)
		}
		end := streamEnd(t, s)
		s.Conn.Close()
		if !strings.Contains(end, "refused your terminal size") || !strings.Contains(end, "20 to 1000 columns and 5 to 500 rows") {
			t.Fatalf("a %dx%d resize frame ended the stream with %q, want a refusal naming the bounds", size[0], size[1], end)
		}
	}
	if !alive(cmd.Process.Pid) {
		t.Fatal("the supervisor died")
	}
	st := waitStatus(t, ws, "the role still running", func(s control.StatusReply) bool { return stateOf(s, "sizer") == "ready" })
	if st.Pid != cmd.Process.Pid {
		t.Errorf("status answered by pid %d, want the same supervisor %d", st.Pid, cmd.Process.Pid)
	}
	// The role never saw the refused sizes and has its own size back.
	logPath := filepath.Join(ws, "runtime", "logs", "sizer.log")
	shoguntest.WaitFor(t, "the configured size back", 10*time.Second, func() bool {
		b, _ := os.ReadFile(logPath)
		s := string(b)
		return strings.Count(s, "40 120") >= 2 && !strings.Contains(s, "32767") && !strings.Contains(s, "1001")
	})
	// An attach that asks for such a size up front is refused the same way.
	if _, err := cl.Attach("sizer", false, 32767, 32767); err == nil || !strings.Contains(err.Error(), "out of range") {
		t.Errorf("attach at 32767x32767: %v, want an out-of-range refusal", err)
	}
}

// A frame that breaks the protocol ends the stream with a message that says
// so, not with "the role's program exited"; the role keeps running.
func TestBrokenAttachFrameSaysTheStreamBroke(t *testing.T) {
	ws := teamWorkspace(t, simEntry("ashigaru1"))
	startBackground(t, ws)
	waitStatus(t, ws, "ready", func(s control.StatusReply) bool { return stateOf(s, "ashigaru1") == "ready" })
	s, err := control.NewClient(ws).Attach("ashigaru1", false, 100, 30)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Conn.Close()
	var h [5]byte
	h[0] = control.FrameInput
	binary.BigEndian.PutUint32(h[1:], 1<<30) // a gigabyte: over the frame limit
	if _, err := s.Conn.Write(h[:]); err != nil {
		t.Fatal(err)
	}
	end := streamEnd(t, s)
	if !strings.Contains(end, "the attach stream broke") || strings.Contains(end, "exited") {
		t.Errorf("a broken frame ended the stream with %q, want it to say the stream broke", end)
	}
	waitStatus(t, ws, "the role still ready", func(s control.StatusReply) bool { return stateOf(s, "ashigaru1") == "ready" })
}

// Hundreds of connections that never finish a request (silent, a header
// sent slowly, a body that never comes, kept alive and idle) neither
// exhaust the supervisor's file descriptors nor keep status from
// answering, and the timeouts close every one of them.
func TestControlSocketSurvivesIdleAndSlowConnections(t *testing.T) {
	ws := teamWorkspace(t, simEntry("ashigaru1"))
	cmd, _ := startBackground(t, ws)
	waitStatus(t, ws, "ready", func(s control.StatusReply) bool { return stateOf(s, "ashigaru1") == "ready" })
	fds := func() int {
		entries, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", cmd.Process.Pid))
		return len(entries)
	}
	before := fds()
	sock := control.Endpoint(ws)
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	open := func(first string) net.Conn {
		c, err := net.Dial("unix", sock)
		if err != nil {
			t.Fatalf("connection %d: %v", len(conns), err)
		}
		conns = append(conns, c)
		// The supervisor may already have closed it to make room.
		_, _ = io.WriteString(c, first)
		return c
	}
	for i := 0; i < 75; i++ {
		open("")                                                                                            // silent
		open("GET /v1/status HTTP/1.1\r\nHost: shogun\r\n")                                                 // a header that never ends
		open("POST /v1/roles/ashigaru1/type HTTP/1.1\r\nHost: shogun\r\nContent-Length: 1000\r\n\r\n{\"te") // a body that never comes
		keep := open("GET /v1/status HTTP/1.1\r\nHost: shogun\r\n\r\n")                                     // kept alive after its answer
		_ = keep.SetReadDeadline(time.Now().Add(10 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(keep), nil)
		if err == nil {
			resp.Body.Close()
		}
	}
	began := time.Now()
	if _, errOut, code := shogun(t, "status", "-w", ws); code != 0 {
		t.Fatalf("status with %d connections held open: exit %d: %s", len(conns), code, errOut)
	}
	if took := time.Since(began); took > 5*time.Second {
		t.Errorf("status took %v while connections were held open", took)
	}
	if n := fds(); n > before+100 {
		t.Errorf("the supervisor holds %d file descriptors with %d connections open (%d before): connections are not bounded", n, len(conns), before)
	}
	// Every connection is closed by the supervisor: by the limit, or by the
	// header, read and idle timeouts.
	deadline := time.Now().Add(30 * time.Second)
	for i, c := range conns {
		_ = c.SetReadDeadline(deadline)
		// EOF or a reset: closed. Only the deadline means it is still open.
		if _, err := io.Copy(io.Discard, c); errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("connection %d of %d still open after 30 s", i, len(conns))
		}
	}
	if !alive(cmd.Process.Pid) {
		t.Fatal("the supervisor died")
	}
	waitStatus(t, ws, "status after the flood", func(s control.StatusReply) bool { return stateOf(s, "ashigaru1") == "ready" })
}

// A report summary and a title that carry terminal escapes (retitle the
// window, clear the screen, a C1 CSI) are printed escaped by `shogun tasks`
// and `shogun status`, never acted on by the person's terminal; JSON output
// keeps the exact text.
func TestHumanOutputEscapesControlCharacters(t *testing.T) {
	const summary = "done \x1b]0;pwned\a\x1b[2J"
	const title = "Fix \u009b2J the form"
	ws := teamWorkspace(t, `  - id: ashigaru1
    name: "Ashigaru \e]0;owned\a"
    prompt_path: roles/ashigaru.md
    command: {exec: /bin/sh, args: ["-c", "while :; do sleep 1; done"]}
    stop: {keys: "", timeout: 2s}
`)
	cfg, err := config.Load(ws, os.LookupEnv)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(cfg.Settings.Data.SQLitePath)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Now().Add(-time.Minute)
	if err := st.SyncRoles([]store.RoleInfo{{ID: "ashigaru1", Name: "A", PromptPath: "roles/ashigaru.md", Enabled: true}}, at); err != nil {
		t.Fatal(err)
	}
	run, err := st.StartRun(1, ws, at)
	if err != nil {
		t.Fatal(err)
	}
	acc, err := st.AcceptCommands([]store.CommandRecord{{ID: "c1", ClaimName: "c1.yaml", File: "c1.yaml", To: "ashigaru1", Title: title, Body: "b", RunID: run.ID, ReceivedAt: at}})
	if err != nil {
		t.Fatal(err)
	}
	id := acc[0].Task.ID
	if _, err := st.Assign(id, at); err != nil {
		t.Fatal(err)
	}
	if _, err := st.MarkDelivery(id, true, 1, at); err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.AcceptReport(store.ReportRecord{ClaimName: "r1", File: "r.yaml", TaskID: id, Status: "done", Summary: summary, ReceivedAt: at}); err != nil {
		t.Fatal(err)
	}
	st.Close()

	out, errOut, code := shogun(t, "tasks", "-w", ws)
	if code != 0 {
		t.Fatalf("tasks: exit %d: %s", code, errOut)
	}
	if strings.ContainsAny(out, "\x1b\a\u009b") {
		t.Errorf("shogun tasks printed raw control characters:\n%q", out)
	}
	for _, want := range []string{`done \x1b]0;pwned\x07\x1b[2J`, `Fix \u009b2J the form`} {
		if !strings.Contains(out, want) {
			t.Errorf("shogun tasks lacks %q:\n%s", want, out)
		}
	}
	js, _, _ := shogun(t, "tasks", "-w", ws, "--json")
	if !strings.Contains(js, `"summary": "done \u001b]0;pwned\u0007\u001b[2J"`) {
		t.Errorf("shogun tasks --json does not keep the exact summary:\n%s", js)
	}

	startBackground(t, ws)
	waitStatus(t, ws, "ready", func(s control.StatusReply) bool { return stateOf(s, "ashigaru1") != "" })
	out, _, _ = shogun(t, "status", "-w", ws)
	if strings.ContainsAny(out, "\x1b\a") || !strings.Contains(out, `Ashigaru \x1b]0;owned\x07`) {
		t.Errorf("shogun status does not escape the role's name:\n%q", out)
	}
}

// tasksJSON is `shogun tasks --json`, decoded.
func tasksJSON(t *testing.T, ws string) []store.Task {
	t.Helper()
	out, errOut, code := shogun(t, "tasks", "-w", ws, "--json")
	if code != 0 {
		t.Fatalf("tasks --json: exit %d: %s", code, errOut)
	}
	var ts []store.Task
	if err := json.Unmarshal([]byte(out), &ts); err != nil {
		t.Fatalf("tasks --json: %v\n%s", err, out)
	}
	return ts
}

func send(t *testing.T, ws, title string) {
	t.Helper()
	if _, errOut, code := shogun(t, "send", "-w", ws, "--to", "ashigaru1", "--title", title, "--body", "do it"); code != 0 {
		t.Fatalf("send: %s", errOut)
	}
}

// Deleting data/shogun.db under a running supervisor stops the queue with a
// clear error instead of writing history nobody can read; the next start
// refuses to begin an empty history over an archive unless told to, and
// then task ids continue after the archived ones.
func TestDeletedHistoryStopsTheQueueAndIsNotSilentlyRecreated(t *testing.T) {
	ws := teamWorkspace(t, simEntry("ashigaru1", "--work-time", "100ms"))
	cmd, errOut := startBackground(t, ws)
	waitStatus(t, ws, "ready", func(s control.StatusReply) bool { return stateOf(s, "ashigaru1") == "ready" })
	send(t, ws, "first")
	send(t, ws, "second")
	var before []store.Task
	shoguntest.WaitFor(t, "both tasks done", 30*time.Second, func() bool {
		before = tasksJSON(t, ws)
		return len(before) == 2 && before[0].Status == "done" && before[1].Status == "done"
	})
	archived, _ := filepath.Glob(filepath.Join(ws, "runtime", "queue", "archive", "*", "tasks", "*.yaml"))
	if len(archived) == 0 {
		t.Fatal("no task file was archived")
	}

	db := filepath.Join(ws, "data", "shogun.db")
	for _, suffix := range []string{"", "-wal", "-shm"} {
		os.Remove(db + suffix)
	}
	st := waitStatus(t, ws, "the queue to stop", func(s control.StatusReply) bool { return s.Halted != "" })
	if !strings.Contains(st.Halted, "the history database is gone") || !strings.Contains(st.Halted, "deleted") {
		t.Errorf("status says %q, want that the database was deleted", st.Halted)
	}
	out, _, _ := shogun(t, "status", "-w", ws)
	if !strings.Contains(out, "QUEUE STOPPED: the history database is gone") {
		t.Errorf("status table does not say the queue stopped:\n%s", out)
	}
	// Work dropped now is not taken into a history that nobody can read.
	send(t, ws, "third")
	time.Sleep(2 * time.Second)
	if left, _ := filepath.Glob(filepath.Join(ws, "runtime", "queue", "commands", "*.yaml")); len(left) != 1 {
		t.Errorf("commands/ holds %d files after the history was lost, want the new command left alone", len(left))
	}
	if _, err := os.Stat(db); err == nil {
		t.Error("the supervisor recreated the database under the running queue")
	}
	if !strings.Contains(errOut.String(), "history database lost") {
		t.Errorf("the log does not say the history was lost:\n%s", errOut)
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	_ = cmd.Wait()

	// `shogun tasks` and the next start say what happened; nothing is created.
	if _, e, code := shogun(t, "tasks", "-w", ws); code == 0 || !strings.Contains(e, "the history database is missing") {
		t.Errorf("tasks without the database: exit %d, %q", code, e)
	}
	_, e, code := shogun(t, "start", "-w", ws)
	if code == 0 || !strings.Contains(e, "the history database is missing") || !strings.Contains(e, "--new-history") {
		t.Errorf("start without the database: exit %d, %q; want a refusal pointing at --new-history", code, e)
	}
	if _, err := os.Stat(db); err == nil {
		t.Fatal("a refused start created a new database")
	}

	// With --new-history the pending command becomes a task whose id was
	// never used in this workspace.
	next := exec.Command(bin, "start", "-w", ws, "--new-history")
	next.Env = append(os.Environ(), "NO_COLOR=1")
	if err := next.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = next.Process.Kill(); _, _ = next.Process.Wait() })
	var after []store.Task
	shoguntest.WaitFor(t, "the third task", 30*time.Second, func() bool {
		out, _, code := shogun(t, "tasks", "-w", ws, "--json")
		return code == 0 && json.Unmarshal([]byte(out), &after) == nil && len(after) == 1
	})
	for _, old := range before {
		if after[0].ID == old.ID {
			t.Errorf("task id %s was given out again", old.ID)
		}
	}
}

// A workspace whose path is too long for a socket address (about 97
// characters and more) still gets its control socket: a short one in the
// user's runtime folder, found by every client through the pointer file.
func TestLongWorkspacePathGetsAShortSocket(t *testing.T) {
	ws := filepath.Join(t.TempDir(), strings.Repeat("deep-folder-", 9))
	if _, errOut, code := shogun(t, "init", ws); code != 0 {
		t.Fatalf("init: %s", errOut)
	}
	if err := os.WriteFile(filepath.Join(ws, "config", "roles.yaml"), []byte("roles:\n"+simEntry("ashigaru1")), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut := startBackground(t, ws)
	shoguntest.WaitFor(t, "status to answer", 30*time.Second, func() bool {
		_, _, code := shogun(t, "status", "-w", ws)
		return code == 0
	})
	b, err := os.ReadFile(filepath.Join(ws, "runtime", "state", "shogun.sock.path"))
	if err != nil {
		t.Fatalf("no pointer file: %v\n%s", err, errOut)
	}
	sock := strings.TrimSpace(string(b))
	if len(sock) > 103 || strings.HasPrefix(sock, ws) || sock != control.Endpoint(ws) {
		t.Errorf("socket at %q (pointer), %q (SocketPath); want one short path outside the workspace", sock, control.Endpoint(ws))
	}
	if fi, err := os.Stat(filepath.Dir(sock)); err != nil {
		t.Error(err)
	} else if fi.Mode().Perm() != 0o700 {
		t.Errorf("socket folder has mode %v, want 0700", fi.Mode().Perm())
	}
	if strings.Contains(errOut.String(), "invalid argument") {
		t.Errorf("the supervisor failed to bind:\n%s", errOut)
	}
}

// Another user's `shogun status` is told that permission was denied, not
// that no supervisor runs.
func TestStatusAsAnotherUserSaysPermissionDenied(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run a client as another user")
	}
	ws := teamWorkspace(t, simEntry("ashigaru1"))
	startBackground(t, ws)
	waitStatus(t, ws, "up", func(s control.StatusReply) bool { return len(s.Roles) == 1 })
	// The test binary's folder is root's; give the other user a copy.
	dir, err := os.MkdirTemp("", "shogun-other-user-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	exe := filepath.Join(dir, "shogun")
	b, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(exe, b, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "status", "-w", ws)
	cmd.Env = []string{"NO_COLOR=1", "HOME=/"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err = cmd.Run()
	if err == nil {
		t.Fatal("status as another user succeeded")
	}
	if msg := stderr.String(); !strings.Contains(msg, "permission denied") || strings.Contains(msg, "no supervisor is running") {
		t.Errorf("status as another user said %q, want permission denied", msg)
	}
}

// `start --dry-run` warns about a ${VAR} that is not set instead of
// silently passing "" to the agent; an exec that ends up empty is an error
// naming the variable.
func TestUnsetVariablesAreWarnedAtDryRun(t *testing.T) {
	ws := teamWorkspace(t, `  - id: ashigaru1
    prompt_path: roles/ashigaru.md
    command: {exec: /bin/sh, args: ["-c", "echo ${SHOGUN_TEST_UNSET_TOKEN}"]}
`)
	out, errOut, code := shogun(t, "start", "-w", ws, "--dry-run")
	if code != 0 {
		t.Fatalf("dry run: exit %d: %s", code, errOut)
	}
	if want := `warning: config/roles.yaml:4:43: ${SHOGUN_TEST_UNSET_TOKEN} is not set: "args" gets "" in its place`; !strings.Contains(out, want) {
		t.Errorf("dry run output lacks %q:\n%s", want, out)
	}
	if err := os.WriteFile(filepath.Join(ws, "config", "roles.yaml"), []byte(`roles:
  - id: ashigaru1
    prompt_path: roles/ashigaru.md
    command: {exec: "${SHOGUN_TEST_UNSET_AGENT}"}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, code = shogun(t, "start", "-w", ws, "--dry-run")
	if want := `"exec" is empty after expanding "${SHOGUN_TEST_UNSET_AGENT}": ${SHOGUN_TEST_UNSET_AGENT} is not set`; code == 0 || !strings.Contains(errOut, want) {
		t.Errorf("dry run with an empty exec: exit %d, %q; want %q", code, errOut, want)
	}
}

// A workspace whose runtime/state is a link to another workspace's is
// refused: it would share that workspace's lock, pid ledger and socket.
func TestSharedRuntimeStateIsRefused(t *testing.T) {
	first := teamWorkspace(t, simEntry("ashigaru1"))
	second := teamWorkspace(t, simEntry("ashigaru1"))
	state := filepath.Join(second, "runtime", "state")
	if err := os.RemoveAll(state); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(first, "runtime", "state"), state); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "start", "-w", second)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(stderr.String(), "runtime/state is a symbolic link") {
			t.Errorf("start with a shared runtime/state: %v, %q; want a refusal", err, stderr.String())
		}
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("start with a shared runtime/state ran:\n%s", stderr.String())
	}
	if _, err := os.Stat(filepath.Join(first, "runtime", "state", "shogun.lock")); err == nil {
		t.Error("the refused start took the other workspace's lock")
	}
}
