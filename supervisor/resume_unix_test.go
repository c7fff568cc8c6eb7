//go:build !windows

package supervisor

import (
	"github.com/shogun-dev/shogun/shoguntest"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// A role whose between_tasks keys ended its conversation, woken before its
// CLI told the new one's id, starts afresh, and its log says why: as
// between_tasks would have. Before, it said its hook never told an id,
// though the log showed the id it had told.
func TestAWakeAfterBetweenTasksSaysWhyItStartsAfresh(t *testing.T) {
	ws := testWorkspace(t, "roles:"+simRole("a", "    idle_after: 300ms\n    resume_args: [\"--resumed\", \"{session}\"]\n"))
	log := &shoguntest.Buffer{}
	var work sync.Map // role → bool
	r := startWithWork(t, ws, func(o *Options) { o.Logger = zerolog.New(log) }, func(role string) Work {
		if v, ok := work.Load(role); ok && v.(bool) {
			return Work{Has: true, Rank: 1, Since: time.Now()}
		}
		return Work{}
	})
	a := r.role(t, "a")
	r.waitState(t, "a", Ready, 20*time.Second)
	if err := a.NoteSession("01a223b1-4c8f-4d2e-9f3a-1b2c3d4e5f60"); err != nil {
		t.Fatal(err)
	}
	a.ForgetSession() // its between_tasks keys are typed
	r.waitState(t, "a", Sleeping, 20*time.Second)
	work.Store("a", true)
	a.Wake(Work{Has: true, Rank: 1, Since: time.Now()})
	r.waitState(t, "a", Ready, 20*time.Second)
	got := log.String()
	if !strings.Contains(got, "between_tasks keys ended its last conversation") {
		t.Errorf("the wake's log does not say between_tasks ended the conversation:\n%s", got)
	}
	if strings.Contains(got, "its hook never told one") {
		t.Errorf("the log says the hook never told an id, though it did:\n%s", got)
	}
	if strings.Contains(got, `"previous":""`) {
		t.Errorf("the first id told is logged with an empty previous one:\n%s", got)
	}
}

// A program woken to resume its conversation that ends by itself (killed,
// or its CLI refusing the conversation) is started again afresh, and the
// log says the conversation is left. Before, the restart dropped the
// conversation without a word.
func TestAResumedProgramThatEndsStartsAfreshAndSaysSo(t *testing.T) {
	ws := testWorkspace(t, "roles:"+simRole("a", "    idle_after: 300ms\n    resume_args: [\"--resumed\", \"{session}\"]\n"))
	log := &shoguntest.Buffer{}
	var work sync.Map
	r := startWithWork(t, ws, func(o *Options) { o.Logger = zerolog.New(log) }, func(role string) Work {
		if _, ok := work.Load(role); ok {
			return Work{Has: true, Rank: 1, Since: time.Now()}
		}
		return Work{}
	})
	a := r.role(t, "a")
	r.waitState(t, "a", Ready, 20*time.Second)
	const id = "5b518079-4c8f-4d2e-9f3a-1b2c3d4e5f60"
	if err := a.NoteSession(id); err != nil {
		t.Fatal(err)
	}
	r.waitState(t, "a", Sleeping, 20*time.Second)
	work.Store("a", true) // it stays awake from now on
	a.Wake(Work{Has: true, Rank: 1, Since: time.Now()})
	r.waitState(t, "a", Ready, 20*time.Second)
	woken := a.Status().Pid
	if err := syscall.Kill(woken, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a started again after its woken program was killed", 20*time.Second, func() bool {
		st := a.Status()
		return st.State == Ready && st.Pid != 0 && st.Pid != woken
	})
	got := log.String()
	if !strings.Contains(got, "resumed its conversation ended by itself") || !strings.Contains(got, id) {
		t.Errorf("the log does not say the resumed conversation %s was left:\n%s", id, got)
	}
	lines := strings.Split(strings.TrimSpace(got), "\n")
	last := ""
	for _, l := range lines {
		if strings.Contains(l, `"message":"started"`) {
			last = l
		}
	}
	if strings.Contains(last, "--resumed") {
		t.Errorf("the start after the crash resumed again: %s", last)
	}
}
