//go:build !windows

package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/shoguntest"
	"github.com/shogun-dev/shogun/workspace"
)

// bin is the shogun binary under test, built once.
var bin string

func TestMain(m *testing.M) { shoguntest.Main(m, &bin) }

// shogun runs the binary to completion and returns stdout, stderr and the exit code.
func shogun(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run shogun %v: %v", args, err)
	}
	return out.String(), errOut.String(), code
}

func TestInitScaffoldsAndNeverOverwrites(t *testing.T) {
	ws := t.TempDir()
	out, errOut, code := shogun(t, "init", ws)
	if code != 0 {
		t.Fatalf("init exit %d: %s", code, errOut)
	}
	for _, p := range []string{"config/settings.yaml", "config/roles.yaml", "roles/shogun.md", "roles/karo.md", "roles/ashigaru.md",
		"runtime/queue/commands", "runtime/queue/tasks", "runtime/queue/reports", "runtime/queue/archive", "runtime/queue/failed",
		"runtime/logs", "runtime/state", "skills/codex", "skills/copilot"} {
		if _, err := os.Stat(filepath.Join(ws, p)); err != nil {
			t.Errorf("init did not create %s: %v", p, err)
		}
		if !strings.Contains(out, p) {
			t.Errorf("init output does not mention %s:\n%s", p, out)
		}
	}
	mine := []byte("# my own karo instructions\n")
	karo := filepath.Join(ws, "roles", "karo.md")
	if err := os.WriteFile(karo, mine, 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, code = shogun(t, "init", ws)
	if b, _ := os.ReadFile(karo); code != 0 || !bytes.Equal(b, mine) {
		t.Fatalf("second init (exit %d) changed an existing file: %q", code, b)
	}
	if !strings.Contains(out, "skipped") {
		t.Errorf("second init does not say it skipped files:\n%s", out)
	}
	if _, _, code = shogun(t, "init", "--force", ws); code != 0 {
		t.Fatal("init --force failed")
	}
	if b, _ := os.ReadFile(karo); bytes.Equal(b, mine) {
		t.Error("init --force kept the old file")
	}
}

func TestInitJapanese(t *testing.T) {
	ws := t.TempDir()
	if _, errOut, code := shogun(t, "init", "--lang", "ja", ws); code != 0 {
		t.Fatalf("init --lang ja: %s", errOut)
	}
	b, err := os.ReadFile(filepath.Join(ws, "roles", "ashigaru.md"))
	if err != nil || !strings.Contains(string(b), "足軽") {
		t.Fatalf("Japanese role file expected, got %q (%v)", b, err)
	}
}

func TestDryRunPrintsPlan(t *testing.T) {
	ws := t.TempDir()
	shogun(t, "init", ws)
	fakeCLIs(t, "codex", "claude")
	out, errOut, code := shogun(t, "start", "--workspace", ws, "--dry-run")
	if code != 0 {
		t.Fatalf("dry run exit %d: %s", code, errOut)
	}
	for _, want := range []string{"configuration OK, 5 role(s) would start", "shogun", "karo", "ashigaru3", "codex", "claude",
		// One line per role, not double-spaced.
		"/quit\\r\" within 10s\nkaro: cwd "} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run output lacks %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(filepath.Join(ws, "runtime", "state", "shogun.lock")); err == nil {
		t.Error("dry run took the workspace lock")
	}
}

func TestStartRefusesBadConfigWithEveryError(t *testing.T) {
	ws := t.TempDir()
	shogun(t, "init", ws)
	bad := `roles:
  - id: Shogun
    prompt_path: roles/shogun.md
    command: {exec: codex}
  - id: karo
    prompt_path: ../outside.md
    command: {exec: claude, colour: red}
`
	if err := os.WriteFile(filepath.Join(ws, "config", "roles.yaml"), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := shogun(t, "start", "--workspace", ws)
	if code == 0 {
		t.Fatal("start with a bad roles.yaml succeeded")
	}
	for _, want := range []string{"config/roles.yaml:2:", "config/roles.yaml:6:", "config/roles.yaml:7:"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("error output lacks %q:\n%s", want, errOut)
		}
	}
	if _, err := os.Stat(workspace.New(ws).SupervisorLog()); err == nil {
		t.Error("a supervisor started despite the errors")
	}
}

// demoWorkspace is a workspace whose roles run /bin/sh scripts.
func shWorkspace(t *testing.T, script string) string {
	t.Helper()
	ws := t.TempDir()
	shogun(t, "init", ws)
	roles := fmt.Sprintf(`roles:
  - id: worker
    prompt_path: roles/ashigaru.md
    command: {exec: /bin/sh, args: ["-c", %q]}
    stop: {keys: "", timeout: 1s}
`, script)
	if err := os.WriteFile(filepath.Join(ws, "config", "roles.yaml"), []byte(roles), 0o644); err != nil {
		t.Fatal(err)
	}
	return ws
}

// startBackground runs `shogun start` as a real child process.
func startBackground(t *testing.T, ws string) (*exec.Cmd, *shoguntest.Buffer) {
	t.Helper()
	cmd := exec.Command(bin, "start", "--workspace", ws)
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	errOut := &shoguntest.Buffer{}
	cmd.Stderr = errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_, _ = cmd.Process.Wait()
	})
	return cmd, errOut
}

