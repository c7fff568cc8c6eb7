package supervisor

// Restart stops the role's program, whatever the restart policy says, and
// starts it again at once. A fatal or stopped role starts again too. A
// held role stays held (a reload restarts roles too, and an agent can edit
// roles.yaml): the person's restart releases it (Release).
func (r *Role) Restart() {
	select {
	case r.restartReq <- struct{}{}:
	default: // a restart is already pending
	}
}

// StartNow is a person's restart: Restart, and a role that sleeps starts
// too, though it has no work, waiting for a slot when none is free. (A
// reload's Restart leaves a sleeping role asleep: it starts afresh when
// work comes.)
func (r *Role) StartNow() {
	r.mu.Lock()
	r.startAsked = true
	r.mu.Unlock()
	r.Restart()
}

// Hold keeps new tasks from being typed into the role (it is not
// Workable) until Release (a person's restart or dismissal) or the end of
// the run: what the team does when the role's approvals hook has gone
// missing, since whatever the agent does next would not be judged. reason
// is shown in its status.
func (r *Role) Hold(reason string) {
	r.mu.Lock()
	r.held = reason
	r.mu.Unlock()
	r.notify()
}

// Held says why the role is held ("" when it is not).
func (r *Role) Held() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.held
}

// Release ends a Hold; it reports whether the role was held.
func (r *Role) Release() bool {
	r.mu.Lock()
	was := r.held != ""
	r.held = ""
	r.mu.Unlock()
	if was {
		r.notify()
	}
	return was
}
