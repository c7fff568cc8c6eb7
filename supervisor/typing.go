package supervisor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/shogun-dev/shogun/ptyhost"
	"github.com/shogun-dev/shogun/textsafe"
)

// ErrUndelivered means the text was typed but the program never showed that
// it took it: no busy pattern, and the text stayed in the input area (or
// never showed there and nothing changed) after every submit attempt.
var ErrUndelivered = errors.New("submit not confirmed by the screen")

// ErrUnsafeText means the text holds characters that must never be typed
// into an agent: control characters other than newlines (an escape could end
// a bracketed paste, a Ctrl-C clear the composer, a carriage return submit
// half a line), C1 controls, line or paragraph separators, or bytes that are
// not UTF-8.
var ErrUnsafeText = errors.New("text holds characters that are never typed")

// ErrAttention stops a write because the role waits for a person: its
// state is attention or its screen matches the attention pattern. Type
// returns it only with TypeOptions.RefuseAttention; otherwise it waits.
var ErrAttention = errors.New("the screen asks for a person")

// TypeOptions tune one Type call.
type TypeOptions struct {
	// NoSubmit types the text and leaves it in the input area.
	NoSubmit bool
	// RefuseAttention makes Type return ErrAttention at once, having typed
	// nothing, when the role waits for a person before the text is typed,
	// instead of waiting until the person has answered: for text a person
	// sends (shogun type), who can answer the screen first. A dialog that
	// shows once the text is typed is waited out as usual.
	RefuseAttention bool
}

// Delivery reports what Type did.
type Delivery struct {
	// Attempts is how many times the submit key was sent.
	Attempts int
	// Confirmed is true when the screen showed the program took the text.
	Confirmed bool
	// SubmitDelay is the pause between the text and the submit key that the
	// role uses after this delivery (it grows when a submit became a newline).
	SubmitDelay time.Duration
	// typed: the text was written at least once.
	typed bool
}

// submitPauses are the growing waits before the submit key is sent again,
// after a submit that became a newline or showed nothing: a program that
// takes a fast Enter for part of a paste takes a later one as a submit.
var submitPauses = []time.Duration{300 * time.Millisecond, 600 * time.Millisecond, 1200 * time.Millisecond, 2400 * time.Millisecond}

// maxSubmitDelay caps what a role learns from slow submits.
const maxSubmitDelay = 5 * time.Second

// CheckTypable reports whether text may be typed into an agent. Everything
// typed is built from validated values; this is the last gate, so that no
// value can smuggle keys past it. The characters refused are textsafe's
// (controls, line separators, bidi formatting, bytes that are not UTF-8),
// except the newline and a CRLF, which the procedure handles.
func CheckTypable(text string) error {
	at, r := textsafe.Find(text, func(r rune) bool { return r == '\n' || r == '\r' })
	if at < 0 {
		if i := strings.Index(strings.ReplaceAll(text, "\r\n", ""), "\r"); i >= 0 {
			return fmt.Errorf("%w: a carriage return not followed by a line break", ErrUnsafeText)
		}
		return nil
	}
	return fmt.Errorf("%w: %s at byte %d", ErrUnsafeText, textsafe.Describe(r), at)
}

// payloadFor builds the bytes typed for text: nothing when text holds a
// character that is never typed (see CheckTypable), CRLF folded to LF, and a
// bracketed paste around a text of several lines when the program enabled
// bracketed paste. Since text can hold no escape, nothing in it can end the
// paste early.
func payloadFor(text string, bracketed bool) (string, error) {
	if err := CheckTypable(text); err != nil {
		return "", err
	}
	text = strings.ReplaceAll(text, "\r\n", "\n")
	if strings.Contains(text, "\n") && bracketed {
		return "\x1b[200~" + text + "\x1b[201~", nil
	}
	return text, nil
}

