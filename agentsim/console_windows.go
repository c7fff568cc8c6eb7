//go:build windows

package agentsim

import (
	"fmt"
	"io"
	"os"
	"syscall"
	"unsafe"
)

// kernel32's console functions that syscall lacks are called here, which
// keeps golang.org/x/sys/windows inside ptyhost, as STYLE.md asks.
var (
	kernel32           = syscall.NewLazyDLL("kernel32.dll")
	procSetConsoleMode = kernel32.NewProc("SetConsoleMode")
)

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

// consoleOutput returns where the agent writes its screen: out itself
// when out is a console that interprets escape sequences (Windows 10 and
// later, once asked to with ENABLE_VIRTUAL_TERMINAL_PROCESSING) or no
// console at all, and otherwise a consoleWriter, which does what the
// sequences say through the console API, as programs written for older
// consoles do (Git for Windows' winansi.c, colorama). The function
// returned puts the console's mode back.
//
// Wine 8's console takes the mode and reads it back but still stores the
// sequences as text, so the mode alone cannot tell: consoleOutput writes a
// reset of the colours (ESC [ 0 m), which moves no cursor where it is
// interpreted, and looks whether the cursor moved.
func consoleOutput(out *os.File) (io.Writer, func()) {
	h := syscall.Handle(out.Fd())
	var mode uint32
	if err := syscall.GetConsoleMode(h, &mode); err != nil {
		return out, func() {} // not a console
	}
	restore := func() { procSetConsoleMode.Call(uintptr(h), uintptr(mode)) }
	if r, _, _ := procSetConsoleMode.Call(uintptr(h), uintptr(mode|enableVirtualTerminalProcessing)); r == 0 {
		return &consoleWriter{out: out, h: h}, restore // a console from before Windows 10
	}
	before, err := bufferInfo(h)
	if err != nil {
		return out, restore
	}
	if _, err := out.Write([]byte("\x1b[0m")); err != nil {
		return out, restore
	}
	after, err := bufferInfo(h)
	if err != nil || after.cursor == before.cursor {
		return out, restore
	}
	// The sequence was stored as text: take it off the screen again.
	w := &consoleWriter{out: out, h: h}
	w.fill(before.cursor, after.linear()-before.linear(), after.attr)
	_ = setCursor(h, before.cursor)
	return w, restore
}

// The console functions consoleWriter needs, which syscall lacks.
var (
	procGetConsoleScreenBufferInfo = kernel32.NewProc("GetConsoleScreenBufferInfo")
	procSetConsoleCursorPosition   = kernel32.NewProc("SetConsoleCursorPosition")
	procFillConsoleOutputCharacter = kernel32.NewProc("FillConsoleOutputCharacterW")
	procFillConsoleOutputAttribute = kernel32.NewProc("FillConsoleOutputAttribute")
)

// coord is a console COORD: a column and a row of the screen buffer.
type coord struct{ x, y int16 }

// packed is c as the single DWORD the console functions take it by value.
func (c coord) packed() uintptr { return uintptr(uint16(c.x)) | uintptr(uint16(c.y))<<16 }

// screenBufferInfo is what GetConsoleScreenBufferInfo says, in the layout
// of CONSOLE_SCREEN_BUFFER_INFO.
type screenBufferInfo struct {
	size                     coord
	cursor                   coord
	attr                     uint16
	left, top, right, bottom int16
	maxWindow                coord
}

// linear is the cursor's position counted in cells from the buffer's start.
func (i screenBufferInfo) linear() int { return int(i.cursor.y)*int(i.size.x) + int(i.cursor.x) }

func bufferInfo(h syscall.Handle) (screenBufferInfo, error) {
	var i screenBufferInfo
	if r, _, err := procGetConsoleScreenBufferInfo.Call(uintptr(h), uintptr(unsafe.Pointer(&i))); r == 0 {
		return i, fmt.Errorf("agent-sim: read the console's screen buffer: %w", err)
	}
	return i, nil
}

func setCursor(h syscall.Handle, c coord) error {
	if r, _, err := procSetConsoleCursorPosition.Call(uintptr(h), c.packed()); r == 0 {
		return fmt.Errorf("agent-sim: move the console's cursor: %w", err)
	}
	return nil
}

// consoleWriter writes the agent's output to a console that shows escape
// sequences as text: the text goes to the console as it is, and each
// sequence the agent writes (cursor up, down, to a column, to a row and
// column; erase the line or the screen, or their ends) becomes the console
// call that does the same. Modes (bracketed paste) have no console
// counterpart and are dropped, so the supervisor sees none: it then types
// text of several lines without paste brackets, as it does for every CLI
// that does not ask for them.
type consoleWriter struct {
	out  *os.File
	h    syscall.Handle
	rest []byte // a sequence cut short by the end of the last write
}

func (w *consoleWriter) Write(b []byte) (int, error) {
	var err error
	text := func(t []byte) {
		if err == nil {
			_, err = w.out.Write(t)
		}
	}
	csi := func(params string, final byte) {
		if err == nil {
			err = w.do(params, final)
		}
	}
	w.rest = splitCSI(append(w.rest, b...), text, csi)
	if err != nil {
		return 0, err
	}
	return len(b), nil
}

// do carries out one control sequence. Rows and columns are the window's,
// which is the whole buffer in a pseudo console; the cursor stays inside it.
func (w *consoleWriter) do(params string, final byte) error {
	if params != "" && params[0] == '?' {
		return nil // a private mode
	}
	i, err := bufferInfo(w.h)
	if err != nil {
		return err
	}
	c := i.cursor
	clampRow := func(y int) int16 { return int16(min(max(y, int(i.top)), int(i.bottom))) }
	switch final {
	case 'A':
		c.y = clampRow(int(c.y) - csiArg(params, 0, 1))
	case 'B':
		c.y = clampRow(int(c.y) + csiArg(params, 0, 1))
	case 'G':
		c.x = int16(min(csiArg(params, 0, 1)-1, int(i.size.x)-1))
	case 'H':
		c.y = clampRow(int(i.top) + csiArg(params, 0, 1) - 1)
		c.x = int16(min(int(i.left)+csiArg(params, 1, 1)-1, int(i.size.x)-1))
	case 'J':
		switch csiArg(params, 0, 0) {
		case 0: // from the cursor to the end of the window
			w.fill(c, (int(i.bottom)-int(c.y)+1)*int(i.size.x)-int(c.x), i.attr)
		case 2, 3: // the whole window; the cursor stays
			w.fill(coord{0, i.top}, (int(i.bottom)-int(i.top)+1)*int(i.size.x), i.attr)
		}
		return nil
	case 'K':
		switch csiArg(params, 0, 0) {
		case 0:
			w.fill(c, int(i.size.x)-int(c.x), i.attr)
		case 2:
			w.fill(coord{0, c.y}, int(i.size.x), i.attr)
		}
		return nil
	default:
		return nil // colours and the rest: the agent's screen does without
	}
	return setCursor(w.h, c)
}

// fill blanks n cells from c on, with the attributes attr.
func (w *consoleWriter) fill(c coord, n int, attr uint16) {
	if n <= 0 {
		return
	}
	var done uint32
	procFillConsoleOutputCharacter.Call(uintptr(w.h), ' ', uintptr(n), c.packed(), uintptr(unsafe.Pointer(&done)))
	procFillConsoleOutputAttribute.Call(uintptr(w.h), uintptr(attr), uintptr(n), c.packed(), uintptr(unsafe.Pointer(&done)))
}
