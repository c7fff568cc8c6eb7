package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/shogun-dev/shogun/config"
	"github.com/shogun-dev/shogun/control"
	"github.com/shogun-dev/shogun/hooks"
	"github.com/shogun-dev/shogun/textsafe"
)

func hookCommand() *cli.Command {
	return &cli.Command{
		Name:  "hook",
		Usage: "run as a CLI's permission hook: its tool calls are decided by config/policy.yaml",
		Description: "Run by the CLI, not by people: `shogun start` gives each CLI the hook configuration\n" +
			"(Claude Code and Copilot CLI: PreToolUse; Codex: PreToolUse; Gemini CLI: BeforeTool). The CLI's\n" +
			"description of a tool call comes on standard input; the running supervisor decides it by the\n" +
			"policy, waiting for a person when it says ask, and the decision goes to standard output in the\n" +
			"CLI's format. Without SHOGUN_ROLE (the CLI was not started by shogun), a supervisor or a policy,\n" +
			"it prints nothing: the CLI decides alone.",
		Subcommands: []*cli.Command{
			hookSubcommand("claude", "Claude Code's (and Copilot CLI's) PreToolUse hook", hooks.Claude),
			hookSubcommand("codex", "Codex's PreToolUse hook", hooks.Codex),
			hookSubcommand("gemini", "Gemini CLI's BeforeTool hook", hooks.Gemini),
		},
	}
}

// hookSubcommand is `shogun hook NAME`, which runs one CLI's hook.
func hookSubcommand(name, usage string, run func(io.Reader, io.Writer, hooks.Options) error) *cli.Command {
	return &cli.Command{
		Name:  name,
		Usage: usage,
		Action: func(c *cli.Context) error {
			ws, role := os.Getenv("SHOGUN_WORKSPACE"), os.Getenv("SHOGUN_ROLE")
			if ws == "" {
				role = "" // not a role of a supervisor: no opinion
			}
			return run(os.Stdin, c.App.Writer, hooks.Options{
				Role: role, Supervisor: control.NewClient(ws),
				// The CLI kills the hook at its limit: answer before.
				Limit: time.Duration(config.ClaudeHookTimeout)*time.Second - 30*time.Second,
			})
		},
	}
}

func approvalsCommand() *cli.Command {
	return &cli.Command{
		Name:  "approvals",
		Usage: "list the decisions on what agents asked to do (config/policy.yaml), or the questions waiting",
		Description: "Every decision is on record: by the policy, by a person (shogun answer, the console) or by\n" +
			"the time-out (approvals.timeout), oldest first. --pending lists the questions waiting for a person now.",
		Flags: []cli.Flag{workspaceFlag,
			&cli.StringFlag{Name: "since", Usage: "only those asked since `WHEN`: a date, a time, or a span back (90m, 36h, 7d)"},
			&cli.BoolFlag{Name: "pending", Usage: "the questions waiting for a person"},
			&cli.IntFlag{Name: "limit", Usage: "only the last `N` (the table: 50 unless given; --json: 1000, the most listed)"},
			&cli.BoolFlag{Name: "json", Usage: "print JSON (keys in docs/api.md, GET /v1/approvals)"},
		},
		Action: func(c *cli.Context) error {
			cl, err := client(c)
			if err != nil {
				return err
			}
			var since time.Time
			if s := c.String("since"); s != "" {
				if since, err = parseWhen(s, time.Now()); err != nil {
					return fmt.Errorf("--since: %w", err)
				}
			}
			// Every tool call of a hooked CLI is a decision: the table
			// shows the latest, as shogun tasks does.
			limit := c.Int("limit")
			if limit == 0 && !c.Bool("json") && !c.IsSet("limit") {
				limit = 50
			}
			list, err := cl.Approvals(since, limit, c.Bool("pending"))
			if errors.Is(err, control.ErrNoSupervisor) {
				return &exitError{code: 3, err: fmt.Errorf("%w: the approvals are listed by the running supervisor", err)}
			}
			if err != nil {
				return err
			}
			if c.Bool("json") {
				return printJSON(c.App.Writer, list)
			}
			printApprovals(c, list.Approvals, c.Bool("pending"))
			if more := list.Total - len(list.Approvals); more > 0 {
				fmt.Fprintf(c.App.Writer, "(%d earlier not shown: --limit N, --since WHEN)\n", more)
			}
			return nil
		},
	}
}

// printApprovals prints one line per approval. What the agent asked is
// its text: escaped, and cut to fit.
func printApprovals(c *cli.Context, list []control.Approval, pending bool) {
	w := c.App.Writer
	if len(list) == 0 {
		if pending {
			fmt.Fprintln(w, "no question is waiting for a person")
		} else {
			fmt.Fprintln(w, "no approvals on record")
		}
		return
	}
	tw := newTableWriter(w)
	fmt.Fprintln(tw, "ID\tASKED\tROLE\tTASK\tKIND\tACTION\tDECISION\tBY")
	for _, a := range list {
		by := a.DecidedBy
		switch {
		case a.Via != "":
			by += " (" + a.Via + ")"
		case a.Rule != "":
			by += " (" + a.Rule + ")"
		}
		if by == "" {
			by = "-"
		}
		task := a.TaskID
		if task == "" {
			task = "-"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", a.ID, a.AskedAt.Local().Format("01-02 15:04:05"), textsafe.Escape(a.Role),
			textsafe.Escape(task), textsafe.Escape(a.Kind), short(a.Subject, 60), textsafe.Escape(a.Decision), textsafe.Escape(by))
	}
	tw.Flush()
	if pending {
		fmt.Fprintln(w, "\nanswer with: shogun answer ROLE yes|always|no --id ID [--note TEXT]")
	}
}

