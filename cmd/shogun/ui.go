package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/rs/zerolog"
	"github.com/urfave/cli/v2"

	"github.com/shogun-dev/shogun/config"
	"github.com/shogun-dev/shogun/console"
	"github.com/shogun-dev/shogun/team"
	"github.com/shogun-dev/shogun/textsafe"
)

// startConsole serves the web console beside the control socket, unless
// ui.enabled is false. A console that cannot start (the port is taken) is
// one line on stderr and in the log; the supervisor runs on without it. The
// returned channel is closed once the console has stopped.
func startConsole(ctx context.Context, c *cli.Context, ws string, cfg *config.Config, t *team.Team, stop func(), log zerolog.Logger) <-chan struct{} {
	done := make(chan struct{})
	record := func(s console.State) {
		if err := console.WriteState(ws, s); err != nil {
			log.Warn().Err(err).Msg("shogun ui will not find the console")
		}
	}
	if !cfg.Settings.UI.Enabled {
		record(console.StoppedState("it is off: ui.enabled: false in config/settings.yaml"))
		close(done)
		return done
	}
	con, err := console.Listen(console.Options{Workspace: ws, UI: cfg.Settings.UI, Team: t, Stop: stop, Log: log, RotateToken: c.Bool("rotate-token")})
	if err != nil {
		record(console.StoppedState("it could not start: " + err.Error()))
		log.Error().Msg(err.Error() + "; the supervisor runs without it")
		close(done)
		return done
	}
	record(console.RunningState(con))
	// No login here: `shogun ui` opens a login link that works once.
	if p := con.TakenPort(); p != 0 {
		fmt.Fprintf(c.App.Writer, "web console: %s (ui.port %d is in use by another program, so it took port %d; `shogun ui` opens it logged in)\n",
			con.Address(), p, con.UI().Port)
	} else {
		fmt.Fprintf(c.App.Writer, "web console: %s (`shogun ui` opens it logged in)\n", con.Address())
	}
	log.Info().Str("address", "http://"+con.Addr().String()+"/").Int("taken_port", con.TakenPort()).Msg("web console started; `shogun ui` opens it")
	go func() {
		defer close(done)
		if err := con.Serve(ctx); err != nil {
			log.Warn().Err(err).Msg("web console")
		}
	}()
	return done
}

// runningConsole is the ui settings of the running supervisor's console
// (on the port it took when ui.port was in use), or why it has none.
func runningConsole(ws string, ui config.UISettings, supervisorPid int) (config.UISettings, error) {
	st, ok, err := console.ReadState(ws)
	if err != nil {
		return ui, err
	}
	if !ok || st.Pid != supervisorPid {
		// A supervisor older than runtime/state/ui.json: the settings.
		if !ui.Enabled {
			return ui, errors.New("the web console is not running: it is off: ui.enabled: false in config/settings.yaml")
		}
		return ui, nil
	}
	if !st.Running {
		return ui, fmt.Errorf("the web console is not running: %s", textsafe.Escape(st.Reason))
	}
	return st.On(ui), nil
}

