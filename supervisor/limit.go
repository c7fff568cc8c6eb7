package supervisor

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

// limitWatch follows a role's usage limit. A limit message usually stays on
// the screen after the limit has lifted, so a limit begins when the screen
// shows more limit messages than it did when the last one ended, and ends
// at its reset time, whatever the screen still shows.
type limitWatch struct {
	ack   int       // limit messages on screen that are over
	until time.Time // when the current limit lifts; zero when none
}

// check reports whether the role is limited now, and until when.
func (w *limitWatch) check(sig signals, now time.Time, wait time.Duration) (time.Time, bool) {
	if sig.limits < w.ack {
		w.ack = sig.limits // some scrolled away
	}
	if w.until.IsZero() {
		if sig.limits <= w.ack {
			return time.Time{}, false
		}
		// A reset already past (the screen was read late) still ends the
		// agent's turn: the role is limited for a moment, so whoever waits
		// on it sees the limit come and go and reminds it.
		w.until = resetAt(now, sig.reset, wait)
		if w.until.Before(now.Add(minLimited)) {
			w.until = now.Add(minLimited)
		}
	}
	if now.Before(w.until) {
		return w.until, true
	}
	w.until, w.ack = time.Time{}, sig.limits
	return time.Time{}, false
}

// minLimited is the shortest a limit lasts once its message is seen.
const minLimited = time.Second

var (
	// waitPart is one part of a duration a limit message names: "2h",
	// "30 min", "45 seconds".
	waitPart = regexp.MustCompile(`(?i)(\d+)\s*(hours?|hrs?|h|minutes?|mins?|m|seconds?|secs?|s)\b`)
	// clockTime is a time of day: "3pm", "3:45 pm", "15:45", "15:45:30".
	clockTime = regexp.MustCompile(`(?i)^\D*?(\d{1,2})(?::(\d{2}))?(?::(\d{2}))?\s*([ap])?\.?m?\b`)
)

// resetAt is when a limit lifts, from what its message says (reset): a
// duration ("in 2h 5m") or a time of day ("3:45pm", "15:45:30", the next
// such time), plus a small margin for clocks that differ; without either,
// wait from now.
func resetAt(now time.Time, reset string, wait time.Duration) time.Time {
	reset = strings.TrimSpace(reset)
	if reset == "" {
		return now.Add(wait)
	}
	if parts := waitPart.FindAllStringSubmatch(reset, -1); len(parts) > 0 {
		var d time.Duration
		for _, p := range parts {
			n, _ := strconv.Atoi(p[1])
			switch unit := strings.ToLower(p[2]); {
			case strings.HasPrefix(unit, "h"):
				d += time.Duration(n) * time.Hour
			case strings.HasPrefix(unit, "m"):
				d += time.Duration(n) * time.Minute
			default:
				d += time.Duration(n) * time.Second
			}
		}
		return now.Add(d + margin(d))
	}
	if m := clockTime.FindStringSubmatch(reset); m != nil {
		h, _ := strconv.Atoi(m[1])
		min, _ := strconv.Atoi(m[2])
		sec, _ := strconv.Atoi(m[3])
		switch strings.ToLower(m[4]) {
		case "p":
			h = h%12 + 12
		case "a":
			h %= 12
		}
		if h < 24 && min < 60 && sec < 60 {
			at := time.Date(now.Year(), now.Month(), now.Day(), h, min, sec, 0, now.Location())
			if at.Before(now.Add(-time.Minute)) {
				at = at.AddDate(0, 0, 1)
			}
			if m[2] != "" && m[3] == "" {
				// A time shown to the minute is cut, not rounded (Codex
				// 0.169 prints "try again at 2:32 AM" for a limit that
				// lifts at 2:32:40): it has lifted by the end of it.
				at = at.Add(time.Minute)
			}
			return at.Add(margin(at.Sub(now)))
		}
	}
	return now.Add(wait)
}

// margin is added to a reset time: a twentieth of the wait, between a
// second and a minute, so the next try does not come a moment too early.
func margin(d time.Duration) time.Duration {
	return min(max(d/20, time.Second), time.Minute)
}
