package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/shogun-dev/shogun/sandbox"
)

// sandboxExecCommand is what the supervisor runs in a sandboxed role's
// terminal: it confines itself (package sandbox) and then becomes the
// role's program, which keeps the confinement with all it starts.
func sandboxExecCommand() *cli.Command {
	return &cli.Command{
		Name:            sandbox.Subcommand,
		Usage:           "run a program confined by the sandbox (started by the supervisor for roles with sandbox:)",
		Hidden:          true,
		SkipFlagParsing: true,
		ArgsUsage:       "[--write PATH] [--no-write PATH] [--hide PATH] [--show PATH] -- PROGRAM [ARGS...]",
		Action: func(c *cli.Context) error {
			spec, argv, err := sandbox.ParseArgs(c.Args().Slice())
			if err != nil {
				return err
			}
			program := argv[0]
			if !strings.ContainsRune(program, os.PathSeparator) {
				if program, err = exec.LookPath(program); err != nil {
					return fmt.Errorf("sandbox-exec: %w", err)
				}
			}
			if err := spec.Apply(); err != nil {
				return err
			}
			if err := syscall.Exec(program, argv, os.Environ()); err != nil {
				return fmt.Errorf("sandbox-exec: run %s: %w", program, err)
			}
			return nil
		},
	}
}