// Type types text into the role the way a careful person would, because AI
// TUIs treat a fast burst of characters as a paste in which "\r" is a
// newline, not a submit:
//
//  1. wait until the role is ready, not busy, not waiting for a person, and
//     nobody attached has typed for a few seconds;
//  2. send clear_input;
//  3. send the text, as a bracketed paste if it has several lines and the
//     program enabled bracketed paste;
//  4. wait the submit delay;
//  5. send the submit key as its own write;
//  6. verify: the busy pattern shows, or the text has left the input area
//     (the composer, however many rows it has grown to). Text still in the
//     composer means the submit became a newline: wait longer (growing
//     pauses) and submit again, clearing and typing again first if the
//     composer holds text that is not ours. A role whose submit needed a
//     longer pause keeps it for later deliveries.
//
// Nothing is written while the screen asks for a person: the check is made
// right before every write, and a dialog that appears midway pauses the
// delivery until it is answered, after which it starts again from step 1.
// With RefuseAttention a role waiting for a person before the text is typed
// ends the call at once with ErrAttention instead.
//
// Every prompt, nudge and notify goes through here. Text with control
// characters is refused with ErrUnsafeText; an unconfirmed delivery returns
// ErrUndelivered; the caller records it, nothing is dropped silently.
func (r *Role) Type(ctx context.Context, text string, opts TypeOptions) (Delivery, error) {
	if err := CheckTypable(text); err != nil {
		return Delivery{}, fmt.Errorf("type into %s: %w", r.id, err)
	}
	// Before the lock: a delivery already waiting for the person holds it.
	if opts.RefuseAttention && r.State() == Attention {
		return Delivery{}, fmt.Errorf("type into %s: %w", r.id, ErrAttention)
	}
	if err := r.typing.lock(ctx); err != nil {
		return Delivery{}, fmt.Errorf("type into %s: %w", r.id, err)
	}
	defer r.typing.unlock()
	var d Delivery
	for {
		sess, gen, err := r.waitIdle(ctx, opts.RefuseAttention)
		if errors.Is(err, ErrAttention) {
			return d, fmt.Errorf("type into %s: %w", r.id, err)
		}
		if err != nil {
			return d, err
		}
		// The keys lock only while writing and watching: a person's
		// answer (Answer) takes it while this delivery waits for one.
		r.keys.Lock()
		err = r.typeOnce(ctx, sess, gen, text, opts, &d)
		if !errors.Is(err, ErrAttention) {
			r.keys.Unlock()
			d.SubmitDelay = r.submitDelay()
			return d, err
		}
		if opts.RefuseAttention && !d.typed {
			r.keys.Unlock()
			return d, fmt.Errorf("type into %s: %w", r.id, err)
		}
		err = r.awaitPerson(ctx, sess, gen)
		r.keys.Unlock()
		if err != nil {
			return d, err
		}
	}
}

