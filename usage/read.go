package usage

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// The bounds of reading a record file, which sits in a folder the role's
// agent can write: a line with no end must not grow the supervisor's
// memory, nor be read again every cycle.
const (
	// MaxLine is the longest record line read; a longer one is passed
	// over once, never held whole.
	MaxLine = 1 << 20
	// maxReadPerCall is how much one Read goes through; the rest of the
	// file is read at the next cycles.
	maxReadPerCall = 64 << 20
	// MaxTokens is the most tokens one count of a record may hold: no
	// model call reads or writes a billion tokens, and a count below 0 or
	// beyond this is a forged or broken line, not spending.
	MaxTokens = 1_000_000_000
)

// skipMark begins a cursor's State while a line longer than MaxLine is
// passed over: the next Read goes on to its end before reading records.
const skipMark = "skip-long-line:"

// SkippedError reports lines of a record file that Read passed over: a
// record with a token count below 0 or above MaxTokens, or a line longer
// than MaxLine. The records and the cursor Read returns with it are
// good; each line is reported once, as the cursor moves past it.
type SkippedError struct {
	CLI, Path string
	// Bad counts records refused for their token counts; Long the lines
	// longer than MaxLine.
	Bad, Long int
}

func (e *SkippedError) Error() string {
	return fmt.Sprintf("%s records of %s: skipped %d with a token count below 0 or above %d, %d lines longer than %d bytes",
		e.CLI, e.Path, e.Bad, MaxTokens, e.Long, MaxLine)
}

// sane reports whether every count of t is within 0 and MaxTokens.
func (t Tokens) sane() bool {
	for _, n := range []int64{t.Input, t.Output, t.CacheRead, t.CacheWrite, t.Reasoning} {
		if n < 0 || n > MaxTokens {
			return false
		}
	}
	return true
}

// Read reads the records of s's file path written after c, and returns
// them with the cursor to read on from. Records before since are not
// returned (they predate the team). A file that is not the role's (another
// folder's conversation) returns no records and a cursor that skips it.
// A path that is not a regular file (a FIFO, a device, a link) is not
// read. Lines passed over (SkippedError) come with the records read.
func (s Source) Read(path string, c Cursor, since time.Time) ([]Record, Cursor, error) {
	return s.read(path, c, since, MaxLine, maxReadPerCall)
}

func (s Source) read(path string, c Cursor, since time.Time, maxLine, maxRead int64) ([]Record, Cursor, error) {
	f, err := openRecords(path)
	if err != nil {
		return nil, c, fmt.Errorf("read %s records: %w", s.CLI, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, c, fmt.Errorf("read %s records: %w", s.CLI, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, c, fmt.Errorf("read %s records: %s is not a regular file", s.CLI, path)
	}
	if fi.Size() < c.Offset {
		// Rewritten from the start (Gemini CLI may rewrite its file):
		// read it again; keys keep the records from counting twice.
		c = Cursor{}
	}
	if c.State == stateNotOurs || fi.Size() == c.Offset {
		return nil, c, nil
	}
	if _, err := f.Seek(c.Offset, io.SeekStart); err != nil {
		return nil, c, fmt.Errorf("read %s records: %w", s.CLI, err)
	}
	state, skipping := strings.CutPrefix(c.State, skipMark)
	var parse lineParser
	switch s.CLI {
	case CLIClaude:
		parse = &claudeParser{}
	case CLICodex:
		parse = newCodexParser(state, s.Workdir)
	case CLIGemini:
		parse = newGeminiParser(state, s.Workdir)
	case CLICopilot:
		parse = &copilotParser{}
	default:
		return nil, c, nil
	}
	var (
		recs    []Record
		skipped = SkippedError{CLI: s.CLI, Path: path}
		r       = bufio.NewReaderSize(f, 64<<10)
		pos     = c.Offset // the next byte to read
		start   = pos      // where the line being read begins
		line    []byte
	)
	for pos-c.Offset < maxRead {
		chunk, err := r.ReadSlice('\n')
		pos += int64(len(chunk))
		switch {
		case errors.Is(err, bufio.ErrBufferFull) || (errors.Is(err, io.EOF) && len(chunk) > 0):
			// A part of a line: keep it unless the line is too long.
			if !skipping {
				line = append(line, chunk...)
				if int64(len(line)) > maxLine {
					skipping, line = true, nil
					skipped.Long++
				}
			}
			if errors.Is(err, io.EOF) {
				goto done
			}
			continue
		case errors.Is(err, io.EOF):
			goto done
		case err != nil:
			return nil, c, fmt.Errorf("read %s records: %w", s.CLI, err)
		}
		lineAt := start
		start = pos
		if skipping {
			skipping = false // the long line ends here
			continue
		}
		whole := chunk
		if len(line) > 0 {
			whole = append(line, chunk...)
			line = line[:0]
		}
		if int64(len(whole)) > maxLine {
			skipped.Long++
			continue
		}
		whole = bytes.TrimSpace(whole)
		if len(whole) == 0 {
			continue
		}
		got, mine := parse.line(whole, lineAt)
		if !mine {
			return nil, Cursor{Offset: fi.Size(), State: stateNotOurs}, nil
		}
		for _, rec := range got {
			if !rec.Tokens.sane() {
				skipped.Bad++
				continue
			}
			if !rec.At.Before(since) {
				recs = append(recs, rec)
			}
		}
	}
done:
	next := Cursor{Offset: start, State: parse.state()}
	if skipping {
		// Passed over up to pos: the rest of the long line is passed
		// over next time, not read again.
		next = Cursor{Offset: pos, State: skipMark + next.State}
	}
	// An incomplete last line (the CLI is writing it) is read when it is
	// whole: the cursor stays at its start.
	if skipped.Bad > 0 || skipped.Long > 0 {
		return recs, next, &skipped
	}
	return recs, next, nil
}
