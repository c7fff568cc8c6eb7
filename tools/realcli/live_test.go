//go:build realcli && linux

// The live test runs the real supervisor with the four real CLIs as roles,
// offline, as a user would: `shogun init`, a roles.yaml naming the CLIs,
// `shogun start`, `shogun send`, `shogun tasks --json`, `shogun stop`. It
// needs Node.js and npm and installs the pinned CLIs into the cache: run it
// with `make test-real` (go test -tags realcli ./tools/realcli).
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/control"
	"github.com/shogun-dev/shogun/shoguntest"
	"github.com/shogun-dev/shogun/store"
	"github.com/shogun-dev/shogun/workspace"
)

var bin string

func TestMain(m *testing.M) { shoguntest.Main(m, &bin) }

// liveRole is one role of the live team: a CLI, how far its first run is
// set up, and the state start-up must reach.
type liveRole struct {
	id       string
	cli      CLI
	setup    Setup
	want     string // "ready" or "attention"
	noPrompt bool   // startup_prompt: "" (the task is the first thing typed)
	task     bool   // gets a task with shogun send
}

func TestRealCLIsUnderShogun(t *testing.T) {
	needNode(t)
	cache, err := cacheDir()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := installAll(cache, nil, t.Logf); err != nil {
		t.Fatalf("install the pinned CLIs: %v", err)
	}
	t.Logf("CLIs installed or found in %s in %.1fs", cache, time.Since(start).Seconds())

	// Offline a request never succeeds. Claude Code fails it at once here
	// (FailFast), so its composer comes back and a task can follow the
	// startup prompt. Codex waits for the network until interrupted, so a
	// second Codex role without a startup prompt takes the task.
	claudeSetup := Ready
	claudeSetup.FailFast = true
	team := []liveRole{
		{id: "claude", cli: mustCLI(t, "claude"), setup: claudeSetup, want: "ready", task: true},
		{id: "codex", cli: mustCLI(t, "codex"), setup: Ready, want: "ready"},
		{id: "codex2", cli: mustCLI(t, "codex"), setup: Ready, want: "ready", noPrompt: true, task: true},
		{id: "gemini", cli: mustCLI(t, "gemini"), setup: Setup{}, want: "attention"},
		{id: "copilot", cli: mustCLI(t, "copilot"), setup: Setup{}, want: "attention"},
	}

	root := t.TempDir()
	home, ws, tmp := filepath.Join(root, "home"), filepath.Join(root, "ws"), filepath.Join(root, "tmp")
	for _, d := range []string{home, tmp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	marker := newMarker()
	// Whatever happens, nothing of this run outlives the test.
	t.Cleanup(func() { _ = killMarked(marker) })
	env := append(baseEnv(home, cache), runMarker+"="+marker, "TMPDIR="+tmp, "NO_COLOR=1")
	shogun(t, env, "init", ws)

	var entries strings.Builder
	entries.WriteString("roles:\n")
	prepared := map[string]bool{}
	for _, r := range team {
		if !prepared[r.cli.Name] {
			if _, err := prepare(r.cli, r.setup, cache, home, ws); err != nil {
				t.Fatal(err)
			}
			prepared[r.cli.Name] = true
		}
		fmt.Fprintf(&entries, "  - id: %s\n    prompt_path: roles/ashigaru.md\n    cli: %s\n", r.id, r.cli.Name)
		if r.noPrompt {
			entries.WriteString("    startup_prompt: \"\"\n")
		}
		fmt.Fprintf(&entries, "    command:\n      exec: %q\n      env:\n", r.cli.Path(cache))
		for _, kv := range cliEnv(r.cli, r.setup, cache, home) {
			k, v, _ := strings.Cut(kv, "=")
			fmt.Fprintf(&entries, "        %s: %q\n", k, v)
		}
	}
	if err := os.WriteFile(filepath.Join(ws, "config", "roles.yaml"), []byte(entries.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	trustFiles := map[string]string{
		"gemini":  filepath.Join(home, ".gemini", "trustedFolders.json"),
		"copilot": filepath.Join(home, ".copilot", "config.json"),
	}
	for cli, f := range trustFiles {
		if _, err := os.Stat(f); err == nil {
			t.Fatalf("%s trust file %s exists before the start", cli, f)
		}
	}

	// shogun start, as a user runs it.
	started := time.Now()
	sup := exec.Command(bin, "start", "--workspace", ws)
	sup.Env = env
	var supErr shoguntest.Buffer
	sup.Stdout, sup.Stderr = &supErr, &supErr
	if err := sup.Start(); err != nil {
		t.Fatal(err)
	}
	supDone := make(chan error, 1)
	go func() { supDone <- sup.Wait() }()
	t.Cleanup(func() {
		select {
		case <-supDone:
		default:
			_ = sup.Process.Kill()
			<-supDone
		}
	})

	// Start-up: Claude and Codex ready, each startup prompt confirmed on
	// the first submit (the request it makes then keeps Codex busy);
	// Gemini and Copilot, fresh, waiting for a person.
	reached := map[string]time.Duration{}
	done := func(r liveRole, st control.StatusReply) bool {
		if r.want == "attention" {
			return stateOf(st, r.id) == "attention"
		}
		log := readLog(ws, r.id)
		return log.readyAt > 0 && (r.noPrompt || log.prompt != "")
	}
	for deadline := time.Now().Add(3 * time.Minute); len(reached) < len(team) && time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		st, ok := status(t, env, ws)
		for _, r := range team {
			if _, ok2 := reached[r.id]; !ok2 && ok && done(r, st) {
				reached[r.id] = time.Since(started)
			}
		}
	}
	for _, r := range team {
		log := readLog(ws, r.id)
		if d, ok := reached[r.id]; ok {
			t.Logf("%s (%s %s): %s after %.1fs; startup prompt %s", r.id, r.cli.Name, r.cli.Version, r.want, d.Seconds(), orNone(log.prompt))
		} else {
			st, _ := status(t, env, ws)
			t.Errorf("%s (%s %s): start-up did not reach %s (state now %q, states seen %v, startup prompt %s); screen:\n%s",
				r.id, r.cli.Name, r.cli.Version, r.want, stateOf(st, r.id), log.states, orNone(log.prompt), screen(t, env, ws, r.id))
		}
		switch {
		case r.want == "ready" && !r.noPrompt && log.prompt != "delivered after 1 submit":
			t.Errorf("%s: startup prompt %s, want delivered after 1 submit (states seen %v); typing said:\n%s\nscreen:\n%s",
				r.id, orNone(log.prompt), log.states, strings.Join(log.typing, "\n"), screen(t, env, ws, r.id))
		case (r.want != "ready" || r.noPrompt) && log.prompt != "":
			t.Errorf("%s: startup prompt %s, want nothing typed (states seen %v); screen:\n%s",
				r.id, log.prompt, log.states, screen(t, env, ws, r.id))
		}
	}

	// A task each for Claude and Codex, delivered after one submit.
	ids := map[string]string{}
	for _, r := range team {
		if !r.task {
			continue
		}
		out := shogun(t, env, "send", "-w", ws, "--to", r.id, "--title", "Say hello",
			"--body", "Reply with one word: hello. Do not write any file.")
		ids[r.id] = strings.TrimSpace(out)
	}
	sent := time.Now()
	delivered := map[string]control.Task{}
	for len(delivered) < len(ids) && time.Since(sent) < 2*time.Minute {
		for _, task := range tasks(t, env, ws) {
			if task.Status != store.StatusQueued && task.Status != store.StatusAssigned {
				delivered[task.Role] = task
			}
		}
		time.Sleep(500 * time.Millisecond)
	}
	for role := range ids {
		task, ok := delivered[role]
		switch {
		case !ok:
			t.Errorf("%s: task not delivered within 2 min; screen:\n%s", role, screen(t, env, ws, role))
		case task.Status != store.StatusDelivered || task.Submits != 1:
			t.Errorf("%s: task %s after %d submit(s), want delivered after 1; screen:\n%s",
				role, task.Status, task.Submits, screen(t, env, ws, role))
		default:
			t.Logf("%s: task delivered after 1 submit, %.1fs after send", role, task.DeliveredAt.Sub(sent).Seconds())
		}
	}

	// The first-run dialogs are still on screen: nothing answered them.
	for _, r := range team {
		if r.want == "attention" {
			if st, _ := status(t, env, ws); stateOf(st, r.id) != "attention" {
				t.Errorf("%s: state %q before stop, want attention still; screen:\n%s", r.id, stateOf(st, r.id), screen(t, env, ws, r.id))
			}
		}
	}

	// shogun stop: everything ends, nothing is left.
	stopAt := time.Now()
	shogun(t, env, "stop", "-w", ws)
	select {
	case err := <-supDone:
		supDone <- err
		if err != nil {
			t.Errorf("shogun start exited with %v after stop; its output:\n%s", err, supErr.String())
		}
		t.Logf("stopped in %.1fs", time.Since(stopAt).Seconds())
	case <-time.After(90 * time.Second):
		t.Fatalf("shogun start still running 90 s after shogun stop; its output:\n%s", supErr.String())
	}
	var left map[int]string
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if left = marked(marker); len(left) == 0 {
			break
		}
	}
	for pid, cmd := range left {
		t.Errorf("process %d outlived shogun stop: %s", pid, cmd)
	}
	for cli, f := range trustFiles {
		b, err := os.ReadFile(f)
		if err == nil && bytes.Contains(b, []byte(ws)) {
			t.Errorf("%s saved trust in the workspace: %s now says\n%s", cli, f, b)
		}
	}
	t.Logf("whole run %.1fs", time.Since(start).Seconds())
}

// needNode skips a test that runs the real CLIs where Node.js or npm is
// missing.
func needNode(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("the real CLIs need Node.js and npm, and %s is not installed (Debian: apt-get install nodejs npm)", tool)
		}
	}
}