// typeOnce runs steps 2 to 6 once on one program.
func (r *Role) typeOnce(ctx context.Context, sess *ptyhost.Session, gen int, text string, opts TypeOptions, d *Delivery) error {
	k := keyWriter{r: r, sess: sess, gen: gen}
	marker := r.conf().InputMarker
	if err := k.write(r.conf().ClearInput); err != nil {
		return err
	}
	// What the empty composer looks like, once the clear has been drawn.
	time.Sleep(min(r.submitDelay(), 20*time.Millisecond))
	clean := restingScreen(ctx, sess, marker, inputTail(text))
	baseline, _ := clean.InputArea(marker)
	payload, err := payloadFor(text, sess.BracketedPaste())
	if err != nil {
		return err
	}
	if err := k.write(payload); err != nil {
		return err
	}
	d.typed = true
	if opts.NoSubmit {
		return nil
	}
	p := probe{snippet: inputTail(text), marker: marker, baseline: baseline, start: clean}
	// Watch the echo during the pause, and wait for it a little longer if
	// it has not shown yet: only a text seen in the input area can later be
	// seen to leave it.
	r.observe(ctx, sess, &p, ptyhost.ScreenSnapshot{}, r.submitDelay(), watchEcho|watchWhole)
	if !p.seen {
		r.observe(ctx, sess, &p, ptyhost.ScreenSnapshot{}, echoWait, watchEcho)
	}
	// A dialog that shows midway gets no key: once a person answered it,
	// the text is submitted again if it still waits in the composer, or
	// typed again if it is gone. Waiting for a person uses up no try.
	retype := func() error {
		if err := k.write(r.conf().ClearInput); err != nil {
			return err
		}
		if err := k.write(payload); err != nil {
			return err
		}
		time.Sleep(r.submitDelay())
		return nil
	}
	resume := func() error {
		if err := r.awaitPerson(ctx, sess, gen); err != nil {
			return err
		}
		if area, _ := p.area(sess.Screen()); !p.in(area) {
			return retype()
		}
		return nil
	}
	sawNewline := false
	for try := 0; ; try++ {
		before := sess.Screen()
		got := dialog
		if err := k.write(r.conf().Submit); err == nil {
			d.Attempts++
			got = r.observe(ctx, sess, &p, before, r.sup.verifyTimeout, watchSubmit)
		} else if !errors.Is(err, ErrAttention) {
			return err
		}
		if got == submitted {
			d.Confirmed = true
			if sawNewline {
				r.learnSubmitDelay(k.gap)
			}
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if got == dialog {
			if err := resume(); err != nil {
				return err
			}
			try--
			continue
		}
		if try >= len(submitPauses) {
			return r.undelivered(sess, &p)
		}
		sawNewline = sawNewline || got == newline
		area, marked := p.area(sess.Screen())
		r.log.Info().Int("submits", d.Attempts).Bool("newline", got == newline).Bool("seen", p.seen).
			Bool("composer_found", marked).Str("input_area", textsafe.Escape(short(area, 80))).
			Dur("pause", submitPauses[try]).Msg("submit not confirmed yet; submitting again after a pause")
		// Give the program a longer pause, watching for a late confirmation:
		// sending Enter to a program that did take the text would submit
		// whatever is in its composer next.
		switch r.observe(ctx, sess, &p, before, submitPauses[try], watchSubmit|watchWhole) {
		case submitted:
			d.Confirmed = true
			return nil
		case dialog:
			if err := resume(); err != nil {
				return err
			}
			try--
			continue
		}
		scr := sess.Screen()
		area, marked = scr.InputArea(marker)
		switch {
		case p.foreign(scr):
			// The composer holds text that is not ours: start it over.
			if err := retype(); err != nil {
				return err
			}
		case !p.seen && marked && p.emptied(area, marked):
			// The text never showed and the composer is as empty as
			// before: the program dropped what was typed (Gemini CLI
			// 0.61, starting a new session after /clear, drops keys for
			// a moment). Nothing of ours is there to submit: type it
			// again.
			// It may also be a program that shows no echo and took our
			// submits as newlines: the text then waits this try's pause
			// before the next submit, like any text in a paste window.
			if err := retype(); err != nil {
				return err
			}
			r.observe(ctx, sess, &p, ptyhost.ScreenSnapshot{}, max(submitPauses[try]-r.submitDelay(), echoWait), watchEcho)
		}
	}
}

// awaitPerson waits until the program's screen no longer asks for a person
// and the role is ready again. The screen may show a dialog before the
// watcher turned the role's state to attention, so the screen is asked too.
// The caller holds the keys lock; awaitPerson lets go of it while it waits,
// for the person's answer (Answer) takes it, and holds it again on return.
func (r *Role) awaitPerson(ctx context.Context, sess *ptyhost.Session, gen int) error {
	r.log.Info().Msg("typing paused: the screen asks for a person")
	r.keys.Unlock()
	defer r.keys.Lock()
	for {
		cur, g, err := r.waitIdle(ctx, false)
		if err != nil {
			return err
		}
		if g != gen || cur != sess {
			return errRestarted
		}
		if !r.asksForPerson(sess) {
			return nil
		}
		select {
		case <-r.Changed():
		case <-time.After(50 * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// undelivered says why the last submit was not confirmed.
func (r *Role) undelivered(sess *ptyhost.Session, p *probe) error {
	area, _ := p.area(sess.Screen())
	if !p.seen {
		return fmt.Errorf("%w: the text never showed in the input area and the program showed no sign of taking it (input area %q)", ErrUndelivered, area)
	}
	return fmt.Errorf("%w: the text stayed in the input area (%q)", ErrUndelivered, area)
}

// submitDelay is the pause the role uses between text and submit now.
func (r *Role) submitDelay() time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return max(r.conf().SubmitDelay, r.learnedDelay)
}

// learnSubmitDelay keeps a longer pause after a submit needed one: the
// program's paste window is longer than submit_delay says.
func (r *Role) learnSubmitDelay(gap time.Duration) {
	gap = min(gap.Round(10*time.Millisecond)+10*time.Millisecond, maxSubmitDelay)
	r.mu.Lock()
	old := max(r.conf().SubmitDelay, r.learnedDelay)
	if gap > old {
		r.learnedDelay = gap
	}
	r.mu.Unlock()
	if gap > old {
		r.log.Info().Dur("was", old).Dur("submit_delay", gap).Msg("a submit became a newline: the role keeps a longer submit delay")
	}
}

// keyWriter writes automatic keys into one program, checking right before
// every write that the program is the same and that its screen does not ask
// for a person.
type keyWriter struct {
	r    *Role
	sess *ptyhost.Session
	gen  int
	prev time.Time     // when the previous write went out
	gap  time.Duration // the pause before the latest write
	// looked is when the latest write's look at the terminal began, and
	// seen how much output had been read then: the screen it checked
	// showed all of that output.
	looked time.Time
	seen   int64
}

func (k *keyWriter) write(s string) error {
	if s == "" {
		return nil
	}
	k.looked, k.seen = k.r.holdWhileOutput(k.sess)
	if err := k.r.mayWrite(k.sess, k.gen); err != nil {
		return err
	}
	now := time.Now()
	if !k.prev.IsZero() {
		k.gap = now.Sub(k.prev)
	}
	k.prev = now
	k.r.mu.Lock()
	if s == k.r.conf().Submit {
		k.r.echoAt = time.Time{}
		k.r.submitAt = now
	} else {
		k.r.echoAt = now
	}
	k.r.mu.Unlock()
	_, err := k.sess.Write([]byte(s))
	return err
}

// Automatic keys wait for a quiet terminal: a dialog is output, and the
// screen model takes output in a few milliseconds after the program wrote
// it (more under load), so a check of the screen alone can pass while the
// dialog is already on its way; a submit key sent then answers it (seen:
// "Yes" picked 61 ms after the dialog showed).
const (
	// outputQuiet is how long the program must have written nothing
	// before an automatic key goes out.
	outputQuiet = 15 * time.Millisecond
	// maxOutputHold bounds the wait for quiet: a program that never stops
	// writing (a spinner, a log scrolling by) still gets its keys, each
	// once the screen has taken in the output there was by then.
	maxOutputHold = 2 * time.Second
)

// holdWhileOutput waits until the program has written nothing for
// outputQuiet (at most maxOutputHold), no output waits unread in the
// terminal, and the screen model has taken in all of the output read, so
// that the check of the screen that follows (mayWrite) sees everything the
// program wrote before the moment returned: a dialog written before it
// gets no key. It returns that moment and how much output had been read
// by then.
func (r *Role) holdWhileOutput(sess *ptyhost.Session) (time.Time, int64) {
	deadline := time.Now().Add(maxOutputHold)
	var late int64 = -1 // the output there was at the deadline
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		now := time.Now()
		pending := sess.OutputPending()
		target := sess.OutputBytes()
		if late < 0 && now.After(deadline) {
			late = target
		}
		calm := now.Sub(sess.LastOutput())
		quiet := !pending && calm >= outputQuiet
		seen := sess.ScreenBytes()
		switch {
		case quiet && seen >= target:
			return now, target
		case late >= 0 && seen >= late:
			// Past the hold, the screen as of the deadline will do.
			return now, late
		}
		timer.Reset(holdStep(calm, deadline.Sub(now)))
		select {
		case <-sess.OutputDone():
			return now, target
		case <-timer.C:
		}
	}
}

// holdStep is how long holdWhileOutput rests before it looks again,
// calm after the program's last output. Before the deadline the hold needs
// outputQuiet of calm, which nothing but time brings (newer output only
// moves it on), so it rests until then: looking every millisecond woke an
// idle supervisor about fifteen times per key written, its largest source
// of wake-ups with 64 roles. Output unread in the terminal, or not taken in
// by the screen yet, is a matter of a millisecond or so: once calm, or
// past the deadline, it looks again after one.
func holdStep(calm, untilDeadline time.Duration) time.Duration {
	if calm < outputQuiet && untilDeadline > 0 {
		return min(outputQuiet-calm, untilDeadline)
	}
	return time.Millisecond
}

// mayWrite reports whether automatic keys may go to sess now: it is still
// the role's program, and neither the role's state nor the screen as it is
// this moment asks for a person.
func (r *Role) mayWrite(sess *ptyhost.Session, gen int) error {
	r.mu.Lock()
	same := r.session == sess && r.generation == gen
	state := r.state
	r.mu.Unlock()
	if !same {
		return errRestarted
	}
	if state == Attention || r.asksForPerson(sess) {
		return ErrAttention
	}
	return nil
}

// asksForPerson matches the attention pattern against the screen as it is.
func (r *Role) asksForPerson(sess *ptyhost.Session) bool {
	return r.conf().AttentionPattern != nil && r.conf().AttentionPattern.MatchString(sess.Screen().Text())
}

// waitIdle waits until the role can be typed into and returns its session.
// With refuseAttention it returns ErrAttention as soon as the role waits for
// a person, rather than waiting for the person to answer.
func (r *Role) waitIdle(ctx context.Context, refuseAttention bool) (*ptyhost.Session, int, error) {
	for {
		r.mu.Lock()
		state, sess, gen, ch := r.state, r.session, r.generation, r.changed
		humanWait := r.sup.humanQuiet - time.Since(r.humanInput)
		r.mu.Unlock()
		if state == Ready && sess != nil && humanWait <= 0 {
			return sess, gen, nil
		}
		if refuseAttention && state == Attention {
			return nil, 0, ErrAttention
		}
		if state == Sleeping || state == WaitingSlot {
			// Nothing runs to type into; waiting here would keep whoever
			// wakes the role (the queue) from doing so.
			return nil, 0, ErrAsleep
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

// echoWait is how long Type waits for the text to show in the input area
// before it submits anyway.
const echoWait = 250 * time.Millisecond

// probe follows the typed text in the input area.
type probe struct {
	snippet  string // the end of the text, white space removed
	marker   string // the role's input marker
	baseline string // the input area, empty, before the text was typed
	seen     bool   // the text was seen in the input area
	// start is the screen just before the text was typed: its cursor row
	// is where the text starts, which bounds the input area of a role
	// without a marker.
	start ptyhost.ScreenSnapshot
}

func (p *probe) in(area string) bool { return p.snippet != "" && strings.Contains(area, p.snippet) }

// area is the input area of scr. With a marker it is the composer's rows
// from the marker down (ScreenSnapshot.InputArea). Without one, InputArea
// sees the cursor's row and, when that is blank, the non-blank rows just
// above it: after two or more submits that became newlines the rows under
// the text are all blank, and the text would look gone, the composer
// emptied. So blank rows above the cursor are passed over too, down to the
// row where the text started (moved up by as many rows as the screen has
// scrolled since), and the non-blank rows above them are the area: the
// text is still typed while it is the last thing shown above the cursor.
// A new prompt, or an answer under it, means the program took it.
func (p *probe) area(scr ptyhost.ScreenSnapshot) (string, bool) {
	area, marked := scr.InputArea(p.marker)
	if p.marker != "" || area != "" {
		return area, marked
	}
	top := p.start.CursorRow - scrolled(p.start, scr)
	for scr.CursorRow > top+1 {
		// With the cursor one row up, on a blank row, InputArea takes the
		// non-blank rows above it; "" means that row is blank as well.
		scr.CursorRow--
		if area, _ = scr.InputArea(""); area != "" {
			return area, false
		}
	}
	return "", false
}

// scrolled is how many rows the screen has scrolled up from before to now,
// judged by the rows above before's cursor row: the least shift that puts
// them where now shows them. A composer that grows at the bottom of the
// screen pushes them up a row per line. The rows the text has moved onto
// match no smaller shift, so the text is never left below the row found;
// rows redrawn otherwise match no shift at all, and then every row counts.
func scrolled(before, now ptyhost.ScreenSnapshot) int {
	row := min(before.CursorRow, len(before.Lines), len(now.Lines))
	for k := 0; k < row; k++ {
		if slices.Equal(before.Lines[k:row], now.Lines[:row-k]) {
			return k
		}
	}
	return max(row, 0)
}

// emptied reports whether the input area is back to how it was before the
// text was typed: an empty composer, as a submit leaves it.
func (p *probe) emptied(area string, marked bool) bool {
	return area == p.baseline || (marked && area == "")
}

// foreign reports whether the composer holds text that is neither ours nor
// empty, after ours was seen there.
func (p *probe) foreign(scr ptyhost.ScreenSnapshot) bool {
	area, marked := p.area(scr)
	return marked && p.seen && !p.in(area) && !p.emptied(area, marked)
}

// What observe waits for, and what it saw.
type watchFor int

const (
	watchEcho   watchFor = 1 << iota // the text to show in the input area
	watchSubmit                      // a sign the submit was taken (or became a newline)
	watchWhole                       // keep watching for the whole time, noting the echo
)

type outcome int

const (
	nothing   outcome = iota
	echoed            // the text showed in the input area
	submitted         // the program took the text
	newline           // the submit became a newline: the text is still in the composer, which changed
	dialog            // the screen asks for a person
)

// restingScreen is the screen once the program has finished painting it,
// for the empty composer to compare with: two looks alike, the cursor on
// the composer's marked row (with a marker), and the composer not holding
// the text about to be typed. A TUI that writes
// its history before its live frame (Gemini CLI) shows for a moment no
// composer at all, its last prompt-marked row the text sent last time,
// which is often this very text: taken for the empty composer, it would
// make the real one look foreign after the submit, and the text typed
// again. After restWait it takes the screen as it is.
func restingScreen(ctx context.Context, sess *ptyhost.Session, marker, snippet string) ptyhost.ScreenSnapshot {
	deadline := time.Now().Add(restWait)
	gen := sess.ScreenGeneration()
	prev := sess.Screen()
	timer := time.NewTimer(stillFor)
	defer timer.Stop()
	for {
		// A look after stillFor without a change of the screen; a change
		// starts the wait over.
		changed := false
		select {
		case <-ctx.Done():
			return prev
		case <-sess.ScreenNext(gen):
			changed = true
		case <-timer.C:
		}
		gen = sess.ScreenGeneration()
		scr := sess.Screen()
		area, _ := scr.InputArea(marker)
		settled := !changed && scr.Text() == prev.Text() && scr.CursorRow == prev.CursorRow && scr.CursorCol == prev.CursorCol &&
			(marker == "" || scr.CursorAtMarker(marker))
		if settled && (snippet == "" || !strings.Contains(area, snippet)) || time.Now().After(deadline) {
			return scr
		}
		prev = scr
		timer.Reset(stillFor)
	}
}

// restWait bounds how long restingScreen waits for a whole paint.
const restWait = 500 * time.Millisecond

// newlineHold is how long the text must stay in a composer whose cursor
// moved before the submit counts as a newline. A torn paint (history
// written, live frame not yet) shows the sent text as the last
// prompt-marked row with the cursor under it for a moment; a real newline
// stays.
const newlineHold = 100 * time.Millisecond

// confirmHold is how long a sign that the text left the composer must hold
// before it counts (two looks in a row): a program that redraws its whole
// screen may show an empty one for a moment. The busy pattern counts at once.
const confirmHold = 10 * time.Millisecond

// stillFor is how long the screen must stay the same for restingScreen to
// take it as a whole paint.
const stillFor = 5 * time.Millisecond

// observe watches the screen for up to d, noting when the text shows in the
// input area. With watchSubmit it compares with before, the screen just
// before the submit key went out, and returns submitted once the busy
// pattern shows, or the seen text has left the input area, or (for a text
// never seen) the input area is back to empty and the screen changed; it
// returns newline when the text is still in a composer whose cursor moved.
// Without watchWhole it returns at the first of these.
func (r *Role) observe(ctx context.Context, sess *ptyhost.Session, p *probe, before ptyhost.ScreenSnapshot, d time.Duration, what watchFor) outcome {
	deadline := time.Now().Add(d)
	var since time.Time   // when the current sign of a submit first showed
	var nlSince time.Time // when the text first showed still there, the cursor moved
	result := nothing
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		gen := sess.ScreenGeneration()
		scr := sess.Screen()
		area, marked := p.area(scr)
		here := p.in(area)
		if here && !p.seen {
			p.seen = true
			if what&watchEcho != 0 && what&watchWhole == 0 {
				return echoed
			}
		}
		if what&watchSubmit != 0 {
			text := scr.Text()
			if r.conf().AttentionPattern != nil && r.conf().AttentionPattern.MatchString(text) {
				// A dialog over the composer hides the text: that is no submit.
				return dialog
			}
			// A role without an input marker has only the text leaving the
			// cursor's rows to go by; with one, the composer must be found
			// and empty, as a submit leaves it.
			emptied := p.emptied(area, marked)
			left := p.seen && !here && (p.marker == "" || marked && emptied)
			if r.conf().BusyPattern != nil && r.conf().BusyPattern.MatchString(text) {
				return submitted
			}
			took := left || (!p.seen && emptied && text != before.Text())
			switch {
			case took && since.IsZero():
				since = time.Now()
			case took && time.Since(since) >= confirmHold:
				return submitted
			case !took:
				since = time.Time{}
			}
			switch {
			case took || !here || scr.CursorRow == before.CursorRow && scr.CursorCol == before.CursorCol:
				nlSince = time.Time{}
			case nlSince.IsZero():
				nlSince = time.Now()
			case time.Since(nlSince) >= newlineHold:
				if what&watchWhole == 0 {
					return newline
				}
				result = newline
			}
		}
		left := time.Until(deadline)
		if left <= 0 {
			return result
		}
		// Nothing but a change of the screen, or a sign held long enough,
		// changes what this look found: it waits for the first of them.
		wait := left
		if !since.IsZero() {
			wait = min(wait, confirmHold-time.Since(since))
		}
		if held := time.Since(nlSince); !nlSince.IsZero() && held < newlineHold {
			// Once held (a newline noted for the whole pause), only the
			// screen or the deadline can change the outcome.
			wait = min(wait, newlineHold-held)
		}
		timer.Reset(max(wait, time.Millisecond))
		select {
		case <-ctx.Done():
			return result
		case <-sess.ScreenNext(gen):
		case <-timer.C:
		}
	}
}

// inputTail is the end of the text's last line without white space: what a
// program's input area shows where the cursor is after the text was typed.
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

// short cuts s to at most n runes.
func short(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// SendKeys writes keys that are not text to submit (an interrupt such as
// Esc, a role's between_tasks keys) into the role's program by the typing
// rules: it waits until the role is ready and nobody attached has typed
// lately, writes nothing while the screen asks for a person (or the role is
// limited, since it is not ready then), and sends a trailing submit key as
// its own write after the submit delay.
func (r *Role) SendKeys(ctx context.Context, keys string) error {
	if keys == "" {
		return nil
	}
	if err := r.typing.lock(ctx); err != nil {
		return fmt.Errorf("send keys to %s: %w", r.id, err)
	}
	defer r.typing.unlock()
	sess, gen, err := r.waitIdle(ctx, false)
	if err != nil {
		return err
	}
	r.keys.Lock()
	defer r.keys.Unlock()
	if err := r.sendKeysTo(sess, gen, keys); err != nil {
		return fmt.Errorf("send keys to %s: %w", r.id, err)
	}
	return nil
}
