package supervisor

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/shogun-dev/shogun/config"
	"github.com/shogun-dev/shogun/ptyhost"
)

// watch derives the role's state from its screen and output until ctx ends,
// and types the startup prompt the first time the role is ready.
func (r *Role) watch(ctx context.Context, sess *ptyhost.Session) {
	var prompt sync.WaitGroup
	defer prompt.Wait()
	var lastGen uint64 = ^uint64(0)
	var lastCfg *config.Role
	var sig signals
	var limit limitWatch
	everReady := false
	// turn: the busy pattern showed since the role was last ready (see
	// streamHold).
	turn := false
	// noisy: the program was once seen ready while its output went on (it
	// writes elsewhere on its screen: a log, a flood): output during its
	// turns is no sign of an answer streaming, so a turn holds it busy no
	// longer than steadyReady once its prompt shows without the busy line.
	// It stays so for the program's life: a pause in its output now and
	// then (a loaded machine) does not make it a quiet program.
	noisy := false
	// readySince: since when the ready pattern has shown without the busy
	// or attention pattern (zero while it does not).
	var readySince time.Time
	// overdue: the program was not ready within its start timeout; the
	// role waits for a person until it is.
	overdue := false
	wake := time.NewTimer(0)
	defer wake.Stop()
	for {
		// Sleep until the screen changes or a quiet period ends: an idle
		// role costs no wake-ups, and patterns are matched once per change.
		select {
		case <-ctx.Done():
			return
		case <-sess.ScreenChanged():
		case <-wake.C:
		case <-r.reconfigured:
		case <-r.heldChanged:
		}
		// New patterns (a live reload) are matched at once, not at the
		// next change of the screen.
		cfg := r.conf()
		if g := sess.ScreenGeneration(); g != lastGen || cfg != lastCfg {
			lastGen, lastCfg = g, cfg
			sig = match(*cfg, sess.Screen().Text())
			switch {
			case !sig.ready || sig.busy || sig.attention:
				readySince = time.Time{}
			case readySince.IsZero():
				readySince = time.Now()
			}
			if sig.busy {
				turn = true
				r.mu.Lock()
				r.busyAt = time.Now()
				r.mu.Unlock()
			}
		}
		quiet := time.Since(sess.LastOutput())
		// streaming: output now may be an answer streaming (see classify).
		streaming := turn && !noisy
		wake.Reset(nextCheck(*cfg, quiet, r.sup.settle, streaming))
		if !everReady && !overdue && cfg.StartTimeout > 0 {
			left := cfg.StartTimeout - time.Since(sess.Started())
			if left <= 0 && !sig.attention && !(sig.ready && !sig.busy && quiet >= r.sup.settle) {
				overdue = true
				r.setState(Attention, notReadyReason(cfg.StartTimeout, sess))
				continue
			}
			wake.Reset(min(nextCheck(*cfg, quiet, r.sup.settle, streaming), max(left, 0)+time.Millisecond))
		}
		if !everReady && r.isResumed() && sig.limits > limit.ack {
			// A resumed conversation shows its past, the limit that
			// moved it to this account included: not a limit of this run.
			limit.ack = sig.limits
		}
		if until, limited := limit.check(sig, time.Now(), cfg.LimitWait); limited {
			// Nothing is typed into a limited role; a dialog still wins.
			r.setLimited(until)
			switch {
			case sig.attention:
				r.setState(Attention, "screen asks for a person")
			case r.State() != Limited:
				r.setState(Limited, r.limitMet(until))
			}
			next := until
			if r.State() == Limited {
				if free := r.moveWhenFree(until); !free.IsZero() {
					next = free // another account's limit lifts first
				}
			}
			wake.Reset(min(nextCheck(*cfg, quiet, r.sup.settle, streaming), time.Until(next)+time.Millisecond))
			continue
		}
		was := r.State()
		if was == Limited {
			r.setLimited(time.Time{})
		}
		r.mu.Lock()
		echo := !r.echoAt.IsZero() && time.Since(r.echoAt) < maxEcho
		submitAt := r.submitAt
		r.mu.Unlock()
		var readyFor, calmFor time.Duration
		if !readySince.IsZero() {
			readyFor = time.Since(readySince)
			// calmFor: how long the prompt has shown with nothing
			// submitted; what the program prints after a line shogun
			// submitted (the startup prompt, a nudge) is its answer, not
			// output that goes on while it is ready. Only the noisy
			// judgement counts from the submit: a flooding program whose
			// submit is typed again and again is still ready once its
			// prompt has shown for steadyReady.
			calmFor = readyFor
			if submitAt.After(readySince) {
				calmFor = time.Since(submitAt)
			}
		}
		next, why := classify(*cfg, sig, quiet, everReady, sess.OutputBytes() > 0, r.sup.settle, streaming, readyFor, echo)
		if next == Starting {
			next = r.booting()
		}
		if overdue && next != Ready && next != Attention {
			// Still not ready: the role keeps waiting for a person.
			continue
		}
		overdue = overdue && next != Ready
		switch {
		case r.heldByPerson() && next != Attention:
			// The agent waits on a hook's question: whatever its screen
			// shows (a spinner, or nothing), it is held by a person.
			next, why = Waiting, "a question waits for a person (shogun questions)"
		case next == "" && (was == Attention || was == Limited || was == Waiting):
			next, why = pick(everReady, Busy, r.booting()), string(was)+" over"
		}
		if next == "" {
			continue
		}
		r.setState(next, why)
		if next == Ready {
			turn = false
			// The soak's flooding role was read busy for two minutes
			// (maxTurnHold) after every task, its queue stuck behind it.
			noisy = noisy || seemsNoisy(calmFor, quiet, echo)
		}
		if next == Ready && !everReady {
			everReady = true
			r.mu.Lock()
			// A resumed conversation has its startup prompt already.
			settled := r.settled
			r.mu.Unlock()
			if cfg.StartupPrompt != "" && !settled {
				prompt.Add(1)
				go func() {
					defer prompt.Done()
					r.typeStartupPrompt(ctx)
				}()
			}
		}
	}
}

