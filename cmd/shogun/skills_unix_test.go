//go:build !windows

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/creack/pty"

	"github.com/shogun-dev/shogun/config"
	"github.com/shogun-dev/shogun/skills"
	"github.com/shogun-dev/shogun/store"
)

// skillsWorkspace is a workspace whose history holds three kinds of
// repeated work, recorded the way the queue records it: fix-flaky-test (3
// tasks, one failed), plan-sprint (2) and write-release-notes (2).
func skillsWorkspace(t *testing.T) (ws, dbPath string) {
	t.Helper()
	ws = t.TempDir()
	if _, errOut, code := shogun(t, "init", ws); code != 0 {
		t.Fatalf("init: %s", errOut)
	}
	cfg, err := config.Load(ws, os.LookupEnv)
	if err != nil {
		t.Fatal(err)
	}
	dbPath = cfg.Settings.Data.SQLitePath
	st, err := store.Open(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	at := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	if err := st.SyncRoles([]store.RoleInfo{
		{ID: "karo", Name: "Karo", PromptPath: "roles/karo.md", Enabled: true},
		{ID: "ashigaru1", Name: "Ashigaru 1", PromptPath: "roles/ashigaru.md", Enabled: true},
		{ID: "ashigaru2", Name: "Ashigaru 2", PromptPath: "roles/ashigaru.md", Enabled: true},
	}, at); err != nil {
		t.Fatal(err)
	}
	run, err := st.StartRun(1, ws, at)
	if err != nil {
		t.Fatal(err)
	}
	tasks := []struct{ role, title, body, status, summary string }{
		{"ashigaru1", "Fix flaky test", "The checkout suite times out on CI runners under load.", "done", "Raised the timeout"},
		{"ashigaru1", "Fix flaky test 42", "Payment webhook retries race with the ledger writer.", "done", "Serialised the writer"},
		{"ashigaru1", "fix the flaky tests", "Inventory sync fixture leaks goroutines between cases.", "failed", "Could not reproduce"},
		{"ashigaru2", "Write release notes", "Summarise merged pull requests since the last tag.", "done", "Notes written"},
		{"ashigaru2", "Write release notes", "Cover the breaking configuration keys of release two.", "done", "Notes written"},
		{"karo", "Plan the sprint", "Retake the dashboard images at their new size.", "done", "Planned"},
		{"karo", "Plan the sprint", "Raise the toolchain line and rebuild the container image.", "done", "Planned"},
	}
	for i, tk := range tasks {
		at = at.Add(time.Minute)
		acc, err := st.AcceptCommands([]store.CommandRecord{{ID: fmt.Sprintf("c%d", i), ClaimName: fmt.Sprintf("c%d.yaml", i),
			File: "c.yaml", To: tk.role, From: "karo", Title: tk.title, Body: tk.body, RunID: run.ID, ReceivedAt: at}})
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
		if _, _, err := st.AcceptReport(store.ReportRecord{ClaimName: "r" + id, File: "r.yaml", TaskID: id, Status: tk.status,
			Summary: tk.summary, ReceivedAt: at.Add(time.Second)}); err != nil {
			t.Fatal(err)
		}
	}
	return ws, dbPath
}

// skillStatuses reads the candidates' statuses straight from the history.
func skillStatuses(t *testing.T, dbPath string) map[string]string {
	t.Helper()
	st, err := store.Open(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cs, err := st.SkillCandidates("")
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, c := range cs {
		m[c.Name] = c.Status
	}
	return m
}

func TestSkillsScanListAndDecideByName(t *testing.T) {
	ws, db := skillsWorkspace(t)
	out, errOut, code := shogun(t, "skills", "scan", "--workspace", ws)
	if code != 0 {
		t.Fatalf("scan exit %d: %s", code, errOut)
	}
	for _, want := range []string{"Scanned 7 finished tasks", "3 candidates (3 new", "fix-flaky-test", "plan-sprint",
		"write-release-notes", "3 pending: review them with `shogun skills review --workspace"} {
		if !strings.Contains(out, want) {
			t.Errorf("scan output lacks %q:\n%s", want, out)
		}
	}
	if errOut != "" {
		t.Errorf("scan wrote to stderr without a terminal: %q", errOut)
	}

	out, _, code = shogun(t, "skills", "scan", "--workspace", ws, "--json")
	var res struct {
		Tasks      int `json:"tasks"`
		Unchanged  int `json:"unchanged"`
		Candidates []struct {
			Name   string `json:"name"`
			Change string `json:"change"`
		} `json:"candidates"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != 0 {
		t.Fatalf("scan --json (exit %d): %v\n%s", code, err, out)
	}
	if res.Tasks != 7 || res.Unchanged != 3 || len(res.Candidates) != 3 {
		t.Errorf("second scan: %+v", res)
	}

	out, _, _ = shogun(t, "skills", "list", "--workspace", ws, "--json")
	var list []struct {
		Name, Status  string
		Tasks         int
		SourceTaskIDs []string `json:"source_task_ids"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("list --json: %v\n%s", err, out)
	}
	got := map[string]int{}
	for _, e := range list {
		got[e.Name] = e.Tasks
		if e.Status != "pending" || len(e.SourceTaskIDs) != e.Tasks {
			t.Errorf("list entry %+v", e)
		}
	}
	if want := map[string]int{"fix-flaky-test": 3, "plan-sprint": 2, "write-release-notes": 2}; !reflect.DeepEqual(got, want) {
		t.Errorf("list: %v, want %v", got, want)
	}
	out, _, _ = shogun(t, "skills", "list", "--workspace", ws)
	if !strings.Contains(out, "NAME") || !regexp.MustCompile(`fix-flaky-test +pending +3 `).MatchString(out) {
		t.Errorf("list table:\n%s", out)
	}

	if _, errOut, code := shogun(t, "skills", "review", "--workspace", ws, "--approve", "fix-flaky-test,nope"); code == 0 || !strings.Contains(errOut, "unknown skill candidate") {
		t.Errorf("approving an unknown name: exit %d, %s", code, errOut)
	}
	out, errOut, code = shogun(t, "skills", "review", "--workspace", ws, "--approve", "fix-flaky-test", "--approve", "plan-sprint", "--reject", "write-release-notes")
	if code != 0 {
		t.Fatalf("review by name: exit %d: %s", code, errOut)
	}
	want := map[string]string{"fix-flaky-test": "approved", "plan-sprint": "approved", "write-release-notes": "rejected"}
	if got := skillStatuses(t, db); !reflect.DeepEqual(got, want) {
		t.Errorf("statuses %v, want %v", got, want)
	}
	if out, _, _ := shogun(t, "skills", "list", "--workspace", ws, "--status", "rejected"); !strings.Contains(out, "write-release-notes") || strings.Contains(out, "plan-sprint") {
		t.Errorf("list --status rejected:\n%s", out)
	}
	// "all", as the console's tab says it, is every candidate.
	if out, errOut, code := shogun(t, "skills", "list", "--workspace", ws, "--status", "all"); code != 0 || !strings.Contains(out, "write-release-notes") || !strings.Contains(out, "plan-sprint") {
		t.Errorf("list --status all: exit %d:\n%s%s", code, out, errOut)
	}
	if _, errOut, code := shogun(t, "skills", "list", "--workspace", ws, "--status", "maybe"); code == 0 || !strings.Contains(errOut, "pending, approved, rejected, exported") {
		t.Errorf("bad --status: exit %d %s", code, errOut)
	}
}

func TestSkillsNeedAHistory(t *testing.T) {
	ws := t.TempDir()
	shogun(t, "init", ws)
	_, errOut, code := shogun(t, "skills", "scan", "--workspace", ws)
	if code == 0 || !strings.Contains(errOut, "no history yet") {
		t.Errorf("scan without history: exit %d, %s", code, errOut)
	}
}

func TestSkillsReviewRefusesWithoutATerminal(t *testing.T) {
	ws, db := skillsWorkspace(t)
	shogun(t, "skills", "scan", "--workspace", ws)
	_, errOut, code := shogun(t, "skills", "review", "--workspace", ws) // stdin is /dev/null
	if code == 0 {
		t.Fatal("review without a terminal succeeded")
	}
	for _, want := range []string{"stdin is not", "terminal", "shogun skills review --approve NAME... --reject NAME..."} {
		if !strings.Contains(errOut, want) {
			t.Errorf("error lacks %q: %s", want, errOut)
		}
	}
	if n := strings.Count(strings.TrimSpace(errOut), "\n"); n != 0 {
		t.Errorf("error is %d lines, want one: %s", n+1, errOut)
	}
	for n, s := range skillStatuses(t, db) {
		if s != "pending" {
			t.Errorf("%s became %s", n, s)
		}
	}
}

// ptyReview is `shogun skills review` running in a real pseudo-terminal.
type ptyReview struct {
	t    *testing.T
	tty  *os.File
	cmd  *exec.Cmd
	mu   sync.Mutex
	out  []byte
	done chan struct{}
}

func startReview(t *testing.T, ws string, cols uint16, env ...string) *ptyReview {
	t.Helper()
	// A candidate taller than the terminal goes through the pager: cat
	// here, unless the test sets one.
	return startReviewSized(t, ws, cols, 40, append([]string{"PAGER=cat"}, env...)...)
}

func startReviewSized(t *testing.T, ws string, cols, rows uint16, env ...string) *ptyReview {
	t.Helper()
	r := &ptyReview{t: t, cmd: exec.Command(bin, "skills", "review", "--workspace", ws), done: make(chan struct{})}
	r.cmd.Env = append(append(os.Environ(), "NO_COLOR=1", "TERM=xterm"), env...)
	tty, err := pty.StartWithSize(r.cmd, &pty.Winsize{Cols: cols, Rows: rows})
	if err != nil {
		t.Fatal(err)
	}
	r.tty = tty
	go func() {
		defer close(r.done)
		buf := make([]byte, 4096)
		for {
			n, err := tty.Read(buf)
			r.mu.Lock()
			r.out = append(r.out, buf[:n]...)
			r.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		_ = r.cmd.Process.Kill()
		_ = r.cmd.Wait()
		tty.Close()
	})
	return r
}

func (r *ptyReview) screen() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return string(r.out)
}

// waitFor waits until the output holds want n times.
func (r *ptyReview) waitFor(want string, n int) {
	r.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for strings.Count(r.screen(), want) < n {
		if time.Now().After(deadline) {
			r.t.Fatalf("no %d× %q on the screen:\n%s", n, want, r.screen())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// press types a key once the review has asked for the n-th time.
func (r *ptyReview) press(key string, prompt string, n int) {
	r.t.Helper()
	r.waitFor(prompt, n)
	if _, err := r.tty.Write([]byte(key)); err != nil {
		r.t.Fatal(err)
	}
}

// finish waits for the review to exit and returns its exit code.
func (r *ptyReview) finish() int {
	r.t.Helper()
	select {
	case <-r.done:
	case <-time.After(10 * time.Second):
		r.t.Fatalf("review did not end:\n%s", r.screen())
	}
	err := r.cmd.Wait()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		r.t.Fatal(err)
	}
	return 0
}

const prompt = "[a]pprove [r]eject [e]dit [s]kip [q]uit > "

// fakeEditor writes a script that replaces the file it is given.
func fakeEditor(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "editor.sh")
	script := "#!/bin/sh\ncat > \"$1\" <<'EOF'\n" + content + "EOF\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestSkillsReviewInATerminal(t *testing.T) {
	edited := "---\nname: flaky-tests\ndescription: Fixes flaky tests. Use when CI fails now and then.\n---\n\n# Flaky tests\n\nRun the test 100 times with -count.\n"
	cases := []struct {
		name   string
		keys   []string // one per prompt
		want   map[string]string
		output []string
	}{
		{
			name: "edit then approve, reject, skip",
			keys: []string{"e", "a", "r", "s"},
			want: map[string]string{"flaky-tests": "approved", "plan-sprint": "rejected", "write-release-notes": "pending"},
			output: []string{"Skill candidate 1 of 3", "fix-flaky-test", "source tasks", "report: Could not reproduce",
				"edit kept", "flaky-tests", "approved flaky-tests", "rejected plan-sprint", "skipped write-release-notes",
				"Review done: 1 approved, 1 rejected, 1 skipped, 1 edited.", "Next: shogun skills export"},
		},
		{
			name:   "quit",
			keys:   []string{"s", "q"},
			want:   map[string]string{"fix-flaky-test": "pending", "plan-sprint": "pending", "write-release-notes": "pending"},
			output: []string{"skipped fix-flaky-test", "Review done: 0 approved, 0 rejected, 1 skipped, 2 not reviewed (quit)."},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ws, db := skillsWorkspace(t)
			shogun(t, "skills", "scan", "--workspace", ws)
			r := startReview(t, ws, 100, "EDITOR="+fakeEditor(t, edited))
			for i, k := range tc.keys {
				r.press(k, prompt, i+1)
			}
			if code := r.finish(); code != 0 {
				t.Fatalf("review exit %d:\n%s", code, r.screen())
			}
			screen := r.screen()
			for _, want := range tc.output {
				if !strings.Contains(screen, want) {
					t.Errorf("screen lacks %q:\n%s", want, screen)
				}
			}
			if got := skillStatuses(t, db); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("statuses %v, want %v", got, tc.want)
			}
		})
	}
}

