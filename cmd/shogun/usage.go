package main

import (
	"errors"
	"fmt"
	"regexp"
	"runtime/debug"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/shogun-dev/shogun/control"
	"github.com/shogun-dev/shogun/internal/yamlstrict"
)

// The exit codes of every command. One table, given in `shogun --help`
// (exitCodesHelp) and in README's Commands section.
const (
	exitOK           = 0 // done
	exitFailed       = 1 // the command ran and failed
	exitUsage        = 2 // unknown command or flag, missing argument: nothing was done
	exitNoSupervisor = 3 // the command needs a running supervisor and none runs
	// exitUnconfirmed (4) is shogun type --submit's own: typed, never confirmed.
)

// exitCodesHelp is the table as `shogun --help` prints it.
var exitCodesHelp = fmt.Sprintf(`EXIT CODES:
   %d  ok
   %d  failed (the error is one line on stderr: "shogun: ...")
   %d  usage: an unknown command or flag, a missing argument; nothing was done
   %d  no supervisor runs for this workspace (status, screen, type, stop, ...)
   %d  shogun type --submit: typed and submitted, but the screen never confirmed it
`, exitOK, exitFailed, exitUsage, exitNoSupervisor, exitUnconfirmed)

// Set at build time by the Makefile: -ldflags "-X main.version=... -X
// main.commit=... -X main.buildDate=...". Empty or "dev" ones are filled from
// the build information Go records (buildVersion).
var (
	version   = "dev"
	commit    = ""
	buildDate = ""
)

// buildVersion is the version line: "v1.2.0 (commit 3f2a9c1d0e4b, built
// 2026-11-28T10:00:00Z)". What -ldflags did not stamp comes from the module
// version and the vcs settings `go build` records in a git checkout.
func buildVersion() string {
	v, c, d := version, commit, buildDate
	if info, ok := debug.ReadBuildInfo(); ok {
		if v == "dev" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			v = info.Main.Version
		}
		var rev, at string
		dirty := false
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.time":
				at = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if c == "" && rev != "" {
			c = rev[:min(12, len(rev))]
			if dirty {
				c += "-dirty"
			}
		}
		if d == "" {
			d = at // the commit's time: the best a plain `go build` tells
		}
	}
	if c == "" {
		c = "unknown"
	}
	if d == "" {
		d = "unknown"
	}
	return fmt.Sprintf("%s (commit %s, built %s)", v, c, d)
}

func versionCommand() *cli.Command {
	return &cli.Command{
		Name:  "version",
		Usage: "print shogun's version, commit and build date (same as shogun --version)",
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageErrorf("version takes no arguments, got %q", c.Args().First())
			}
			cli.ShowVersion(c)
			return nil
		},
	}
}

// helpCommand is `shogun help [COMMAND [SUBCOMMAND]]`. urfave/cli's own help
// command can only print "No help topic" with exit 3 for a name it does not
// know; this one says the nearest real one and exits 2.
func helpCommand() *cli.Command {
	return &cli.Command{
		Name:      "help",
		Aliases:   []string{"h"},
		Usage:     "show the commands, or one command's help: shogun help COMMAND",
		ArgsUsage: "[COMMAND [SUBCOMMAND]]",
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return cli.ShowAppHelp(c)
			}
			cmds, path := c.App.Commands, "shogun"
			var cmd *cli.Command
			for _, name := range c.Args().Slice() {
				cmd = findCommand(cmds, name)
				if cmd == nil {
					return unknownCommand(cmds, path, name)
				}
				path += " " + cmd.Name
				cmds = cmd.Subcommands
			}
			if cmd.HelpName == "" {
				cmd.HelpName = path
			}
			tmpl := cli.CommandHelpTemplate
			if len(cmd.Subcommands) > 0 {
				tmpl = cli.SubcommandHelpTemplate
			}
			cli.HelpPrinter(c.App.Writer, tmpl, cmd)
			return nil
		},
	}
}

func findCommand(cmds []*cli.Command, name string) *cli.Command {
	for _, c := range cmds {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}

// unknownCommand is the one-line error for a command name that is not one:
// `unknown command "statsu"; did you mean "status"?`.
func unknownCommand(cmds []*cli.Command, path, name string) error {
	var names []string
	for _, c := range cmds {
		if !c.Hidden {
			names = append(names, c.Names()...)
		}
	}
	msg := fmt.Sprintf("unknown command %q", name)
	if path != "shogun" {
		msg += " for " + path
	}
	if s := yamlstrict.SuggestKey(name, names); s != "" {
		msg += fmt.Sprintf("; did you mean %q?", s)
	} else {
		msg += fmt.Sprintf("; the commands are in `%s --help`", path)
	}
	return &exitError{code: exitUsage, err: errors.New(msg)}
}

// usageErrorf is an error in how a command was called: exit 2.
func usageErrorf(format string, args ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, args...)}
}

// onUsageError turns urfave/cli's flag errors into one line and exit 2,
// instead of its "Incorrect Usage", the whole help, and the error again:
// `unknown flag --titel for shogun send; did you mean --title?`.
func onUsageError(c *cli.Context, err error, _ bool) error {
	path := "shogun"
	flags := c.App.Flags
	if c.Command != nil && c.Command.Name != "" {
		path, flags = c.Command.HelpName, c.Command.Flags
	}
	const notDefined = "flag provided but not defined: "
	msg := err.Error()
	if rest, ok := strings.CutPrefix(msg, notDefined); ok {
		name := strings.TrimLeft(rest, "-")
		var names []string
		for _, f := range flags {
			names = append(names, f.Names()...)
		}
		msg = fmt.Sprintf("unknown flag %s for %s", dashed(name), path)
		if s := yamlstrict.SuggestKey(name, names); s != "" {
			msg += fmt.Sprintf("; did you mean %s?", dashed(s))
		} else {
			msg += fmt.Sprintf("; its flags are in `%s --help`", path)
		}
	} else {
		msg = fmt.Sprintf("%s for %s; see `%s --help`", flagName.ReplaceAllStringFunc(msg, func(f string) string {
			return " " + dashed(strings.TrimLeft(f, " -"))
		}), path, path)
	}
	return &exitError{code: exitUsage, err: errors.New(msg)}
}

// flagName is a flag as Go's flag package writes it in an error: " -n".
var flagName = regexp.MustCompile(` -[A-Za-z][A-Za-z0-9-]*`)

// dashed writes a flag name as a user types it: -w, --title.
func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// withManners gives every command (and subcommand) the one-line usage
// errors, and every command with subcommands a one-line error for an
// unknown one.
func withManners(cmds []*cli.Command, path string) {
	for _, c := range cmds {
		if c.OnUsageError == nil {
			c.OnUsageError = onUsageError
		}
		if len(c.Subcommands) == 0 {
			continue
		}
		withManners(c.Subcommands, path+" "+c.Name)
		if c.Action == nil {
			sub, here := c.Subcommands, path+" "+c.Name
			c.Action = func(ctx *cli.Context) error {
				if ctx.NArg() == 0 {
					return cli.ShowSubcommandHelp(ctx)
				}
				return unknownCommand(sub, here, ctx.Args().First())
			}
		}
	}
}

// exitCode is the process exit code for err: its own (exitError), else 3
// when no supervisor answered, else 1.
func exitCode(err error) int {
	var ec interface{ ExitCode() int }
	if errors.As(err, &ec) {
		return ec.ExitCode()
	}
	if errors.Is(err, control.ErrNoSupervisor) {
		return exitNoSupervisor
	}
	return exitFailed
}
