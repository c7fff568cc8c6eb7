// Command shogun is a headless supervisor for teams of AI coding CLIs: one
// pseudo-terminal per role in config/roles.yaml, driven through files.
//
// This package only parses flags, calls the packages that do the work, and
// prints. See `shogun help`.
package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/shogun-dev/shogun/workspace"
)

// exitError carries an exit code other than 1 through urfave/cli.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }

// ExitCode is the process exit code to use.
func (e *exitError) ExitCode() int { return e.code }
func (e *exitError) Unwrap() error { return e.err }

func main() {
	os.Exit(run(os.Args, os.Stdout, os.Stderr))
}

// run executes the CLI and returns the process exit code. Errors are printed
// as one line: "shogun: <what went wrong>".
func run(args []string, stdout, stderr io.Writer) int {
	// The bench profiles the supervisor it starts (bench -profile): a
	// switch for measuring, not for users, so an environment variable
	// rather than a flag.
	if dir := os.Getenv("SHOGUN_BENCH_PROFILE"); dir != "" {
		defer profileTo(dir, stderr)()
	}
	app := newApp(stdout, stderr)
	err := app.Run(flagsFirst(app, args))
	if err == nil {
		return 0
	}
	fmt.Fprintf(stderr, "shogun: %v\n", err)
	return exitCode(err)
}

func newApp(stdout, stderr io.Writer) *cli.App {
	app := &cli.App{
		Name:    "shogun",
		Usage:   "run a team of AI coding CLIs, each in its own pseudo-terminal, driven through files",
		Version: buildVersion(),
		Description: "shogun starts one PTY per role in config/roles.yaml, types prompts into them safely,\n" +
			"restarts crashed agents, keeps their logs, and stops every process it started.\n" +
			"Start with `shogun init`, then `shogun start --dry-run`, then `shogun start`.",
		CustomAppHelpTemplate: cli.AppHelpTemplate + "\n" + exitCodesHelp,
		Writer:                stdout,
		ErrWriter:             stderr,
		HideHelpCommand:       true,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "workspace", Aliases: []string{"w"}, Usage: "workspace `DIR` (default: the nearest folder from here up with config/roles.yaml)", EnvVars: []string{"SHOGUN_WORKSPACE_DIR"}},
			&cli.StringFlag{Name: "log-level", Usage: "log level on stderr: debug, info, warn, error", Value: "info"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print only warnings and errors on stderr"},
			&cli.BoolFlag{Name: "debug", Usage: "same as --log-level debug"},
			// urfave/cli adds it only when it adds its own help command,
			// which helpCommand replaces.
			cli.HelpFlag,
		},
		Commands: []*cli.Command{
			initCommand(),
			startCommand(),
			stopCommand(),
			statusCommand(),
			rolesCommand(),
			reloadCommand(),
			uiCommand(),
			sendCommand(),
			tasksCommand(),
			attachCommand(),
			screenCommand(),
			logsCommand(),
			typeCommand(),
			restartCommand(),
			retryCommand(),
			cancelCommand(),
			approvalsCommand(),
			usageCommand(),
			accountsCommand(),
			questionsCommand(),
			answerCommand(),
			hookCommand(),
			skillsCommand(),
			worktreesCommand(),
			diffCommand(),
			mergeCommand(),
			mcpCommand(),
			dbCommand(),
			demoCommand(),
			agentSimCommand(),
			versionCommand(),
			helpCommand(),
			sandboxExecCommand(),
		},
		// Errors are printed once, by run.
		ExitErrHandler: func(*cli.Context, error) {},
		OnUsageError:   onUsageError,
		// `shogun statsu`: the root's action sees a name that is no command.
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return unknownCommand(c.App.Commands, "shogun", c.Args().First())
			}
			return cli.ShowAppHelp(c)
		},
	}
	withManners(app.Commands, "shogun")
	return app
}

// flagsFirst moves a command's flags before its arguments, so that
// `shogun logs ashigaru1 -f` works as the usage shows; urfave/cli stops
// parsing flags at the first argument. A "--" ends the flags as usual.
func flagsFirst(app *cli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	// Global flags come before the command name.
	i := 1
	for i < len(args) && strings.HasPrefix(args[i], "-") && args[i] != "--" {
		if takesValue(app.Flags, args[i]) {
			i++
		}
		i++
	}
	if i >= len(args) {
		return args
	}
	cmd := app.Command(args[i])
	if cmd == nil || cmd.SkipFlagParsing {
		return args
	}
	// A command with subcommands (shogun skills scan …): the same one level down.
	for len(cmd.Subcommands) > 0 {
		j := i + 1
		for j < len(args) && strings.HasPrefix(args[j], "-") {
			j++
		}
		if j >= len(args) {
			return args
		}
		sub := cmd.Command(args[j])
		if sub == nil {
			return args
		}
		i, cmd = j, sub
	}
	var flags, rest []string
	tail := args[i+1:]
	for j := 0; j < len(tail); j++ {
		a := tail[j]
		switch {
		case a == "--":
			rest = append(rest, tail[j:]...)
			j = len(tail)
		case strings.HasPrefix(a, "-") && len(a) > 1:
			flags = append(flags, a)
			if takesValue(cmd.Flags, a) && j+1 < len(tail) {
				j++
				flags = append(flags, tail[j])
			}
		default:
			rest = append(rest, a)
		}
	}
	out := append(append([]string(nil), args[:i+1]...), flags...)
	return append(out, rest...)
}

// takesValue reports whether the flag arg (as written, e.g. "--lines" or
// "-n", without "=value") is defined and needs a separate value.
func takesValue(flags []cli.Flag, arg string) bool {
	if strings.Contains(arg, "=") {
		return false
	}
	name := strings.TrimLeft(arg, "-")
	for _, f := range flags {
		for _, n := range f.Names() {
			if n == name {
				_, isBool := f.(*cli.BoolFlag)
				return !isBool
			}
		}
	}
	return false
}

// workspaceFlag lets every command take --workspace after its name too.
var workspaceFlag = &cli.StringFlag{Name: "workspace", Aliases: []string{"w"}, Usage: "workspace `DIR` (default: the nearest folder from here up with config/roles.yaml)"}

// workspaceDir returns the absolute workspace folder: the command's own
// --workspace if given there, else the global one (or SHOGUN_WORKSPACE_DIR),
// else the workspace that holds the current folder, found as git finds a
// repository (workspace.Find). A current folder in no workspace is an error
// that says how to make one.
func workspaceDir(c *cli.Context) (string, error) {
	if dir, ok := givenWorkspace(c); ok {
		return absWorkspace(dir)
	}
	cwd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("workspace: %w", err)
	}
	if root, ok := workspace.Find(cwd); ok {
		return root, nil
	}
	return "", fmt.Errorf("no shogun workspace here: neither %s nor a folder above it has %s; "+
		"run `%s init` to make one here, or give --workspace DIR", cwd, filepath.FromSlash(workspace.RolesFile), selfCommand())
}

// givenWorkspace is the --workspace of the command or of shogun itself
// (which SHOGUN_WORKSPACE_DIR sets), if any.
func givenWorkspace(c *cli.Context) (string, bool) {
	for _, x := range c.Lineage() {
		if v := x.String("workspace"); v != "" {
			return v, true
		}
	}
	return "", false
}

func absWorkspace(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("workspace %q: %w", dir, err)
	}
	return abs, nil
}
