package ptyhost

import "io"

// stringFilter takes out of a program's output the control strings (OSC,
// DCS, SOS, PM and APC) that the screen model has no use for, before the
// emulator sees them. Only the OSC strings whose answers or effects the
// model needs are let through: the default colours, 10, 11, 12 (set or
// query) and 110, 111, 112 (reset).
//
// It exists because the emulator's parser (github.com/charmbracelet/x/ansi)
// ends an OSC or DCS string at any byte 0x9C, the 8-bit string terminator
// ST, even where that byte is the middle of a UTF-8 character. The window
// titles that Claude Code, Codex and Gemini CLI set begin with such a
// character: "✳" (U+2733) is E2 9C B3. The parser ends the title after E2,
// drops B3, and prints the rest of the title on the screen at the cursor,
// so Claude's first row read " ClauClaudeeCode v2.1.197 ───" instead of
// "╭─── Claude Code v2.1.197". SOS, PM and APC strings fare worse: the
// parser leaves them at the first byte from 0x80 up.
//
// The filter reads strings as a UTF-8 terminal does (xterm, VTE): a byte
// that continues a UTF-8 character is data, and a string ends at BEL (OSC
// only), ST (ESC \ or a 0x9C that continues no character), or is cancelled
// by CAN or SUB. Outside strings it follows the emulator's parser byte for
// byte (which bytes start a string, and that the bytes after a UTF-8 lead
// byte belong to its character whatever they are), so both always agree on
// where a string begins. In a string it lets through, it drops the bytes
// from 0x80 up other than a terminating 0x9C: colour specs are ASCII, and no
// such byte can then end the string early in the emulator.
//
// The state carries over from one write to the next, since the PTY reader
// hands out chunks of any size. Outside strings it passes the input on
// without copying; its cost is a comparison or two per byte.
type stringFilter struct {
	state filterState
	// cont is the number of bytes still to come of the current UTF-8
	// character: outside strings as the emulator counts them, in a string as
	// a UTF-8 decoder does.
	cont uint8
	// In a string: whether the emulator is given it, and whether it is an
	// OSC (which BEL also ends).
	keep, osc bool
	// The OSC number read so far and how many digits it has.
	num, digits int
	// Bytes held back until the filter knows whether they begin a string:
	// an ESC, or an OSC introducer and its number.
	held  [6]byte
	nheld int
}

type filterState uint8

const (
	filterGround    filterState = iota // outside strings (text, CSI, ESC sequences)
	filterEscape                       // after an ESC, which is held back
	filterOscNumber                    // reading an OSC's number, held back
	filterString                       // inside a string
	filterStringEsc                    // an ESC inside a string dropped: ST if "\" follows
)

// keepOSC reports whether the emulator needs OSC n: it answers colour
// queries with it and keeps the colours it reports.
func keepOSC(n int) bool {
	switch n {
	case 10, 11, 12, 110, 111, 112:
		return true
	}
	return false
}

// write passes p to w without the strings the model does not need.
func (f *stringFilter) write(w io.Writer, p []byte) {
	start := 0 // p[start:i] is still to be passed on
	// skip leaves out p[i]: it passes on what comes before it.
	skip := func(i int) {
		if start < i {
			_, _ = w.Write(p[start:i])
		}
		start = i + 1
	}
	for i := 0; i < len(p); i++ {
		b := p[i]
		switch f.state {
		case filterGround:
			if f.cont > 0 { // the emulator takes it into the character
				f.cont--
				continue
			}
			if b < 0x80 {
				if b == 0x1b {
					skip(i)
					f.hold(b)
					f.state = filterEscape
				}
				continue
			}
			switch {
			case b >= 0xc2 && b <= 0xdf:
				f.cont = 1
			case b >= 0xe0 && b <= 0xef:
				f.cont = 2
			case b >= 0xf0 && b <= 0xf4:
				f.cont = 3
			case b == 0x9d: // 8-bit OSC
				skip(i)
				f.hold(b)
				f.num, f.digits = 0, 0
				f.state = filterOscNumber
			case b == 0x90 || b == 0x98 || b == 0x9e || b == 0x9f: // 8-bit DCS, SOS, PM, APC
				skip(i)
				f.beginString(false, false)
			}
		case filterEscape:
			switch b {
			case ']':
				skip(i)
				f.hold(b)
				f.num, f.digits = 0, 0
				f.state = filterOscNumber
			case 'P', 'X', '^', '_':
				skip(i)
				f.nheld = 0
				f.beginString(false, false)
			default: // no string: the ESC goes on, and b is read as usual
				f.release(w)
				f.state = filterGround
				start = i
				i--
			}
		case filterOscNumber:
			if b >= '0' && b <= '9' && f.digits < 3 {
				skip(i)
				f.hold(b)
				f.num = f.num*10 + int(b-'0')
				f.digits++
				continue
			}
			keep := f.digits > 0 && keepOSC(f.num) && !(b >= '0' && b <= '9')
			if keep {
				f.release(w)
				start = i
			} else {
				f.nheld = 0
			}
			f.beginString(keep, true)
			i-- // read b as part of the string
		case filterString:
			f.stringByte(i, b, skip)
		case filterStringEsc:
			if b == '\\' { // ST: the string is over
				skip(i)
				f.state = filterGround
				continue
			}
			// Another sequence cut the string short: read it as one.
			f.hold(0x1b)
			f.state = filterEscape
			i--
		}
	}
	if start < len(p) {
		_, _ = w.Write(p[start:])
	}
}

// stringByte reads byte i of the input, b, inside a string.
func (f *stringFilter) stringByte(i int, b byte, skip func(int)) {
	if f.cont > 0 && b >= 0x80 && b <= 0xbf { // part of a UTF-8 character, even 0x9C
		f.cont--
		skip(i)
		return
	}
	f.cont = 0
	switch {
	case b == 0x1b: // ST (ESC \) or another sequence ends the string
		skip(i)
		if f.keep {
			f.hold(b)
			f.state = filterEscape
		} else {
			f.state = filterStringEsc
		}
	case b == 0x07 && f.osc, b == 0x9c, b == 0x18, b == 0x1a: // BEL, ST; CAN, SUB cancel
		if !f.keep {
			skip(i)
		}
		f.state = filterGround
	case b >= 0x80:
		skip(i)
		switch {
		case b >= 0xc2 && b <= 0xdf:
			f.cont = 1
		case b >= 0xe0 && b <= 0xef:
			f.cont = 2
		case b >= 0xf0 && b <= 0xf4:
			f.cont = 3
		}
	default:
		if !f.keep {
			skip(i)
		}
	}
}

func (f *stringFilter) beginString(keep, osc bool) {
	f.keep, f.osc, f.cont = keep, osc, 0
	f.state = filterString
}

func (f *stringFilter) hold(b byte) {
	if f.nheld < len(f.held) {
		f.held[f.nheld] = b
		f.nheld++
	}
}

// release passes on the bytes held back.
func (f *stringFilter) release(w io.Writer) {
	if f.nheld > 0 {
		_, _ = w.Write(f.held[:f.nheld])
		f.nheld = 0
	}
}
