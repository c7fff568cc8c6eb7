package supervisor

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/shogun-dev/shogun/questions"
)

// A person may answer the question a role's screen asks (a permission
// prompt) without attaching: the answer is typed as keys, each only while
// the same question is still on screen, so a key never lands in a dialog
// that took its place.

var (
	// ErrNoQuestion means the role is not waiting for a person with a
	// question shogun can read.
	ErrNoQuestion = errors.New("no question on the screen")
	// ErrQuestionChanged means the screen no longer shows the question the
	// answer was for; nothing more was typed.
	ErrQuestionChanged = errors.New("the question changed")
)

// The keys that move a CLI's selection and pick the highlighted option;
// the four pinned CLIs all take them in their dialogs.
const (
	keyDown  = "\x1b[B"
	keyUp    = "\x1b[A"
	keyEnter = "\r"
)

// cursorWait bounds how long the highlight may take to follow a key.
const cursorWait = 2 * time.Second

// Question is the question on the role's screen, while the role waits for
// a person (attention). Its ID names it: a person's answer given with that
// ID is typed only into this very dialog, never into one that took its
// place, even one with the same words asked again later.
func (r *Role) Question() (questions.Question, bool) {
	st := r.Status()
	if st.State != Attention {
		return questions.Question{}, false
	}
	sess := r.Session()
	if sess == nil {
		return questions.Question{}, false
	}
	q, ok := questions.Parse(sess.Screen().Lines)
	if ok {
		q.ID = screenQuestionID(r.id, st.Since, q)
	}
	return q, ok
}

// screenQuestionID names a question on a role's screen: a hash of the
// role, when the role began to wait (the dialog appeared) and the whole
// dialog. "s-" sets it apart from a hook question's id, a number.
func screenQuestionID(role string, since time.Time, q questions.Question) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%d\x00%s\x00", role, since.UnixNano(), q.Kind)
	for _, l := range q.Dialog {
		h.Write([]byte(l))
		h.Write([]byte{0})
	}
	return "s-" + hex.EncodeToString(h.Sum(nil))[:16]
}

// Answer picks option (an index of q.Options) of q: it moves the highlight
// there with the arrow keys and presses Enter, checking before every key
// that q is still the question on screen (ErrQuestionChanged if not). It is
// a person's input: the role's own typing waits as it does for a person
// attached. It takes only the keys lock, which automatic typing lets go of
// while it waits for the dialog to be answered, never the typing lock that
// a delivery holds throughout.
func (r *Role) Answer(ctx context.Context, q questions.Question, option int) error {
	if option < 0 || option >= len(q.Options) {
		return fmt.Errorf("answer %s: option %d of %d", r.id, option+1, len(q.Options))
	}
	r.keys.Lock()
	defer r.keys.Unlock()
	sess := r.Session()
	if sess == nil {
		return fmt.Errorf("answer %s: %w", r.id, ErrNotRunning)
	}
	current := func() (questions.Question, error) {
		cur, ok := r.Question()
		if !ok || !cur.Same(q) {
			return cur, fmt.Errorf("answer %s: %w", r.id, ErrQuestionChanged)
		}
		return cur, nil
	}
	cur, err := current()
	if err != nil {
		return err
	}
	for cur.Selected != option {
		key, was := keyDown, cur.Selected
		if cur.Selected > option {
			key = keyUp
		}
		r.NoteHumanInput(time.Now())
		if _, err := sess.Write([]byte(key)); err != nil {
			return fmt.Errorf("answer %s: %w", r.id, err)
		}
		deadline := time.Now().Add(cursorWait)
		for {
			if cur, err = current(); err != nil {
				return err
			}
			if cur.Selected != was {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("answer %s: the highlight did not move from option %d", r.id, was+1)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	if _, err := current(); err != nil {
		return err
	}
	r.NoteHumanInput(time.Now())
	if _, err := sess.Write([]byte(keyEnter)); err != nil {
		return fmt.Errorf("answer %s: %w", r.id, err)
	}
	r.log.Info().Str("question", string(q.Kind)).Str("option", q.Options[option].Label).Msg("a person answered the question on screen")
	return nil
}
