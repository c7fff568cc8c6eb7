package agentsim

import (
	"bytes"
	"strings"
	"time"
)

// keyKind is what a piece of terminal input means to the composer.
type keyKind int

const (
	keyChar      keyKind = iota // a byte of text (UTF-8 sequences arrive byte by byte)
	keyEnter                    // a `\r` after a pause: submit
	keyNewline                  // a `\r` inside a burst, or Ctrl-J: insert a newline
	keyPaste                    // the text of a bracketed paste
	keyBackspace                // DEL or BS
	keyClear                    // Ctrl-U
	keyInterrupt                // Ctrl-C
	keyEOF                      // Ctrl-D
	keyEsc                      // Escape on its own, not the start of a sequence
	keyUp                       // cursor up (dialogs move their selection)
	keyDown                     // cursor down
)

// A key is one decoded piece of input with the time its bytes arrived.
type key struct {
	kind keyKind
	b    byte   // keyChar
	text string // keyPaste
	// burst marks a keyNewline that was a `\r` inside the paste window, not
	// Ctrl-J: the record counts those against submits.
	burst bool
	at    time.Time
}

// escWait is how long a lone ESC waits for the rest of an escape sequence.
// Terminals send a sequence in one write, so anything later is a new key.
const escWait = 30 * time.Millisecond

var (
	pasteStart = []byte("[200~") // after ESC
	pasteEnd   = []byte("\x1b[201~")
)

type decodeState int

const (
	stateGround decodeState = iota
	stateEsc                // after ESC
	stateCSI                // after ESC [
	stateSS3                // after ESC O
	statePaste              // inside a bracketed paste
)

// keyDecoder turns raw terminal bytes into keys. It decides whether a `\r` is a
// submit or a newline from the arrival times of the bytes, as the real CLIs do,
// so it must be fed bytes with the time they were read, not processed.
type keyDecoder struct {
	pasteWindow time.Duration // zero: every `\r` submits

	state  decodeState
	lastAt time.Time // arrival of the previous byte; zero after a submit
	escAt  time.Time
	seq    []byte // the escape sequence being read, without the ESC
	paste  []byte
}

// feed decodes data that arrived at at, calling emit for every complete key.
// A sequence cut across two reads is continued by the next feed.
func (d *keyDecoder) feed(data []byte, at time.Time, emit func(key)) {
	for _, b := range data {
		d.feedByte(b, at, emit)
	}
}

func (d *keyDecoder) feedByte(b byte, at time.Time, emit func(key)) {
	switch d.state {
	case statePaste:
		d.paste = append(d.paste, b)
		if bytes.HasSuffix(d.paste, pasteEnd) {
			text := normalizeNewlines(string(d.paste[:len(d.paste)-len(pasteEnd)]))
			d.paste = d.paste[:0]
			d.state = stateGround
			d.lastAt = at
			emit(key{kind: keyPaste, text: text, at: at})
		}
		return
	case stateEsc:
		if at.Sub(d.escAt) < escWait {
			d.lastAt = at
			switch b {
			case '[':
				d.state = stateCSI
				d.seq = append(d.seq[:0], b)
			case 'O':
				d.state = stateSS3
			case 0x1b:
				emit(key{kind: keyEsc, at: d.escAt})
				d.escAt = at
			default:
				// Alt+key: nothing in the composer uses it.
				d.state = stateGround
			}
			return
		}
		// The ESC came alone; b starts something new.
		d.state = stateGround
		emit(key{kind: keyEsc, at: d.escAt})
	case stateCSI:
		d.lastAt = at
		d.seq = append(d.seq, b)
		if b >= 0x40 && b <= 0x7e {
			d.state = stateGround
			switch {
			case bytes.Equal(d.seq, pasteStart):
				d.state = statePaste
				d.paste = d.paste[:0]
			case string(d.seq) == "[A":
				emit(key{kind: keyUp, at: at})
			case string(d.seq) == "[B":
				emit(key{kind: keyDown, at: at})
			}
			// Other cursor keys, focus reports and the like are read and dropped.
		} else if len(d.seq) > 64 {
			d.state = stateGround
		}
		return
	case stateSS3:
		d.lastAt = at
		d.state = stateGround
		switch b {
		case 'A':
			emit(key{kind: keyUp, at: at})
		case 'B':
			emit(key{kind: keyDown, at: at})
		}
		return
	}

	prev := d.lastAt
	d.lastAt = at
	switch {
	case b == 0x1b:
		d.state = stateEsc
		d.escAt = at
	case b == '\r':
		if d.pasteWindow > 0 && !prev.IsZero() && at.Sub(prev) < d.pasteWindow {
			emit(key{kind: keyNewline, burst: true, at: at})
			return
		}
		// A second `\r` right after a submit is another submit attempt, not
		// the tail of a burst.
		d.lastAt = time.Time{}
		emit(key{kind: keyEnter, at: at})
	case b == '\n':
		emit(key{kind: keyNewline, at: at})
	case b == 0x7f || b == 0x08:
		emit(key{kind: keyBackspace, at: at})
	case b == 0x15:
		emit(key{kind: keyClear, at: at})
	case b == 0x03:
		emit(key{kind: keyInterrupt, at: at})
	case b == 0x04:
		emit(key{kind: keyEOF, at: at})
	case b == '\t' || b >= 0x20:
		emit(key{kind: keyChar, b: b, at: at})
	}
}

// pendingEsc reports whether an ESC is waiting for the rest of a sequence, and
// until when.
func (d *keyDecoder) pendingEsc() (time.Time, bool) {
	if d.state != stateEsc {
		return time.Time{}, false
	}
	return d.escAt.Add(escWait), true
}

// flush resolves an ESC that nothing followed by now as the Escape key.
func (d *keyDecoder) flush(now time.Time, emit func(key)) {
	if d.state == stateEsc && now.Sub(d.escAt) >= escWait {
		d.state = stateGround
		emit(key{kind: keyEsc, at: d.escAt})
	}
}

// normalizeNewlines turns the `\r\n` and `\r` that terminals paste into `\n`.
func normalizeNewlines(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.ReplaceAll(s, "\r", "\n")
}
