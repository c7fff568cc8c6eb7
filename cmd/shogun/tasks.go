package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/clipperhouse/displaywidth"
	"github.com/urfave/cli/v2"

	"github.com/shogun-dev/shogun/control"
	"github.com/shogun-dev/shogun/queue"
	"github.com/shogun-dev/shogun/store"
	"github.com/shogun-dev/shogun/supervisor"
	"github.com/shogun-dev/shogun/team"
	"github.com/shogun-dev/shogun/textsafe"
	"github.com/shogun-dev/shogun/workspace"
)

func sendCommand() *cli.Command {
	return &cli.Command{
		Name:  "send",
		Usage: "hand a task to a role: write a command file into runtime/queue/commands/",
		Description: "Writes the command atomically (a temporary file renamed into place), exactly as an\n" +
			"agent or a script should, and prints its id on stdout. A running supervisor takes it at\n" +
			"once: send waits for that (up to 5 s) and says the task id it got on stderr, or why it was\n" +
			"refused (exit 1). When the role gets no new task for now (its budget reached, held, at a\n" +
			"usage limit, fatal or stopped), the task is queued all the same (exit 0) and a second line\n" +
			"on stderr says why and what lifts it. Without a supervisor it becomes a task at the next `shogun start`.\n" +
			"`shogun tasks ID` shows the task, by its id or the command's.",
		Flags: []cli.Flag{
			workspaceFlag,
			&cli.StringFlag{Name: "to", Usage: "role `ID` that does the task (required)"},
			&cli.StringFlag{Name: "title", Usage: "one-line title (required)"},
			&cli.StringFlag{Name: "body", Usage: "the task text"},
			&cli.StringFlag{Name: "body-file", Usage: "read the task text from `FILE` (- for standard input)"},
			&cli.StringFlag{Name: "from", Usage: "role `ID` to notify when the report arrives"},
			&cli.StringFlag{Name: "priority", Usage: strings.Join(store.Priorities, ", "), Value: store.PriorityNormal},
			&cli.StringSliceFlag{Name: "tag", Usage: "a tag (repeatable)"},
			&cli.StringFlag{Name: "id", Usage: "command id (default: generated)"},
		},
		Action: func(c *cli.Context) error {
			for _, f := range []struct{ name, what string }{{"to", "the role that does the task: --to ROLE"}, {"title", "a one-line title: --title T"}} {
				if c.String(f.name) == "" {
					return usageErrorf("send needs %s (shogun send --to ROLE --title T --body B)", f.what)
				}
			}
			ws, err := workspaceDir(c)
			if err != nil {
				return err
			}
			body, err := sendBody(c)
			if err != nil {
				return err
			}
			errw := c.App.ErrWriter
			var warned strings.Builder
			cfg, err := readingConfig(ws, &warned)
			if err != nil {
				return err
			}
			var running *control.StatusReply
			if st, err := control.NewClient(ws).Status(); err == nil {
				running = &st
			}
			to, written := c.String("to"), time.Now()
			cmd := queue.Command{
				ID: c.String("id"), To: to, From: c.String("from"), Title: c.String("title"),
				Body: body, Tags: c.StringSlice("tag"), Priority: c.String("priority"),
			}
			fmt.Fprint(errw, warned.String())
			if err := checkSendRoles(cfg, warned.Len() > 0, running, cmd); err != nil {
				return err
			}
			id, path, err := queue.Send(cfg.Workspace, cmd, written)
			if err != nil {
				return err
			}
			fmt.Fprintln(c.App.Writer, id)
			fmt.Fprintf(errw, "shogun: wrote %s\n", path)
			if running == nil {
				fmt.Fprintf(errw, "shogun: no supervisor is running for this workspace: command %s becomes a task for %s at the next `shogun start`\n", id, to)
				return nil
			}
			ctx, stop := signalContext(context.Background())
			defer stop()
			task, refusal := queue.AwaitTaken(ctx, cfg, id, path, written, sendSettle)
			switch {
			case task != nil:
				fmt.Fprintf(errw, "shogun: queued as task %s for %s (shogun tasks %s)\n", task.ID, textsafe.Escape(task.Role), task.ID)
				if st, err := control.NewClient(ws).Status(); err == nil {
					if why := roleHold(st, task.Role); why != "" {
						fmt.Fprintf(errw, "shogun: but %s gets no new task for now: %s; the task waits in its queue until then\n", textsafe.Escape(task.Role), why)
					} else if how := roleWakes(st, task.Role); how != "" {
						fmt.Fprintf(errw, "shogun: %s %s\n", textsafe.Escape(task.Role), how)
					}
				}
			case refusal != "":
				return fmt.Errorf("the supervisor refused command %s: %s (see %s)", id, textsafe.Escape(refusal), displayPath(ws, workspace.New(ws).Failed()))
			default:
				fmt.Fprintf(errw, "shogun: the supervisor has not taken command %s yet; shogun tasks %s shows its task once it has\n", id, id)
			}
			return nil
		},
	}
}

