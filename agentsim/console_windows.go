//go:build windows

package agentsim

import (
	"os"
	"syscall"
)

// Only kernel32's SetConsoleMode is needed, and syscall lacks it; calling it
// here keeps golang.org/x/sys/windows inside ptyhost, as STYLE.md asks.
var procSetConsoleMode = syscall.NewLazyDLL("kernel32.dll").NewProc("SetConsoleMode")

const enableVirtualTerminalProcessing = 0x0004

// enableVT makes the console interpret the escape sequences the agent writes
// (a console, including a ConPTY's, shows them as text otherwise) and returns
// a function that puts the old mode back.
func enableVT(out *os.File) (restore func()) {
	h := syscall.Handle(out.Fd())
	var mode uint32
	if err := syscall.GetConsoleMode(h, &mode); err != nil {
		return func() {}
	}
	if r, _, _ := procSetConsoleMode.Call(uintptr(h), uintptr(mode|enableVirtualTerminalProcessing)); r == 0 {
		return func() {}
	}
	return func() { procSetConsoleMode.Call(uintptr(h), uintptr(mode)) }
}