// seemsNoisy says whether a program that just became ready writes while it
// is ready: its prompt has shown for calmFor (steadyReady or more) since
// it was last busy or shogun last submitted a line, and its output still
// goes on (quiet less than streamHold), not the echo of keys shogun typed.
// The end of an answer that streamed for seconds is not that (it went
// quiet first), nor is a program's answer to the startup prompt: every
// role with a startup prompt, and every one after a long streamed answer,
// was taken for noisy, and ended its later turns at the settle time.
func seemsNoisy(calmFor, quiet time.Duration, echo bool) bool {
	return calmFor >= steadyReady && quiet < streamHold && !echo
}

// signals are what a role's patterns say about its screen.
type signals struct {
	attention, busy, ready bool
	// limits counts the usage-limit messages on screen; reset is what the
	// last one says of its reset time ("" when it says nothing).
	limits int
	reset  string
}

func match(cfg config.Role, text string) signals {
	sig := signals{
		attention: cfg.AttentionPattern != nil && cfg.AttentionPattern.MatchString(text),
		busy:      cfg.BusyPattern != nil && cfg.BusyPattern.MatchString(text),
		ready:     cfg.ReadyPattern != nil && cfg.ReadyPattern.MatchString(text),
	}
	if cfg.LimitPattern != nil {
		all := cfg.LimitPattern.FindAllStringSubmatch(text, -1)
		sig.limits = len(all)
		if i := cfg.LimitPattern.SubexpIndex("reset"); i > 0 && len(all) > 0 {
			sig.reset = all[len(all)-1][i]
		}
	}
	return sig
}

