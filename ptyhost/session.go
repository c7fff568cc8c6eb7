package ptyhost

import (
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// Options configure a Session.
type Options struct {
	// Command is the program to run.
	Command Command
	// Log receives the raw output. Writes happen on a goroutine of their
	// own; if Log falls more than LogLag bytes behind, the oldest pending
	// output is dropped and a marker written instead. Nil means no log.
	Log io.Writer
	// LogLag bounds the output waiting for Log (default 16 MiB).
	LogLag int
	// ScrollbackBytes is the size of the in-memory scrollback (default 1 MiB).
	ScrollbackBytes int
	// ScreenLag bounds the output waiting for the screen model (default 64 KiB; the screen only needs recent output).
	ScreenLag int
	// Screens, when set, lends the session its screen model, which goes
	// back at Close; nil: a model of its own.
	Screens *ScreenPool

	// screenHook runs before the screen model takes in each batch of output;
	// tests stall it to prove a stuck consumer never blocks the child.
	screenHook func()
}

// Session is one program running in a pseudo-terminal. A single reader drains
// the terminal from start to end of output whatever else happens, and fans
// each chunk out to the scrollback (in line), the log and the screen model
// (each behind a queue of its own, so neither can stall the child).
type Session struct {
	proc     Process
	scroll   *Scrollback
	screen   *screenModel
	logQ     *byteQueue
	screenQ  *byteQueue
	log      io.Writer
	started  time.Time
	inputMu  sync.Mutex
	outDone  chan struct{} // closed when the reader has seen the end of output
	consumed sync.WaitGroup

	lastOutput atomic.Int64 // unix nanoseconds of the latest output
	outBytes   atomic.Int64
	// screenBytes counts the output the screen model has taken in (or
	// dropped past ScreenLag): the screen shows all output read so far when
	// it equals outBytes.
	screenBytes atomic.Int64
	// screenSkipped is set once the screen model dropped output past
	// ScreenLag: its screen is then no longer what the output draws.
	screenSkipped atomic.Bool
	screenGen     atomic.Uint64 // bumped each time the screen model changes
	screenSig     chan struct{} // holds a token after a screen change
	nextMu        sync.Mutex
	next          chan struct{} // closed at the screen's next change; nil until asked for

	screenHook func()
	closeOnce  sync.Once

	subMu      sync.Mutex
	subs       map[*Subscription]bool
	feeds      map[*Feed]bool
	subsClosed bool
}

// Open starts the command in a new pseudo-terminal and begins draining it.
func Open(opts Options) (*Session, error) {
	proc, err := Start(opts.Command)
	if err != nil {
		return nil, err
	}
	return newSession(proc, opts), nil
}

func newSession(proc Process, opts Options) *Session {
	s := &Session{
		proc:       proc,
		scroll:     NewScrollback(orDefault(opts.ScrollbackBytes, 1<<20)),
		logQ:       newByteQueue(orDefault(opts.LogLag, 16<<20)),
		screenQ:    newByteQueue(orDefault(opts.ScreenLag, 64<<10)),
		log:        opts.Log,
		started:    time.Now(),
		outDone:    make(chan struct{}),
		screenSig:  make(chan struct{}, 1),
		screenHook: opts.screenHook,
	}
	s.lastOutput.Store(s.started.UnixNano())
	s.screen = newPooledScreenModel(opts.Screens, opts.Command.Cols, opts.Command.Rows, writerFunc(s.Write))
	s.consumed.Add(2)
	go s.drainLog()
	go s.drainScreen()
	go s.read()
	return s
}

func orDefault(v, d int) int {
	if v > 0 {
		return v
	}
	return d
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// read is the one reader of the terminal. It does nothing that can block
// except the read itself.
func (s *Session) read() {
	defer close(s.outDone)
	defer s.closeSubscriptions()
	defer s.logQ.close()
	defer s.screenQ.close()
	buf := make([]byte, 64*1024)
	for {
		n, err := s.proc.Read(buf)
		if n > 0 {
			// Counted first: a key writer holding its key while output
			// arrives (OutputPending, then OutputBytes against ScreenBytes)
			// must not miss bytes just taken from the terminal.
			end := s.outBytes.Add(int64(n))
			s.lastOutput.Store(time.Now().UnixNano())
			chunk := buf[:n]
			_, _ = s.scroll.Write(chunk)
			s.logQ.push(chunk)
			s.screenQ.push(chunk)
			s.publish(chunk, end)
		}
		if err != nil {
			return
		}
	}
}

func (s *Session) drainLog() {
	defer s.consumed.Done()
	var pending []byte
	var nextAt time.Time
	for {
		// Output that comes within logCoalesce of a write gathers until
		// then: one wake-up and one write per few milliseconds instead of
		// one per PTY read, which would take CPU from the child on a small
		// machine. Output after a pause is written at once, and no timer
		// wakes the supervisor after a write only to find nothing came.
		s.logQ.wait()
		restUntil(s.logQ, nextAt)
		var dropped int64
		var ok bool
		pending, dropped, ok = s.logQ.take(pending)
		if !ok {
			return
		}
		if s.log == nil {
			continue
		}
		if dropped > 0 {
			_, _ = fmt.Fprintf(s.log, "\r\n[shogun: %d bytes of output not logged: the log could not keep up]\r\n", dropped)
		}
		_, _ = s.log.Write(pending)
		nextAt = time.Now().Add(logCoalesce)
	}
}

// restUntil rests until t, or until q is closed: output ended, the
// consumer catches up at once.
func restUntil(q *byteQueue, t time.Time) {
	d := time.Until(t)
	if d <= 0 {
		return
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-q.done:
	}
}

func (s *Session) drainScreen() {
	defer s.consumed.Done()
	var pending []byte
	var nextAt time.Time
	for {
		s.screenQ.wait()
		restUntil(s.screenQ, nextAt)
		var ok bool
		var dropped int64
		pending, dropped, ok = s.screenQ.take(pending)
		if !ok {
			return
		}
		if s.screenHook != nil {
			s.screenHook()
		}
		began := time.Now()
		if dropped > 0 {
			s.screenSkipped.Store(true)
		}
		s.screen.writeAfter(dropped, pending)
		s.screenBytes.Add(int64(len(pending)) + dropped)
		// The generation moves under nextMu, so that ScreenNext's waiters
		// are let go by a change after theirs, never by the one they saw.
		s.nextMu.Lock()
		s.screenGen.Add(1)
		if s.next != nil {
			close(s.next)
			s.next = nil
		}
		s.nextMu.Unlock()
		select {
		case s.screenSig <- struct{}{}:
		default:
		}
		// The VT emulator is slow (each scrolled line moves the whole screen
		// buffer: about 2 MB/s), so under a flood it would take a core from
		// the child for frames nobody sees. Output that comes within
		// screenInterval of a batch waits for the next; after a flood-sized
		// batch, the next waits screenRest times the batch's cost: output
		// gathers meanwhile and the oldest is dropped past ScreenLag, so the
		// screen follows the newest output with at most a tenth of a core.
		// A TUI's redraw, far smaller, is never held back more than
		// screenInterval, which typing verification needs. Output after a
		// pause is taken in at once.
		took := time.Since(began)
		rest := screenInterval - took
		if len(pending) >= screenFlood {
			rest = max(rest, took*screenRest)
		}
		nextAt = began.Add(took + max(rest, 0))
	}
}

// logCoalesce is how long the log consumer lets output gather between writes.
const logCoalesce = 2 * time.Millisecond

// screenInterval is the shortest time between two updates of the screen
// model; under a flood (batches of screenFlood bytes or more) screenRest
// bounds its CPU share to 1/(1+screenRest).
const (
	screenInterval = 10 * time.Millisecond
	screenFlood    = 16 << 10
	screenRest     = 9
)

// Write sends input to the program as if typed. Concurrent writers never
// interleave within one call.
func (s *Session) Write(p []byte) (int, error) {
	s.inputMu.Lock()
	defer s.inputMu.Unlock()
	return s.proc.Write(p)
}

// Resize changes the terminal size of the program and of the screen model.
// A size outside CheckSize's bounds is refused before anything changes; a
// terminal that cannot be resized here (errors.ErrUnsupported: Wine 8's
// pseudo console) keeps its size, the screen model's too.
func (s *Session) Resize(cols, rows int) error {
	if err := CheckSize(cols, rows); err != nil {
		return fmt.Errorf("resize terminal: %w", err)
	}
	if err := s.proc.Resize(cols, rows); err != nil {
		return fmt.Errorf("resize terminal: %w", err)
	}
	s.screen.resize(cols, rows)
	return nil
}

// Paint returns bytes that draw the current screen, with its colours and
// the cursor, on a terminal of the same size: what a person attaching sees
// first.
func (s *Session) Paint() []byte { return s.screen.paint() }

// PaintAt is Paint, and the offset in the output the painted screen stands
// at: under a flood the screen model lags behind the output (see
// drainScreen), and a Feed needs to know what a paint showed.
func (s *Session) PaintAt() ([]byte, int64) { return s.screen.paintAt() }

// Size is the terminal's size in columns and rows.
func (s *Session) Size() (cols, rows int) { return s.screen.size() }

// Screen returns the current screen as text.
func (s *Session) Screen() ScreenSnapshot { return s.screen.snapshot() }

// ScreenGeneration changes whenever the screen model has taken in output, so
// pollers can skip rendering an unchanged screen.
func (s *Session) ScreenGeneration() uint64 { return s.screenGen.Load() }

// ScreenNext returns a channel that is closed once the screen model has
// taken in output after generation gen (ScreenGeneration), at once if it
// already has. Unlike ScreenChanged it serves any number of waiters: typing
// waits on it for the screen to change, where it looked every few
// milliseconds (each look a wake-up of an otherwise idle supervisor).
func (s *Session) ScreenNext(gen uint64) <-chan struct{} {
	s.nextMu.Lock()
	defer s.nextMu.Unlock()
	if s.screenGen.Load() != gen {
		c := make(chan struct{})
		close(c)
		return c
	}
	if s.next == nil {
		s.next = make(chan struct{})
	}
	return s.next
}

// ScreenChanged receives a value after the screen model has taken in new
// output. It is meant for one watcher, which re-reads the screen then; with
// it an idle role costs no wake-ups at all.
func (s *Session) ScreenChanged() <-chan struct{} { return s.screenSig }

// ScreenWhole reports whether the screen model has taken in every byte of
// output so far, none dropped while it lagged behind a flood: Screen is then
// exactly the screen the whole output draws. Once the session is closed it
// is the program's last screen.
func (s *Session) ScreenWhole() bool { return !s.screenSkipped.Load() }

// Scrollback returns the last output bytes kept in memory.
func (s *Session) Scrollback() []byte { return s.scroll.Bytes() }

// LastOutput is when the program last wrote anything (its start, before that).
func (s *Session) LastOutput() time.Time { return time.Unix(0, s.lastOutput.Load()) }

// OutputBytes is how many bytes the program has written so far.
func (s *Session) OutputBytes() int64 { return s.outBytes.Load() }

// unreadCounter is a Process that can tell how much output waits unread
// in the terminal (Unix: FIONREAD on the master).
type unreadCounter interface{ unread() (int, error) }

// OutputPending reports whether output the program wrote waits in the
// terminal, not read yet: the screen does not show it. False where the
// platform cannot tell (Windows' pseudo console) and once output ended.
func (s *Session) OutputPending() bool {
	u, ok := s.proc.(unreadCounter)
	if !ok {
		return false
	}
	n, err := u.unread()
	return err == nil && n > 0
}

// ScreenBytes is how much of the output (OutputBytes) the screen model has
// taken in: Screen shows everything the program wrote up to then. The screen
// model follows the output a few milliseconds behind (more under a flood).
func (s *Session) ScreenBytes() int64 { return s.screenBytes.Load() }

// Started is when the session was opened.
func (s *Session) Started() time.Time { return s.started }

// BracketedPaste reports whether the program has enabled bracketed paste
// (mode 2004), so multi-line text can be sent as one paste.
func (s *Session) BracketedPaste() bool { return s.screen.bracketedPaste() }

// AnswerQueries sets whether the screen model answers the program's terminal
// queries. Turn it off while a person's terminal is attached and answers them.
func (s *Session) AnswerQueries(on bool) { s.screen.answerQueries(on) }

// Pid is the process id of the program.
func (s *Session) Pid() int { return s.proc.Pid() }

// Wait waits for the program to exit.
func (s *Session) Wait() (Exit, error) { return s.proc.Wait() }

// OutputDone is closed once the terminal's output has ended: every process
// holding the terminal has closed it, or the session was closed.
func (s *Session) OutputDone() <-chan struct{} { return s.outDone }

// Terminate asks the program's whole process tree to end.
func (s *Session) Terminate() error { return s.proc.Terminate() }

// Kill ends the program's whole process tree at once.
func (s *Session) Kill() error { return s.proc.Kill() }

// TreeAlive reports whether any process of the program's tree still runs.
func (s *Session) TreeAlive() bool { return s.proc.TreeAlive() }

// Close releases the terminal and waits until everything read has reached the
// log and the screen model. Call it after the program has exited; it does not
// end the program.
func (s *Session) Close() error {
	var err error
	s.closeOnce.Do(func() {
		err = s.proc.Close()
		<-s.outDone
		s.consumed.Wait()
		s.screen.close()
	})
	return err
}