// A candidate taller than the terminal (45 rows) goes through $PAGER, so
// that its header does not scroll away; the header is printed again above
// the prompt, and v shows the candidate again. In a terminal tall enough,
// no pager runs.
func TestSkillsReviewPagesALongCandidate(t *testing.T) {
	ws, _ := skillsWorkspace(t)
	shogun(t, "skills", "scan", "--workspace", ws)
	paged := filepath.Join(t.TempDir(), "paged")
	pager := "PAGER=cat >> " + paged + "; echo '<end of page>' >> " + paged
	r := startReviewSized(t, ws, 100, 45, pager)
	r.waitFor("shown in the pager; v shows it again", 1)
	r.press("v", prompt, 1)
	r.waitFor("shown in the pager; v shows it again", 2)
	r.press("q", prompt, 2)
	if code := r.finish(); code != 0 {
		t.Fatalf("review exit %d:\n%s", code, r.screen())
	}
	b, err := os.ReadFile(paged)
	if err != nil {
		t.Fatalf("no pager ran: %v\n%s", err, r.screen())
	}
	pages := strings.Split(strings.TrimSuffix(string(b), "<end of page>\n"), "<end of page>\n")
	if len(pages) != 2 {
		t.Fatalf("%d pages, want the candidate twice:\n%s", len(pages), b)
	}
	for _, want := range []string{"Skill candidate 1 of 3", "fix-flaky-test", "source tasks", "body", "## Source tasks"} {
		if !strings.Contains(pages[0], want) {
			t.Errorf("the page lacks %q:\n%s", want, pages[0])
		}
	}
	if n := strings.Count(pages[0], "\n"); n <= 43 {
		t.Errorf("a page of %d lines was paged in a 45-row terminal", n)
	}
	// After the pager: the header, then the prompt, on the screen.
	screen := r.screen()
	after := screen[strings.LastIndex(screen, "shown in the pager"):]
	before := screen[:strings.LastIndex(screen, "shown in the pager")]
	if !strings.Contains(before[max(0, len(before)-300):], "Skill candidate 1 of 3") || !strings.Contains(after, prompt) {
		t.Errorf("no header above the prompt after the pager:\n%s", screen)
	}

	// Tall enough: printed, no pager.
	if err := os.Remove(paged); err != nil {
		t.Fatal(err)
	}
	r = startReviewSized(t, ws, 100, 200, pager)
	r.press("q", prompt, 1)
	if code := r.finish(); code != 0 {
		t.Fatalf("review exit %d:\n%s", code, r.screen())
	}
	if _, err := os.Stat(paged); err == nil {
		t.Error("a pager ran in a terminal tall enough for the candidate")
	}
	if !strings.Contains(r.screen(), "## Source tasks") {
		t.Errorf("the candidate was not printed:\n%s", r.screen())
	}
}

