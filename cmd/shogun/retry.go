package main

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/shogun-dev/shogun/textsafe"
)

func retryCommand() *cli.Command {
	return &cli.Command{
		Name:      "retry",
		Usage:     "deliver a stalled, undelivered or failed task again",
		ArgsUsage: "TASK",
		Description: "The task goes back to its role's queue in its old place and out as soon as the role is\n" +
			"free. Needs the running supervisor (POST /v1/tasks/{id}/retry in docs/api.md).",
		Flags: []cli.Flag{workspaceFlag},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return errors.New("retry needs one task id: shogun retry TASK (see shogun tasks)")
			}
			cl, err := client(c)
			if err != nil {
				return err
			}
			r, err := cl.Retry(c.Args().First())
			if err != nil {
				return err
			}
			fmt.Fprintf(c.App.ErrWriter, "shogun: task %s queued again for %s\n", textsafe.Escape(r.TaskID), textsafe.Escape(r.Role))
			return nil
		},
	}
}

func cancelCommand() *cli.Command {
	return &cli.Command{
		Name:      "cancel",
		Usage:     "cancel a queued or open task",
		ArgsUsage: "TASK",
		Description: "The reason is recorded as the task's summary; its task file is archived, its role is\n" +
			"free for its next task, and the role that sent it is told. A report that comes later\n" +
			"is recorded and archived, not applied. Needs the running supervisor\n" +
			"(POST /v1/tasks/{id}/cancel in docs/api.md).",
		Flags: []cli.Flag{workspaceFlag, &cli.StringFlag{Name: "reason", Usage: "why, one line (told to the sender)"}},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return errors.New("cancel needs one task id: shogun cancel TASK [--reason R] (see shogun tasks)")
			}
			cl, err := client(c)
			if err != nil {
				return err
			}
			r, err := cl.Cancel(c.Args().First(), c.String("reason"))
			if err != nil {
				return err
			}
			fmt.Fprintf(c.App.ErrWriter, "shogun: task %s for %s cancelled\n", textsafe.Escape(r.TaskID), textsafe.Escape(r.Role))
			return nil
		},
	}
}
