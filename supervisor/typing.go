package supervisor

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/shogun-dev/shogun/ptyhost"
)

// ErrUndelivered means the text was typed but the program never showed that
// it took it: no busy pattern, and the text stayed in the input line after
// every submit attempt.
var ErrUndelivered = errors.New("submit not confirmed by the screen")

// TypeOptions tune one Type call.
type TypeOptions struct {
	// NoSubmit types the text and leaves it in the input line.
	NoSubmit bool
}

// Delivery reports what Type did.
type Delivery struct {
	// Attempts is how many times the submit key was sent.
	Attempts int
	// Confirmed is true when the screen showed the program took the text.
	Confirmed bool
}

// maxSubmitRetries is how often the submit key is sent again when the first
// one is not confirmed.
const maxSubmitRetries = 3

// Type types text into the role the way a careful person would, because AI
// TUIs treat a fast burst of characters as a paste in which "\r" is a
// newline, not a submit:
//
//  1. wait until the role is ready, not busy, not waiting for a person, and
//     nobody attached has typed for a few seconds;
//  2. send clear_input;
//  3. send the text, as a bracketed paste if it has several lines and the
//     program enabled bracketed paste;
//  4. wait submit_delay;
//  5. send the submit key as its own write;
//  6. verify: the busy pattern shows, or the text has left the input line;
//     if not, send the submit key again, up to three more times.
//
// Every prompt, nudge and notify goes through here. An unconfirmed delivery
// returns ErrUndelivered; the caller records it, nothing is dropped silently.
func (r *Role) Type(ctx context.Context, text string, opts TypeOptions) (Delivery, error) {
	r.typing.Lock()
	defer r.typing.Unlock()
	var d Delivery
	sess, gen, err := r.waitIdle(ctx)
	if err != nil {
		return d, err
	}
	if r.cfg.ClearInput != "" {
		if _, err := sess.Write([]byte(r.cfg.ClearInput)); err != nil {
			return d, err
		}
	}
	payload := text
	if strings.ContainsAny(text, "\r\n") && sess.BracketedPaste() {
		payload = "\x1b[200~" + text + "\x1b[201~"
	}
	if _, err := sess.Write([]byte(payload)); err != nil {
		return d, err
	}
	if opts.NoSubmit {
		return d, nil
	}
	probe := echoProbe{snippet: inputTail(text)}
	// Watch the echo during the pause, and wait for it a little longer if
	// it has not shown yet: only a text seen on the input line can later be
	// seen to leave it, and a fast program may take the text and clear the
	// line between two looks after the submit.
	r.observe(ctx, sess, &probe, r.cfg.SubmitDelay, watchOnly)
	if !probe.seen {
		r.observe(ctx, sess, &probe, echoWait, watchEcho)
	}
	for d.Attempts <= maxSubmitRetries {
		if err := r.sameProgram(gen); err != nil {
			return d, err
		}
		if _, err := sess.Write([]byte(r.cfg.Submit)); err != nil {
			return d, err
		}
		d.Attempts++
		if r.observe(ctx, sess, &probe, r.sup.verifyTimeout, watchSubmit) {
			d.Confirmed = true
			return d, nil
		}
		if ctx.Err() != nil {
			return d, ctx.Err()
		}
	}
	line := sess.Screen().CursorLine()
	if !probe.seen {
		return d, fmt.Errorf("%w: the text never showed on the input line (cursor line %q)", ErrUndelivered, line)
	}
	return d, fmt.Errorf("%w: the text stayed on the input line (%q)", ErrUndelivered, line)
}

// waitIdle waits until the role can be typed into and returns its session.
func (r *Role) waitIdle(ctx context.Context) (*ptyhost.Session, int, error) {
	for {
		r.mu.Lock()
		state, sess, gen, ch := r.state, r.session, r.generation, r.changed
		humanWait := r.sup.humanQuiet - time.Since(r.humanInput)
		r.mu.Unlock()
		if state == Ready && sess != nil && humanWait <= 0 {
			return sess, gen, nil
		}
		var timer <-chan time.Time
		if humanWait > 0 {
			timer = time.After(humanWait)
		}
		select {
		case <-ch:
		case <-timer:
		case <-ctx.Done():
			return nil, 0, ctx.Err()
		}
	}
}

func (r *Role) sameProgram(gen int) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.generation != gen || r.session == nil {
		return errRestarted
	}
	return nil
}

// echoWait is how long Type waits for the text to show on the input line
// before it submits anyway.
const echoWait = 250 * time.Millisecond

// echoProbe follows the typed text on the input line.
type echoProbe struct {
	snippet string
	seen    bool // the text was seen on the cursor's line
}

// What observe waits for.
type watchFor int

const (
	watchOnly   watchFor = iota // the whole time, noting the echo
	watchEcho                   // the text to show on the input line
	watchSubmit                 // the busy pattern, or the seen text to leave the line
)

// observe polls the screen for up to d, noting when the text shows on the
// input line, and returns true as soon as what it watches for happens.
func (r *Role) observe(ctx context.Context, sess *ptyhost.Session, p *echoProbe, d time.Duration, what watchFor) bool {
	deadline := time.Now().Add(d)
	for {
		scr := sess.Screen()
		onLine := p.snippet != "" && strings.Contains(scr.InputText(), p.snippet)
		p.seen = p.seen || onLine
		switch what {
		case watchEcho:
			if p.seen {
				return true
			}
		case watchSubmit:
			if r.cfg.BusyPattern != nil && r.cfg.BusyPattern.MatchString(scr.Text()) {
				return true
			}
			if p.seen && !onLine {
				return true
			}
		}
		left := time.Until(deadline)
		if left <= 0 {
			return false
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(min(left, 10*time.Millisecond)):
		}
	}
}

// inputTail is the end of the text's last line without white space: what a
// program's input line shows where the cursor is after the text was typed.
func inputTail(text string) string {
	lines := strings.FieldsFunc(text, func(r rune) bool { return r == '\n' || r == '\r' })
	if len(lines) == 0 {
		return ""
	}
	last := []rune(strings.Join(strings.Fields(lines[len(lines)-1]), ""))
	if len(last) > 10 {
		last = last[len(last)-10:]
	}
	return string(last)
}
