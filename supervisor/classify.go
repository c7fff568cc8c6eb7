package supervisor

import (
	"context"
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
			if sig.busy {
				r.mu.Lock()
				r.busyAt = time.Now()
				r.mu.Unlock()
			}
		}
		quiet := time.Since(sess.LastOutput())
		wake.Reset(nextCheck(*cfg, quiet, r.sup.settle))
		if until, limited := limit.check(sig, time.Now(), cfg.LimitWait); limited {
			// Nothing is typed into a limited role; a dialog still wins.
			r.setLimited(until)
			if sig.attention {
				r.setState(Attention, "screen asks for a person")
			} else {
				r.setState(Limited, "usage limit reached; resumes at "+until.Format("15:04:05"))
			}
			wake.Reset(min(nextCheck(*cfg, quiet, r.sup.settle), time.Until(until)+time.Millisecond))
			continue
		}
		was := r.State()
		if was == Limited {
			r.setLimited(time.Time{})
		}
		next, why := classify(*cfg, sig, quiet, everReady, sess.OutputBytes() > 0, r.sup.settle)
		switch {
		case r.heldByPerson() && next != Attention:
			// The agent waits on a hook's question: whatever its screen
			// shows (a spinner, or nothing), it is held by a person.
			next, why = Waiting, "a question waits for a person (shogun questions)"
		case next == "" && (was == Attention || was == Limited || was == Waiting):
			next, why = pick(everReady, Busy, Starting), string(was)+" over"
		}
		if next == "" {
			continue
		}
		r.setState(next, why)
		if next == Ready && !everReady {
			everReady = true
			if cfg.StartupPrompt != "" {
				prompt.Add(1)
				go func() {
					defer prompt.Done()
					r.typeStartupPrompt(ctx)
				}()
			}
		}
	}
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
func classify(cfg config.Role, sig signals, quiet time.Duration, everReady, hasOutput bool, settle time.Duration) (State, string) {
	recent := recentOutput(cfg, settle)
	working := pick(everReady, Busy, Starting)
	switch {
	case sig.attention:
		return Attention, "screen asks for a person"
	case sig.busy:
		return working, "busy pattern on screen"
	case quiet < recent:
		return working, "output"
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
func nextCheck(cfg config.Role, quiet, settle time.Duration) time.Duration {
	for _, at := range []time.Duration{recentOutput(cfg, settle), cfg.ReadyQuiet} {
		if quiet < at {
			return at - quiet + time.Millisecond
		}
	}
	return time.Minute
}

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
