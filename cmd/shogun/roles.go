package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/shogun-dev/shogun/control"
	"github.com/shogun-dev/shogun/textsafe"
)

func rolesCommand() *cli.Command {
	return &cli.Command{
		Name:  "roles",
		Usage: "list the configured roles with their effective settings (and, with a supervisor, their state)",
		Description: "With a running supervisor: the roles in effect there, with their state. Without one: the roles\n" +
			"as config/roles.yaml and config/settings.yaml make them (an error in the files is an error here).",
		Flags: []cli.Flag{workspaceFlag, &cli.BoolFlag{Name: "json", Usage: "print JSON (keys in docs/api.md, GET /v1/roles)"}},
		Action: func(c *cli.Context) error {
			cl, err := client(c)
			if err != nil {
				return err
			}
			out, err := cl.Roles()
			running := err == nil
			if errors.Is(err, control.ErrNoSupervisor) {
				ws, werr := workspaceDir(c)
				if werr != nil {
					return werr
				}
				cfg, lerr := loadConfigFiles(ws)
				if lerr != nil {
					return lerr
				}
				out = control.RolesReply{Roles: control.RoleConfigsFrom(cfg)}
			} else if err != nil {
				return err
			}
			if c.Bool("json") {
				return printJSON(c.App.Writer, out)
			}
			printRoles(c.App.Writer, out, running)
			return nil
		},
	}
}

// printRoles prints the roles as a table, then what else a person should
// know: no supervisor, or a configuration not applied.
func printRoles(w io.Writer, out control.RolesReply, running bool) {
	tw := newTableWriter(w)
	fmt.Fprintln(tw, "ROLE\tNAME\tENABLED\tCLI\tTERMINAL\tRESTART\tSTATE\tCOMMAND")
	for _, r := range out.Roles {
		enabled, state := "yes", "-"
		if !r.Enabled {
			enabled = "no"
		}
		if rt := r.Runtime; rt != nil {
			state = textsafe.Escape(rt.State)
			if rt.Pid > 0 {
				state += fmt.Sprintf(" (pid %d)", rt.Pid)
			}
		} else if running && r.Enabled {
			state = "not running"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%dx%d\t%s\t%s\t%s\n", textsafe.Escape(r.ID), short(r.Name, 30), enabled, textsafe.Escape(r.CLI),
			r.Terminal.Cols, r.Terminal.Rows, textsafe.Escape(r.Restart.Policy), state, short(commandLine(r.Command.Exec, r.Command.Args), 60))
	}
	tw.Flush()
	if !running {
		fmt.Fprintln(w, "\nno supervisor is running: the roles as the configuration files make them")
	}
	if e := out.ConfigError; e != nil {
		fmt.Fprintln(w, "\nthe configuration files are not in effect (the supervisor runs on with the roles above):")
		for _, line := range strings.Split(e.Error, "\n") {
			fmt.Fprintf(w, "  %s\n", textsafe.Escape(line))
		}
	}
}

func reloadCommand() *cli.Command {
	return &cli.Command{
		Name:  "reload",
		Usage: "apply config/roles.yaml and config/settings.yaml to the running supervisor now",
		Description: "The supervisor also does this by itself whenever either file changes. Added or enabled roles start,\n" +
			"removed or disabled ones stop, roles whose command or terminal changed restart, the others take\n" +
			"their new settings as they run. A configuration with errors changes nothing: they are printed and\n" +
			"the exit code is 1. Exit code 3 when no supervisor runs.",
		Flags: []cli.Flag{workspaceFlag, &cli.BoolFlag{Name: "json", Usage: "print JSON (keys in docs/api.md, POST /v1/reload)"}},
		Action: func(c *cli.Context) error {
			cl, err := client(c)
			if err != nil {
				return err
			}
			res, err := cl.Reload()
			switch {
			case errors.Is(err, control.ErrNoSupervisor):
				return &exitError{code: 3, err: err}
			case err != nil:
				return fmt.Errorf("configuration not applied, the supervisor runs on with the one it had:\n%w", err)
			}
			if c.Bool("json") {
				return printJSON(c.App.Writer, res)
			}
			w := c.App.Writer
			if len(res.Changes) == 0 {
				fmt.Fprintln(w, "configuration applied: no role changed")
			}
			for _, ch := range res.Changes {
				fmt.Fprintf(w, "%s %s (%s)\n", ch.Action, textsafe.Escape(ch.Role), textsafe.Escape(strings.Join(ch.Keys, ", ")))
			}
			for _, k := range res.AtNextStart {
				fmt.Fprintf(w, "%s changed: it takes effect at the next shogun start\n", textsafe.Escape(k))
			}
			return nil
		},
	}
}