func mustCLI(t *testing.T, name string) CLI {
	c, ok := lookupCLI(name)
	if !ok {
		t.Fatalf("no CLI %s", name)
	}
	return c
}

// shogun runs the shogun binary and returns its standard output; a non-zero
// exit fails the test.
func shogun(t *testing.T, env []string, args ...string) string {
	t.Helper()
	out, errOut, err := runShogun(env, args...)
	if err != nil {
		t.Fatalf("shogun %s: %v\n%s%s", strings.Join(args, " "), err, out, errOut)
	}
	return out
}

func runShogun(env []string, args ...string) (string, string, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	return out.String(), errOut.String(), err
}

func status(t *testing.T, env []string, ws string) (control.StatusReply, bool) {
	var st control.StatusReply
	out, _, err := runShogun(env, "status", "--json", "-w", ws)
	return st, err == nil && json.Unmarshal([]byte(out), &st) == nil
}

func stateOf(st control.StatusReply, id string) string {
	for _, r := range st.Roles {
		if r.ID == id {
			return r.State
		}
	}
	return ""
}

func tasks(t *testing.T, env []string, ws string) []control.Task {
	out, _, err := runShogun(env, "tasks", "--json", "-w", ws)
	var list []control.Task
	if err != nil || json.Unmarshal([]byte(out), &list) != nil {
		return nil
	}
	return list
}

