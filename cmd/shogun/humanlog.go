package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/shogun-dev/shogun/textsafe"
)

// humanLog prints the supervisor's log events as a person reads them: the
// time, the role, what happened and why, without the keys a program
// needs (args, paths, ids of commands). With quiet, routine events (a
// process started, a prompt delivered, a command queued, a role starting
// or going busy) are left to the log file: what remains is state changes a
// person acts on, tasks, and problems. `shogun start` writes it on a
// terminal; `shogun logs --supervisor` prints the log file through it.
type humanLog struct {
	out   io.Writer
	color bool
	quiet bool
	min   zerolog.Level
}

// routine are the messages a terminal leaves to the log file: the same
// story the lines kept tell, in more steps.
var routine = map[string]bool{
	"started":                  true, // the state line says so
	"exited":                   true, // likewise
	"startup prompt delivered": true,
	"command queued":           true, // "task delivered" follows
	"state starting":           true,
	"state stopping":           true,
	"state busy":               true,
	"keeping the machine awake while agents work":     true,
	"no role is working: the machine may sleep again": true,
	"web console started; `shogun ui` opens it":       true, // start prints its address
}

// hiddenFields are keys of an event that say nothing to a person reading
// the terminal; the log file keeps them.
var hiddenFields = map[string]bool{
	zerolog.TimestampFieldName: true, zerolog.LevelFieldName: true, zerolog.MessageFieldName: true,
	"role": true, "error": true, "reason": true, "args": true, "exec": true, "path": true,
	"command_id": true, "attempts": true, "submits": true, "from": true, "state": true, "run": true,
	"workspace": true, "files": true, "why": true,
}

// WriteLevel formats one event (one JSON object) as one line.
func (h *humanLog) WriteLevel(l zerolog.Level, p []byte) (int, error) {
	if l < h.min {
		return len(p), nil
	}
	line, ok := h.format(l, p)
	if !ok {
		return len(p), nil
	}
	if _, err := io.WriteString(h.out, line); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Write is WriteLevel at the level the event names.
func (h *humanLog) Write(p []byte) (int, error) {
	var e struct {
		Level string `json:"level"`
	}
	_ = json.Unmarshal(p, &e)
	l, err := zerolog.ParseLevel(e.Level)
	if err != nil {
		l = zerolog.InfoLevel
	}
	return h.WriteLevel(l, p)
}

// format is the line for an event; ok is false for a routine one on a
// quiet terminal, or a line that is no event.
func (h *humanLog) format(l zerolog.Level, p []byte) (string, bool) {
	var e map[string]any
	d := json.NewDecoder(bytes.NewReader(p))
	d.UseNumber()
	if err := d.Decode(&e); err != nil {
		return textsafe.Escape(strings.TrimRight(string(p), "\n")) + "\n", true
	}
	msg := str(e[zerolog.MessageFieldName])
	if h.quiet && l == zerolog.InfoLevel && (routine[msg] || (msg == "state ready" && str(e["from"]) == "busy") ||
		(msg == "state stopped" && str(e["reason"]) == "supervisor stopping")) {
		return "", false // the supervisor's own "stopped" line follows
	}
	var b strings.Builder
	if t, err := time.Parse(time.RFC3339, str(e[zerolog.TimestampFieldName])); err == nil {
		b.WriteString(t.Local().Format(time.TimeOnly) + " ")
	}
	switch {
	case l >= zerolog.ErrorLevel:
		b.WriteString(h.paint("31", "error:") + " ")
	case l == zerolog.WarnLevel:
		b.WriteString(h.paint("33", "warning:") + " ")
	case l == zerolog.DebugLevel:
		b.WriteString("debug: ")
	}
	if role := str(e["role"]); role != "" {
		b.WriteString(h.paint("1", textsafe.Escape(role)) + " ")
	}
	// "state ready" reads "karo ready (ready pattern on screen)".
	b.WriteString(textsafe.Escape(strings.TrimPrefix(msg, "state ")))
	if err := str(e["error"]); err != "" {
		b.WriteString(": " + textsafe.Escape(err))
	}
	if why := str(e["reason"]); why != "" {
		b.WriteString(" (" + textsafe.Escape(why) + ")")
	}
	keys := make([]string, 0, len(e))
	for k := range e {
		if !hiddenFields[k] {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := textsafe.Escape(str(e[k]))
		if strings.ContainsAny(v, " \t") {
			v = strconv.Quote(v)
		}
		fmt.Fprintf(&b, " %s=%s", textsafe.Escape(k), v)
	}
	return b.String() + "\n", true
}

func (h *humanLog) paint(code, s string) string {
	if !h.color {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

// str is a field's value as text.
func str(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	default:
		b, _ := json.Marshal(v)
		return string(b)
	}
}

// lineFormatter passes the JSON lines written to it through a humanLog,
// one whole line at a time: `shogun logs --supervisor`.
type lineFormatter struct {
	mu   sync.Mutex
	h    *humanLog
	part []byte
}

func (f *lineFormatter) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.part = append(f.part, p...)
	for {
		i := bytes.IndexByte(f.part, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := f.part[:i+1]
		if len(bytes.TrimSpace(line)) > 0 {
			if _, err := f.h.Write(line); err != nil {
				return 0, err
			}
		}
		f.part = f.part[i+1:]
	}
}
