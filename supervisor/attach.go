package supervisor

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/shogun-dev/shogun/ptyhost"
)

// ErrNotRunning is returned when a role has no program to attach to or type into.
var ErrNotRunning = errors.New("the role's program is not running")

// ErrWriterAttached is returned when a second person asks to type into a role.
var ErrWriterAttached = errors.New("someone is already attached to type into this role; attach with --read-only")

// Attachment is a person's terminal connected to a role: it receives the
// role's output and, unless read-only, types into it and sets its size.
type Attachment struct {
	r        *Role
	sess     *ptyhost.Session
	sub      *ptyhost.Subscription
	readOnly bool
	once     sync.Once
	// Output delivers the role's output; it is closed when the program
	// exits or the attachment is dropped for not keeping up. Nil for a
	// View, which has Feed instead.
	Output <-chan []byte
	// Feed holds the role's output for a View.
	Feed *ptyhost.Feed
	// Paint draws the screen as it was when the attachment began; nil for
	// a View, whose Feed asks for its first paint.
	Paint []byte
}

// Attach connects a person's terminal of the given size to the role. Only
// one attachment at a time may type; a typing attachment makes the role's
// terminal the person's size and lets the person's terminal answer the
// program's queries, until it ends.
func (r *Role) Attach(readOnly bool, cols, rows int) (*Attachment, error) {
	return r.attach(readOnly, cols, rows, 0)
}

// View attaches like Attach, for a viewer that repaints the screen rather
// than keep up with a flood (the web console): the output waits in Feed,
// up to backlog bytes between two takes, and the attachment is never
// dropped.
func (r *Role) View(readOnly bool, cols, rows, backlog int) (*Attachment, error) {
	return r.attach(readOnly, cols, rows, max(backlog, 1))
}

func (r *Role) attach(readOnly bool, cols, rows, backlog int) (*Attachment, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	sess := r.session
	if sess == nil {
		return nil, fmt.Errorf("attach %s: %w", r.id, ErrNotRunning)
	}
	if !readOnly {
		if r.writer != nil {
			return nil, fmt.Errorf("attach %s: %w", r.id, ErrWriterAttached)
		}
		if cols > 0 && rows > 0 {
			if err := sess.Resize(cols, rows); errors.Is(err, errors.ErrUnsupported) {
				r.log.Warn().Err(err).Msg("attached at the program's own terminal size: its terminal cannot be resized here")
			} else if err != nil {
				return nil, fmt.Errorf("attach %s: %w", r.id, err)
			}
		}
		sess.AnswerQueries(false)
	}
	a := &Attachment{r: r, sess: sess, readOnly: readOnly}
	if backlog > 0 {
		a.Feed = sess.Feed(backlog)
	} else {
		a.sub = sess.Subscribe(1024)
		a.Output = a.sub.C
		a.Paint = sess.Paint()
	}
	if !readOnly {
		r.writer = a
	}
	r.log.Info().Bool("read_only", readOnly).Msg("a person attached")
	return a, nil
}

// Input types what the person typed. It counts as human input, which holds
// automatic typing back for a while.
func (a *Attachment) Input(p []byte) error {
	if a.readOnly {
		return errors.New("read-only attachment")
	}
	a.r.NoteHumanInput(time.Now())
	_, err := a.sess.Write(p)
	return err
}

// Resize follows the person's terminal size. Where the program's terminal
// cannot be resized (Wine 8's pseudo console), it keeps its size, and the
// person sees it at that size: that is no error of the person's.
func (a *Attachment) Resize(cols, rows int) error {
	if a.readOnly {
		return nil
	}
	if err := a.sess.Resize(cols, rows); !errors.Is(err, errors.ErrUnsupported) {
		return err
	}
	return nil
}

// Repaint draws the screen as it is now, for a viewer that skipped output
// it could not keep up with, and says where in the output that screen
// stands (for Feed.Painted).
func (a *Attachment) Repaint() ([]byte, int64) { return a.sess.PaintAt() }

// Size is the role's terminal size now: the typing person's while one is
// attached, else the configured one.
func (a *Attachment) Size() (cols, rows int) { return a.sess.Size() }

// Dropped reports whether the attachment ended because the person's
// terminal did not keep up with the output.
func (a *Attachment) Dropped() bool { return a.sub != nil && a.sub.Dropped() }

// Close detaches. A typing attachment gives the role its configured size
// back and lets the screen model answer queries again.
func (a *Attachment) Close() { a.once.Do(a.close) }

func (a *Attachment) close() {
	if a.sub != nil {
		a.sub.Close()
	}
	if a.Feed != nil {
		a.Feed.Close()
	}
	if a.readOnly {
		return
	}
	a.r.mu.Lock()
	if a.r.writer == a {
		a.r.writer = nil
	}
	a.r.mu.Unlock()
	_ = a.sess.Resize(a.r.conf().Terminal.Cols, a.r.conf().Terminal.Rows)
	a.sess.AnswerQueries(true)
	a.r.log.Info().Msg("the person detached")
}