// screen is what `shogun screen` shows of a role, for failure messages.
func screen(t *testing.T, env []string, ws, role string) string {
	out, errOut, err := runShogun(env, "screen", "-w", ws, role)
	if err != nil {
		return fmt.Sprintf("(shogun screen: %v: %s)", err, errOut)
	}
	return out
}

// roleLog is what the supervisor's log says about one role.
type roleLog struct {
	states  []string      // the states it entered, in order
	readyAt time.Duration // > 0 once it was ready (time since the first entry)
	prompt  string        // "delivered after N submit(s)", "not delivered …", or ""
	typing  []string      // the typing procedure's lines about unconfirmed submits
}

// readLog reads the supervisor's log for the role.
func readLog(ws, role string) roleLog {
	var out roleLog
	f, err := os.Open(workspace.New(ws).SupervisorLog())
	if err != nil {
		return out
	}
	defer f.Close()
	var first time.Time
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var e struct {
			Time     time.Time `json:"time"`
			Role     string    `json:"role"`
			Message  string    `json:"message"`
			State    string    `json:"state"`
			Attempts int       `json:"attempts"`
		}
		if json.Unmarshal(sc.Bytes(), &e) != nil || e.Role != role {
			continue
		}
		if first.IsZero() {
			first = e.Time
		}
		switch {
		case strings.HasPrefix(e.Message, "state ") && e.State != "":
			out.states = append(out.states, e.State)
			if e.State == "ready" && out.readyAt == 0 {
				out.readyAt = max(e.Time.Sub(first), time.Nanosecond)
			}
		case e.Message == "startup prompt delivered":
			out.prompt = fmt.Sprintf("delivered after %d submit%s", e.Attempts, plural(e.Attempts))
		case strings.HasPrefix(e.Message, "submit not confirmed yet"):
			out.typing = append(out.typing, sc.Text())
		case e.Message == "startup prompt not delivered":
			out.prompt = fmt.Sprintf("not delivered after %d submit%s", e.Attempts, plural(e.Attempts))
		}
	}
	return out
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func orNone(s string) string {
	if s == "" {
		return "not typed"
	}
	return s
}
