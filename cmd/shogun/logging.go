package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/rs/zerolog"
	"github.com/urfave/cli/v2"
	"gopkg.in/natefinch/lumberjack.v2"

	"github.com/shogun-dev/shogun/workspace"
)

// consoleLevel is the level for stderr from --log-level, --quiet and --debug.
func consoleLevel(c *cli.Context) (zerolog.Level, error) {
	switch {
	case c.Bool("debug"):
		return zerolog.DebugLevel, nil
	case c.Bool("quiet"):
		return zerolog.WarnLevel, nil
	}
	lvl, err := zerolog.ParseLevel(c.String("log-level"))
	if err != nil || lvl == zerolog.NoLevel {
		return 0, fmt.Errorf("--log-level %q: want debug, info, warn or error", c.String("log-level"))
	}
	return lvl, nil
}

// openLogger returns a logger writing JSON (every level from debug up) to
// the supervisor's log (workspace.SupervisorLogFile) and human-readable lines
// to stderr, in colour only on a terminal without NO_COLOR. A log of the
// older layout is moved there first, and the move logged.
func openLogger(c *cli.Context, ws string, stderr io.Writer) (zerolog.Logger, io.Closer, error) {
	lvl, err := consoleLevel(c)
	if err != nil {
		return zerolog.Nop(), nil, err
	}
	l := workspace.New(ws)
	moved, moveErr := l.MoveLegacySupervisorLog()
	if err := os.MkdirAll(filepath.Dir(l.SupervisorLog()), 0o755); err != nil {
		return zerolog.Nop(), nil, fmt.Errorf("create %s: %w", filepath.Dir(l.SupervisorLog()), err)
	}
	file := &lumberjack.Logger{Filename: l.SupervisorLog(), MaxSize: 20, MaxBackups: 5}
	console := zerolog.ConsoleWriter{
		Out:           &closedPipeWriter{w: stderr},
		NoColor:       !colorful(stderr),
		TimeFormat:    time.TimeOnly,
		PartsOrder:    []string{zerolog.TimestampFieldName, zerolog.LevelFieldName, "role", zerolog.MessageFieldName},
		FieldsExclude: []string{"role"},
		// Supervisor-wide lines have no role: print nothing in its place.
		FormatPartValueByName: func(v any, _ string) string {
			if v == nil {
				return ""
			}
			return fmt.Sprint(v)
		},
	}
	var terminal zerolog.LevelWriter = levelWriter{Writer: console, min: lvl}
	if isTerminal(stderr) {
		// A person reads it: the short human log, routine events in the
		// file only, unless a log level was asked for.
		terminal = &humanLog{out: console.Out, color: colorful(stderr), quiet: !levelGiven(c), min: lvl}
	}
	w := zerolog.MultiLevelWriter(
		levelWriter{Writer: file, min: zerolog.DebugLevel},
		terminal,
	)
	log := zerolog.New(w).Level(zerolog.DebugLevel).With().Timestamp().Logger()
	if len(moved) > 0 {
		log.Info().Strs("files", moved).Str("from", l.SupervisorLogLegacy()).
			Msg("moved the supervisor's log to its own folder; " + workspace.RelTo(l.Root, l.SupervisorLogLegacy()) + " is now the log of a role named shogun")
	}
	if moveErr != nil {
		log.Warn().Err(moveErr).Msg("the supervisor's log of the older layout was not moved")
	}
	return log, file, nil
}

// colorful reports whether w is a terminal and NO_COLOR is unset.
func colorful(w io.Writer) bool {
	if _, ok := os.LookupEnv("NO_COLOR"); ok {
		return false
	}
	return isTerminal(w)
}

// levelGiven reports whether --log-level or --debug was given: then a
// terminal gets every event of that level, routine ones too.
func levelGiven(c *cli.Context) bool {
	for _, x := range c.Lineage() {
		if x.IsSet("log-level") || x.IsSet("debug") {
			return true
		}
	}
	return false
}

// closedPipeWriter is the person's terminal, or the pipe it is read
// through: once that pipe's reader is gone (a `| tee` ended by Ctrl-C),
// lines are dropped rather than each failing (and zerolog saying so on the
// same closed pipe). The log file still gets every line.
type closedPipeWriter struct {
	w    io.Writer
	gone atomic.Bool
}

func (p *closedPipeWriter) Write(b []byte) (int, error) {
	if p.gone.Load() {
		return len(b), nil
	}
	n, err := p.w.Write(b)
	if errors.Is(err, syscall.EPIPE) {
		p.gone.Store(true)
		return len(b), nil
	}
	return n, err
}

// levelWriter passes on only events at or above min.
type levelWriter struct {
	io.Writer
	min zerolog.Level
}

func (w levelWriter) WriteLevel(l zerolog.Level, p []byte) (int, error) {
	if l < w.min {
		return len(p), nil
	}
	return w.Write(p)
}
