package ptyhost

import (
	"os/exec"
	"slices"
	"testing"
	"time"
)

// AdoptedQuick, read from the threads' children lists, finds the same
// children as Adopted's look at every process: a live one and one that
// has exited and waits to be reaped (a zombie), less the known ones.
func TestAdoptedQuickFindsWhatAdoptedFinds(t *testing.T) {
	live := exec.Command("sleep", "30")
	done := exec.Command("true")
	for _, c := range []*exec.Cmd{live, done} {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
	}
	defer func() {
		_ = live.Process.Kill()
		_ = live.Wait()
		_ = done.Wait()
	}()
	// A zombie until waited for: wait for it to have exited.
	deadline := time.Now().Add(10 * time.Second)
	for {
		if zombie(done.Process.Pid) || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	known := map[int]bool{live.Process.Pid: true}
	for _, k := range []map[int]bool{nil, known} {
		quick, full := AdoptedQuick(k), Adopted(k)
		slices.Sort(quick)
		slices.Sort(full)
		if !slices.Equal(quick, full) {
			t.Errorf("known %v: AdoptedQuick %v, Adopted %v", k, quick, full)
		}
		if !slices.Contains(quick, done.Process.Pid) || slices.Contains(quick, live.Process.Pid) == (k != nil) {
			t.Errorf("known %v: AdoptedQuick %v; want the zombie %d, and the live %d unless known", k, quick, done.Process.Pid, live.Process.Pid)
		}
	}
}
