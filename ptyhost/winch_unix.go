//go:build !windows

package ptyhost

import (
	"os"
	"os/signal"
	"syscall"
)

// NotifyResize makes c receive a value when the calling process's terminal
// changes size (SIGWINCH), for `shogun attach` to follow it.
func NotifyResize(c chan<- os.Signal) { signal.Notify(c, syscall.SIGWINCH) }
