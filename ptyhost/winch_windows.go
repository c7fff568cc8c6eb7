package ptyhost

import "os"

// NotifyResize does nothing on Windows, which has no resize signal; callers
// also poll the terminal size.
func NotifyResize(chan<- os.Signal) {}
