package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sync"
	"time"

	"github.com/shogun-dev/shogun/ptyhost"
)

// Terminal size and type of every recording: a role's defaults.
const (
	cols = 120
	rows = 40
)

// session is one CLI running in a real PTY through ptyhost, so its screen
// model, and the answers to the terminal queries TUIs send at start-up
// (cursor position, status, device attributes, colours), are exactly a
// role's. It keeps the raw output with the time each chunk arrived.
type session struct {
	name  string
	sess  *ptyhost.Session
	start time.Time

	mu     sync.Mutex
	raw    []byte
	chunks []chunk
}

// chunk is where one read of output ended and when it arrived.
type chunk struct {
	end int
	at  time.Duration
}

func startSession(name string, cmd ptyhost.Command) (*session, error) {
	s := &session{name: name, start: time.Now()}
	sess, err := ptyhost.Open(ptyhost.Options{Command: cmd, Log: s})
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	s.sess = sess
	return s, nil
}

// Write receives the raw output from the session's log queue.
func (s *session) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.raw = append(s.raw, p...)
	s.chunks = append(s.chunks, chunk{end: len(s.raw), at: time.Since(s.start)})
	return len(p), nil
}

// output returns the raw output so far, once the log has caught up with
// everything the reader read.
func (s *session) output() ([]byte, []chunk) {
	deadline := time.Now().Add(2 * time.Second)
	for {
		s.mu.Lock()
		n := int64(len(s.raw))
		s.mu.Unlock()
		if n >= s.sess.OutputBytes() || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return bytes.Clone(s.raw), append([]chunk(nil), s.chunks...)
}

// screen is the live screen text.
func (s *session) screen() string { return s.sess.Screen().Text() }

// waitScreen waits until the live screen matches re.
func (s *session) waitScreen(re *regexp.Regexp, within time.Duration) error {
	deadline := time.Now().Add(within)
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		if re.MatchString(s.screen()) {
			return nil
		}
		select {
		case <-s.sess.OutputDone():
			time.Sleep(300 * time.Millisecond) // let the screen model take the last output
			if re.MatchString(s.screen()) {
				return nil
			}
			return fmt.Errorf("%s: the program ended before the screen showed /%s/; last screen:\n%s", s.name, re, s.screen())
		case <-s.sess.ScreenChanged():
		case <-tick.C:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: no /%s/ on screen within %s; last screen:\n%s", s.name, re, within, s.screen())
		}
	}
}

// settle waits until output has been quiet for quiet, or max has passed:
// a screen is captured once the program has finished drawing it.
func (s *session) settle(quiet, max time.Duration) {
	end := time.Now().Add(max)
	for time.Now().Before(end) {
		if time.Since(s.sess.LastOutput()) >= quiet {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// send writes text to the program, as one write.
func (s *session) send(text string) error {
	_, err := s.sess.Write([]byte(text))
	return err
}

// close ends the program's process group: SIGTERM, then SIGKILL.
func (s *session) close() {
	_ = s.sess.Terminate()
	done := make(chan struct{})
	go func() {
		_, _ = s.sess.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = s.sess.Kill()
		<-done
	}
	for i := 0; s.sess.TreeAlive() && i < 100; i++ {
		_ = s.sess.Kill()
		time.Sleep(20 * time.Millisecond)
	}
	_ = s.sess.Close()
}

// cut returns the raw output for a capture: all of it, or with earliest the
// shortest prefix, at a chunk boundary, whose replay matches want (the
// first frame that shows a state, before whatever follows it).
func cut(raw []byte, chunks []chunk, want *regexp.Regexp, earliest bool) ([]byte, error) {
	if earliest {
		for _, c := range chunks {
			if want.MatchString(ptyhost.ReplayScreen(raw[:c.end], cols, rows).Text()) {
				return raw[:c.end], nil
			}
		}
	}
	if want.MatchString(ptyhost.ReplayScreen(raw, cols, rows).Text()) {
		return raw, nil
	}
	return nil, errors.New("the replayed output does not show /" + want.String() + "/")
}

// trace writes every distinct screen of a recording with the time it
// appeared: what a person needs to see to write or check a pattern.
func trace(w io.Writer, raw []byte, chunks []chunk) {
	// Replaying every prefix costs the square of the output: at most 300
	// screens, a tenth of a second apart at least, show what a person saw.
	step := 100 * time.Millisecond
	if n := len(chunks); n > 0 && chunks[n-1].at/300 > step {
		step = chunks[n-1].at / 300
	}
	last, lastAt := "", time.Duration(-1)
	for i, c := range chunks {
		if i < len(chunks)-1 && c.at-lastAt < step {
			continue
		}
		lastAt = c.at
		text := ptyhost.ReplayScreen(raw[:c.end], cols, rows).Text()
		if text == last {
			continue
		}
		last = text
		fmt.Fprintf(w, "===== %6.2fs  byte %d\n%s\n", c.at.Seconds(), c.end, text)
	}
}
