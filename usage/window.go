package usage

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"
)

// Window is how much of its usage window a CLI's account had used, as the
// CLI last recorded it.
type Window struct {
	// UsedPercent is the highest share used of the account's windows (Codex
	// has a short one and a weekly one: either limit stops it).
	UsedPercent float64
	// At is when the CLI recorded it.
	At time.Time
	// Resets is when that window starts again, as the CLI recorded it
	// (its resets_at, else At plus the window's length); zero when it
	// did not say.
	Resets time.Time
}

// windowTail bounds how much of a record file's end Window reads: the
// newest record of the window is near the end, and the file is the
// agent's to write, as large as it likes.
const windowTail = 1 << 20

// Window is the share of its usage window the account behind s used, as
// its CLI recorded it at or after since in a conversation held in
// s.Workdir. ok is false when nothing was recorded since: a CLI that does
// not record it (Claude Code 2.1.197 writes nothing of its window to its
// files; Gemini CLI, Copilot CLI), or a conversation that has made no
// request yet. Codex writes its account's rate limits (its API's
// x-codex-primary-used-percent and x-codex-secondary-used-percent headers)
// into each token_count event of its rollout.
func (s Source) Window(since time.Time) (w Window, ok bool, err error) {
	if s.CLI != CLICodex {
		return Window{}, false, nil
	}
	files, err := s.Files(since)
	if err != nil {
		return Window{}, false, err
	}
	// Newest first: the first file of the folder with a record since
	// holds the latest.
	for i := len(files) - 1; i >= 0; i-- {
		w, ok, err := codexWindow(files[i], s.Workdir, since)
		if err != nil || ok {
			return w, ok, err
		}
	}
	return Window{}, false, nil
}

// codexRateLimits is the rate_limits of a Codex token_count event: a
// short window (primary, 5 hours) and a weekly one (secondary).
type codexRateLimits struct {
	Primary   *codexRateWindow `json:"primary"`
	Secondary *codexRateWindow `json:"secondary"`
}

type codexRateWindow struct {
	UsedPercent   float64 `json:"used_percent"`
	WindowMinutes int64   `json:"window_minutes"`
	ResetsAt      int64   `json:"resets_at"` // Unix seconds
}

// resets is when the window starts again, recorded at at.
func (w *codexRateWindow) resets(at time.Time) time.Time {
	switch {
	case w.ResetsAt > 0:
		return time.Unix(w.ResetsAt, 0)
	case w.WindowMinutes > 0:
		return at.Add(time.Duration(w.WindowMinutes) * time.Minute)
	}
	return time.Time{}
}

// codexMine reports whether the rollout at path is a conversation held in
// workdir.
func codexMine(path, workdir string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	return codexHeld(f, workdir)
}

// codexHeld reads a rollout's first line, its session_meta, which names
// the folder the conversation is held in, and reports whether it is
// workdir.
func codexHeld(f io.ReaderAt, workdir string) bool {
	var meta codexLine
	first := make([]byte, 64<<10)
	n, _ := f.ReadAt(first, 0)
	line, _, _ := bytes.Cut(first[:n], []byte("\n"))
	return json.Unmarshal(line, &meta) == nil && meta.Type == "session_meta" && sameDir(meta.Payload.Cwd, workdir)
}

// codexWindow reads the newest rate limits of the rollout at path, if it
// is a conversation held in workdir.
func codexWindow(path, workdir string, since time.Time) (Window, bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return Window{}, false, fmt.Errorf("read codex rate limits: %w", err)
	}
	defer f.Close()
	if !codexHeld(f, workdir) {
		return Window{}, false, nil
	}
	fi, err := f.Stat()
	if err != nil {
		return Window{}, false, fmt.Errorf("read codex rate limits: %w", err)
	}
	start := max(fi.Size()-windowTail, 0)
	tail := make([]byte, fi.Size()-start)
	if _, err := f.ReadAt(tail, start); err != nil && err != io.EOF {
		return Window{}, false, fmt.Errorf("read codex rate limits: %w", err)
	}
	lines := bytes.Split(tail, []byte("\n"))
	for i := len(lines) - 1; i >= 0; i-- {
		var l struct {
			Timestamp time.Time `json:"timestamp"`
			Type      string    `json:"type"`
			Payload   struct {
				Type       string           `json:"type"`
				RateLimits *codexRateLimits `json:"rate_limits"`
			} `json:"payload"`
		}
		if json.Unmarshal(lines[i], &l) != nil || l.Type != "event_msg" || l.Payload.Type != "token_count" {
			continue
		}
		if l.Timestamp.Before(since) {
			return Window{}, false, nil
		}
		rl := l.Payload.RateLimits
		if rl == nil || (rl.Primary == nil && rl.Secondary == nil) {
			continue // a request whose answer named no limits
		}
		w, seen := Window{At: l.Timestamp}, false
		for _, rw := range []*codexRateWindow{rl.Primary, rl.Secondary} {
			if rw != nil && (!seen || rw.UsedPercent > w.UsedPercent) {
				seen = true
				w.UsedPercent, w.Resets = rw.UsedPercent, rw.resets(l.Timestamp)
			}
		}
		return w, true, nil
	}
	return Window{}, false, nil
}
