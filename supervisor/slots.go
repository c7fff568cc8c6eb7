package supervisor

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"sync"
	"time"
)

// Slots says how many roles' programs may run at once (agent.max_running;
// 0: no bound) and how many do. A role counts from its start to the end of
// its process tree.
func (s *Supervisor) Slots() (inUse, max int) {
	if s.slots == nil {
		return 0, 0
	}
	s.slots.mu.Lock()
	defer s.slots.mu.Unlock()
	return len(s.slots.held), s.slots.max
}

// CLISlots says, for each CLI with a bound of its own
// (agent.max_running_per_cli), how many of its roles' programs run and
// how many may.
func (s *Supervisor) CLISlots() map[string][2]int {
	if s.slots == nil || len(s.slots.perCLI) == 0 {
		return nil
	}
	s.slots.mu.Lock()
	defer s.slots.mu.Unlock()
	out := make(map[string][2]int, len(s.slots.perCLI))
	for cli, n := range s.slots.perCLI {
		out[cli] = [2]int{s.slots.heldCLI[cli], n}
	}
	return out
}

// slots bound how many roles' programs run at once: all of them
// (agent.max_running) and those of one CLI (agent.max_running_per_cli).
// Roles with work that find none free wait, and get one by the priority
// of their work, then its age; to make room, the idlest running role is
// asked to sleep — one of the same CLI when it is that CLI's bound that
// is reached.
type slots struct {
	sup    *Supervisor
	max    int            // 0: no bound on all roles
	perCLI map[string]int // a CLI absent: no bound of its own

	mu      sync.Mutex
	held    map[*Role]string // the roles that hold a slot, with their CLI
	heldCLI map[string]int
	waiting []*slotWaiter
	asked   map[*Role]bool // running roles asked to sleep to make room
	seq     uint64
	// roomAt is when makeRoom last looked: the roles that wait all call
	// it, and one look a roomEvery is enough for all of them.
	roomAt time.Time
	// kick wakes roomLoop to look for room at once: a running role just
	// became ready, so it may be idle, or a role began to wait (poke).
	kick chan struct{}
}

// roomEvery bounds how often makeRoom looks, however many roles wait.
const roomEvery = 200 * time.Millisecond

// attentionRoomAfter is how long a program with nothing queued may show a
// dialog before it is asked to make room for a role with work.
const attentionRoomAfter = 10 * time.Second

// poke tells roomLoop to look for room now rather than at its next tick:
// a running role became ready, or a role began to wait.
func (sl *slots) poke() {
	select {
	case sl.kick <- struct{}{}:
	default:
	}
}

type slotWaiter struct {
	r       *Role
	cli     string
	w       Work
	seq     uint64
	granted chan struct{}
}

func newSlots(sup *Supervisor, max int, perCLI map[string]int) *slots {
	return &slots{sup: sup, max: max, perCLI: maps.Clone(perCLI), held: map[*Role]string{}, heldCLI: map[string]int{}, asked: map[*Role]bool{}, kick: make(chan struct{}, 1)}
}

// inUse says how many slots are held, and how many roles wait.
func (sl *slots) inUse() (held, waiting int) {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	return len(sl.held), len(sl.waiting)
}

// fullLocked says which bound keeps a role of cli from a slot: "" when
// none does.
func (sl *slots) fullLocked(cli string) string {
	if n, ok := sl.perCLI[cli]; ok && sl.heldCLI[cli] >= n {
		return fmt.Sprintf("agent.max_running_per_cli %s: %d", cli, n)
	}
	if sl.max > 0 && len(sl.held) >= sl.max {
		return fmt.Sprintf("agent.max_running %d", sl.max)
	}
	return ""
}

func (sl *slots) takeLocked(r *Role, cli string) {
	sl.held[r] = cli
	sl.heldCLI[cli]++
}

// tryTake takes a slot for r, whose program is of cli, if one is free. A
// role that waits is one no free slot fits (grantLocked gives them out as
// soon as they free), so one that fits r is r's to take.
func (sl *slots) tryTake(r *Role, cli string) bool {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	if _, ok := sl.held[r]; ok {
		return true
	}
	if sl.fullLocked(cli) == "" {
		sl.takeLocked(r, cli)
		return true
	}
	return false
}

// slotOrderAtStart orders roles, given in file order, for the slots at
// start: the roles with work first, by priority then the age of that work
// (as the slots go later), then the others in file order. Without a bound
// the order does not matter and the work is not asked.
func (s *Supervisor) slotOrderAtStart(roles []*Role) []*Role {
	if s.slots == nil {
		return roles
	}
	work := make(map[*Role]Work, len(roles))
	for _, r := range roles {
		work[r] = s.work(r.id)
	}
	slices.SortStableFunc(roles, func(a, b *Role) int {
		wa, wb := work[a], work[b]
		switch {
		case wa.Has != wb.Has:
			if wa.Has {
				return -1
			}
			return 1
		case !wa.Has:
			return 0
		case wa.Rank != wb.Rank:
			return wa.Rank - wb.Rank
		}
		return wa.Since.Compare(wb.Since)
	})
	return roles
}

