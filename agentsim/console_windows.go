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

// consoleFiles returns the console the agent runs in: in and out as they
// are, or, for a standard handle the process was not given, the console's
// own CONIN$ or CONOUT$.
//
// A process started in a pseudo console with STARTF_USESTDHANDLES and null
// standard handles (ptyhost does so, as Windows Terminal does) gets the
// console's handles from Windows; Wine 8 leaves them null. A console
// program that wants its console whatever its standard handles are opens
// CONIN$ and CONOUT$, as Windows documents for CreateFile ("Consoles").
// A standard handle that is there but no console (a pipe, a file) is kept:
// the agent then says its input is no terminal, as on Unix.
//
// The files opened here are not closed: they are the process's console for
// the rest of its life, and closing one would wait for a pending read.
func consoleFiles(in, out *os.File) (*os.File, *os.File) {
	if missing(in) {
		if f, err := os.OpenFile("CONIN$", os.O_RDWR, 0); err == nil {
			in = f
		}
	}
	if missing(out) {
		if f, err := os.OpenFile("CONOUT$", os.O_RDWR, 0); err == nil {
			out = f
		}
	}
	return in, out
}

// missing reports whether f stands for no handle at all: os.Stdin and
// os.Stdout are nil for INVALID_HANDLE_VALUE and hold handle 0 for null.
func missing(f *os.File) bool {
	if f == nil {
		return true
	}
	h := syscall.Handle(f.Fd())
	return h == 0 || h == syscall.InvalidHandle
}

// enableVT asks the console to interpret the escape sequences the agent
// writes (a console, including a ConPTY's, shows them as text otherwise)
// and returns a function that puts the old mode back.
//
// A console that refuses the mode, or takes it and still passes the
// sequences on as they are (Wine 8's pseudo console does), needs nothing
// else: the agent writes the same bytes either way, and the terminal at
// the other end of the pseudo console interprets them.
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
