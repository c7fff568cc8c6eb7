package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/rs/zerolog"
	"github.com/urfave/cli/v2"

	"github.com/shogun-dev/shogun/config"
	"github.com/shogun-dev/shogun/control"
	"github.com/shogun-dev/shogun/rolelog"
	"github.com/shogun-dev/shogun/store"
	"github.com/shogun-dev/shogun/textsafe"
	"github.com/shogun-dev/shogun/workspace"
)

func logsCommand() *cli.Command {
	return &cli.Command{
		Name:      "logs",
		Usage:     "print a role's log (runtime/logs/ROLE.log) as the text its terminal showed, or the bytes with --raw; --supervisor: the supervisor's own log",
		ArgsUsage: "ROLE | --supervisor",
		Description: "Without --raw the output is played through a terminal of the role's size, so the\n" +
			"text is what a person watching saw: a line is printed once it scrolled off the\n" +
			"screen, and the rows on the screen at the end (with -f: whenever the role has\n" +
			"been quiet for a second) that were not printed as they are now. A full-screen\n" +
			"program that redraws in place adds only the rows it changed.\n\n" +
			"--supervisor prints the supervisor's own log (" + workspace.SupervisorLogFile + ") as `shogun start`\n" +
			"prints it on a terminal, one line an event, but every event, routine ones too; --json prints its\n" +
			"JSON lines as written. A role named shogun has its log at runtime/logs/shogun.log like any role.",
		Flags: []cli.Flag{
			workspaceFlag,
			&cli.BoolFlag{Name: "follow", Aliases: []string{"f"}, Usage: "keep printing new output, across log rotations, until Ctrl-C"},
			&cli.BoolFlag{Name: "raw", Usage: "print the bytes as the program wrote them"},
			&cli.IntFlag{Name: "lines", Aliases: []string{"n"}, Usage: "start with the last N lines (0: all)", Value: 100},
			&cli.BoolFlag{Name: "supervisor", Usage: "print the supervisor's own log (" + workspace.SupervisorLogFile + ") instead of a role's"},
			&cli.BoolFlag{Name: "json", Usage: "with --supervisor: the log's JSON lines as written"},
		},
		Action: func(c *cli.Context) error {
			if c.Bool("supervisor") {
				return supervisorLog(c)
			}
			role, err := roleArg(c)
			if err != nil {
				return err
			}
			ws, err := workspaceDir(c)
			if err != nil {
				return err
			}
			opts := rolelog.Options{Lines: c.Int("lines"), Raw: c.Bool("raw"), Follow: c.Bool("follow")}
			// The role's terminal size, when its configuration can be read:
			// a log is read even when the configuration has gone bad.
			configured := true
			if cfg, err := config.Load(ws, nil); err == nil {
				rc, ok := cfg.Role(role)
				if ok && rc.Terminal.Cols > 0 && rc.Terminal.Rows > 0 {
					opts.Cols, opts.Rows = rc.Terminal.Cols, rc.Terminal.Rows
				}
				configured = ok
			}
			path := workspace.New(ws).RoleLog(role)
			ctx, stop := signalContext(context.Background())
			defer stop()
			err = rolelog.Follow(ctx, path, c.App.Writer, opts)
			if errors.Is(err, fs.ErrNotExist) {
				return noLogError(c, ws, role, path, configured)
			}
			return err
		},
	}
}

// supervisorLog prints the supervisor's own log for `shogun logs
// --supervisor`: one line an event, as start prints them on a terminal, or
// with --json the JSON lines as written. A workspace of the older layout that has not started since
// keeps it at its old path.
func supervisorLog(c *cli.Context) error {
	if c.NArg() > 0 {
		return usageErrorf("logs --supervisor takes no role (shogun logs %s shows the role's log)", c.Args().First())
	}
	ws, err := workspaceDir(c)
	if err != nil {
		return err
	}
	l := workspace.New(ws)
	path := l.SupervisorLog()
	if _, err := os.Stat(l.Path(workspace.SupervisorLogDir)); errors.Is(err, fs.ErrNotExist) {
		path = l.SupervisorLogLegacy()
	}
	ctx, stop := signalContext(context.Background())
	defer stop()
	out := c.App.Writer
	if !c.Bool("json") {
		out = &lineFormatter{h: &humanLog{out: c.App.Writer, color: colorful(c.App.Writer), min: zerolog.DebugLevel}}
	}
	return rolelog.Follow(ctx, path, out, rolelog.Options{Lines: c.Int("lines"), Raw: true, Follow: c.Bool("follow")})
}

// noLogError says why a role has no log: it is not a role of this
// workspace, or its program never started (with the reason the status
// gives), or it has written nothing yet.
func noLogError(c *cli.Context, ws, role, path string, configured bool) error {
	if !configured {
		return fmt.Errorf("no log at %s: there is no role %s in config/roles.yaml", path, textsafe.Escape(role))
	}
	st, err := control.NewClient(ws).Status()
	if err != nil {
		// The supervisor is gone: its history kept why the role went fatal.
		if ev, ok := lastFatal(c, ws, role); ok {
			return fmt.Errorf("no log at %s: %s's program never ran; at the last start (%s) it went %s",
				path, role, ev.At.Local().Format("2006-01-02 15:04:05"), textsafe.Escape(ev.Message))
		}
		return fmt.Errorf("no log at %s: %s's program has not run in this workspace (%v)", path, role, err)
	}
	for _, r := range st.Roles {
		switch {
		case r.ID != role:
		case r.Pid == 0 && r.LastError != "":
			return fmt.Errorf("no log at %s: %s's program never started; the status says %s: %s", path, role, textsafe.Escape(r.State), textsafe.Escape(r.LastError))
		case r.Pid == 0:
			return fmt.Errorf("no log at %s: %s's program has not started (%s)", path, role, textsafe.Escape(r.State))
		default:
			return fmt.Errorf("no log at %s: %s's program (pid %d, %s) has written nothing yet", path, role, r.Pid, textsafe.Escape(r.State))
		}
	}
	return fmt.Errorf("no log at %s: %s does not run in this supervisor (disabled, or left out by start --roles)", path, role)
}

// lastFatal is the history's last event of role going fatal ("fatal: cannot
// start: ..."), looked for among the latest events; ok is false without a
// history or such an event.
func lastFatal(c *cli.Context, ws, role string) (store.Event, bool) {
	cfg, err := config.Load(ws, nil)
	if err != nil {
		return store.Event{}, false
	}
	path := cfg.Settings.Data.SQLitePath
	if _, err := os.Stat(path); err != nil {
		return store.Event{}, false
	}
	st, err := openStore(c, nil, ws, path)
	if err != nil {
		return store.Event{}, false
	}
	defer st.Close()
	evs, err := st.Events(5000)
	if err != nil {
		return store.Event{}, false
	}
	for _, ev := range evs {
		if ev.Role == role && ev.Kind == "state" && strings.HasPrefix(ev.Message, "fatal: ") {
			return ev, true
		}
	}
	return store.Event{}, false
}