// roleHold says why the running supervisor types no new task into role
// for now, with what lifts it, escaped for display: its budget reached, a
// hold, a usage limit, or the role fatal, stopped or not running; "" when
// a task sent to it is typed as usual.
func roleHold(st control.StatusReply, role string) string {
	for _, r := range st.Roles {
		if r.ID != role {
			continue
		}
		switch {
		case r.Budget != "":
			return textsafe.Escape(r.Budget) + " (usage.budgets in config/settings.yaml; raise it, or wait for the day to turn)"
		case r.Held != "":
			return "it is held: " + textsafe.Escape(r.Held) + " (`shogun restart " + textsafe.Escape(role) + "` or `shogun status --dismiss` releases it)"
		case !r.LimitedUntil.IsZero():
			return "it is at a usage limit until " + r.LimitedUntil.Local().Format("15:04")
		case r.State == string(supervisor.Fatal):
			return "it is fatal (" + textsafe.Escape(r.LastError) + "); fix it and run `shogun restart " + textsafe.Escape(role) + "`"
		case r.State == string(supervisor.Stopped):
			return "it is stopped; `shogun restart " + textsafe.Escape(role) + "` starts it again"
		}
		return ""
	}
	return "it does not run in this supervisor (disabled in config/roles.yaml, or left out by `shogun start --roles`)"
}

// roleWakes says, escaped for display, how a role whose program does not
// run gets the task just queued for it: it wakes for it, or waits for a
// slot first; "" when its program runs (or it is not running at all, which
// roleHold says).
func roleWakes(st control.StatusReply, role string) string {
	for _, r := range st.Roles {
		if r.ID != role {
			continue
		}
		switch supervisor.State(r.State) {
		case supervisor.Sleeping:
			return "is asleep: it wakes for the task"
		case supervisor.Waking:
			return "is waking: the task is typed once its program is ready"
		case supervisor.WaitingSlot:
			// Its state's reason says which bound ("has work; waits
			// for a slot (agent.max_running 2)").
			why := "waits for a slot"
			if r.SleepReason != "" {
				why = textsafe.Escape(r.SleepReason)
			}
			return why + ": the task is typed once it has a slot and its program is ready"
		}
	}
	return ""
}

// sendSettle is how long `shogun send` waits for a running supervisor to
// queue the command it wrote.
const sendSettle = 5 * time.Second

func sendBody(c *cli.Context) (string, error) {
	body, file := c.String("body"), c.String("body-file")
	switch {
	case body != "" && file != "":
		return "", usageErrorf("give --body or --body-file, not both")
	case file == "-":
		b, err := readAllLimited(os.Stdin)
		return string(b), err
	case file != "":
		f, err := os.Open(file)
		if err != nil {
			return "", fmt.Errorf("--body-file: %w", err)
		}
		defer f.Close()
		b, err := readAllLimited(f)
		return string(b), err
	case body == "":
		return "", usageErrorf("a task needs a body: --body TEXT or --body-file FILE")
	}
	return body, nil
}

// readAllLimited reads a task body, refusing one over the command size
// limit. CRLF line ends (a file from Notepad, PowerShell's pipeline) become
// LF, as they do in a command file's YAML, so that the agent's task file
// shows the body as text, not as an escaped string full of \r.
func readAllLimited(f *os.File) ([]byte, error) {
	const limit = 1 << 20
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read body: %w", err)
	}
	if len(b) > limit {
		return nil, fmt.Errorf("body is over %d bytes", limit)
	}
	return bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n")), nil
}

