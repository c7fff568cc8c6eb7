package main

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"runtime"

	"github.com/rs/zerolog"
	"github.com/urfave/cli/v2"

	"github.com/shogun-dev/shogun/config"
	"github.com/shogun-dev/shogun/console"
	"github.com/shogun-dev/shogun/team"
)

// startConsole serves the web console beside the control socket, unless
// ui.enabled is false. A console that cannot start (the port is taken) is
// one line on stderr and in the log; the supervisor runs on without it. The
// returned channel is closed once the console has stopped.
func startConsole(ctx context.Context, c *cli.Context, ws string, cfg *config.Config, t *team.Team, stop func(), log zerolog.Logger) <-chan struct{} {
	done := make(chan struct{})
	if !cfg.Settings.UI.Enabled {
		close(done)
		return done
	}
	con, err := console.Listen(console.Options{Workspace: ws, UI: cfg.Settings.UI, Team: t, Stop: stop, Log: log, RotateToken: c.Bool("rotate-token")})
	if err != nil {
		log.Error().Msg(err.Error() + "; the supervisor runs without it")
		close(done)
		return done
	}
	// No login here: `shogun ui` opens a login link that works once.
	fmt.Fprintf(c.App.Writer, "web console: %s (`shogun ui` opens it logged in)\n", con.Address())
	log.Info().Str("address", "http://"+con.Addr().String()+"/").Msg("web console started; `shogun ui` opens it")
	go func() {
		defer close(done)
		if err := con.Serve(ctx); err != nil {
			log.Warn().Err(err).Msg("web console")
		}
	}()
	return done
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
			"every browser's session.",
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
			ui := cfg.Settings.UI
			if !ui.Enabled {
				return errors.New("the web console is off (ui.enabled: false in config/settings.yaml)")
			}
			cl, err := client(c)
			if err != nil {
				return err
			}
			if _, err := cl.Status(); err != nil {
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
			if err := openBrowser(page); err != nil {
				return fmt.Errorf("open the browser: %w (open the link above yourself within a minute)", err)
			}
			return nil
		},
	}
}

// openBrowser opens u in the default browser without waiting for it. u
// is on the opener's command line for every user of the machine to read.
func openBrowser(u string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", u)
	case "darwin":
		cmd = exec.Command("open", u)
	default:
		cmd = exec.Command("xdg-open", u)
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	go func() { _ = cmd.Wait() }()
	return nil
}
