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

// taskOf waits for the task made from a command id.
func (b *bareQueue) taskOf(t *testing.T, commandID string) store.Task {
	t.Helper()
	var task *store.Task
	waitFor(t, "the task of "+commandID, 15*time.Second, func() bool {
		var err error
		task, err = b.st.TaskForCommand(commandID)
		return err == nil && task != nil
	})
	return *task
}

// Issue 33 item 3. A delegating role handing an hour's worth of parts of
// its work to one other role (the soak's karo and ashigaru2: far more than
// 20 within ten minutes) is no loop: every command is queued, with the
// default settings.
func TestIndependentDelegationIsNoLoop(t *testing.T) {
	ws := testWorkspace(t, sim("karo", filepath.Join(t.TempDir(), "k.jsonl")), sim("ashigaru1", filepath.Join(t.TempDir(), "a.jsonl")))
	b := startQueue(t, ws)
	commands := queueDir(ws, "commands")
	dropAs(t, commands, "own.yaml", "id: karo-own\nto: karo\ntitle: Ship the release\nbody: b\n")
	own := b.taskOf(t, "karo-own")
	if _, err := b.st.Assign(own.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	const parts = 120
	for i := range parts {
		dropAs(t, commands, fmt.Sprintf("part%03d.yaml", i), fmt.Sprintf("id: part-%03d\nto: ashigaru1\nfrom: karo\ntitle: Part %d\nbody: b\n", i, i))
	}
	waitFor(t, "every part queued", 60*time.Second, func() bool {
		ts, _ := b.st.Tasks(store.TaskFilter{})
		return len(ts) == parts+1
	})
	if entries, _ := os.ReadDir(queueDir(ws, "failed")); len(entries) != 0 {
		t.Errorf("failed/ = %v, want nothing", names(entries))
	}
	part := b.taskOf(t, "part-119")
	if part.Parent != own.ID || part.Depth != 1 {
		t.Errorf("part task parent %q depth %d, want %s and 1", part.Parent, part.Depth, own.ID)
	}
}

// A real bounce within one piece of work, karo → ashigaru1 → karo →
// ashigaru1, is stopped at the hand-off that repeats: the file goes to
// failed/ with the chain named. A question back (ashigaru1 → karo) is not.
func TestBounceWithinAChainIsStopped(t *testing.T) {
	ws := testWorkspace(t, sim("karo", filepath.Join(t.TempDir(), "k.jsonl")), sim("ashigaru1", filepath.Join(t.TempDir(), "a.jsonl")))
	b := startQueue(t, ws)
	commands := queueDir(ws, "commands")
	dropAs(t, commands, "one.yaml", "id: hop-1\nto: ashigaru1\nfrom: karo\ntitle: Hop one\nbody: b\n")
	one := b.taskOf(t, "hop-1")
	dropAs(t, commands, "two.yaml", "id: hop-2\nto: karo\nfrom: ashigaru1\nparent: "+one.ID+"\ntitle: A question back\nbody: b\n")
	two := b.taskOf(t, "hop-2")
	dropAs(t, commands, "three.yaml", "id: hop-3\nto: ashigaru1\nfrom: karo\nparent: "+two.ID+"\ntitle: Hop three\nbody: b\n")
	rec := failedRecord(t, ws, "three.yaml")
	for _, want := range []string{"loop guard", "from karo to ashigaru1 again within one chain", one.ID + " (ashigaru1) → " + two.ID + " (karo)", "shogun send"} {
		if !strings.Contains(rec.Error, want) {
			t.Errorf("error %q does not say %q", rec.Error, want)
		}
	}
	if ts, _ := b.st.Tasks(store.TaskFilter{}); len(ts) != 2 {
		t.Errorf("%d tasks, want 2", len(ts))
	}
}

// queue.max_hops still bounds a chain that never repeats a hand-off.
func TestChainDeeperThanMaxHopsIsStopped(t *testing.T) {
	dir := t.TempDir()
	var entries []string
	for i := range 5 {
		entries = append(entries, sim(fmt.Sprintf("r%d", i), filepath.Join(dir, fmt.Sprintf("r%d.jsonl", i))))
	}
	ws := testWorkspace(t, entries...)
	write(t, filepath.Join(ws, "config", "settings.yaml"), "queue:\n  max_hops: 2\n")
	b := startQueue(t, ws)
	commands := queueDir(ws, "commands")
	parent := ""
	for i := range 3 {
		body := fmt.Sprintf("id: c%d\nto: r%d\nfrom: r%d\ntitle: Hop %d\nbody: b\n", i, i+1, i, i)
		if parent != "" {
			body += "parent: " + parent + "\n"
		}
		dropAs(t, commands, fmt.Sprintf("c%d.yaml", i), body)
		parent = b.taskOf(t, fmt.Sprintf("c%d", i)).ID
	}
	dropAs(t, commands, "c3.yaml", "id: c3\nto: r4\nfrom: r3\ntitle: Hop 3\nbody: b\nparent: "+parent+"\n")
	if rec := failedRecord(t, ws, "c3.yaml"); !strings.Contains(rec.Error, "over queue.max_hops (2)") {
		t.Errorf("error %q, want it over queue.max_hops", rec.Error)
	}
}
