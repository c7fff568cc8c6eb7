package control

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/shogun-dev/shogun/ptyhost"
	"github.com/shogun-dev/shogun/supervisor"
)

// The attach stream, after an HTTP upgrade to "shogun-attach", is a
// sequence of frames in both directions: a type byte, a big-endian uint32
// length, the payload.
const (
	FrameInput  = 'i' // client → server: keys typed
	FrameResize = 'z' // client → server: cols, rows as two big-endian uint16
	FrameOutput = 'o' // server → client: the role's output
	FrameEnd    = 'x' // server → client: why the stream ends, as text
	upgradeName = "shogun-attach"
	maxFrame    = 1 << 20
)

// WriteFrame writes one frame.
func WriteFrame(w io.Writer, kind byte, payload []byte) error {
	var h [5]byte
	h[0] = kind
	binary.BigEndian.PutUint32(h[1:], uint32(len(payload)))
	if _, err := w.Write(h[:]); err != nil {
		return err
	}
	_, err := w.Write(payload)
	return err
}

// ReadFrame reads one frame.
func ReadFrame(r io.Reader) (kind byte, payload []byte, err error) {
	var h [5]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return 0, nil, err
	}
	n := binary.BigEndian.Uint32(h[1:])
	if n > maxFrame {
		return 0, nil, fmt.Errorf("attach: frame of %d bytes is too large", n)
	}
	payload = make([]byte, n)
	if _, err := io.ReadFull(r, payload); err != nil {
		return 0, nil, err
	}
	return h[0], payload, nil
}

// ResizePayload encodes a terminal size for a FrameResize.
func ResizePayload(cols, rows int) []byte {
	var b [4]byte
	binary.BigEndian.PutUint16(b[:2], uint16(cols))
	binary.BigEndian.PutUint16(b[2:], uint16(rows))
	return b[:]
}

// writeTimeout is how long a person's terminal may take to accept output
// before the attachment is dropped: a stuck client must not hold anything.
const writeTimeout = 3 * time.Second

func (s *Server) attach(w http.ResponseWriter, r *http.Request) {
	role, ok := s.role(w, r)
	if !ok {
		return
	}
	if r.Header.Get("Upgrade") != upgradeName {
		fail(w, http.StatusBadRequest, errors.New("attach needs Upgrade: "+upgradeName))
		return
	}
	if !s.attaches.take() {
		fail(w, http.StatusServiceUnavailable, fmt.Errorf("attach %s: %d terminals are attached already, the most this supervisor serves", role.ID(), maxAttach))
		return
	}
	defer s.attaches.give()
	q := r.URL.Query()
	cols, _ := strconv.Atoi(q.Get("cols"))
	rows, _ := strconv.Atoi(q.Get("rows"))
	a, err := role.Attach(q.Get("read_only") == "1", cols, rows)
	if err != nil {
		fail(w, http.StatusConflict, err)
		return
	}
	defer a.Close()
	hj, ok := w.(http.Hijacker)
	if !ok {
		fail(w, http.StatusInternalServerError, errors.New("attach: connection cannot be taken over"))
		return
	}
	conn, brw, err := hj.Hijack()
	if err != nil {
		return
	}
	defer conn.Close()
	// The server's read and write timeouts are for requests; an attached
	// terminal may stay quiet for hours. Writes get their own deadline below.
	_ = conn.SetDeadline(time.Time{})
	_, _ = brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: " + upgradeName + "\r\nConnection: Upgrade\r\n\r\n")
	if err := brw.Flush(); err != nil {
		return
	}
	out := &deadlineWriter{c: conn}
	if err := WriteFrame(out, FrameOutput, a.Paint); err != nil {
		return
	}
	// The input side says why it stopped, when it was not simply the person
	// leaving: a broken frame or a refused size ends the stream with that
	// reason, never with "the role's program exited".
	inputEnd := make(chan string, 1)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		// Input and resizes from the person, until the client goes away.
		defer wg.Done()
		// The person left or the stream broke: end the output side too, even
		// if the role is silent, so the role gets its own size back at once.
		defer a.Close()
		inputEnd <- s.readInput(brw.Reader, a)
	}()
	reason := "the role's program exited"
	stuck := false
	for chunk := range a.Output {
		if err := WriteFrame(out, FrameOutput, chunk); err != nil {
			reason, stuck = "", errors.Is(err, os.ErrDeadlineExceeded)
			break
		}
	}
	why, inputDone := "", false
	select {
	case why = <-inputEnd:
		inputDone = true
		reason = why // "" when the person left: nobody to tell
	default:
	}
	if stuck || a.Dropped() {
		reason = "detached: your terminal did not keep up with the output"
		s.log.Warn().Str("role", role.ID()).Msg("dropped an attached terminal that stopped reading")
	}
	if reason != "" {
		_ = WriteFrame(out, FrameEnd, []byte(reason))
	}
	conn.Close()
	wg.Wait()
	if inputDone && why != "" {
		s.log.Warn().Str("role", role.ID()).Str("reason", why).Msg("ended an attach stream")
	}
}

// readInput applies the person's frames to the attachment until the stream
// ends. It returns "" when the person simply went away, else the reason to
// tell them: the stream broke (a malformed or oversized frame) or a frame
// was refused (a terminal size out of range).
func (s *Server) readInput(r io.Reader, a *supervisor.Attachment) string {
	in := bufio.NewReader(r)
	for {
		kind, p, err := ReadFrame(in)
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) || errors.Is(err, os.ErrDeadlineExceeded) {
				return ""
			}
			return fmt.Sprintf("the attach stream broke: %v", err)
		}
		switch kind {
		case FrameInput:
			if err := a.Input(p); err != nil {
				return ""
			}
		case FrameResize:
			if len(p) != 4 {
				return fmt.Sprintf("the attach stream broke: a resize frame of %d bytes (want 4)", len(p))
			}
			cols, rows := int(binaryU16(p[:2])), int(binaryU16(p[2:]))
			if err := a.Resize(cols, rows); err != nil {
				return fmt.Sprintf("refused your terminal size %dx%d: shogun takes %d to %d columns and %d to %d rows; resize the window and attach again",
					cols, rows, ptyhost.MinCols, ptyhost.MaxCols, ptyhost.MinRows, ptyhost.MaxRows)
			}
		default:
			return fmt.Sprintf("the attach stream broke: unknown frame type %q", kind)
		}
	}
}

func binaryU16(b []byte) uint16 { return binary.BigEndian.Uint16(b) }

// deadlineWriter gives every write to the person's terminal a deadline.
type deadlineWriter struct{ c net.Conn }

func (d *deadlineWriter) Write(p []byte) (int, error) {
	_ = d.c.SetWriteDeadline(time.Now().Add(writeTimeout))
	return d.c.Write(p)
}
