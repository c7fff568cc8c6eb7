package team

import (
	"context"
	"errors"
	"time"

	"github.com/shogun-dev/shogun/ptyhost"
	"github.com/shogun-dev/shogun/supervisor"
)

// awakeLinger is how long the machine is kept awake after the last role
// stopped working, by default: a role between two tasks is idle for a
// moment.
const awakeLinger = 30 * time.Second

// keepAwake holds an inhibitor of sleep while any role is busy (settings
// keep_awake), until ctx ends: an unattended team must not stop halfway
// through a task because the machine went to sleep. It wakes only on role
// state changes, which onEvent sends to t.stateChanged.
func (t *Team) keepAwake(ctx context.Context) {
	var inh *ptyhost.Inhibitor
	defer func() { inh.Release() }()
	linger := time.NewTimer(t.awakeLinger)
	linger.Stop()
	unavailable := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.stateChanged:
		case <-linger.C:
			if inh != nil && !t.anyBusy() {
				inh.Release()
				inh = nil
				t.log.Info().Msg("no role is working: the machine may sleep again")
			}
			continue
		}
		if !t.anyBusy() {
			if inh != nil {
				linger.Reset(t.awakeLinger)
			}
			continue
		}
		linger.Stop()
		if inh != nil || unavailable {
			continue
		}
		var err error
		inh, err = ptyhost.KeepAwake("shogun: agents are working")
		switch {
		case errors.Is(err, ptyhost.ErrNoInhibitor):
			unavailable = true
			t.log.Info().Err(err).Msg("cannot keep the machine awake while agents work (keep_awake)")
		case err != nil:
			unavailable = true
			t.log.Warn().Err(err).Msg("keep awake")
		default:
			t.log.Info().Str("how", inh.How).Msg("keeping the machine awake while agents work")
		}
	}
}

// anyBusy reports whether a role is working now.
func (t *Team) anyBusy() bool {
	for _, r := range t.sup.Roles() {
		if r.State() == supervisor.Busy {
			return true
		}
	}
	return false
}