func questionsCommand() *cli.Command {
	return &cli.Command{
		Name:  "questions",
		Usage: "what waits for a person: actions a CLI's hook holds, and the dialogs on waiting roles' screens",
		Flags: []cli.Flag{workspaceFlag, &cli.BoolFlag{Name: "json", Usage: "print JSON (keys in docs/api.md, GET /v1/questions)"}},
		Action: func(c *cli.Context) error {
			cl, err := client(c)
			if err != nil {
				return err
			}
			qs, err := cl.Questions()
			if errors.Is(err, control.ErrNoSupervisor) {
				return &exitError{code: 3, err: err}
			}
			if err != nil {
				return err
			}
			w := c.App.Writer
			if c.Bool("json") {
				return printJSON(w, qs)
			}
			if len(qs.Questions) == 0 {
				fmt.Fprintln(w, "no question is waiting for a person")
				return nil
			}
			for _, q := range qs.Questions {
				printQuestion(w, q)
			}
			return nil
		},
	}
}

// printQuestion prints one question: its id, and what it asks about
// whole, each line escaped, so that the person answers what they read.
func printQuestion(w io.Writer, q control.Question) {
	fmt.Fprintf(w, "%s  %s (%s, %s %s): %s\n", textsafe.Escape(q.ID), textsafe.Escape(q.Role), textsafe.Escape(q.CLI),
		textsafe.Escape(q.Kind), textsafe.Escape(q.Source), textsafe.Escape(q.Prompt))
	if q.Subject != "" {
		for _, l := range strings.Split(q.Subject, "\n") {
			fmt.Fprintf(w, "    | %s\n", textsafe.Escape(l))
		}
	}
	for _, o := range q.Options {
		fmt.Fprintf(w, "    %s. %s\n", textsafe.Escape(o.Key), short(o.Label, 96))
	}
	if q.Kind == "permission" {
		fmt.Fprintf(w, "  answer: shogun answer %s yes|always|no --id %s\n", textsafe.Escape(q.Role), textsafe.Escape(q.ID))
	} else {
		fmt.Fprintf(w, "  answer: shogun answer %s KEY --kind %s --id %s (a %s dialog is answered only when named)\n",
			textsafe.Escape(q.Role), textsafe.Escape(q.Kind), textsafe.Escape(q.ID), textsafe.Escape(q.Kind))
	}
}

func answerCommand() *cli.Command {
	return &cli.Command{
		Name: "answer",
		Usage: "answer a question a role waits on (shogun questions gives its id): yes, always (yes, and the same " +
			"again), no, or an option's key",
		ArgsUsage: "ROLE yes|always|no|KEY",
		Description: "--id names the question answered, as shogun questions shows it: the answer reaches that\n" +
			"question or none (\"the question changed\" once it is no longer open; it is never passed on\n" +
			"to another). Without --id, a role's only open question is answered, and a role with more\n" +
			"than one is refused with their ids. A question on the screen is answered with keys, each\n" +
			"typed only while the same question is still there. A trust, sign-in or other dialog is\n" +
			"answered only with --kind naming it: shogun answer ROLE 1 --kind trust.",
		Flags: []cli.Flag{workspaceFlag,
			&cli.StringFlag{Name: "id", Usage: "the `ID` of the question answered (shogun questions)"},
			&cli.StringFlag{Name: "note", Usage: "`TEXT` recorded with the answer and told to the agent"},
			&cli.StringFlag{Name: "kind", Usage: "the `KIND` of dialog on the screen you mean to answer: trust, sign-in or other"},
			&cli.BoolFlag{Name: "json", Usage: "print the decided approval as JSON"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 2 {
				return fmt.Errorf("answer needs a role and yes, always, no or an option's key: shogun answer ROLE yes|always|no|KEY")
			}
			role, word := c.Args().Get(0), c.Args().Get(1)
			req := control.AnswerRequest{ID: c.String("id"), Note: c.String("note"), Via: "cli", Kind: c.String("kind")}
			switch {
			case word == "yes" || word == "y":
				req.Decision = "allow"
			case word == "always":
				req.Decision, req.Always = "allow", true
			case word == "no" || word == "n":
				req.Decision = "deny"
			case len(word) == 1 && word[0] >= '1' && word[0] <= '9':
				req.Option = word
			default:
				return fmt.Errorf("answer %s: %q is not an answer: give yes, always, no or an option's key", textsafe.Escape(role), textsafe.Escape(word))
			}
			cl, err := client(c)
			if err != nil {
				return err
			}
			a, err := cl.AnswerRole(role, req)
			if err != nil {
				return fmt.Errorf("answer %s: %w", textsafe.Escape(role), err)
			}
			if c.Bool("json") {
				return printJSON(c.App.Writer, a)
			}
			fmt.Fprintf(c.App.Writer, "%s: %s %s %s (approval %d)\n", textsafe.Escape(a.Role), textsafe.Escape(a.Decision), textsafe.Escape(a.Kind), short(a.Subject, 80), a.ID)
			return nil
		},
	}
}