func tasksCommand() *cli.Command {
	return &cli.Command{
		Name:      "tasks",
		Usage:     "list tasks with their state, times, attempts and report summary; search the history; with TASK, that task in full",
		ArgsUsage: "[TASK]",
		Description: "Newest first. The filters combine: every one given must match.\n\n" +
			"--search finds words in a task's title, body or report (summary and details), whatever\n" +
			"their case or Latin accents: `--search 'login page'` finds tasks with both words,\n" +
			"`--search '\"login page\"'` the two together in this order, `--search 'log*'` words that\n" +
			"begin with log. Any run of Chinese or Japanese characters is found. Everything else\n" +
			"(AND, OR, NOT, NEAR, :, ^, -, parentheses) is text to find, never an operator.\n\n" +
			"--since and --until bound when a task arrived: a date (2026-11-22, midnight local time),\n" +
			"a date and time (2026-11-22T10:00, or RFC 3339 with a zone), or a span back from now\n" +
			"(90m, 36h, 7d). --since includes its time, --until excludes it.",
		Flags: []cli.Flag{
			workspaceFlag,
			&cli.StringFlag{Name: "search", Aliases: []string{"s"}, Usage: "only tasks whose title, body or report has these `WORDS`"},
			&cli.StringFlag{Name: "since", Usage: "only tasks that arrived at or after `WHEN`: a date, a date and time, or 7d, 36h…"},
			&cli.StringFlag{Name: "until", Usage: "only tasks that arrived before `WHEN`"},
			&cli.StringFlag{Name: "role", Usage: "only this role's tasks"},
			&cli.StringFlag{Name: "status", Usage: "only tasks in this state: " + strings.Join(store.TaskStatuses, ", ")},
			&cli.IntFlag{Name: "limit", Usage: "at most this many, newest first; 0: all", DefaultText: "50, all with --json"},
			&cli.BoolFlag{Name: "json", Usage: "print JSON (keys in docs/json.md)"},
		},
		Action: func(c *cli.Context) error {
			ws, err := workspaceDir(c)
			if err != nil {
				return err
			}
			if s := c.String("status"); s != "" && !contains(store.TaskStatuses, s) {
				return usageErrorf("--status %q: want one of %s", s, strings.Join(store.TaskStatuses, ", "))
			}
			now := time.Now()
			f := store.TaskFilter{Role: c.String("role"), Status: c.String("status"), Search: c.String("search"), Limit: c.Int("limit")}
			if !c.IsSet("limit") && !c.Bool("json") {
				f.Limit = 50 // a screenful; a script asking for JSON gets everything
			}
			for _, b := range []struct {
				flag string
				dst  *time.Time
			}{{"since", &f.Since}, {"until", &f.Until}} {
				if v := c.String(b.flag); v != "" {
					if *b.dst, err = parseWhen(v, now); err != nil {
						return usageErrorf("--%s: %w", b.flag, err)
					}
				}
			}
			if !f.Since.IsZero() && !f.Until.IsZero() && !f.Until.After(f.Since) {
				return usageErrorf("--until %s is not after --since %s: no task can match", f.Until.Format(time.RFC3339), f.Since.Format(time.RFC3339))
			}
			cfg, err := readingConfig(ws, c.App.ErrWriter)
			if err != nil {
				return err
			}
			path := cfg.Settings.Data.SQLitePath
			if err := team.CheckHistory(cfg, false); err != nil {
				return err
			}
			if _, err := os.Stat(path); err != nil {
				if c.NArg() == 0 && !c.Bool("json") && printWaitingCommands(c.App.Writer, ws, false) {
					return nil
				}
				return fmt.Errorf("no history yet at %s: start the supervisor first", path)
			}
			st, err := openStore(c, nil, ws, path)
			if err != nil {
				return err
			}
			defer st.Close()
			if c.NArg() > 0 {
				return printTaskDetail(c.App.Writer, st, c.Args().First(), c.Bool("json"))
			}
			tasks, err := st.Tasks(f)
			if err != nil {
				return err
			}
			w := c.App.Writer
			if c.Bool("json") {
				out := make([]control.Task, 0, len(tasks))
				ids := make([]string, 0, len(tasks))
				for _, t := range tasks {
					out = append(out, control.TaskFrom(t))
					ids = append(ids, t.ID)
				}
				tokens, err := st.TaskTokens(ids)
				if err != nil {
					return err
				}
				control.WithTokens(out, tokens)
				hs, err := st.Handovers(ids)
				if err != nil {
					return err
				}
				control.WithHandovers(out, hs)
				return printJSON(w, out)
			}
			if len(tasks) == 0 {
				if !printWaitingCommands(w, ws, false) {
					fmt.Fprintln(w, "no tasks")
				}
				return nil
			}
			ids := make([]string, 0, len(tasks))
			for _, t := range tasks {
				ids = append(ids, t.ID)
			}
			hs, err := st.Handovers(ids)
			if err != nil {
				return err
			}
			// On a terminal: STATUS coloured, TITLE and REPORT cut to its width,
			// then the times and attempts left out if need be.
			tw := termTable(w, 3, 7, 8).dropping(6, 5, 4) // UPDATED, CREATED, ATTEMPTS
			fmt.Fprintln(tw, "TASK\tROLE\tFROM\tSTATUS\tATTEMPTS\tCREATED\tUPDATED\tTITLE\tREPORT")
			for _, t := range tasks {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\n", textsafe.Escape(t.ID), textsafe.Escape(roleWithHandovers(t.Role, hs[t.ID])), textsafe.Escape(orDash(t.From)), textsafe.Escape(t.Status), t.Attempts,
					t.CreatedAt.Local().Format("01-02 15:04:05"), t.UpdatedAt.Local().Format("15:04:05"),
					short(t.Title, 40), short(t.Summary, 40))
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			if _, err := control.NewClient(ws).Status(); errors.Is(err, control.ErrNoSupervisor) {
				printWaitingCommands(w, ws, true)
			}
			return nil
		},
	}
}