func uiCommand() *cli.Command {
	return &cli.Command{
		Name:  "ui",
		Usage: "open the web console in the browser, logged in by a link that works once",
		Description: "The running supervisor serves the console at http://{ui.host}:{ui.port}/ (config/settings.yaml).\n" +
			"shogun ui asks it for a login link that works once, within a minute, and prints it. The\n" +
			"browser is handed a page in runtime/state that only you can read, which carries the link:\n" +
			"other users of the machine can read every command line. The login token of\n" +
			"runtime/state/ui.token never leaves this process but as a request header to the console\n" +
			"(scripts send it as Authorization: Bearer). --rotate replaces the token first, which ends\n" +
			"every browser's session.\n\n" +
			"When ui.port was in use the console took a free port, recorded in runtime/state/ui.json with\n" +
			"why a console is not running; shogun ui reads it. Without a browser (no display, the opener\n" +
			"failing) it says so and prints the ssh -L line that reaches the console from another machine.",
		Flags: []cli.Flag{
			workspaceFlag,
			&cli.BoolFlag{Name: "no-open", Usage: "print the login link only"},
			&cli.BoolFlag{Name: "rotate", Usage: "replace the login token first, ending every session"},
		},
		Action: func(c *cli.Context) error {
			ws, err := workspaceDir(c)
			if err != nil {
				return err
			}
			cfg, err := loadConfig(ws)
			if err != nil {
				return err
			}
			cl, err := client(c)
			if err != nil {
				return err
			}
			status, err := cl.Status()
			if err != nil {
				return err
			}
			ui, err := runningConsole(ws, cfg.Settings.UI, status.Pid)
			if err != nil {
				return err
			}
			tok, err := console.ReadToken(ws)
			if err != nil {
				return err
			}
			if err := console.Probe(ui, tok); err != nil {
				return err
			}
			if c.Bool("rotate") {
				if err := console.RotateToken(ui, tok); err != nil {
					return err
				}
				if tok, err = console.ReadToken(ws); err != nil {
					return err
				}
				fmt.Fprintln(c.App.ErrWriter, "replaced the web console's login token; every session ended")
			}
			link, err := console.NewLoginLink(ui, tok)
			if err != nil {
				return err
			}
			fmt.Fprintln(c.App.Writer, link.URL)
			if c.Bool("no-open") {
				return nil
			}
			page, err := console.WriteLoginPage(ws, link.URL)
			if err != nil {
				return err
			}
			if err := openBrowser(c.Context, page); err != nil {
				fmt.Fprintf(c.App.ErrWriter, "shogun: no browser opened (%v): open the link above yourself; it works once, within a minute.\n"+
					"From another machine, forward the port first, then open the link there:\n  %s\n", err, sshForward(ui))
			}
			return nil
		},
	}
}

// sshForward is the ssh command that makes the console of ui reachable from
// another machine on the same port, so that the link's host and port hold
// there too (the console checks them).
func sshForward(ui config.UISettings) string {
	user, host := os.Getenv("USER"), "THIS-MACHINE"
	if user == "" {
		user = os.Getenv("USERNAME")
	}
	if h, err := os.Hostname(); err == nil && h != "" {
		host = h
	}
	if user != "" {
		host = user + "@" + host
	}
	return fmt.Sprintf("ssh -N -L %d:%s:%d %s", ui.Port, ui.Host, ui.Port, host)
}

// openerWait is how long `shogun ui` waits for the browser opener to say
// whether it worked; an opener still running then is taken to have opened a
// browser (some wait for the browser window).
const openerWait = 5 * time.Second

// openBrowser opens u in the default browser and says whether the opener
// failed: no opener, no display to show a browser on, or the opener's own
// error ("no method available"). u is on the opener's command line for
// every user of the machine to read.
func openBrowser(ctx context.Context, u string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", u)
	case "darwin":
		cmd = exec.Command("open", u)
	default:
		// Without a display xdg-open would start a text browser in this
		// terminal, or fail after a while: say so at once.
		if os.Getenv("DISPLAY") == "" && os.Getenv("WAYLAND_DISPLAY") == "" {
			return errors.New("no display: DISPLAY and WAYLAND_DISPLAY are not set")
		}
		cmd = exec.Command("xdg-open", u)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	timer := time.NewTimer(openerWait)
	defer timer.Stop()
	select {
	case err := <-exited:
		if err != nil {
			if msg := strings.TrimSpace(out.String()); msg != "" {
				return fmt.Errorf("%s: %s", filepath.Base(cmd.Path), textsafe.Escape(lastLine(msg)))
			}
			return fmt.Errorf("%s: %w", filepath.Base(cmd.Path), err)
		}
		return nil
	case <-timer.C:
		return nil // still opening: it ends on its own, after this process
	case <-ctx.Done():
		return nil
	}
}

// lastLine is the last line of s: an opener's final word.
func lastLine(s string) string {
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}
