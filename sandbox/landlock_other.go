//go:build !linux

package sandbox

import (
	"fmt"
	"runtime"
)

// Available says which sandbox this system offers, or why there is none
// (wrapping ErrUnavailable): shogun has one on Linux only.
func Available() (string, error) {
	return "", fmt.Errorf("%w: shogun's sandbox is Landlock, which %s does not have", ErrUnavailable, runtime.GOOS)
}

// Apply fails: there is no sandbox on this system.
func (s Spec) Apply() error {
	_, err := Available()
	return err
}
