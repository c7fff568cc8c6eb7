package supervisor

// Restart stops the role's program, whatever the restart policy says, and
// starts it again at once. A fatal or stopped role starts again too.
func (r *Role) Restart() {
	select {
	case r.restartReq <- struct{}{}:
	default: // a restart is already pending
	}
}