// wait queues r for a slot and returns the waiter; granted is closed when
// the slot is r's.
func (sl *slots) wait(r *Role, cli string, w Work) *slotWaiter {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	sl.seq++
	wt := &slotWaiter{r: r, cli: cli, w: w, seq: sl.seq, granted: make(chan struct{})}
	sl.waiting = append(sl.waiting, wt)
	sl.grantLocked()
	sl.poke() // roomLoop: a role waits now
	return wt
}

// roomRetry is how often roomLoop looks for room while roles wait: a role
// asked to make room may have declined, or a running one become idle (its
// task closed) without a poke.
const roomRetry = 250 * time.Millisecond

// roomLoop looks for room for the roles that wait for a slot: at once when
// poked, and a roomRetry while any waits; while none waits it rests. It is
// one loop for all of them, owned by Run: a ticker in each waiting role
// woke the supervisor four times a second per role (56 waiting roles in
// the bench's team of 64 under max_running 8: 224 wake-ups a second, a
// tenth of its CPU in the scheduler).
func (sl *slots) roomLoop(ctx context.Context) {
	retry := time.NewTicker(roomRetry)
	defer retry.Stop()
	for {
		var tick <-chan time.Time
		if _, waiting := sl.inUse(); waiting > 0 {
			tick = retry.C
		}
		select {
		case <-ctx.Done():
			return
		case <-sl.kick:
		case <-tick:
		}
		sl.makeRoom()
	}
}

// SlotWait says which bound keeps the role from starting now
// ("agent.max_running 2"): "" when it holds a slot, or one is free for it.
// A person's restart of a sleeping role with every slot taken waits for
// one, and says so.
func (r *Role) SlotWait() string {
	sl := r.sup.slots
	if sl == nil {
		return ""
	}
	sl.mu.Lock()
	defer sl.mu.Unlock()
	if _, ok := sl.held[r]; ok {
		return ""
	}
	return sl.fullLocked(r.conf().CLI)
}

// why says which bound r waits on.
func (sl *slots) why(cli string) string {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	if f := sl.fullLocked(cli); f != "" {
		return f
	}
	return fmt.Sprintf("agent.max_running %d", sl.max)
}

// cancel takes r's waiter out of the line; a slot granted meanwhile is
// given back.
func (sl *slots) cancel(wt *slotWaiter) {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	for i, x := range sl.waiting {
		if x == wt {
			sl.waiting = append(sl.waiting[:i], sl.waiting[i+1:]...)
			return
		}
	}
	select {
	case <-wt.granted:
		sl.releaseLocked(wt.r)
	default:
	}
}

// update gives a waiting role's place in the line its newest work.
func (sl *slots) update(r *Role, w Work) {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	for _, x := range sl.waiting {
		if x.r == r {
			x.w = w
		}
	}
}

// release frees r's slot once its process tree is gone, and grants it.
func (sl *slots) release(r *Role) {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	delete(sl.asked, r)
	sl.releaseLocked(r)
}

func (sl *slots) releaseLocked(r *Role) {
	cli, ok := sl.held[r]
	if !ok {
		return
	}
	delete(sl.held, r)
	if sl.heldCLI[cli]--; sl.heldCLI[cli] <= 0 {
		delete(sl.heldCLI, cli)
	}
	sl.grantLocked()
}

// sortLocked orders the waiters: highest priority first, then the oldest
// work, then the first to ask.
func (sl *slots) sortLocked() {
	sort.SliceStable(sl.waiting, func(i, j int) bool {
		a, b := sl.waiting[i], sl.waiting[j]
		if a.w.Rank != b.w.Rank {
			return a.w.Rank < b.w.Rank
		}
		if !a.w.Since.Equal(b.w.Since) {
			return a.w.Since.Before(b.w.Since)
		}
		return a.seq < b.seq
	})
}

// grantLocked gives the free slots to the waiters in their order. A waiter
// whose CLI is at its own bound is passed over for one of another CLI
// that fits: a slot that no waiter ahead can use is not left empty.
func (sl *slots) grantLocked() {
	sl.sortLocked()
	kept := sl.waiting[:0]
	for _, wt := range sl.waiting {
		if sl.fullLocked(wt.cli) != "" {
			kept = append(kept, wt)
			continue
		}
		sl.takeLocked(wt.r, wt.cli)
		close(wt.granted)
	}
	clear(sl.waiting[len(kept):])
	sl.waiting = kept
}

