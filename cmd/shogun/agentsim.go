package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/shogun-dev/shogun/agentsim"
	"github.com/shogun-dev/shogun/config"
)

func agentSimCommand() *cli.Command {
	return &cli.Command{
		Name:   "agent-sim",
		Usage:  "run the simulated AI CLI (for the demo and tests)",
		Hidden: true,
		Description: "Behaves like an AI coding TUI: raw mode, bracketed paste, a `› ` prompt, a `\\r`\n" +
			"within the paste window is a newline, a submitted task file path is worked on\n" +
			"(`Working… (esc to interrupt)`) and answered with a report. Flags make it misbehave,\n" +
			"or with --delegate hand its tasks down to other roles through the command queue;\n" +
			"others make it look like a particular real CLI (--composer, --echo, --redraw,\n" +
			"--transcript, --dialog).",
		Flags: []cli.Flag{
			&cli.DurationFlag{Name: "paste-window", Usage: "a \\r this soon after other input is a newline, not a submit (negative: off)", Value: agentsim.DefaultPasteWindow},
			&cli.DurationFlag{Name: "work-time", Usage: "how long a task takes", Value: agentsim.DefaultWorkTime},
			&cli.BoolFlag{Name: "fail", Usage: "report every task as failed"},
			&cli.DurationFlag{Name: "start-delay", Usage: "show Starting… this long before the prompt"},
			&cli.BoolFlag{Name: "trust-prompt", Usage: "ask \"Do you trust the files in this folder?\" first (the folder dialog, before any --dialog)"},
			&cli.DurationFlag{Name: "crash-after", Usage: "exit with --exit-code after this long"},
			&cli.IntFlag{Name: "exit-code", Usage: "exit code of a crash", Value: agentsim.DefaultExitCode},
			&cli.BoolFlag{Name: "ignore-term", Usage: "ignore SIGTERM, SIGHUP and SIGINT"},
			&cli.BoolFlag{Name: "ignore-input", Usage: "read and discard all input"},
			&cli.DurationFlag{Name: "deaf-after-command", Usage: "drop every key typed within this long after a submitted /command, as Gemini CLI does while /clear starts a new session"},
			&cli.BoolFlag{Name: "hang", Usage: "stop responding after the first submitted line"},
			&cli.IntFlag{Name: "flood", Usage: "write this many bytes/s of output (0: off)"},
			&cli.DurationFlag{Name: "first-paint-delay", Usage: "write nothing at all for this long after starting (before --start-delay)"},
			&cli.StringSliceFlag{Name: "dialog", Usage: "show this first-run `DIALOG` before the prompt (repeatable, in order): " + strings.Join(agentsim.DialogNames(), ", ") + "; answers are recorded and saved to " + agentsim.ChoicesFile},
			&cli.DurationFlag{Name: "dialog-after", Usage: "show the --dialog dialogs (default: permission) this long after the prompt, over the composer"},
			&cli.StringFlag{Name: "composer", Usage: "how the input area looks: plain (› ), box (╭─╮ │ ❯ │ ╰─╯) or rules (─ ❯ ─)", Value: agentsim.ComposerPlain},
			&cli.StringFlag{Name: "echo", Usage: "full, or none: show nothing of what is typed (\\r still submits)", Value: agentsim.EchoFull},
			&cli.StringFlag{Name: "redraw", Usage: "inline (redraw the bottom pane), or full: ESC[H ESC[2J and every row on each change", Value: agentsim.RedrawInline},
			&cli.BoolFlag{Name: "transcript", Usage: "repeat each submitted line in the history above the composer"},
			&cli.DurationFlag{Name: "torn-paint", Usage: "write the history lines of a paint, then draw the composer only this long after, as Gemini CLI's static output comes before its live frame"},
			&cli.StringFlag{Name: "placeholder", Usage: "show `TEXT` in the empty composer, as Gemini CLI does"},
			&cli.StringFlag{Name: "busy-line", Usage: "busy indicator `TEXT`, {elapsed} for the seconds (default: • Working… (esc to interrupt) · {elapsed})"},
			&cli.BoolFlag{Name: "silent-work", Usage: "show no busy indicator and write nothing while working"},
			&cli.BoolFlag{Name: "limit-screen", Usage: "after the first submitted line, show a usage-limit screen and work no more"},
			&cli.DurationFlag{Name: "limit-reset", Usage: "with --limit-screen: the limit lifts this long after it was hit (the screen names the time)"},
			&cli.IntFlag{Name: "drop-turns", Usage: "lose the first `N` submitted lines that name a task file: take them, then do and show nothing"},
			&cli.DurationFlag{Name: "check-report", Usage: "look at the report file this long after writing it, as Claude Code's Write tool does, and show an error if it is gone"},
			&cli.IntFlag{Name: "skip-reports", Usage: "end the first `N` tasks worked on without writing a report"},
			&cli.BoolFlag{Name: "bounce", Usage: "hand every task straight back: write a command with its title to the task's from role, then do it"},
			&cli.StringFlag{Name: "record", Usage: "append every submit, paste-window newline, dialog answer, task and report to this JSON-lines `FILE`"},
			&cli.BoolFlag{Name: "resumed", Usage: "started to resume an earlier conversation (a role's resume_args in tests); recorded as the start's line"},
			&cli.StringFlag{Name: "role", Usage: "role name in reports (default: $SHOGUN_ROLE)"},
			&cli.StringFlag{Name: "commit-work", Usage: "for each task, write `FILE` (relative to the working directory) and commit it with git, as a coding agent would"},
			&cli.StringSliceFlag{Name: "trespass", Usage: "for each task, try `read:PATH` or `write:PATH` (repeatable) as a hostile agent would, and list what happened in the report"},
			&cli.StringFlag{Name: "hold-memory", Usage: "allocate and keep resident `SIZE` (such as 300MB), from --hold-from-task's task on: a CLI that grows"},
			&cli.IntFlag{Name: "hold-from-task", Usage: "take --hold-memory at the start of the `N`th task of this run (0: at start)"},
			&cli.StringSliceFlag{Name: "delegate", Usage: "work like a karo: hand each task down as one command per `ROLE,ROLE,...` (repeatable) and report once each has reported"},
		},
		Action: func(c *cli.Context) error {
			opts := agentsim.Options{
				PasteWindow:      c.Duration("paste-window"),
				WorkTime:         c.Duration("work-time"),
				Fail:             c.Bool("fail"),
				StartDelay:       c.Duration("start-delay"),
				TrustPrompt:      c.Bool("trust-prompt"),
				FirstPaintDelay:  c.Duration("first-paint-delay"),
				Dialogs:          splitList(c.StringSlice("dialog")),
				DialogAfter:      c.Duration("dialog-after"),
				Composer:         c.String("composer"),
				Echo:             c.String("echo"),
				Redraw:           c.String("redraw"),
				Transcript:       c.Bool("transcript"),
				TornPaint:        c.Duration("torn-paint"),
				Placeholder:      c.String("placeholder"),
				BusyLine:         c.String("busy-line"),
				SilentWork:       c.Bool("silent-work"),
				LimitScreen:      c.Bool("limit-screen"),
				LimitReset:       c.Duration("limit-reset"),
				CrashAfter:       c.Duration("crash-after"),
				ExitCode:         c.Int("exit-code"),
				IgnoreTerm:       c.Bool("ignore-term"),
				IgnoreInput:      c.Bool("ignore-input"),
				Hang:             c.Bool("hang"),
				Flood:            c.Int("flood"),
				RecordPath:       c.String("record"),
				Resumed:          c.Bool("resumed"),
				Role:             c.String("role"),
				Delegate:         splitList(c.StringSlice("delegate")),
				CommitWork:       c.String("commit-work"),
				Trespass:         c.StringSlice("trespass"),
				DropTurns:        c.Int("drop-turns"),
				SkipReports:      c.Int("skip-reports"),
				CheckReport:      c.Duration("check-report"),
				DeafAfterCommand: c.Duration("deaf-after-command"),
				Bounce:           c.Bool("bounce"),
				HoldFromTask:     c.Int("hold-from-task"),
			}
			if v := c.String("hold-memory"); v != "" {
				n, err := config.ParseSize(v)
				if err != nil {
					return fmt.Errorf("agent-sim: --hold-memory: %w", err)
				}
				opts.HoldMemory = uint64(n)
			}
			if err := opts.Validate(); err != nil {
				return err
			}
			return agentsim.Run(c.Context, opts, os.Stdin, os.Stdout)
		},
	}
}
