package queue

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/shogun-dev/shogun/atomicfile"
	"github.com/shogun-dev/shogun/textsafe"
)

// keepRead writes data, bytes shogun read from a queue file, into dir as
// name, or the first free "-N" variant of it, as a new file (atomicfile),
// and returns its path. Nothing already there is ever replaced. With
// same, a file already there holding exactly data is taken as this one,
// written by an earlier try that stopped before its claim was removed, so
// that a redo archives a file where the history recorded it, once.
func keepRead(dir, name string, data []byte, same bool) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("keep %s: %w", name, err)
	}
	ext := filepath.Ext(name)
	stem := strings.TrimSuffix(name, ext)
	for i := 1; i <= maxSuffix; i++ {
		n := name
		if i > 1 {
			n = fmt.Sprintf("%s-%d%s", stem, i, ext)
		}
		p, err := inFolder(dir, n)
		if err != nil {
			return "", err
		}
		fi, err := os.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if err := atomicfile.Write(p, data, runtimeFileMode); err != nil {
				return "", fmt.Errorf("keep %s: %w", name, err)
			}
			return p, nil
		case err != nil:
			return "", fmt.Errorf("keep %s: %w", name, err)
		case same && fi.Mode().IsRegular() && fi.Size() == int64(len(data)):
			if b, err := os.ReadFile(p); err == nil && bytes.Equal(b, data) {
				return p, nil
			}
		}
	}
	return "", fmt.Errorf("queue: %s and %d more names like it are taken in %s", name, maxSuffix-1, dir)
}

// reportState is what may still happen to a report that does not parse.
type reportState int

const (
	// reportFinished: its writer is done with it; it is rejected.
	reportFinished reportState = iota
	// reportWriting: its writer may still be writing it; look again soon.
	reportWriting
	// reportSuperseded: its writer has written the name again since; the
	// newer file is the report, and this one is dropped unread.
	reportSuperseded
)

// writingQuiet is how long a report that does not parse must stay
// unchanged before it is rejected (queue.settle, if longer): a CLI may
// create the file empty and fill it a moment later (Gemini CLI's
// write_file), and the intake can claim it in between.
const writingQuiet = retryFor

// writingFor bounds the wait for a writer that keeps a broken report open:
// after that it is rejected whatever its writer does.
const writingFor = time.Minute

// unfinishedReport tells whether a claimed report that does not parse may
// still be on its way. It is superseded when the name its agent wrote now
// holds another file, or the same file changed (a held report's new
// content is claimed on its own). It is still being written while the file
// changed within writingQuiet, or, where the system tells (Linux), some
// process still has it open for writing; neither for longer than
// writingFor. A claim redone after a restart is never waited for.
func (q *Queue) unfinishedReport(c claim) reportState {
	file, superseded := q.reportWrittenAgain(c)
	if superseded {
		return reportSuperseded
	}
	if c.first.IsZero() || q.now().Sub(c.first) > writingFor {
		return reportFinished
	}
	fi, err := os.Lstat(file)
	if err != nil {
		return reportFinished
	}
	quiet := max(q.config().Settings.Queue.Settle, writingQuiet)
	if time.Since(fi.ModTime()) < quiet || openForWriting(fi) {
		return reportWriting
	}
	// The writer may have written and closed the file while the
	// processes were looked at: look at the name once more.
	if _, superseded := q.reportWrittenAgain(c); superseded {
		return reportSuperseded
	}
	return reportFinished
}

// reportWrittenAgain reports whether a claimed report's name now holds
// another file, or the same file changed, and returns where a writer still
// at work would show: the agent's file, while it is the one claimed (held),
// else the claimed file.
func (q *Queue) reportWrittenAgain(c claim) (file string, superseded bool) {
	name := filepath.Join(c.dir, c.name)
	fi, err := os.Lstat(name)
	if err != nil {
		return c.path, false
	}
	if c.src == nil || !unchanged(c.src, fi) {
		return "", true
	}
	return name, false
}

// dropSuperseded removes a claimed report that did not parse and whose
// writer has written its name again since: the later file is its report.
func (q *Queue) dropSuperseded(c claim, cause error) (claim, bool) {
	if err := os.Remove(c.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return q.later(c, "remove a report written again since", err), false
	}
	q.log.Info().Str("path", textsafe.Escape(c.name)).Str("error", textsafe.Escape(cause.Error())).
		Msg("report did not parse and was written again since; the later one is read")
	q.done(c)
	return c, true
}
