//go:build realcli && linux

// The end-to-end test (`make test-e2e`): the real CLIs do whole tasks under
// `shogun start`, against the scripted model of tools/fakemodel on
// 127.0.0.1. Each CLI gets a throwaway home of its own, set up as a person
// who already accepted its first-run questions would have it, with the
// tools a task uses allowed in the CLI's own permission settings.
package main

import (
	"bytes"
	"context"
	"fmt"
	"github.com/shogun-dev/shogun/shoguntest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/shogun-dev/shogun/control"
	"github.com/shogun-dev/shogun/roles"
	"github.com/shogun-dev/shogun/store"
	"github.com/shogun-dev/shogun/tools/fakemodel"
)

// e2eCLIs are the CLIs the end-to-end test runs, or those named in
// $SHOGUN_E2E_CLIS (comma-separated). $SHOGUN_E2E_KEEP, a folder, keeps
// each test's runtime/logs and the model's request log there.
var e2eCLIs = func() []string {
	if v := os.Getenv("SHOGUN_E2E_CLIS"); v != "" {
		return strings.Split(v, ",")
	}
	return []string{"claude", "codex", "gemini", "copilot"}
}()

// reportRoutes are the ways a scripted task writes its report
// (fakemodel's "report … via ROUTE").
var reportRoutes = []string{"write", "shell", "mv", "mcp"}

// e2eTeam is a workspace with one role per CLI, each talking to the
// scripted model, and the supervisor running in it.
type e2eTeam struct {
	t      *testing.T
	ws     string
	env    []string // for shogun commands
	model  *fakemodel.Server
	sup    *exec.Cmd
	supOut *shoguntest.Buffer
	done   chan error
	marker string
}

// e2ePolicy is config/policy.yaml of the end-to-end workspaces: what the
// CLIs' own settings allow a scripted task (prepare: reads, writes, cat, mv
// and echo, shogun's MCP tools) is allowed by the policy too, so that
// Claude Code's approvals hook lets every report route through unasked.
const e2ePolicy = `default: ask
rules:
  - {decision: allow, kind: read, path: inside}
  - {decision: allow, kind: write, path: inside}
  - {decision: allow, kind: mcp, tool: "shogun/*"}
  - {decision: allow, kind: shell, command: ["cat *", "mv *", "echo *"]}
`

// startE2E starts a team of clis with e2ePolicy.
func startE2E(t *testing.T, clis []string, tune func(id string) string) *e2eTeam {
	t.Helper()
	return startE2EPolicy(t, clis, tune, e2ePolicy)
}

// startE2EPolicy is startE2E with config/policy.yaml as given; "" leaves
// the workspace without a policy, as one made before approvals.
func startE2EPolicy(t *testing.T, clis []string, tune func(id string) string, policy string) *e2eTeam {
	t.Helper()
	return startE2EIn(t, clis, tune, policy, false)
}

// startE2EIn is startE2EPolicy in a workspace that is a git repository
// when git is set, as most users' are.
func startE2EIn(t *testing.T, clis []string, tune func(id string) string, policy string, git bool) *e2eTeam {
	t.Helper()
	return startE2ESetup(t, clis, tune, policy, git, nil)
}

// startE2ESetup is startE2EIn with setup run on the workspace just before
// shogun start (a test's own settings.yaml, say).
func startE2ESetup(t *testing.T, clis []string, tune func(id string) string, policy string, git bool, setup func(ws string) error) *e2eTeam {
	t.Helper()
	return startE2EEnv(t, clis, tune, policy, git, setup, nil)
}

// startE2EEnv is startE2ESetup with extra variables (NAME=value) in the
// environment of shogun start: what a roles.yaml's ${NAME} reads.
func startE2EEnv(t *testing.T, clis []string, tune func(id string) string, policy string, git bool, setup func(ws string) error, extra []string) *e2eTeam {
	t.Helper()
	return startE2EModel(t, clis, tune, policy, git, setup, extra, nil)
}

