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
	con, err := console.Listen(console.Options{Workspace: ws, UI: cfg.Settings.UI, Team: t, Stop: stop, Log: log})
	if err != nil {
		log.Error().Msg(err.Error() + "; the supervisor runs without it")
		close(done)
		return done
	}
	// The address with the token goes to the person's terminal only, never
	// to the log, which agents may read.
	fmt.Fprintf(c.App.Writer, "web console: %s\n", con.URL())
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
		Usage: "print the web console's address with its login token and open it in the browser",
		Description: "The running supervisor serves the console at http://{ui.host}:{ui.port}/ (config/settings.yaml).\n" +
			"The address printed carries the login token of runtime/state/ui.token; opening it logs the\n" +
			"browser in. Delete that file and restart the supervisor to make a new token.",
		Flags: []cli.Flag{
			workspaceFlag,
			&cli.BoolFlag{Name: "no-open", Usage: "print the address only"},
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
			if !cfg.Settings.UI.Enabled {
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
			if err := console.Probe(cfg.Settings.UI, tok); err != nil {
				return err
			}
			u := console.LoginURL(cfg.Settings.UI, tok)
			fmt.Fprintln(c.App.Writer, u)
			if c.Bool("no-open") {
				return nil
			}
			if err := openBrowser(u); err != nil {
				return fmt.Errorf("open the browser: %w (open the address above yourself)", err)
			}
			return nil
		},
	}
}

// openBrowser opens u in the default browser without waiting for it.
func openBrowser(u string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "windows":
		// start takes its first quoted argument as a window title, hence
		// the empty one; the address has no "&" for cmd to split on.
		cmd = exec.Command("cmd", "/c", "start", "", u)
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
