package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/shogun-dev/shogun/config"
)

func initCommand() *cli.Command {
	return &cli.Command{
		Name:      "init",
		Usage:     "create a workspace: config, role files, runtime folders and the CLIs' MCP configuration",
		ArgsUsage: "[DIR]",
		Description: "Creates config/settings.yaml, config/roles.yaml (a shogun, a karo and three ashigaru),\n" +
			"roles/*.md and the runtime folders in DIR (default: --workspace, else the current folder), and the CLIs' MCP\n" +
			"configuration that starts `shogun mcp` (.mcp.json, .claude/settings.json, .codex/config.toml,\n" +
			".gemini/settings.json). Existing files are kept unless --force. With --demo every role runs\n" +
			"the simulated agent `shogun agent-sim`.",
		Flags: []cli.Flag{
			workspaceFlag,
			&cli.BoolFlag{Name: "force", Usage: "overwrite existing files"},
			&cli.BoolFlag{Name: "demo", Usage: "roles run the simulated agent instead of real CLIs"},
			&cli.StringFlag{Name: "lang", Usage: "language of the role files: en or ja", Value: "en"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 1 {
				return fmt.Errorf("init takes at most one folder, got %d arguments", c.NArg())
			}
			// DIR, else --workspace, else the current folder: init makes
			// a workspace, it does not look for one above.
			dir, ok := givenWorkspace(c)
			if c.NArg() == 1 {
				dir, ok = c.Args().First(), true
			}
			if !ok {
				dir = "."
			}
			dir, err := absWorkspace(dir)
			if err != nil {
				return err
			}
			results, err := config.Scaffold(dir, config.ScaffoldOptions{
				Force: c.Bool("force"), Demo: c.Bool("demo"), Lang: c.String("lang"), Executable: mcpExecutable(),
			})
			w := c.App.Writer
			for _, r := range results {
				fmt.Fprintf(w, "%-12s %s\n", r.Action, r.Path)
			}
			if err != nil {
				return fmt.Errorf("init %s: %w", dir, err)
			}
			fmt.Fprintf(w, "\nworkspace ready: %s\nnext: %s start --workspace %s --dry-run\n", dir, selfCommand(), quoteArg(dir))
			return nil
		},
	}
}

// mcpExecutable is the program the CLIs' MCP configuration starts: this
// binary, by its absolute path, unless it is a temporary build of `go run`,
// gone when the run ends; then "shogun", looked up in PATH.
func mcpExecutable() string {
	exe := selfExecutable()
	if strings.Contains(filepath.ToSlash(exe), "/go-build") {
		return "shogun"
	}
	return exe
}