// startE2EModel is startE2EEnv with the scripted model tuned by tuneModel
// (when not nil) before it starts.
func startE2EModel(t *testing.T, clis []string, tune func(id string) string, policy string, git bool, setup func(ws string) error, extra []string,
	tuneModel func(*fakemodel.Server)) *e2eTeam {
	t.Helper()
	needNode(t)
	cache, err := cacheDir()
	if err != nil {
		t.Fatal(err)
	}
	if err := installAll(cache, clis, t.Logf); err != nil {
		t.Fatalf("install the pinned CLIs: %v", err)
	}
	root := t.TempDir()
	ws, tmp := filepath.Join(root, "ws"), filepath.Join(root, "tmp")
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	modelLog, err := os.Create(filepath.Join(root, "model.log"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	// The request bodies too: what a CLI told the model of a tool call.
	model := &fakemodel.Server{Log: modelLog, DumpDir: filepath.Join(root, "model-requests")}
	if tuneModel != nil {
		tuneModel(model)
	}
	if err := model.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = model.Close() })
	marker := newMarker()
	t.Cleanup(func() { _ = killMarked(marker) })
	supHome := filepath.Join(root, "home")
	env := append(baseEnv(supHome, cache), runMarker+"="+marker, "TMPDIR="+tmp, "NO_COLOR=1")
	env = append(env, extra...)
	shogun(t, env, "init", ws)
	if git {
		if b, err := exec.Command("git", "init", "-q", ws).CombinedOutput(); err != nil {
			t.Fatalf("git init: %v: %s", err, b)
		}
	}

	var entries strings.Builder
	entries.WriteString("roles:\n")
	for _, name := range clis {
		c := mustCLI(t, name)
		home := filepath.Join(root, "home-"+name)
		s := Ready
		s.Model = model.URL()
		roleEnv, err := prepare(c, s, cache, home, ws)
		if err != nil {
			t.Fatal(err)
		}
		entries.WriteString(modelRoleEntry(name, c, s, cache, append(roleEnv, runMarker+"="+marker)))
		if tune != nil {
			entries.WriteString(tune(name))
		}
	}
	if err := os.WriteFile(filepath.Join(ws, "config", "roles.yaml"), []byte(entries.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	policyFile := filepath.Join(ws, "config", "policy.yaml")
	if err := os.Remove(policyFile); err != nil {
		t.Fatal(err)
	}
	if policy != "" {
		if err := os.WriteFile(policyFile, []byte(policy), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	if setup != nil {
		if err := setup(ws); err != nil {
			t.Fatal(err)
		}
	}

	return runSupervisor(t, ws, env, model, modelLog.Name(), marker, clis, 2*time.Minute)
}

// runSupervisor runs `shogun start` in ws and waits until every role of ids
// is ready; the test's end stops it and, with $SHOGUN_E2E_KEEP, keeps the
// runtime folder, the model's log and its request dumps.
func runSupervisor(t *testing.T, ws string, env []string, model *fakemodel.Server, modelLog, marker string, ids []string, ready time.Duration) *e2eTeam {
	t.Helper()
	tm := &e2eTeam{t: t, ws: ws, env: env, model: model, supOut: &shoguntest.Buffer{}, done: make(chan error, 1), marker: marker}
	tm.sup = exec.Command(bin, "start", "--workspace", ws)
	tm.sup.Env = env
	tm.sup.Stdout, tm.sup.Stderr = tm.supOut, tm.supOut
	if err := tm.sup.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { tm.done <- tm.sup.Wait() }()
	t.Cleanup(func() {
		select {
		case err := <-tm.done:
			tm.done <- err
		default:
			_ = tm.sup.Process.Kill()
			<-tm.done
		}
		if keep := os.Getenv("SHOGUN_E2E_KEEP"); keep != "" {
			// For a look afterwards: the logs and the model's requests.
			dst := filepath.Join(keep, t.Name())
			_ = os.MkdirAll(dst, 0o755)
			_ = exec.Command("cp", "-r", filepath.Join(ws, "runtime"), modelLog, model.DumpDir, dst).Run()
		}
		if t.Failed() {
			b, _ := os.ReadFile(modelLog)
			t.Logf("scripted model's log:\n%s", tail(b, 40))
		}
	})
	started := time.Now()
	for _, role := range ids {
		if !tm.waitState(role, "ready", ready) {
			t.Fatalf("%s never became ready; screen:\n%s\nshogun start said:\n%s", role, screen(t, tm.env, tm.ws, role), tm.supOut.String())
		}
	}
	t.Logf("%s ready %.1fs after shogun start", strings.Join(ids, ", "), time.Since(started).Seconds())
	return tm
}

// send hands a task to role and returns its command id.
func (tm *e2eTeam) send(role, title, body string) string {
	tm.t.Helper()
	return strings.TrimSpace(shogun(tm.t, tm.env, "send", "-w", tm.ws, "--to", role, "--title", title, "--body", body))
}

// waitTask waits until the task made from command id is closed and returns it.
func (tm *e2eTeam) waitTask(id string, within time.Duration) (control.Task, bool) {
	deadline := time.Now().Add(within)
	for {
		for _, task := range tasks(tm.t, tm.env, tm.ws) {
			if task.CommandID == id && store.Closed(task.Status) {
				return task, true
			}
		}
		if time.Now().After(deadline) {
			return control.Task{}, false
		}
		time.Sleep(300 * time.Millisecond)
	}
}

func (tm *e2eTeam) task(id string) (control.Task, bool) {
	for _, task := range tasks(tm.t, tm.env, tm.ws) {
		if task.CommandID == id {
			return task, true
		}
	}
	return control.Task{}, false
}

// waitState waits until role is in state.
func (tm *e2eTeam) waitState(role, state string, within time.Duration) bool {
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if st, ok := status(tm.t, tm.env, tm.ws); ok && stateOf(st, role) == state {
			return true
		}
	}
	return false
}

// stop runs shogun stop and checks that nothing of the run is left.
func (tm *e2eTeam) stop() {
	t := tm.t
	t.Helper()
	stopAt := time.Now()
	shogun(t, tm.env, "stop", "-w", tm.ws)
	select {
	case err := <-tm.done:
		tm.done <- err
		if err != nil {
			t.Errorf("shogun start exited with %v after stop; its output:\n%s", err, tm.supOut.String())
		}
		t.Logf("stopped in %.1fs", time.Since(stopAt).Seconds())
	case <-time.After(90 * time.Second):
		t.Fatalf("shogun start still running 90 s after shogun stop; its output:\n%s", tm.supOut.String())
	}
	var left map[int]string
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if left = marked(tm.marker); len(left) == 0 {
			break
		}
	}
	for pid, cmd := range left {
		t.Errorf("process %d outlived shogun stop: %s", pid, cmd)
	}
}

// events reads the history's events once the supervisor has stopped.
func (tm *e2eTeam) events() []store.Event {
	st, err := store.Open(filepath.Join(tm.ws, "data", "shogun.db"))
	if err != nil {
		tm.t.Fatalf("open the history: %v", err)
	}
	defer st.Close()
	evs, err := st.Events(100000)
	if err != nil {
		tm.t.Fatal(err)
	}
	return evs
}

// TestWholeTasksWithRealCLIs: each CLI does a task for every report route,
// each delivered after one submit and closed with the model's summary; the
// agent never sees its report fail, and the role never needs a person.
func TestWholeTasksWithRealCLIs(t *testing.T) {
	tm := startE2E(t, e2eCLIs, nil)

	// One CLI at a time, its tasks queued at once: four busy CLIs on two
	// cores slow each other down past any CLI's own timing.
	for _, role := range e2eCLIs {
		type sent struct{ route, id, file, summary string }
		var all []sent
		for _, route := range reportRoutes {
			file := fmt.Sprintf("out-%s-%s.txt", role, route)
			summary := fmt.Sprintf("%s reported through %s", role, route)
			body := fmt.Sprintf("Write the file, then report.\nfakemodel: write %s made by %s\nfakemodel: report done via %s %s\n", file, role, route, summary)
			id := tm.send(role, fmt.Sprintf("Report via %s", route), body)
			all = append(all, sent{route: route, id: id, file: file, summary: summary})
		}
		for _, s := range all {
			task, ok := tm.waitTask(s.id, 3*time.Minute)
			if !ok {
				cur, _ := tm.task(s.id)
				t.Errorf("%s, report via %s: not closed within 3 min (status %q); screen:\n%s", role, s.route, cur.Status, screen(t, tm.env, tm.ws, role))
				continue
			}
			if task.Status != store.StatusDone || task.Summary != s.summary {
				t.Errorf("%s, report via %s: %s with %q, want done with %q", role, s.route, task.Status, task.Summary, s.summary)
			}
			if task.Submits != 1 || task.Attempts != 1 {
				t.Errorf("%s, report via %s: delivered after %d submit(s) in %d attempt(s), want one of each", role, s.route, task.Submits, task.Attempts)
			}
			if b, err := os.ReadFile(filepath.Join(tm.ws, s.file)); err != nil || !strings.Contains(string(b), "made by "+role) {
				t.Errorf("%s, report via %s: %s = %q, %v; want the file the task asked for", role, s.route, s.file, b, err)
			}
			t.Logf("%s via %s: delivered %.1fs, done %.1fs after it was handed out", role, s.route,
				task.DeliveredAt.Sub(task.AssignedAt).Seconds(), task.FinishedAt.Sub(task.AssignedAt).Seconds())
		}
	}
	if failed, _ := os.ReadDir(filepath.Join(tm.ws, "runtime", "queue", "failed")); len(failed) > 0 {
		t.Errorf("files rejected into runtime/queue/failed/: %v", dirNames(failed))
	}
	for _, role := range e2eCLIs {
		log := readLog(tm.ws, role)
		if slices.Contains(log.states, "attention") {
			t.Errorf("%s was in attention (states %v); screen:\n%s", role, log.states, screen(t, tm.env, tm.ws, role))
		}
		out, _, _ := runShogun(tm.env, "logs", "-w", tm.ws, role)
		for _, bad := range []string{"ENOENT", "no such file", "Error writing file", "report file gone"} {
			if strings.Contains(out, bad) {
				t.Errorf("%s was shown %q about its report:\n%s", role, bad, tail([]byte(out), 40))
			}
		}
	}
	tm.stop()
	between := map[string]int{}
	for _, e := range tm.events() {
		switch e.Kind {
		case "between-tasks":
			between[e.Role]++
		case "report-duplicate":
			t.Errorf("%s wrote a report again: %s", e.Role, e.Message)
		}
	}
	for _, role := range e2eCLIs {
		if p, _ := roles.LookupPreset(role); p.BetweenTasks == "" {
			continue
		}
		if want := len(reportRoutes) - 1; between[role] < want {
			t.Errorf("%s: between_tasks typed %d time(s), want %d (once between each two tasks)", role, between[role], want)
		}
	}
}

// TestCodexTasksInAGitRepository: Codex 0.169 answers /new in a git
// repository with "Where should the new conversation run?", which left
// the role in attention after its first task; the preset's between_tasks
// starts the next conversation without a question, and every task is done.
func TestCodexTasksInAGitRepository(t *testing.T) {
	tm := startE2EIn(t, []string{"codex"}, nil, e2ePolicy, true)
	var ids []string
	for i := range 3 {
		file := fmt.Sprintf("out-git-%d.txt", i)
		body := fmt.Sprintf("Write the file, then report.\nfakemodel: write %s made by codex\nfakemodel: report done via write task %d\n", file, i)
		ids = append(ids, tm.send("codex", fmt.Sprintf("Task %d in a repository", i), body))
	}
	for i, id := range ids {
		task, ok := tm.waitTask(id, 3*time.Minute)
		if !ok || task.Status != store.StatusDone {
			t.Fatalf("task %d: %q (closed %v); screen:\n%s", i, task.Status, ok, screen(t, tm.env, tm.ws, "codex"))
		}
	}
	if log := readLog(tm.ws, "codex"); slices.Contains(log.states, "attention") {
		t.Errorf("codex was in attention (states %v); screen:\n%s", log.states, screen(t, tm.env, tm.ws, "codex"))
	}
	tm.stop()
	between := 0
	for _, e := range tm.events() {
		if e.Kind == "between-tasks" && e.Role == "codex" {
			between++
		}
	}
	if between < len(ids)-1 {
		t.Errorf("between_tasks typed %d time(s), want %d", between, len(ids)-1)
	}
}

// TestTaskHandedOnThroughMCP: an agent hands a task to another role with
// the MCP tool send_task; it arrives, is done, and the sender hears of it.
func TestTaskHandedOnThroughMCP(t *testing.T) {
	tm := startE2E(t, []string{"claude", "codex"}, nil)
	body := "Hand the part to codex, then report.\n" +
		`fakemodel: send codex via mcp "Relayed part" "fakemodel: report done via shell codex did the relayed part"` + "\n" +
		"fakemodel: report done via write claude handed it on\n"
	id := tm.send("claude", "Hand it on", body)
	task, ok := tm.waitTask(id, 3*time.Minute)
	if !ok || task.Status != store.StatusDone {
		t.Fatalf("claude's task: %+v (closed %v); screen:\n%s", task, ok, screen(t, tm.env, tm.ws, "claude"))
	}
	var relayed control.Task
	for deadline := time.Now().Add(3 * time.Minute); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		for _, tk := range tasks(t, tm.env, tm.ws) {
			if tk.Role == "codex" && tk.Title == "Relayed part" {
				relayed = tk
			}
		}
		if store.Closed(relayed.Status) {
			break
		}
	}
	if relayed.Status != store.StatusDone || relayed.Summary != "codex did the relayed part" || relayed.From != "claude" || relayed.Parent != task.ID {
		t.Fatalf("the relayed task = %+v, want done by codex, from claude, parent %s; codex's screen:\n%s", relayed, task.ID, screen(t, tm.env, tm.ws, "codex"))
	}
	// The sender is told once it is idle: the notify line typed into it.
	hist, err := store.Open(filepath.Join(tm.ws, "data", "shogun.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer hist.Close()
	notified := false
	for deadline := time.Now().Add(time.Minute); !notified && time.Now().Before(deadline); time.Sleep(300 * time.Millisecond) {
		evs, _ := hist.EventsForTask(relayed.ID)
		for _, e := range evs {
			notified = notified || (e.Role == "claude" && e.Kind == "notified")
		}
	}
	if !notified {
		t.Errorf("claude was not told of codex's report on %s; its screen:\n%s", relayed.ID, screen(t, tm.env, tm.ws, "claude"))
	}
	tm.stop()
}

// TestPermissionAnsweredThroughAttach: in a workspace without an approvals
// policy, a tool call the CLI's settings do not allow puts the role in
// attention with nothing typed; a person answers it through `shogun
// attach`, and the task finishes.
func TestPermissionAnsweredThroughAttach(t *testing.T) {
	tm := startE2EPolicy(t, []string{"claude"}, nil, "")
	body := "Run the check, then report.\nfakemodel: run python3 -c \"print(1)\"\nfakemodel: report done via write the check ran\n"
	id := tm.send("claude", "Run the check", body)
	if !tm.waitState("claude", "attention", 2*time.Minute) {
		t.Fatalf("claude never asked for permission; screen:\n%s", screen(t, tm.env, tm.ws, "claude"))
	}
	asked := screen(t, tm.env, tm.ws, "claude")
	if !strings.Contains(asked, "python3") {
		t.Errorf("the permission prompt does not name the command:\n%s", asked)
	}
	// Nothing is typed while it waits: the screen stays the question.
	time.Sleep(3 * time.Second)
	if cur, _ := tm.task(id); store.Closed(cur.Status) {
		t.Fatalf("the task closed while the question waited: %+v", cur)
	}
	if st, _ := status(t, tm.env, tm.ws); stateOf(st, "claude") != "attention" {
		t.Fatalf("claude left attention with nobody answering; screen:\n%s", screen(t, tm.env, tm.ws, "claude"))
	}

	// A person attaches in a terminal and presses Enter on "1. Yes".
	cmd := exec.Command(bin, "attach", "-w", tm.ws, "claude")
	cmd.Env = tm.env
	term, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: 120, Rows: 40})
	if err != nil {
		t.Fatal(err)
	}
	defer term.Close()
	var seen shoguntest.Buffer
	go func() { _, _ = copyTo(&seen, term) }()
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(seen.String(), "proceed") && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
	}
	if _, err := term.Write([]byte("\r")); err != nil {
		t.Fatal(err)
	}
	task, ok := tm.waitTask(id, 2*time.Minute)
	if _, err := term.Write([]byte{0x1d}); err != nil { // Ctrl-] detaches
		t.Error(err)
	}
	waitDone := make(chan error, 1)
	go func() { waitDone <- cmd.Wait() }()
	select {
	case <-waitDone:
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		t.Errorf("shogun attach did not detach on Ctrl-]")
	}
	if !ok || task.Status != store.StatusDone || task.Summary != "the check ran" {
		t.Fatalf("task after the answer = %+v (closed %v); screen:\n%s", task, ok, screen(t, tm.env, tm.ws, "claude"))
	}
	tm.stop()
}

