package supervisor

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A ready role whose startup prompt has not been typed yet is not put to
// sleep: it would be resumed later as a conversation that had its prompt,
// and, worse, the sleep held the typing that the prompt waited for while
// the program's end waited for the prompt (a new user's team: a role
// "ready" with no program, its slot never freed, stop hanging).
func TestARoleIsNotPutToSleepBeforeItsStartupPrompt(t *testing.T) {
	sup := &Supervisor{}
	sup.SetWorkCheck(func(string) Work { return Work{} })
	cases := []struct {
		name    string
		settled bool
		want    bool
	}{
		{"its startup prompt not yet typed", false, false},
		{"its startup prompt typed", true, true},
	}
	for _, c := range cases {
		r := &Role{id: "karo", sup: sup, state: Ready, settled: c.settled}
		if got := r.trySleep(false); got != c.want {
			t.Errorf("%s: put to sleep %v, want %v", c.name, got, c.want)
		}
	}
}

// A delivery waiting for the typing another holds gives up when its
// context ends, rather than waiting for ever: the startup prompt of a
// program being stopped is waited for by the program's end.
func TestATypingThatWaitsGivesUpWithItsContext(t *testing.T) {
	r := &Role{id: "karo", sup: &Supervisor{}}
	if !r.typing.tryLock() {
		t.Fatal("a new role's typing is held")
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := r.Type(ctx, "hello", TypeOptions{})
		done <- err
	}()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Type with its context ended: %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Type still waits for the typing after its context ended")
	}
	r.typing.unlock()
	if !r.typing.tryLock() {
		t.Error("the typing is still held after unlock")
	}
}
