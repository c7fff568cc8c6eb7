//go:build !windows

package team

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/shoguntest"
	"github.com/shogun-dev/shogun/store"
	"github.com/shogun-dev/shogun/usage"
	"github.com/shogun-dev/shogun/workspace"
)

// claudeReply is an assistant line of a Claude Code transcript, as 2.1.197
// writes it (shortened), in folder cwd.
func claudeReply(id string, at time.Time, cwd string, in, out int64) string {
	return fmt.Sprintf(`{"parentUuid":"p","isSidechain":false,"message":{"content":[{"text":"ok","type":"text"}],"id":%q,`+
		`"model":"claude-opus-4-5","role":"assistant","stop_reason":"end_turn","stop_sequence":null,"type":"message",`+
		`"usage":{"input_tokens":%d,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":%d,`+
		`"service_tier":"standard"}},"requestId":"req_%s","type":"assistant","uuid":"u-%s","timestamp":%q,`+
		`"userType":"external","cwd":%q,"sessionId":"s1","version":"2.1.197"}`+"\n",
		id, in, out, id, id, at.UTC().Format("2006-01-02T15:04:05.000Z"), cwd)
}

// The team reads a Claude role's transcript in the role's own
// CLAUDE_CONFIG_DIR: a reply while the role worked on a task is the
// task's, one before it the role's alone, and the user's own conversation
// from before the team started counts for nothing.
func TestTheTeamCountsARolesTokensByTask(t *testing.T) {
	claudeHome := t.TempDir()
	roles := fmt.Sprintf(`roles:
  - id: coder
    prompt_path: roles/ashigaru.md
    command: {exec: "${SHOGUN_EXE}", args: ["agent-sim", "--work-time", "300ms"], env: {CLAUDE_CONFIG_DIR: %q}}
    cli: claude
    ready_pattern: "› "
    submit_delay: 50ms
`, claudeHome)
	tm := runTeam(t, roles, "keep_awake: false\n", func(o *Options) { o.UsageEvery = 50 * time.Millisecond })
	ws := tm.Config().Workspace
	cwd, err := filepath.EvalSymlinks(ws)
	if err != nil {
		t.Fatal(err)
	}
	project := filepath.Join(claudeHome, "projects", regexp.MustCompile(`[^a-zA-Z0-9]`).ReplaceAllString(cwd, "-"))
	if err := os.MkdirAll(project, 0o700); err != nil {
		t.Fatal(err)
	}
	transcript := filepath.Join(project, "s1.jsonl")
	started := time.Now()
	// Yesterday's conversation of the person who owns this home, and the
	// start-up reply.
	if err := os.WriteFile(transcript, []byte(claudeReply("msg_old", started.Add(-24*time.Hour), cwd, 999, 999)+
		claudeReply("msg_hello", started, cwd, 3, 4)), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := workspace.New(ws).Commands()
	if err := os.WriteFile(filepath.Join(dir, ".a.yaml"), []byte("to: coder\ntitle: Tidy up\nbody: tidy\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(dir, ".a.yaml"), filepath.Join(dir, "a.yaml")); err != nil {
		t.Fatal(err)
	}
	var task store.Task
	shoguntest.WaitFor(t, "the task done", 40*time.Second, func() bool {
		ts, err := tm.Store().Tasks(store.TaskFilter{Role: "coder"})
		if err != nil || len(ts) != 1 || ts[0].Status != store.StatusDone {
			return false
		}
		task = ts[0]
		return true
	})
	// The reply the CLI wrote while it worked, appended as Claude Code
	// does, streamed on two lines.
	during := task.DeliveredAt.Add(task.FinishedAt.Sub(task.DeliveredAt) / 2)
	f, err := os.OpenFile(transcript, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.WriteString(claudeReply("msg_work", during, cwd, 100, 5) + claudeReply("msg_work", during, cwd, 100, 50))
	if err := errors.Join(err, f.Close()); err != nil {
		t.Fatal(err)
	}
	shoguntest.WaitFor(t, "the task's tokens", 20*time.Second, func() bool {
		got, err := tm.Store().TaskTokens([]string{task.ID})
		return err == nil && got[task.ID].Output == 50
	})
	got, _ := tm.Store().TaskTokens([]string{task.ID})
	if want := (usage.Tokens{Input: 100, Output: 50}); got[task.ID] != want {
		t.Errorf("the task's tokens = %+v, want %+v", got[task.ID], want)
	}
	sums, err := tm.Store().Usage(store.UsageFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var all usage.Tokens
	var who []string
	for _, s := range sums {
		all = all.Add(s.Tokens)
		who = append(who, s.Role)
	}
	if want := (usage.Tokens{Input: 103, Output: 54}); all != want {
		t.Errorf("all tokens = %+v, want %+v (yesterday's left out, the start-up reply counted)", all, want)
	}
	if strings.Join(who, ",") != "coder,coder" {
		t.Errorf("roles = %v", who)
	}
}

// codexRollout is a Codex 0.169 rollout (shortened) of a session in cwd
// with one response of in and out tokens at at.
func codexRollout(cwd string, at time.Time, in, out int64) string {
	ts := at.UTC().Format("2006-01-02T15:04:05.000Z")
	return fmt.Sprintf(`{"timestamp":%q,"ordinal":0,"type":"session_meta","payload":{"session_id":"s","id":"s","cwd":%q,"originator":"codex-tui","cli_version":"0.169.0","model_provider":"fakemodel"}}`+"\n"+
		`{"timestamp":%q,"ordinal":5,"type":"turn_context","payload":{"turn_id":"t1","cwd":%q,"model":"gpt-5.1-codex"}}`+"\n"+
		`{"timestamp":%q,"ordinal":11,"type":"token_usage_record","payload":{"thread_id":"s","turn_id":"t1","response_id":"resp_1","usage":{"input_tokens":%d,"cached_input_tokens":0,"cache_write_input_tokens":0,"output_tokens":%d,"reasoning_output_tokens":0,"total_tokens":%d}}}`+"\n",
		ts, cwd, ts, cwd, ts, in, out, in+out)
}

// Two Codex roles share a CODEX_HOME, each working in its own folder: each
// role counts its own sessions only, though both see every rollout.
func TestRolesSharingACLIHomeCountTheirOwnSessions(t *testing.T) {
	codexHome := t.TempDir()
	role := func(id, cwd string) string {
		return fmt.Sprintf(`  - id: %s
    prompt_path: roles/ashigaru.md
    command: {exec: "${SHOGUN_EXE}", args: ["agent-sim"], cwd: %s, env: {CODEX_HOME: %q}}
    cli: codex
    ready_pattern: "› "
`, id, cwd, codexHome)
	}
	ws := t.TempDir()
	if err := os.Mkdir(filepath.Join(ws, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	tm := runTeamIn(t, ws, "roles:\n"+role("first", ".")+role("second", "sub"), "keep_awake: false\n",
		func(o *Options) { o.UsageEvery = 50 * time.Millisecond })
	real, err := filepath.EvalSymlinks(ws)
	if err != nil {
		t.Fatal(err)
	}
	day := filepath.Join(codexHome, "sessions", "2026", "11", "28")
	if err := os.MkdirAll(day, 0o700); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for name, body := range map[string]string{
		"rollout-a.jsonl": codexRollout(real, now, 1000, 10),
		"rollout-b.jsonl": codexRollout(filepath.Join(real, "sub"), now, 2000, 20),
	} {
		if err := os.WriteFile(filepath.Join(day, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	byRole := func() map[string]usage.Tokens {
		sums, err := tm.Store().Usage(store.UsageFilter{})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]usage.Tokens{}
		for _, s := range sums {
			out[s.Role] = out[s.Role].Add(s.Tokens)
		}
		return out
	}
	shoguntest.WaitFor(t, "both roles' tokens", 20*time.Second, func() bool { return len(byRole()) == 2 })
	got := byRole()
	if got["first"] != (usage.Tokens{Input: 1000, Output: 10}) || got["second"] != (usage.Tokens{Input: 2000, Output: 20}) {
		t.Errorf("tokens by role = %+v, want first 1000/10 and second 2000/20", got)
	}
}
