package usage

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// tokenCount is a Codex 0.169 token_count line at at; limits is its
// rate_limits.
func tokenCount(at time.Time, limits string) string {
	return fmt.Sprintf(`{"timestamp":%q,"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":10,"output_tokens":1}},"rate_limits":%s}}`+"\n",
		at.UTC().Format("2006-01-02T15:04:05.000Z"), limits)
}

// Window reads the newest rate limits Codex recorded since the program
// started, in a rollout of the role's folder: the fuller of its two
// windows, with when it resets. Older records, other folders' rollouts,
// events without limits (the scripted model sends none) and other CLIs
// say nothing.
func TestCodexWindow(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, "sessions", "2026", "11", "28")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	start := time.Now().Add(-time.Minute)
	meta := func(cwd string) string {
		return fmt.Sprintf(`{"timestamp":"2026-11-28T11:32:50.000Z","type":"session_meta","payload":{"cwd":%q}}`+"\n", cwd)
	}
	none := `{"limit_id":"codex","primary":null,"secondary":null,"credits":null}`
	full := fmt.Sprintf(`{"limit_id":"codex","primary":{"used_percent":91.5,"window_minutes":300,"resets_at":%d},"secondary":{"used_percent":40.0,"window_minutes":10080}}`, start.Add(3*time.Hour).Unix())
	src := Source{Role: "coder", CLI: CLICodex, Home: home, Workdir: fixtureDir}
	write := func(name, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	write("rollout-1.jsonl", meta(fixtureDir)+tokenCount(start.Add(-time.Hour), full)+tokenCount(start.Add(time.Second), none))
	if w, ok, err := src.Window(start); err != nil || ok {
		t.Fatalf("Window with only an old record and one without limits = %+v, %v, %v; want nothing", w, ok, err)
	}
	write("rollout-2.jsonl", meta("/elsewhere")+tokenCount(start.Add(2*time.Second), full))
	if w, ok, err := src.Window(start); err != nil || ok {
		t.Fatalf("Window with another folder's rollout = %+v, %v, %v; want nothing", w, ok, err)
	}
	write("rollout-1.jsonl", meta(fixtureDir)+tokenCount(start.Add(time.Second), full)+tokenCount(start.Add(2*time.Second), none)+`{"truncated`)
	w, ok, err := src.Window(start)
	if err != nil || !ok || w.UsedPercent != 91.5 || !w.Resets.Equal(time.Unix(start.Add(3*time.Hour).Unix(), 0)) {
		t.Fatalf("Window = %+v, %v, %v; want 91.5%% resetting in 3 hours", w, ok, err)
	}
	if _, ok, _ := (Source{CLI: CLIClaude, Home: home, Workdir: fixtureDir}).Window(start); ok {
		t.Error("Window read something for Claude Code, which records nothing of its window")
	}
}

// What Codex 0.169 wrote against the scripted model answering with
// x-codex-primary-used-percent: 95 (fakemodel.Server.WindowUsed) is read.
func TestCodexWindowAsCodexWroteIt(t *testing.T) {
	src, _ := install(t, CLICodex, "codex-rollout-window.jsonl")
	w, ok, err := src.Window(time.Date(2026, 11, 28, 14, 0, 0, 0, time.UTC))
	if err != nil || !ok || w.UsedPercent != 95 || w.Resets.Unix() != 1795884945 {
		t.Fatalf("Window = %+v, %v, %v; want 95%% resetting at 1795884945", w, ok, err)
	}
}

// A Codex conversation to move is the newest rollout held in the role's
// folder, with its path under CODEX_HOME; another folder's newer rollout
// is not it.
func TestCodexConversation(t *testing.T) {
	home := t.TempDir()
	src := Source{Role: "coder", CLI: CLICodex, Home: home, Workdir: fixtureDir}
	if f, _, ok, err := src.Conversation(""); err != nil || !ok || f != "" {
		t.Fatalf("Conversation of an empty CODEX_HOME = %q, %v, %v; want none", f, ok, err)
	}
	write := func(rel, cwd string, mod time.Time) {
		t.Helper()
		p := filepath.Join(home, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(fmt.Sprintf(`{"type":"session_meta","payload":{"cwd":%q}}`+"\n", cwd)), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mod, mod); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now()
	mine := filepath.Join("sessions", "2026", "11", "27", "rollout-mine.jsonl")
	write(filepath.Join("sessions", "2026", "11", "26", "rollout-older.jsonl"), fixtureDir, now.Add(-2*time.Hour))
	write(mine, fixtureDir, now.Add(-time.Hour))
	write(filepath.Join("sessions", "2026", "11", "28", "rollout-other.jsonl"), "/elsewhere", now)
	f, rel, ok, err := src.Conversation("")
	if err != nil || !ok || rel != mine || f != filepath.Join(home, mine) {
		t.Fatalf("Conversation = %q, %q, %v, %v; want %s", f, rel, ok, err, mine)
	}
	// By a session id: that session's rollout, though another of the
	// same folder (another role's) is newer.
	const id = "019abc12-3456-7def-8901-23456789abcd"
	own := filepath.Join("sessions", "2026", "11", "27", "rollout-2026-11-27T10-00-00-"+id+".jsonl")
	write(own, fixtureDir, now.Add(-3*time.Hour))
	write(filepath.Join("sessions", "2026", "11", "28", "rollout-newer.jsonl"), fixtureDir, now)
	if f, rel, ok, err := src.Conversation(id); err != nil || !ok || rel != own || f != filepath.Join(home, own) {
		t.Fatalf("Conversation(%s) = %q, %q, %v, %v; want %s", id, f, rel, ok, err, own)
	}
	if f, _, ok, err := src.Conversation("019abc12-3456-7def-8901-000000000000"); err != nil || !ok || f != "" {
		t.Fatalf("Conversation of an unknown session = %q, %v, %v; want none", f, ok, err)
	}
	if _, _, ok, _ := (Source{CLI: CLIGemini, Home: home}).Conversation(""); ok {
		t.Error("Conversation is movable for Gemini CLI")
	}
}
