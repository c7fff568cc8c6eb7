package queue

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/shogun-dev/shogun/config"
	"github.com/shogun-dev/shogun/store"
	"github.com/shogun-dev/shogun/workspace"
)

// The queue's intake on Windows: ReadDirectoryChangesW through fsnotify,
// renames into the folder, files written in place, CRLF files from
// Notepad, and a file the writer still has open. No role runs (as with
// `shogun start --roles` naming others), so commands are recorded and wait.

type intakeRun struct {
	ws    string
	st    *store.Store
	runID string
}

func startIntake(t *testing.T) *intakeRun {
	t.Helper()
	return startIntakeLogging(t, zerolog.NewTestWriter(t))
}

func startIntakeLogging(t *testing.T, log io.Writer) *intakeRun {
	t.Helper()
	ws := filepath.Join(t.TempDir(), "team ワーク")
	for rel, content := range map[string]string{
		"config/roles.yaml": "roles:\n  - id: ashigaru1\n    prompt_path: roles/a.md\n    command: {exec: codex}\n",
		"roles/a.md":        "# a\n",
	} {
		p := filepath.Join(ws, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := config.Load(ws, func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(cfg.Settings.Data.SQLitePath)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	run, err := st.StartRun(os.Getpid(), ws, now)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SyncRoles([]store.RoleInfo{{ID: "ashigaru1", PromptPath: "roles/a.md", Enabled: true}}, now); err != nil {
		t.Fatal(err)
	}
	q, err := New(Options{Config: cfg, Store: st, RunID: run.ID, Logger: zerolog.New(log).Level(zerolog.WarnLevel)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- q.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("queue run: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("the queue did not stop")
		}
		st.Close()
	})
	return &intakeRun{ws: ws, st: st, runID: run.ID}
}

func (r *intakeRun) path(rel string) string {
	return filepath.Join(r.ws, filepath.FromSlash(rel))
}

// waitQueued waits until the titles are all queued tasks.
func (r *intakeRun) waitQueued(t *testing.T, titles ...string) []store.Task {
	t.Helper()
	var tasks []store.Task
	deadline := time.Now().Add(20 * time.Second)
	for {
		var err error
		if tasks, err = r.st.Tasks(store.TaskFilter{}); err != nil {
			t.Fatal(err)
		}
		have := map[string]bool{}
		for _, tk := range tasks {
			have[tk.Title] = tk.Status == store.StatusQueued
		}
		missing := 0
		for _, title := range titles {
			if !have[title] {
				missing++
			}
		}
		if missing == 0 {
			return tasks
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for tasks %q; have %+v", titles, tasks)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestIntakeTakesCommandsDroppedOnWindows(t *testing.T) {
	r := startIntake(t)
	cmds := r.path(workspace.CommandsDir)

	// A careful writer: a temporary name, then a rename into place.
	tmp := filepath.Join(cmds, ".renamed.tmp")
	if err := os.WriteFile(tmp, []byte("to: ashigaru1\ntitle: Renamed into place\nbody: b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(cmds, "renamed.yaml")); err != nil {
		t.Fatal(err)
	}
	// Notepad: CRLF, written in place.
	if err := os.WriteFile(filepath.Join(cmds, "notepad.yml"), []byte("to: ashigaru1\r\ntitle: From Notepad\r\nbody: |\r\n  line one\r\n  line two\r\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A writer that keeps the file open a while after its first bytes:
	// Windows refuses to claim (rename) it until it is closed.
	slow, err := os.Create(filepath.Join(cmds, "slow writer.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	slow.WriteString("to: ashigaru1\n")
	time.Sleep(300 * time.Millisecond)
	slow.WriteString("title: Written slowly\nbody: b\n")
	slow.Close()
	// Send, as `shogun send` does.
	if _, _, err := Send(r.ws, Command{To: "ashigaru1", Title: "Sent", Body: "b"}, time.Now()); err != nil {
		t.Fatal(err)
	}

	tasks := r.waitQueued(t, "Renamed into place", "From Notepad", "Written slowly", "Sent")
	if len(tasks) != 4 {
		t.Errorf("%d tasks, want 4: %+v", len(tasks), tasks)
	}
	for _, tk := range tasks {
		if tk.Title == "From Notepad" && tk.Body != "line one\nline two\n" {
			t.Errorf("CRLF body = %q", tk.Body)
		}
	}
	waitEmpty(t, cmds)
}

func TestIntakeRejectsABadCommandWithItsReason(t *testing.T) {
	r := startIntake(t)
	if err := os.WriteFile(r.path(workspace.CommandsDir+"/bad.yaml"), []byte("to: ashigaru9\r\ntitle: t\r\nbody: b\r\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	errFile := r.path(workspace.FailedDir + "/bad.yaml.error.yaml")
	deadline := time.Now().Add(20 * time.Second)
	for {
		if b, err := os.ReadFile(errFile); err == nil {
			if !strings.Contains(string(b), `unknown role "ashigaru9"`) {
				t.Errorf("error file:\n%s", b)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the bad command was not moved to failed/ with its reason")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The reason is written first, the file moved next (reject): it
	// follows within moments.
	for {
		_, err := os.Stat(r.path(workspace.FailedDir + "/bad.yaml"))
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the rejected file itself: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitEmpty waits until only hidden entries (.claimed) are left in dir.
func waitEmpty(t *testing.T, dir string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var left []string
		for _, e := range entries {
			if !strings.HasPrefix(e.Name(), ".") {
				left = append(left, e.Name())
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("files left in %s: %v", dir, left)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A writer that keeps a command file open long after its last byte (a
// settle time passes while it is open) is waited for: Windows refuses to
// claim an open file, which is no problem worth a warning, and the file is
// taken as soon as it is closed.
func TestIntakeWaitsQuietlyForAWriterHoldingTheFile(t *testing.T) {
	log := &lockedLog{}
	r := startIntakeLogging(t, log)
	f, err := os.Create(r.path(workspace.CommandsDir + "/held.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("to: ashigaru1\ntitle: Held open\nbody: b\n"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // many settle times
	f.Close()
	r.waitQueued(t, "Held open")
	if strings.Contains(log.String(), "claim file") {
		t.Errorf("warnings about a file its writer still had open:\n%s", log.String())
	}
}

// lockedLog is a log the test reads while the queue writes it.
type lockedLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}