func TestSkillsReviewNarrowTerminalWithoutColour(t *testing.T) {
	ws, _ := skillsWorkspace(t)
	shogun(t, "skills", "scan", "--workspace", ws)
	const cols = 32
	r := startReview(t, ws, cols)
	r.press("s", "a/r/e/s/q > ", 1)
	r.press("s", "a/r/e/s/q > ", 2)
	r.press("q", "a/r/e/s/q > ", 3)
	if code := r.finish(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	screen := r.screen()
	if strings.Contains(screen, "\x1b[") {
		t.Errorf("colour or cursor codes with NO_COLOR:\n%q", screen)
	}
	for _, l := range strings.Split(screen, "\r\n") {
		if n := utf8.RuneCountInString(l); n > cols {
			t.Errorf("line of %d characters in a %d-column terminal: %q", n, cols, l)
		}
	}
	if !strings.Contains(screen, "Review done: 0 approved, 0 rejected, 2 skipped, 1 not reviewed (quit).") &&
		!strings.Contains(strings.ReplaceAll(screen, "\r\n", " "), "2 skipped, 1 not reviewed (quit).") {
		t.Errorf("no summary:\n%s", screen)
	}
}

func TestSkillsExport(t *testing.T) {
	ws, db := skillsWorkspace(t)
	shogun(t, "skills", "scan", "--workspace", ws)
	out, _, _ := shogun(t, "skills", "export", "--workspace", ws)
	if !strings.Contains(out, "No approved skills to export") {
		t.Errorf("export with nothing approved:\n%s", out)
	}
	shogun(t, "skills", "review", "--workspace", ws, "--approve", "fix-flaky-test,plan-sprint")

	out, errOut, code := shogun(t, "skills", "export", "--workspace", ws)
	if code != 0 {
		t.Fatalf("export exit %d: %s", code, errOut)
	}
	files := []string{"skills/codex/fix-flaky-test.md", "skills/copilot/fix-flaky-test.md", "skills/codex/plan-sprint.md", "skills/copilot/plan-sprint.md"}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(ws, f))
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimSuffix(filepath.Base(f), ".md")
		if !strings.HasPrefix(string(b), "---\nname: "+name+"\ndescription: ") || !strings.Contains(string(b), "\n---\n\n# ") {
			t.Errorf("%s:\n%s", f, b)
		}
		if !strings.Contains(out, "wrote     "+filepath.FromSlash(f)) {
			t.Errorf("export output does not name %s:\n%s", f, out)
		}
	}
	if !strings.Contains(out, "Exported 2 skill(s): 4 file(s) written, 0 already up to date.") {
		t.Errorf("export summary:\n%s", out)
	}
	if got := skillStatuses(t, db); got["fix-flaky-test"] != "exported" || got["write-release-notes"] != "pending" {
		t.Errorf("statuses after export: %v", got)
	}

	out, _, code = shogun(t, "skills", "export", "--workspace", ws)
	if code != 0 || !strings.Contains(out, "0 file(s) written, 4 already up to date.") {
		t.Errorf("second export (exit %d):\n%s", code, out)
	}

	out, errOut, code = shogun(t, "skills", "export", "--workspace", ws, "--target", "claude", "--layout", "dir")
	if code != 0 {
		t.Fatalf("dir export: %s", errOut)
	}
	if _, err := os.Stat(filepath.Join(ws, ".claude", "skills", "plan-sprint", "SKILL.md")); err != nil {
		t.Errorf("dir layout: %v\n%s", err, out)
	}

	clash := filepath.Join(ws, "skills", "codex", "plan-sprint.md")
	mine := []byte("---\nname: plan-sprint\ndescription: mine\n---\n\nMine.\n")
	os.WriteFile(clash, mine, 0o644)
	_, errOut, code = shogun(t, "skills", "export", "--workspace", ws)
	if code == 0 || !strings.Contains(errOut, clash+" exists and differs from skill plan-sprint") {
		t.Errorf("clash: exit %d, %s", code, errOut)
	}
	if b, _ := os.ReadFile(clash); string(b) != string(mine) {
		t.Error("export overwrote a different file")
	}
}

