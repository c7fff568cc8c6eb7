//go:build windows

package ptyhost

import (
	"fmt"
	"runtime"

	"golang.org/x/sys/windows"
)

var procSetThreadExecutionState = windows.NewLazySystemDLL("kernel32.dll").NewProc("SetThreadExecutionState")

const (
	esContinuous     = 0x80000000
	esSystemRequired = 0x00000001
)

// keepAwake holds ES_SYSTEM_REQUIRED on a thread of its own: the state
// belongs to the thread that set it, so that thread stays locked and alive
// until the release.
func keepAwake(string) (*Inhibitor, error) {
	if err := procSetThreadExecutionState.Find(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoInhibitor, err)
	}
	started := make(chan error)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if r, _, err := procSetThreadExecutionState.Call(esContinuous | esSystemRequired); r == 0 {
			started <- fmt.Errorf("%w: SetThreadExecutionState: %v", ErrNoInhibitor, err)
			return
		}
		started <- nil
		<-stop
		_, _, _ = procSetThreadExecutionState.Call(esContinuous)
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return &Inhibitor{How: "SetThreadExecutionState", release: func() {
		close(stop)
		<-done
	}}, nil
}
