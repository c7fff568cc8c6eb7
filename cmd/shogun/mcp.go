package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/urfave/cli/v2"

	"github.com/shogun-dev/shogun/mcpserver"
)

func mcpCommand() *cli.Command {
	return &cli.Command{
		Name:  "mcp",
		Usage: "serve the task queue as MCP tools on stdio, for one role's agent (its CLI starts it)",
		Description: "An MCP server (Model Context Protocol) on standard input and output. The agent's CLI starts it\n" +
			"as a tool server, from the configuration `shogun init` writes (.mcp.json, .codex/config.toml,\n" +
			".gemini/settings.json). It serves the role in SHOGUN_ROLE of the workspace in SHOGUN_WORKSPACE,\n" +
			"both set by `shogun start` for every role: the tools send_task, report, my_task, list_tasks and\n" +
			"team_status, and the resources shogun://task/<role> and shogun://dashboard.",
		Action: func(c *cli.Context) error {
			ws, role := os.Getenv("SHOGUN_WORKSPACE"), os.Getenv("SHOGUN_ROLE")
			switch {
			case ws == "":
				return errors.New("mcp: SHOGUN_WORKSPACE is not set: `shogun mcp` serves a role that `shogun start` runs, which sets it (and SHOGUN_ROLE); to try it by hand, set both")
			case role == "":
				return errors.New("mcp: SHOGUN_ROLE is not set: `shogun mcp` serves a role that `shogun start` runs, which sets it (and SHOGUN_WORKSPACE); to try it by hand, set both")
			case !filepath.IsAbs(ws):
				return fmt.Errorf("mcp: SHOGUN_WORKSPACE=%s is not an absolute path", ws)
			}
			cfg, err := loadConfig(ws)
			if err != nil {
				return fmt.Errorf("mcp: %w", err)
			}
			srv, err := mcpserver.New(mcpserver.Options{Config: cfg, Role: role, Version: version})
			if err != nil {
				return fmt.Errorf("mcp: SHOGUN_ROLE: %w", err)
			}
			err = srv.Run(context.Background(), &mcp.StdioTransport{})
			if errors.Is(err, io.EOF) || errors.Is(err, mcp.ErrConnectionClosed) {
				return nil // the client closed standard input: it is done with us
			}
			return err
		},
	}
}
