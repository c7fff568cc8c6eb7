//go:build !windows

package queue_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/store"
)

// codexRollout writes a Codex rollout into home as Codex 0.169 writes it:
// a session held in workdir whose last token_count event says the
// account's short window is used percent full.
func codexRollout(t *testing.T, home, workdir string, percent float64) {
	t.Helper()
	now := time.Now().UTC()
	dir := filepath.Join(home, "sessions", now.Format("2006"), now.Format("01"), now.Format("02"))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	ts := now.Format("2006-01-02T15:04:05.000Z")
	content := fmt.Sprintf(`{"timestamp":%q,"type":"session_meta","payload":{"id":"019ac0de-0000-7000-8000-000000000001","timestamp":%q,"cwd":%q,"originator":"codex_cli_rs","cli_version":"0.169.0"}}
{"timestamp":%q,"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":1000,"cached_input_tokens":0,"output_tokens":50,"reasoning_output_tokens":0,"total_tokens":1050},"last_token_usage":{"input_tokens":1000,"cached_input_tokens":0,"output_tokens":50,"reasoning_output_tokens":0,"total_tokens":1050},"model_context_window":258400},"rate_limits":{"limit_id":"codex","limit_name":null,"primary":{"used_percent":%g,"window_minutes":300,"resets_at":%d},"secondary":{"used_percent":12.0,"window_minutes":10080,"resets_at":%d},"credits":null,"plan_type":null}}}
`, ts, ts, workdir, ts, percent, now.Add(2*time.Hour).Unix(), now.Add(72*time.Hour).Unix())
	write(t, filepath.Join(dir, "rollout-"+now.Format("2006-01-02T15-04-05")+"-019ac0de-0000-7000-8000-000000000001.jsonl"), content)
}

// A Codex role whose account has used its window up to accounts_switch_at
// moves to its other account between tasks: the task it is working on
// when Codex records it is finished on the first account, and the next one
// waits for the move, which the history records with its reason, and is
// done on the second account, the conversation moved there.
func TestRoleSwitchesAccountBetweenTasksAtTheThreshold(t *testing.T) {
	dir := t.TempDir()
	rec := filepath.Join(dir, "rec.jsonl")
	homeA, homeB := filepath.Join(dir, "codex-a"), filepath.Join(dir, "codex-b")
	role := strings.Replace(sim("coder", rec, "--work-time", "1s"), "cli: generic", "cli: codex", 1)
	role = with(role, `between_tasks: ""`, `startup_prompt: ""`, "stall_after: 1h", "accounts_switch_at: 90",
		"accounts:", "  - {name: a, env: {CODEX_HOME: "+homeA+"}}", "  - {name: b, env: {CODEX_HOME: "+homeB+"}}")
	ws := testWorkspace(t, role)
	workdir, err := filepath.EvalSymlinks(ws)
	if err != nil {
		t.Fatal(err)
	}
	r := startTeam(t, ws)
	coder, ok := r.team.Supervisor().Role("coder")
	if !ok {
		t.Fatal("no role coder")
	}
	r.drop(t, "a.yaml", "to: coder\ntitle: First\nbody: do it\n")
	first := r.waitTasks(t, "the first task delivered", 30*time.Second, func(ts []store.Task) bool {
		return len(ts) == 1 && (ts[0].Status == store.StatusAssigned || ts[0].Status == store.StatusDelivered)
	})[0]
	// Codex records, mid-task, that account a is nearly spent.
	codexRollout(t, homeA, workdir, 95)
	// And its hook told its session, whose rollout that is.
	if err := coder.NoteSession("019ac0de-0000-7000-8000-000000000001"); err != nil {
		t.Fatal(err)
	}
	r.drop(t, "b.yaml", "to: coder\ntitle: Second\nbody: do it too\n")
	tasks := r.waitTasks(t, "both tasks done", 60*time.Second, func(ts []store.Task) bool {
		return len(ts) == 2 && countStatus(ts, store.StatusDone) == 2
	})
	if evs := r.events(t, "redeliver", first.ID); len(evs) != 0 {
		t.Errorf("the first task was delivered again (%+v): the role moved mid-task", evs)
	}
	if evs := r.events(t, "account", first.ID); len(evs) != 0 {
		t.Errorf("account events on the first task: %+v", evs)
	}
	var second store.Task
	for _, tk := range tasks {
		if tk.Title == "Second" {
			second = tk
		}
	}
	evs := r.events(t, "account", second.ID)
	if len(evs) != 1 || !strings.Contains(evs[0].Message, "account coder/a has used 95% of its usage window (accounts_switch_at 90%): moving to account coder/b") {
		t.Errorf("account events of the second task = %+v, want one saying why coder moved to coder/b", evs)
	}
	if got := coder.Account(); got != "coder/b" {
		t.Errorf("coder runs on %q after the second task, want coder/b", got)
	}
	// Its conversation went with it: the rollout, under the same name,
	// where `codex resume SESSION_ID` looks on account b.
	rollouts, _ := filepath.Glob(filepath.Join(homeA, "sessions", "*", "*", "*", "rollout-*.jsonl"))
	if len(rollouts) != 1 {
		t.Fatalf("rollouts of account a: %v", rollouts)
	}
	rel, _ := filepath.Rel(homeA, rollouts[0])
	if _, err := os.Stat(filepath.Join(homeB, rel)); err != nil {
		t.Errorf("the conversation was not moved to account b: %v", err)
	}
}
