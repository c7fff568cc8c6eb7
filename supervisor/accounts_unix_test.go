//go:build !windows

package supervisor

import (
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// memHistory is an AccountHistory in memory: what the team's history
// keeps, across two supervisors of a test.
type memHistory struct {
	mu     sync.Mutex
	limits map[string]AccountLimit
}

func (h *memHistory) AccountLimits() ([]AccountLimit, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []AccountLimit
	for _, l := range h.limits {
		out = append(out, l)
	}
	return out, nil
}

func (h *memHistory) ConversationCopied(role, path string, size int64) error { return nil }

func (h *memHistory) RecordAccountLimit(l AccountLimit) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.limits[l.Account] = l
	return nil
}

// A role whose account meets a usage limit moves to its other account:
// its program is started again with its resume arguments, and what is
// typed next reaches it. When that account meets a limit too, no account
// is free and the role stays limited. A supervisor started afterwards
// does not start the role on an account still limited.
func TestLimitedAccountMovesTheRoleToTheNext(t *testing.T) {
	dir := t.TempDir()
	first, resumed := filepath.Join(dir, "first.jsonl"), filepath.Join(dir, "resumed.jsonl")
	extra := `    limit_pattern: "usage limit · resets (?P<reset>[0-9:]+)"
    resume_args: ["--record", "` + resumed + `"]
    accounts:
      - {name: a, env: {SIM_ACCOUNT: a}}
      - {name: b, env: {SIM_ACCOUNT: b}}
`
	ws := testWorkspace(t, "roles:"+simRole("agent", extra, "--record", first, "--limit-screen", "--limit-reset", "1h"))
	hist := &memHistory{limits: map[string]AccountLimit{}}
	r := start(t, ws, func(o *Options) { o.AccountHistory = hist })
	role := r.role(t, "agent")
	// The startup prompt spends account a's quota.
	r.waitEvent(t, "the move to account b", 20*time.Second, func(e Event) bool {
		return e.Role == "agent" && e.State == Limited && strings.Contains(e.Message, "usage limit on account agent/a") &&
			strings.Contains(e.Message, "moving to account agent/b")
	})
	r.waitEvent(t, "the program started again, resuming", 20*time.Second, func(e Event) bool {
		return e.Role == "agent" && e.State == Waking && strings.Contains(e.Message, "moving to account agent/b: resuming its conversation")
	})
	r.waitState(t, "agent", Ready, 20*time.Second)
	if got := role.Account(); got != "agent/b" {
		t.Fatalf("account after the move = %q, want agent/b", got)
	}
	if !role.HasFreeAccount() {
		t.Error("HasFreeAccount = false while account b is free")
	}
	if d, err := role.Type(t.Context(), "carry on with the task", TypeOptions{}); err != nil || !d.Confirmed {
		t.Fatalf("type after the move: %+v, %v", d, err)
	}
	if subs := readRecords(t, resumed); len(subs) != 1 || !strings.Contains(subs[0].Line, "carry on with the task") {
		t.Fatalf("the resumed program's submits = %+v, want the line typed after the move", subs)
	}
	// That line spends account b's quota: no account is left.
	r.waitEvent(t, "no free account", 20*time.Second, func(e Event) bool {
		return e.Role == "agent" && e.State == Limited && strings.Contains(e.Message, "no other account of the role is free")
	})
	if role.HasFreeAccount() {
		t.Error("HasFreeAccount = true with both accounts limited")
	}
	if a := hist.limits["agent/a"]; a.Role != "agent" || time.Until(a.Until) < 50*time.Minute {
		t.Errorf("history keeps account a's limit as %+v, want one of about an hour", a)
	}
	accts := r.sup.Accounts()
	if len(accts) != 2 || accts[1].Key != "agent/b" || len(accts[1].InUseBy) != 1 || accts[1].Limit.Until.IsZero() {
		t.Errorf("Accounts() = %+v, want a, then b in use by agent and limited", accts)
	}
	r.stop(t)

	// Account b's limit has lifted meanwhile, a's has not: a new
	// supervisor starts the role on b, though a comes first in the list.
	hist.limits["agent/b"] = AccountLimit{Account: "agent/b", Role: "agent", LimitedAt: time.Now().Add(-time.Hour), Until: time.Now().Add(-time.Minute)}
	r2 := start(t, ws, func(o *Options) { o.AccountHistory = hist })
	r2.waitState(t, "agent", Ready, 20*time.Second)
	if got := r2.role(t, "agent").Account(); got != "agent/b" {
		t.Errorf("a new supervisor started the role on %q, want agent/b: agent/a is limited for an hour", got)
	}
}

// A role limited with no account free moves as soon as another account's
// limit lifts, without waiting for its own.
func TestLimitedRoleMovesWhenAnotherAccountFreesUp(t *testing.T) {
	dir := t.TempDir()
	extra := `    limit_pattern: "usage limit · resets (?P<reset>[0-9:]+)"
    resume_args: ["--record", "` + filepath.Join(dir, "resumed.jsonl") + `"]
    accounts:
      - {name: a, env: {SIM_ACCOUNT: a}}
      - {name: b, env: {SIM_ACCOUNT: b}}
`
	ws := testWorkspace(t, "roles:"+simRole("agent", extra, "--record", filepath.Join(dir, "first.jsonl"), "--limit-screen", "--limit-reset", "1h"))
	// b met a limit a minute ago that lifts in a few seconds.
	hist := &memHistory{limits: map[string]AccountLimit{
		"agent/b": {Account: "agent/b", Role: "agent", LimitedAt: time.Now().Add(-time.Minute), Until: time.Now().Add(4 * time.Second)},
	}}
	r := start(t, ws, func(o *Options) { o.AccountHistory = hist })
	role := r.role(t, "agent")
	noneFree := r.waitEvent(t, "a limited with no account free", 20*time.Second, func(e Event) bool {
		return e.Role == "agent" && e.State == Limited && strings.Contains(e.Message, "usage limit on account agent/a, and no other account of the role is free")
	})
	moved := r.waitEvent(t, "the move to b once its limit lifted", 30*time.Second, func(e Event) bool {
		return e.Role == "agent" && e.State == Waking && strings.Contains(e.Message, "moving to account agent/b")
	})
	if !moved.Time.After(noneFree.Time) || !moved.Time.After(hist.limits["agent/b"].Until) {
		t.Errorf("moved at %v: want after the limit with none free (%v) and after b's lifted (%v)", moved.Time, noneFree.Time, hist.limits["agent/b"].Until)
	}
	r.waitState(t, "agent", Ready, 20*time.Second)
	if got := role.Account(); got != "agent/b" {
		t.Errorf("account = %q, want agent/b", got)
	}
}