// limitUnread says, for each CLI whose preset cannot make its role limited
// on the CLI's usage-limit screen, why not.
var limitUnread = map[string]string{
	"gemini": "Gemini CLI 0.61 shows a usage limit as a dialog (● 1. Keep trying 2. Stop) that waits for a choice " +
		"after the reset: the role is in attention, not limited (supervisor/testdata/screens/gemini-limit.raw)",
	"copilot": "Copilot CLI 1.0.102 shows no usage-limit message: it waits out retry-after under Working, and the role is busy",
}

// TestUsageLimitResumesByItself: the model answers with the CLI's
// usage-limit error; the role is limited until the reset its message names,
// then reminded of its task, which it finishes. Codex names the reset to
// the minute only, so its role is reminded early, meets the limit again,
// and is limited again until the model's window has passed.
func TestUsageLimitResumesByItself(t *testing.T) {
	for _, role := range e2eCLIs {
		t.Run(role, func(t *testing.T) {
			if why := limitUnread[role]; why != "" {
				t.Skip(why)
			}
			tm := startE2E(t, []string{role}, nil)
			body := "Wait out the limit, then report.\nfakemodel: limit 20s\nfakemodel: report done via write done after the limit\n"
			sent := time.Now()
			id := tm.send(role, "Past the limit", body)
			task, ok := tm.waitTask(id, 3*time.Minute)
			if !ok || task.Status != store.StatusDone || task.Summary != "done after the limit" {
				t.Fatalf("task after the limit = %+v (closed %v); screen:\n%s", task, ok, screen(t, tm.env, tm.ws, role))
			}
			states := readLog(tm.ws, role).states
			limited := 0
			for _, st := range states {
				if st == "limited" {
					limited++
				}
			}
			if limited == 0 || slices.Contains(states, "attention") {
				t.Errorf("%s went through states %v, want limited and never attention", role, states)
			}
			t.Logf("done %.1fs after it was sent, limited %d time(s)", time.Since(sent).Seconds(), limited)
			tm.stop()
		})
	}
}

func dirNames(entries []os.DirEntry) []string {
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i] = e.Name()
	}
	return out
}

// tail is the last n lines of b.
func tail(b []byte, n int) string {
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

func copyTo(dst *shoguntest.Buffer, src *os.File) (int64, error) {
	buf := make([]byte, 4096)
	var n int64
	for {
		k, err := src.Read(buf)
		if k > 0 {
			_, _ = dst.Write(buf[:k])
			n += int64(k)
		}
		if err != nil {
			return n, err
		}
	}
}