func waitFile(t *testing.T, path string, within time.Duration) []byte {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		b, err := os.ReadFile(path)
		if err == nil && bytes.HasSuffix(b, []byte("\n")) {
			return b
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s after %v", path, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func alive(pid int) bool { return shoguntest.Alive(pid) }

func waitGoneOK(pid int, within time.Duration) bool {
	deadline := time.Now().Add(within)
	for alive(pid) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

func waitGone(t *testing.T, pid int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("pid %d still alive after %v", pid, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stubborn is a role whose shell ignores SIGTERM and SIGHUP and whose
// grandchild does too; it writes "shell grandchild" pids to the file.
func stubborn(pidFile string) string {
	return fmt.Sprintf(`trap '' TERM HUP; (trap '' TERM HUP; exec sleep 1000) & echo "$$ $!" > %s; while :; do sleep 0.2; done`, pidFile)
}

func TestSigtermStopsEverythingAndExitsZero(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pids")
	ws := shWorkspace(t, stubborn(pidFile))
	cmd, errOut := startBackground(t, ws)
	var shell, grandchild int
	fmt.Sscan(string(waitFile(t, pidFile, 10*time.Second)), &shell, &grandchild)

	// A second supervisor on the same workspace is refused, naming the first.
	_, second, code := shogun(t, "start", "--workspace", ws)
	if code == 0 || !strings.Contains(second, fmt.Sprintf("pid %d", cmd.Process.Pid)) {
		t.Errorf("second start: exit %d, %q; want a refusal naming pid %d", code, second, cmd.Process.Pid)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("shogun start after SIGTERM: %v\n%s", err, errOut)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("shogun start did not exit after SIGTERM\n%s", errOut)
	}
	for _, pid := range []int{shell, grandchild} {
		if alive(pid) {
			t.Errorf("pid %d outlived the supervisor", pid)
		}
	}
	if _, err := os.Stat(filepath.Join(ws, "runtime", "state", "shogun.lock")); !os.IsNotExist(err) {
		t.Errorf("lock file left after a clean stop: %v", err)
	}
	if !strings.Contains(errOut.String(), "worker state starting") || !strings.Contains(errOut.String(), "worker state stopped") {
		t.Errorf("stderr does not show the role's states:\n%s", errOut)
	}
	// The log says why the supervisor stopped.
	if b, _ := os.ReadFile(workspace.New(ws).SupervisorLog()); !strings.Contains(string(b), `"why":"received terminated"`) {
		t.Errorf("the supervisor's log does not say the supervisor stopped on SIGTERM:\n%s", b)
	}
}

func TestKill9ThenStartCleansUpLeftovers(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pids")
	ws := shWorkspace(t, stubborn(pidFile))
	cmd, _ := startBackground(t, ws)
	var shell, grandchild int
	fmt.Sscan(string(waitFile(t, pidFile, 10*time.Second)), &shell, &grandchild)
	// Kill only once the pid ledger lists the role's program.
	ledger := filepath.Join(ws, "runtime", "state", "pids.json")
	shoguntest.WaitFor(t, "the pid ledger", 10*time.Second, func() bool {
		b, _ := os.ReadFile(ledger)
		return bytes.Contains(b, []byte(fmt.Sprintf(`"pid": %d`, shell)))
	})

	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_, _ = cmd.Process.Wait()
	// Pdeathsig ends the shell; the grandchild, immune to SIGHUP, lives on.
	waitGone(t, shell, 10*time.Second)
	if !alive(grandchild) {
		t.Skip("the grandchild died with the supervisor; nothing left for the ledger to clean")
	}
	if _, err := os.Stat(filepath.Join(ws, "runtime", "state", "shogun.lock")); err != nil {
		t.Fatalf("a killed supervisor should leave its lock: %v", err)
	}
	os.Remove(pidFile)
	next, errOut := startBackground(t, ws)
	if !waitGoneOK(grandchild, 10*time.Second) {
		stat, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", grandchild))
		t.Fatalf("leftover grandchild %d still alive (%s); supervisor said:\n%s", grandchild, stat, errOut)
	}
	var shell2, grand2 int
	fmt.Sscan(string(waitFile(t, pidFile, 10*time.Second)), &shell2, &grand2)
	if shell2 == shell {
		t.Error("the role was not started fresh")
	}
	if !strings.Contains(errOut.String(), "leftover") {
		t.Errorf("stderr does not mention the leftover:\n%s", errOut)
	}
	_ = next.Process.Signal(syscall.SIGTERM)
	_ = next.Wait()
	waitGone(t, grand2, 10*time.Second)
}

func TestDemoRunsTheWholeLoop(t *testing.T) {
	dir := t.TempDir()
	out, errOut, code := shogun(t, "demo", "--dir", dir, "--linger", "200ms")
	if code != 0 {
		t.Fatalf("demo exit %d\n%s\n%s", code, out, errOut)
	}
	// shogun → karo → three ashigaru, every task done, each from the right sender.
	for _, want := range []string{
		"t-", "shogun     -       done",
		"karo       shogun  done",
		"ashigaru1  karo    done", "ashigaru2  karo    done", "ashigaru3  karo    done",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("task table lacks %q:\n%s", want, out)
		}
	}
	dash, err := os.ReadFile(filepath.Join(dir, "runtime", "dashboard.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Recent reports", "| ashigaru1 |", "done: Done: Add a login page"} {
		if !strings.Contains(string(dash), want) {
			t.Errorf("dashboard lacks %q:\n%s", want, dash)
		}
	}
	// One order and its parts are one piece of work: no skill candidate.
	if !strings.Contains(out, "found no candidate: they are one order and its parts") {
		t.Errorf("the demo's skills scan:\n%s", out)
	}
	tasks, _, code := shogun(t, "tasks", "--workspace", dir, "--json")
	if code != 0 || strings.Count(tasks, `"status": "done"`) != 5 {
		t.Errorf("shogun tasks --json (exit %d) does not list 5 done tasks:\n%s", code, tasks)
	}
	// The simulated karo reads each notification's report as a report: no
	// warning that it is not a task file. (The shogun role's log is not
	// looked at: runtime/logs/shogun.log is the supervisor's log too.)
	karo, _, _ := shogun(t, "logs", "karo", "-n", "0", "-w", dir)
	if strings.Contains(karo, "is not a task file") || strings.Count(karo, "Read the report on t-") != 3 {
		t.Errorf("karo's screen does not read the three reports as reports:\n%s", karo)
	}
	if strings.Contains(out, "is not a task file") || strings.Contains(out, "web console:") {
		t.Errorf("the demo printed a warning or a console link that dies with it:\n%s", out)
	}
}

// `start --dry-run` shows what bounds each role as start would apply it:
// its accounts, fallback, memory_max (agent.memory_max's default
// included) and idle_after, and which roles take the slots of
// agent.max_running at start. Before, the plan left them all out.
func TestDryRunShowsAccountsFallbackMemoryAndSlots(t *testing.T) {
	ws := teamWorkspace(t,
		simEntry("shogun")+"    accounts: claude-team\n    idle_after: 10m\n",
		simEntry("karo")+"    fallback: shogun\n    memory_max: 2GB\n",
		simEntry("ashigaru1"))
	settings := "agent:\n  max_running: 2\n  memory_max: 1GB\n" +
		"accounts:\n  switch_at: 85\n  pools:\n    claude-team:\n      - {name: a, env: {CLAUDE_CONFIG_DIR: /tmp/a}}\n      - {name: b, env: {CLAUDE_CONFIG_DIR: /tmp/b}}\n"
	if err := os.WriteFile(filepath.Join(ws, "config", "settings.yaml"), []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := shogun(t, "start", "--workspace", ws, "--dry-run")
	if code != 0 {
		t.Fatalf("dry run exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"accounts claude-team/a then claude-team/b (switch at 85%), memory_max 1 GB, idle_after 10m0s\n",
		"fallback shogun, memory_max 2 GB\n",
		"configuration OK, 2 of 3 roles would start (agent.max_running 2); the others sleep until a task comes\n",
		"agent.max_running 2: at start shogun, karo take the slots (no role has queued work); then, as slots free: ashigaru1 (asleep until a task comes)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run output lacks %q:\n%s", want, out)
		}
	}
}

// Under agent.max_running, `start --dry-run` says how many roles start at
// once, not that all of them would, and names the roles with queued work,
// which take the slots first: here commands sent while no supervisor ran
// to the last role of config/roles.yaml.
func TestDryRunNamesTheRolesWithQueuedWorkFirst(t *testing.T) {
	ws := teamWorkspace(t, simEntry("shogun"), simEntry("karo"), simEntry("ashigaru1"), simEntry("ashigaru2"))
	setAgent(t, ws, "  max_running: 2\n")
	cmds := "commands:\n  - {to: ashigaru2, title: Fix the login, body: Fix it.}\n  - {to: ashigaru2, title: Add a test, body: Add it.}\n"
	if err := os.WriteFile(filepath.Join(ws, "runtime", "queue", "commands", "two.yaml"), []byte(cmds), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := shogun(t, "start", "--workspace", ws, "--dry-run")
	if code != 0 {
		t.Fatalf("dry run exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"configuration OK, 2 of 4 roles would start (agent.max_running 2); the others sleep until a task comes\n",
		"agent.max_running 2: at start ashigaru2, shogun take the slots, the roles with queued work first, by priority: ashigaru2 (2 commands waiting); then, as slots free: karo, ashigaru1 (asleep until a task comes)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run output lacks %q:\n%s", want, out)
		}
	}
}