func TestSkillsScanProgressOnlyOnATerminal(t *testing.T) {
	ws, db := skillsWorkspace(t)
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	if err := skills.GenerateHistory(st, 3000, 1); err != nil {
		t.Fatal(err)
	}
	st.Close()

	run := func(global ...string) string {
		t.Helper()
		cmd := exec.Command(bin, append(global, "skills", "scan", "--workspace", ws)...)
		cmd.Env = append(os.Environ(), "NO_COLOR=1")
		tty, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: 100, Rows: 30})
		if err != nil {
			t.Fatal(err)
		}
		defer tty.Close()
		var out strings.Builder
		buf := make([]byte, 4096)
		for {
			n, err := tty.Read(buf)
			out.Write(buf[:n])
			if err != nil {
				break
			}
		}
		if err := cmd.Wait(); err != nil {
			t.Fatalf("scan %v: %v\n%s", global, err, out.String())
		}
		return out.String()
	}
	if out := run(); !strings.Contains(out, "skills scan: comparing [") || !strings.Contains(out, "100%") {
		t.Errorf("no progress bar on a terminal:\n%q", out)
	}
	if out := run("--quiet"); strings.Contains(out, "skills scan:") {
		t.Errorf("progress bar with --quiet:\n%q", out)
	}
	if _, errOut, _ := shogun(t, "skills", "scan", "--workspace", ws); errOut != "" {
		t.Errorf("progress without a terminal: %q", errOut)
	}
}
