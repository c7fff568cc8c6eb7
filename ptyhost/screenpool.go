package ptyhost

import (
	"io"
	"sync"
	"sync/atomic"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/vt"
)

// vtCore is a terminal emulator with shogun's handlers registered on it once
// (vt's handlers add up, they cannot be replaced), and the goroutine that
// drains the emulator's answers to terminal queries into the program's
// terminal. A ScreenPool keeps cores between sessions.
type vtCore struct {
	emu            *vt.Emulator
	bracketedPaste atomic.Bool
	answer         atomic.Bool // whether answers go to the program
	// reply is where answers go: the session's terminal, or nowhere while
	// the core waits in a pool.
	reply   atomic.Pointer[io.Writer]
	replies sync.WaitGroup
	// flushed tells detach that the drain has passed its marker.
	flushed chan struct{}
	// usedAlt: a program showed the alternate screen, whose scrollback vt
	// keeps (up to 10,000 rows) and lets no one clear or cap: such a core
	// is not kept for the next program.
	usedAlt atomic.Bool
}

func newVTCore(cols, rows int) *vtCore {
	c := &vtCore{emu: vt.NewEmulator(cols, rows), flushed: make(chan struct{})}
	// The emulator keeps 10,000 rows of scrollback by default, about 100 MB
	// of cells for a role that has printed that much; the model needs only
	// the screen (the session keeps the raw output).
	c.emu.SetScrollbackSize(1)
	c.setReply(io.Discard)
	c.emu.SetCallbacks(vt.Callbacks{
		EnableMode: func(m ansi.Mode) {
			switch m {
			case ansi.ModeBracketedPaste:
				c.bracketedPaste.Store(true)
			case ansi.ModeAltScreen, ansi.ModeAltScreenSaveCursor:
				c.usedAlt.Store(true)
			}
		},
		DisableMode: func(m ansi.Mode) {
			if m == ansi.ModeBracketedPaste {
				c.bracketedPaste.Store(false)
			}
		},
	})
	// xterm answers DSR 5 ("are you OK?") with CSI 0 n; the emulator's own
	// handler sends the DEC form CSI ? 0 n, which some TUIs do not accept.
	c.emu.RegisterCsiHandler('n', func(params ansi.Params) bool {
		if n, _, ok := params.Param(0, 0); ok && n == 5 {
			_, _ = io.WriteString(c.emu.InputPipe(), "\x1b[0n")
			return true
		}
		return false
	})
	// ED 2 clears the screen, as xterm does. The emulator's own handler also
	// copies the rows into the screen's scrollback, and the alternate
	// screen's cannot be capped: a full-screen program that clears to redraw
	// would add a screenful each time, up to 10,000 rows.
	c.emu.RegisterCsiHandler('J', func(params ansi.Params) bool {
		if n, _, _ := params.Param(0, 0); n != 2 {
			return false
		}
		w, h := c.emu.Width(), c.emu.Height()
		for y := range h {
			for x := range w {
				c.emu.SetCell(x, y, nil)
			}
		}
		return true
	})
	// The emulator writes its answers into a pipe that must be drained, or
	// the next query would block the screen model forever.
	c.replies.Add(1)
	go func() {
		defer c.replies.Done()
		buf := make([]byte, 256)
		for {
			n, err := c.emu.Read(buf)
			switch {
			case n == 1 && buf[0] == flushMark:
				// No answer is one NUL (a pipe read never joins two
				// writes): detach's marker, forwarded to no one.
				c.flushed <- struct{}{}
			case n > 0 && c.answer.Load():
				_, _ = (*c.reply.Load()).Write(buf[:n])
			}
			if err != nil {
				return
			}
		}
	}()
	c.answer.Store(true)
	return c
}

func (c *vtCore) setReply(w io.Writer) { c.reply.Store(&w) }

// flushMark is the byte detach sends through the answer pipe.
const flushMark = 0

// detach sends the core's answers nowhere from now on, and waits until
// every answer the emulator gave before has gone where it was going: the
// drain forwards each read before it reads the next, so once it has passed
// the marker written now, nothing earlier is left to go to the next
// session's program, and the marker itself goes nowhere.
func (c *vtCore) detach() {
	c.setReply(io.Discard)
	if _, err := c.emu.InputPipe().Write([]byte{flushMark}); err == nil {
		<-c.flushed
	}
}

// reset makes the emulator as a new one of the given size: what the last
// program left (a sequence half written, the alternate screen, modes,
// margins, colours, the cursor, character sets, tab stops) is gone.
func (c *vtCore) reset(cols, rows int) {
	// CAN ends any sequence; four, as a UTF-8 character still being read
	// takes up to three more bytes first. RIS resets both screens but not
	// which one shows, so the alternate screen is left first. OSC 110 to
	// 112 take back the default colours a program set (OSC 10 to 12).
	_, _ = io.WriteString(c.emu, "\x18\x18\x18\x18\x1b[?1049l\x1bc\x1b]110\x07\x1b]111\x07\x1b]112\x07")
	c.emu.Resize(cols, rows)
	c.bracketedPaste.Store(false)
	c.answer.Store(true)
}

// close ends the drain. It closes the reply pipe rather than calling
// Emulator.Close, whose closed flag is read without a lock by the blocked
// Read.
func (c *vtCore) close() {
	if pw, ok := c.emu.InputPipe().(*io.PipeWriter); ok {
		_ = pw.Close()
	}
	c.replies.Wait()
}

// ScreenPool keeps the screen models of ended sessions for the next ones to
// start. charmbracelet/x/vt gives every emulator a 4 MB parser buffer that
// no one can size: a new one per start was most of what a team whose roles
// sleep and wake allocated, and the peak of the supervisor's memory. A
// session given a pool takes its model from it and gives it back at Close,
// keeping what its screen showed last for those who still ask. The zero
// value is not usable: use NewScreenPool.
type ScreenPool struct {
	mu     sync.Mutex
	idle   []*vtCore
	keep   int
	closed bool
}

// NewScreenPool returns a pool that keeps up to keep idle screen models.
func NewScreenPool(keep int) *ScreenPool { return &ScreenPool{keep: max(keep, 0)} }

// get returns a reset core of the given size, a new one when none waits.
func (p *ScreenPool) get(cols, rows int) *vtCore {
	if p != nil {
		p.mu.Lock()
		var c *vtCore
		if n := len(p.idle); n > 0 {
			c = p.idle[n-1]
			p.idle[n-1] = nil
			p.idle = p.idle[:n-1]
		}
		p.mu.Unlock()
		if c != nil {
			c.reset(cols, rows)
			return c
		}
	}
	return newVTCore(cols, rows)
}

// put takes a core back, or ends it when the pool is full or closed, or
// its alternate screen holds scrollback.
func (p *ScreenPool) put(c *vtCore) {
	c.detach()
	p.mu.Lock()
	if !p.closed && len(p.idle) < p.keep && !c.usedAlt.Load() {
		p.idle = append(p.idle, c)
		c = nil
	}
	p.mu.Unlock()
	if c != nil {
		c.close()
	}
}

// Close ends the idle screen models' goroutines; models given back later
// are ended at once.
func (p *ScreenPool) Close() {
	p.mu.Lock()
	idle := p.idle
	p.idle, p.closed = nil, true
	p.mu.Unlock()
	for _, c := range idle {
		c.close()
	}
}