// makeRoom asks idle running roles to sleep for the roles that wait for a
// slot, the idlest first (ready the longest), counting the ones asked
// already: for a waiter whose CLI is at its own bound, a role of that CLI;
// for one that waits on agent.max_running, any. A role asked declines if
// it has work by the time it looks (declined).
func (sl *slots) makeRoom() {
	sl.mu.Lock()
	if time.Since(sl.roomAt) < roomEvery {
		sl.mu.Unlock()
		return
	}
	sl.roomAt = time.Now()
	sl.sortLocked()
	waiting := make([]*slotWaiter, len(sl.waiting))
	copy(waiting, sl.waiting)
	held := maps.Clone(sl.held)
	heldCLI := maps.Clone(sl.heldCLI)
	askedCLI := map[string]int{}
	asked := 0
	for r := range sl.asked {
		askedCLI[held[r]]++
		asked++
	}
	sl.mu.Unlock()
	if len(waiting) == 0 {
		return
	}
	type idle struct {
		r        *Role
		cli      string
		since    time.Time
		atDialog bool
	}
	var idles []idle
	for r, cli := range held {
		sl.mu.Lock()
		was := sl.asked[r]
		sl.mu.Unlock()
		if was {
			continue
		}
		r.mu.Lock()
		st, since, human := r.state, r.since, r.humanInput
		r.mu.Unlock()
		// A program at a dialog no one has answered for a while, with
		// nothing queued, holds its slot for nothing: it makes room
		// first, before the idle ones, which may get work any moment (its
		// dialog shows again at its next start).
		atDialog := st == Attention && time.Since(since) >= attentionRoomAfter && time.Since(human) >= sl.sup.humanQuiet
		if (st == Ready || atDialog) && !sl.sup.work(r.id).Has {
			idles = append(idles, idle{r, cli, since, atDialog})
		}
	}
	sort.Slice(idles, func(i, j int) bool {
		if idles[i].atDialog != idles[j].atDialog {
			return idles[i].atDialog
		}
		return idles[i].since.Before(idles[j].since)
	})
	var ask []*Role
	take := func(cli string) {
		for i, x := range idles {
			if cli == "" || x.cli == cli {
				ask = append(ask, x.r)
				idles = append(idles[:i], idles[i+1:]...)
				return
			}
		}
	}
	for _, wt := range waiting {
		if n, ok := sl.perCLI[wt.cli]; ok && heldCLI[wt.cli] >= n {
			if askedCLI[wt.cli] > 0 { // one of its CLI is on its way out
				askedCLI[wt.cli]--
				asked--
				continue
			}
			take(wt.cli)
			continue
		}
		if asked > 0 {
			asked--
			continue
		}
		take("")
	}
	for _, r := range ask {
		sl.mu.Lock()
		sl.asked[r] = true
		sl.mu.Unlock()
		select {
		case r.sleepReq <- struct{}{}:
		default:
		}
	}
}

// startedAsked notes that a start a person asked for (StartNow) is made.
func (r *Role) startedAsked() {
	r.mu.Lock()
	r.startAsked = false
	r.mu.Unlock()
}

// declined forgets that r was asked to sleep: it had work after all.
func (sl *slots) declined(r *Role) {
	sl.mu.Lock()
	delete(sl.asked, r)
	sl.mu.Unlock()
}

// admit gets the role a slot for its next start (there is always one
// without agent.max_running or a bound on its CLI). With none free, a
// role with work waits for one, asking idle roles to make room; a role
// without work sleeps until work comes. It reports false when the role is
// to go on without starting (the caller loops: stopped, or woken to try
// again) and ends the role's goroutine when ctx ends (ok false, alive
// false).
func (r *Role) admit(ctx context.Context) (ok, alive bool) {
	sl := r.sup.slots
	cli := r.conf().CLI
	if sl == nil || sl.tryTake(r, cli) {
		r.startedAsked()
		return true, true
	}
	w := r.sup.work(r.id)
	r.mu.Lock()
	asked := r.startAsked
	r.mu.Unlock()
	waitsFor := "has work"
	if !w.Has && asked {
		w, waitsFor = Work{Has: true, Rank: 1, Since: time.Now()}, "restart asked"
	}
	if !w.Has {
		r.mu.Lock()
		r.asleep = true // its start is a wake, without a conversation to resume
		r.mu.Unlock()
		r.setState(Sleeping, fmt.Sprintf("no slot free (%s): sleeps until a task comes", sl.why(cli)))
		return false, r.sleepUntilWork(ctx)
	}
	why := sl.why(cli)
	wt := sl.wait(r, cli, w)
	r.setState(WaitingSlot, fmt.Sprintf("%s; waits for a slot (%s)", waitsFor, why))
	sl.makeRoom()
	for {
		// roomLoop looks again while it waits.
		select {
		case <-wt.granted:
			r.startedAsked()
			return true, true
		case <-r.wakeReq:
		case <-r.restartReq:
			// It starts afresh once it has a slot: nothing to restart now.
			r.mu.Lock()
			r.resumable = false
			r.mu.Unlock()
		case <-r.stopReq:
			r.startedAsked() // a stop takes back a start asked for
			sl.cancel(wt)
			r.setState(Stopped, "stopped on request; `shogun restart "+r.id+"` starts it again")
			return false, r.waitRestart(ctx)
		case <-ctx.Done():
			sl.cancel(wt)
			r.setState(Stopped, stopReason(ctx))
			return false, false
		}
	}
}