// roleWithHandovers is a task's role as the table shows it: with the role
// it was first handed over from, "claude (from codex)".
func roleWithHandovers(role string, hs []store.Handover) string {
	if len(hs) == 0 {
		return role
	}
	return role + " (from " + hs[0].From + ")"
}

// printWaitingCommands lists the commands still in runtime/queue/commands/,
// which no supervisor has taken yet (they become tasks at the next start),
// and reports whether there were any. The files are anyone's: each is read
// within the queue's limits, and one that does not decode is named as such.
func printWaitingCommands(w io.Writer, ws string, afterTable bool) bool {
	dir := workspace.New(ws).Commands()
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	tw := termTable(w, -1, 4)
	n := 0
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || strings.HasPrefix(name, ".") || !(strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml")) {
			continue
		}
		if n == 0 {
			if afterTable {
				fmt.Fprintln(w)
			}
			fmt.Fprintf(w, "waiting in %s (no supervisor has taken them; they become tasks at the next `shogun start`):\n", workspace.CommandsDir+"/")
			fmt.Fprintln(tw, "COMMAND\tTO\tFROM\tFILE\tTITLE")
		}
		n++
		cmds, err := readCommandFile(filepath.Join(dir, name))
		if err != nil {
			fmt.Fprintf(tw, "-\t-\t-\t%s\t(%s)\n", textsafe.Escape(name), short(err.Error(), 60))
			continue
		}
		for _, cmd := range cmds {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", textsafe.Escape(cmd.ID), textsafe.Escape(cmd.To), textsafe.Escape(orDash(cmd.From)), textsafe.Escape(name), short(cmd.Title, 40))
		}
	}
	tw.Flush()
	return n > 0
}

// readCommandFile decodes one command file as the queue would
// (queue.ReadFile: no link followed, no FIFO waited on, the size bounded).
func readCommandFile(path string) ([]queue.Command, error) {
	data, err := queue.ReadFile(path, queue.Limits{})
	if err != nil {
		return nil, err
	}
	return queue.DecodeCommands(filepath.Base(path), data, queue.Limits{})
}

// parseWhen reads a time given on the command line: RFC 3339 with a zone,
// a date and time or a date in local time, or a span back from now (a Go
// duration such as 36h, or days such as 7d).
func parseWhen(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	for _, layout := range []string{"2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			return t, nil
		}
	}
	if days, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.Atoi(days); err == nil && n >= 0 {
			return now.AddDate(0, 0, -n), nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("%q is not a time: give a date (2026-11-22), a date and time (2026-11-22T10:00, or RFC 3339 with a zone), or a span back from now (90m, 36h, 7d)", s)
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// short keeps a table cell on one line and n terminal columns wide at most, with every
// control character made visible (agents write titles and summaries).
func short(s string, n int) string {
	s = textsafe.Escape(strings.Join(strings.Fields(s), " "))
	return displaywidth.TruncateString(s, n, "…")
}
