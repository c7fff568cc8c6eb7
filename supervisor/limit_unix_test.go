//go:build !windows

package supervisor

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/shoguntest"
)

// An agent that hits its usage limit gets nothing typed until the limit
// lifts at the time its screen names; then it takes what waited.
func TestLimitedRoleGetsNothingUntilTheReset(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "received.jsonl")
	ws := testWorkspace(t, "roles:"+simRole("agent", `    limit_pattern: "usage limit · resets (?P<reset>[0-9:]+)"`+"\n",
		"--record", rec, "--limit-screen", "--limit-reset", "3s"))
	r := start(t, ws, nil)
	role := r.role(t, "agent")
	// The startup prompt spends the quota.
	r.waitState(t, "agent", Limited, 20*time.Second)
	st := role.Status()
	if st.LimitedUntil.IsZero() || time.Until(st.LimitedUntil) > 6*time.Second {
		t.Fatalf("limited until %v, want about 3 s from now (the time on the screen)", st.LimitedUntil)
	}
	until := st.LimitedUntil
	type result struct {
		d   Delivery
		err error
	}
	done := make(chan result, 1)
	go func() {
		d, err := role.Type(t.Context(), "read the task file", TypeOptions{})
		done <- result{d, err}
	}()
	select {
	case res := <-done:
		t.Fatalf("typed into a limited role: %+v, %v", res.d, res.err)
	case <-time.After(time.Until(until) - 500*time.Millisecond):
	}
	var res result
	select {
	case res = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("nothing typed after the limit lifted")
	}
	if res.err != nil || !res.d.Confirmed {
		t.Fatalf("type after the limit: %+v, %v", res.d, res.err)
	}
	subs := shoguntest.Submits(t, rec)
	if len(subs) != 2 || !strings.Contains(subs[1].Line, "read the task file") {
		t.Fatalf("agent's submits = %+v, want the startup prompt then the text", subs)
	}
	if !role.Status().LimitedUntil.IsZero() {
		t.Error("still shows a limit after it lifted")
	}
}
