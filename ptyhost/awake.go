package ptyhost

import "errors"

// ErrNoInhibitor means the platform offers no way to keep the machine from
// sleeping that shogun can use here (no systemd-inhibit, no caffeinate).
var ErrNoInhibitor = errors.New("no way to keep the machine awake here")

// Inhibitor keeps the machine from sleeping while agents work: an
// unattended team must not stop because the laptop went to sleep halfway
// through a task. Release ends it; a released Inhibitor stays released.
type Inhibitor struct {
	// How names the mechanism, for the log.
	How     string
	release func()
}

// Release lets the machine sleep again.
func (i *Inhibitor) Release() {
	if i != nil && i.release != nil {
		i.release()
		i.release = nil
	}
}

// KeepAwake asks the operating system not to sleep (idle sleep; the display
// may still turn off) until the Inhibitor is released or this process ends:
// SetThreadExecutionState on Windows, `systemd-inhibit --what=idle:sleep` on
// Linux, `caffeinate -i` on macOS. why is shown by tools that list
// inhibitors. Without a mechanism it returns ErrNoInhibitor.
func KeepAwake(why string) (*Inhibitor, error) { return keepAwake(why) }
