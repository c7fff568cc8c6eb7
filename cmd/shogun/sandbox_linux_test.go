package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/control"
	"github.com/shogun-dev/shogun/sandbox"
	"github.com/shogun-dev/shogun/shoguntest"
)

// A role with sandbox: true that tries, as a hostile agent would, to
// change the policy and read the console's token is refused both by the
// kernel ("permission denied"), can still write in its own folders, and
// finishes its task with a report. Its twin without the sandbox, trying
// the same, succeeds: the refusal is the sandbox's.
func TestSandboxedRoleCannotTouchPolicyOrToken(t *testing.T) {
	if _, err := sandbox.Available(); err != nil {
		t.Skipf("no sandbox here: %v", err)
	}
	tries := []string{"--work-time", "100ms",
		"--trespass", "write:config/policy.yaml",
		"--trespass", "read:runtime/state/ui.token",
		"--trespass", "write:work/notes.txt"}
	ws := teamWorkspace(t, simEntry("boxed", tries...)+"    sandbox: true\n", simEntry("free", tries...))
	if err := os.Mkdir(filepath.Join(ws, "work"), 0o755); err != nil {
		t.Fatal(err)
	}
	// The console writes its token when it first needs it; the role must
	// not read it whenever that was.
	if err := os.MkdirAll(filepath.Join(ws, "runtime", "state"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "runtime", "state", "ui.token"), []byte(strings.Repeat("ab", 32)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	policy := filepath.Join(ws, "config", "policy.yaml")
	before, err := os.ReadFile(policy)
	if err != nil {
		t.Fatal(err)
	}

	startBackground(t, ws)
	waitStatus(t, ws, "both ready", func(s control.StatusReply) bool {
		return stateOf(s, "boxed") == "ready" && stateOf(s, "free") == "ready"
	})
	if _, errOut, code := shogun(t, "send", "-w", ws, "--to", "boxed", "--title", "Try", "--body", "work"); code != 0 {
		t.Fatalf("send: %s", errOut)
	}
	details := doneReport(t, ws, "boxed")
	for _, want := range []string{
		"write config/policy.yaml: open config/policy.yaml: permission denied",
		"read runtime/state/ui.token: open runtime/state/ui.token: permission denied",
		"write work/notes.txt: ok",
	} {
		if !strings.Contains(details, want) {
			t.Errorf("the sandboxed role's report does not say %q:\n%s", want, details)
		}
	}
	if after, _ := os.ReadFile(policy); string(after) != string(before) {
		t.Errorf("the sandboxed role changed the policy:\n%s", after)
	}

	if _, errOut, code := shogun(t, "send", "-w", ws, "--to", "free", "--title", "Try", "--body", "work"); code != 0 {
		t.Fatalf("send: %s", errOut)
	}
	details = doneReport(t, ws, "free")
	for _, want := range []string{"write config/policy.yaml: ok", "read runtime/state/ui.token: ok"} {
		if !strings.Contains(details, want) {
			t.Errorf("the role without a sandbox was refused too, so the test proves nothing; want %q:\n%s", want, details)
		}
	}
}

// doneReport waits for role's task to be done and returns its report.
func doneReport(t *testing.T, ws, role string) string {
	t.Helper()
	var task control.Task
	shoguntest.WaitFor(t, role+"'s task done", time.Minute, func() bool {
		out, _, _ := shogun(t, "tasks", "-w", ws, "--json")
		var tasks []control.Task
		if json.Unmarshal([]byte(out), &tasks) != nil {
			return false
		}
		for _, tk := range tasks {
			if tk.Role == role && tk.Status == "done" {
				task = tk
				return true
			}
		}
		return false
	})
	path := task.ReportPath
	if !filepath.IsAbs(path) {
		path = filepath.Join(ws, filepath.FromSlash(path))
	}
	// The history closes the task before the report's archive copy is
	// written: wait for the copy.
	var b []byte
	shoguntest.WaitFor(t, role+"'s archived report", 10*time.Second, func() bool {
		var err error
		b, err = os.ReadFile(path)
		return err == nil
	})
	return string(b)
}

// A sandboxed role in a worktree of its own commits its work there (git
// writes the repository's objects and refs), but cannot read the other
// role's worktree, nor change the repository's hooks, which a person's git
// would run.
func TestSandboxedWorktreeRoleCommitsButStaysInItsCheckout(t *testing.T) {
	if _, err := sandbox.Available(); err != nil {
		t.Skipf("no sandbox here: %v", err)
	}
	boxed := simEntry("a1", "--work-time", "100ms", "--commit-work", "notes.md",
		"--trespass", "read:../a2/notes.md",
		"--trespass", "write:../../../.git/hooks/post-commit") + "    worktree: true\n    sandbox: true\n"
	ws := repoWorkspace(t, boxed, worktreeEntry("a2"))
	startBackground(t, ws)
	waitStatus(t, ws, "both ready", func(s control.StatusReply) bool {
		return stateOf(s, "a1") == "ready" && stateOf(s, "a2") == "ready"
	})
	if _, errOut, code := shogun(t, "send", "-w", ws, "--to", "a1", "--title", "Notes", "--body", "write notes.md"); code != 0 {
		t.Fatalf("send: %s", errOut)
	}
	details := doneReport(t, ws, "a1")
	for _, want := range []string{
		"read ../a2/notes.md: open ../a2/notes.md: permission denied",
		"write ../../../.git/hooks/post-commit: open ../../../.git/hooks/post-commit: permission denied",
		"Wrote notes.md and committed it as ",
	} {
		if !strings.Contains(details, want) {
			t.Errorf("the sandboxed worktree role's report does not say %q:\n%s", want, details)
		}
	}
	if log := shoguntest.Git(t, ws, "log", "--format=%s", "shogun/a1"); !strings.Contains(log, "Notes") {
		t.Errorf("no commit of the task on shogun/a1:\n%s", log)
	}
}

// An agent turns its Claude Code hook off in .claude/settings.local.json:
// `shogun status` names the file and the held role, a task sent to it
// waits, and once a person has looked (`shogun status --dismiss`) the
// role takes it.
func TestHeldRoleWaitsUntilDismissed(t *testing.T) {
	entry := strings.Replace(simEntry("claude1", "--work-time", "100ms"), "cli: generic", "cli: claude\n    startup_prompt: \"\"", 1)
	ws := teamWorkspace(t, entry)
	startBackground(t, ws)
	waitStatus(t, ws, "ready", func(s control.StatusReply) bool { return stateOf(s, "claude1") == "ready" })
	if err := os.WriteFile(filepath.Join(ws, ".claude", "settings.local.json"), []byte(`{"disableAllHooks": true}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, ws, "the role held", func(s control.StatusReply) bool {
		a := strings.Join(s.Attention, "\n")
		return strings.Contains(a, ".claude/settings.local.json was created, not by shogun") && strings.Contains(a, "role claude1 is held")
	})
	if _, errOut, code := shogun(t, "send", "-w", ws, "--to", "claude1", "--title", "Work", "--body", "work"); code != 0 {
		t.Fatalf("send: %s", errOut)
	}
	out, _, _ := shogun(t, "tasks", "-w", ws, "--json")
	var tasks []control.Task
	if err := json.Unmarshal([]byte(out), &tasks); err != nil || len(tasks) != 1 || tasks[0].Status == "done" {
		t.Fatalf("tasks = %+v, %v; want one not done", tasks, err)
	}
	if out, errOut, code := shogun(t, "status", "-w", ws, "--dismiss"); code != 0 {
		t.Fatalf("status --dismiss: exit %d\n%s%s", code, out, errOut)
	}
	doneReport(t, ws, "claude1")
}

// A sandboxed role whose temp folder holds the workspace (a team tried out
// in /tmp) still makes temp files: that folder is granted entry by entry
// and takes no new file, so the role gets a temp folder of its own under
// runtime/tmp. Codex, whose state database keeps its journal in TMPDIR,
// never started there ("unable to open database file").
func TestSandboxedRoleMakesTempFilesWhenItsTempHoldsTheWorkspace(t *testing.T) {
	if _, err := sandbox.Available(); err != nil {
		t.Skipf("no sandbox here: %v", err)
	}
	ws := teamWorkspace(t, "")
	entry := strings.Replace(simEntry("boxed", "--work-time", "100ms", "--trespass", "write:$TMPDIR/scratch.txt"),
		"]}", fmt.Sprintf("], env: {TMPDIR: %q}}", filepath.Dir(ws)), 1) + "    sandbox: true\n"
	if err := os.WriteFile(filepath.Join(ws, "config", "roles.yaml"), []byte("roles:\n"+entry), 0o644); err != nil {
		t.Fatal(err)
	}
	startBackground(t, ws)
	waitStatus(t, ws, "ready", func(s control.StatusReply) bool { return stateOf(s, "boxed") == "ready" })
	if _, errOut, code := shogun(t, "send", "-w", ws, "--to", "boxed", "--title", "Try", "--body", "work"); code != 0 {
		t.Fatalf("send: %s", errOut)
	}
	if details := doneReport(t, ws, "boxed"); !strings.Contains(details, "write $TMPDIR/scratch.txt: ok") {
		t.Errorf("the sandboxed role could not make a temp file:\n%s", details)
	}
	if _, err := os.Stat(filepath.Join(ws, "runtime", "tmp", "boxed", "scratch.txt")); err != nil {
		t.Errorf("the temp file is not in the role's own temp folder: %v", err)
	}
}