// classify derives a running role's state from what its screen shows and how
// long its output has been quiet. everReady says whether this program was
// ready before: until then it is starting, whatever it prints; hasOutput
// whether it printed anything yet. An empty State means "no change" (quiet,
// but the ready signal has not shown yet).
//
// A dialog (attention) wins over everything, then the busy pattern, then
// recent output. A role with a ready pattern is ready only when that pattern
// shows: silence proves nothing about a program that draws its prompt, and a
// program still loading is often silent. For such a role "recent" output is
// the short settle time: the patterns say the rest, and a full second of
// silence after every echo would slow delivery down for no gain. A role
// without one has only silence to go by: a second of it ends busy, and
// ready_quiet of it, once the program has drawn something, means ready.
//
// turn says the busy pattern showed since the role was last ready: the
// program is at work on a turn. Then output counts as work for streamHold,
// not the settle time: Codex 0.169 hides its busy line while an answer
// streams, its composer showing, and a role read as ready between two
// chunks flapped ready⇄busy about once a second. The caller passes false
// for a program once seen ready while its output went on: its output is no
// sign of a turn, and its turn ends steadyReady after its prompt shows.
//
// readyFor is how long the ready pattern has shown without the busy
// pattern. A program that keeps writing elsewhere on its screen (a log, a
// clock) with its prompt there is ready once that has held for steadyReady
// (maxTurnHold during a turn): readiness is what the screen shows, not
// silence on the terminal.
//
// echo says the latest output may be the echo of keys shogun typed into
// the composer (a clear, a text not yet submitted): with the ready pattern
// on screen that is no sign of work, and the state stays as it is, so
// that every typed line is not a ready⇄busy⇄ready of its own.
func classify(cfg config.Role, sig signals, quiet time.Duration, everReady, hasOutput bool, settle time.Duration, turn bool, readyFor time.Duration, echo bool) (State, string) {
	recent := recentOutput(cfg, settle)
	working := pick(everReady, Busy, Starting)
	switch {
	case sig.attention:
		return Attention, "screen asks for a person"
	case sig.busy:
		return working, "busy pattern on screen"
	case cfg.ReadyPattern != nil && sig.ready && readyFor >= pickDuration(turn, maxTurnHold, steadyReady):
		return Ready, "ready pattern on screen for " + readyFor.Round(time.Second).String() + " while output goes on"
	case quiet < recent && echo && sig.ready && cfg.ReadyPattern != nil:
		return "", ""
	case quiet < recent:
		return working, "output"
	case turn && quiet < streamHold:
		return working, "output during a turn (an answer streaming)"
	case cfg.ReadyPattern != nil:
		if sig.ready {
			return Ready, "ready pattern on screen"
		}
	case hasOutput && quiet >= cfg.ReadyQuiet:
		return Ready, "quiet for " + cfg.ReadyQuiet.String()
	}
	return "", ""
}

// nextCheck is how long until quiet output can change a role's state: when
// "recent" output stops counting as busy, or when ready_quiet is reached.
// Past both, only screen changes matter and the wait is long.
func nextCheck(cfg config.Role, quiet, settle time.Duration, turn bool) time.Duration {
	next := time.Minute
	for _, at := range []time.Duration{recentOutput(cfg, settle), cfg.ReadyQuiet} {
		if quiet < at {
			next = at - quiet + time.Millisecond
			break
		}
	}
	if turn && quiet < streamHold {
		next = min(next, streamHold-quiet+time.Millisecond)
	}
	return next
}

// maxEcho bounds how long after shogun's last key into the composer the
// output can be taken for its echo: a program that starts work on its own
// then is busy all the same.
const maxEcho = time.Second

// steadyReady is how long the ready pattern must show, with output going
// on, for a role to be ready all the same; maxTurnHold is that time during
// a turn, where a streaming answer looks the same (see classify).
const (
	steadyReady = 2 * time.Second
	maxTurnHold = 2 * time.Minute
)

// pickDuration returns a if cond holds, else b.
func pickDuration(cond bool, a, b time.Duration) time.Duration {
	if cond {
		return a
	}
	return b
}

// notReadyReason says that a program was not ready within its start
// timeout, with the last lines of its screen: what it shows instead.
func notReadyReason(timeout time.Duration, sess *ptyhost.Session) string {
	var last []string
	lines := sess.Screen().Lines
	for i := len(lines) - 1; i >= 0 && len(last) < 3; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" {
			last = append([]string{short(l, 80)}, last...)
		}
	}
	why := fmt.Sprintf("not ready within %s of its start (start_timeout)", timeout)
	if len(last) == 0 {
		return why + "; its screen is blank"
	}
	return why + "; its screen ends: " + strings.Join(last, " / ")
}

// streamHold is how long output keeps a role busy once the busy pattern
// showed in its turn, busy pattern or not: longer than the pauses between
// the chunks of a streamed answer. It is also how long after its last
// output a turn's end is seen.
const streamHold = 1500 * time.Millisecond

// recentOutput is how long output counts as a sign of work: the settle
// time for a role whose ready pattern says when it is idle, a second for a
// role that has only silence to go by.
func recentOutput(cfg config.Role, settle time.Duration) time.Duration {
	if cfg.ReadyPattern != nil {
		return settle
	}
	return time.Second
}

// pick returns a if cond holds, else b.
func pick(cond bool, a, b State) State {
	if cond {
		return a
	}
	return b
}

// booting is the state of a program that has not been ready yet: waking
// when a wake started it.
func (r *Role) booting() State {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.waking {
		return Waking
	}
	return Starting
}
