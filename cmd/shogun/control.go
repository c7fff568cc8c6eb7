package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/shogun-dev/shogun/config"
	"github.com/shogun-dev/shogun/control"
	"github.com/shogun-dev/shogun/store"
	"github.com/shogun-dev/shogun/supervisor"
	"github.com/shogun-dev/shogun/team"
	"github.com/shogun-dev/shogun/textsafe"
	"github.com/shogun-dev/shogun/workspace"
)

// The team a supervisor runs is what its control API serves. The assertion
// lives here, where the two meet, so that neither package imports the other.
var _ control.Team = (*team.Team)(nil)

// client returns the control client of the command's workspace.
func client(c *cli.Context) (*control.Client, error) {
	ws, err := workspaceDir(c)
	if err != nil {
		return nil, err
	}
	return control.NewClient(ws), nil
}

// roleClient is the ROLE argument and the control client of a command.
func roleClient(c *cli.Context) (string, *control.Client, error) {
	role, err := roleArg(c)
	if err != nil {
		return "", nil, err
	}
	cl, err := client(c)
	if err != nil {
		return "", nil, err
	}
	// A role that does not run is named with those that do, as attach and
	// send name them.
	st, err := cl.Status()
	if err != nil {
		return "", nil, err
	}
	if err := knownRole(st.Roles, role); err != nil {
		return "", nil, err
	}
	return role, cl, nil
}

// roleArg is the one ROLE argument of a command.
func roleArg(c *cli.Context) (string, error) {
	if c.NArg() < 1 {
		return "", usageErrorf("%s needs a role id: shogun %s ROLE", c.Command.Name, c.Command.Name)
	}
	return c.Args().First(), nil
}

func statusCommand() *cli.Command {
	return &cli.Command{
		Name:  "status",
		Usage: "show each role of the running supervisor: state, pid, uptime, restarts, task, queue",
		Description: "Exit code 0 when the supervisor is up, 3 when it is not.\n" +
			"An attention line \"rejected FILE: ...\" lasts while the file is in runtime/queue/failed/;\n" +
			"--dismiss clears those lines now (the files stay) and releases the roles held since their hook went missing.",
		Flags: []cli.Flag{workspaceFlag, &cli.BoolFlag{Name: "json", Usage: "print JSON (keys in docs/api.md, GET /v1/status)"},
			&cli.BoolFlag{Name: "dismiss", Usage: "first clear the alerts of rejected files and release held roles (POST /v1/attention/dismiss)"}},
		Action: func(c *cli.Context) error {
			cl, err := client(c)
			if err != nil {
				return err
			}
			dismissed := -1
			if c.Bool("dismiss") {
				if dismissed, err = cl.DismissRejected(); err != nil {
					if errors.Is(err, control.ErrNoSupervisor) {
						return &exitError{code: 3, err: err}
					}
					return err
				}
			}
			st, err := cl.Status()
			if err != nil {
				if errors.Is(err, control.ErrNoSupervisor) {
					return &exitError{code: 3, err: err}
				}
				return err
			}
			w := c.App.Writer
			if c.Bool("json") {
				return printJSON(w, st)
			}
			// On a terminal: STATE coloured, NAME and TASK cut to its width.
			tw := termTable(w, 2, 1, 6).dropping(3, 4) // PID, UPTIME
			fmt.Fprintln(tw, "ROLE\tNAME\tSTATE\tPID\tUPTIME\tRESTARTS\tTASK\tQUEUED\tQUIET\tMEMORY")
			for _, r := range st.Roles {
				task := "-"
				if r.TaskID != "" {
					task = textsafe.Escape(r.TaskID) + " " + short(r.TaskTitle, 30)
				}
				pid := "-"
				if r.Pid > 0 {
					pid = fmt.Sprint(r.Pid)
				}
				state := textsafe.Escape(r.State)
				if !r.LimitedUntil.IsZero() {
					state += " until " + r.LimitedUntil.Local().Format("15:04")
				}
				if r.BackoffReason != "" {
					state += " (" + textsafe.Escape(r.BackoffReason) + ")"
				}
				if r.Budget != "" {
					state += " (" + textsafe.Escape(r.Budget) + ")"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\t%d\t%s\t%s\n", textsafe.Escape(r.ID), short(r.Name, 40), state, pid,
					secs(r.UptimeS), r.Restarts, task, r.QueueDepth, secs(r.SinceOutput), memoryCell(r))
			}
			tw.Flush()
			var parts []string
			for _, k := range store.TaskStatuses {
				if n := st.Tasks[k]; n > 0 {
					parts = append(parts, fmt.Sprintf("%d %s", n, k))
				}
			}
			if len(parts) == 0 {
				parts = []string{"no tasks"}
			}
			fmt.Fprintf(w, "\nsupervisor pid %d, up %s, run %s; %s; tasks: %s\n", st.Pid, secs(st.UptimeS), textsafe.Escape(st.RunID),
				roleCounts(st.Roles), strings.Join(parts, ", "))
			if line := slotsLine(st); line != "" {
				fmt.Fprintln(w, line)
			}
			fmt.Fprintf(w, "control endpoint: %s\n", cl.Endpoint())
			for _, a := range st.Attention {
				fmt.Fprintf(w, "attention: %s\n", textsafe.Escape(a))
			}
			if dismissed >= 0 {
				fmt.Fprintf(w, "dismissed %d rejected-file alert(s); the files stay in runtime/queue/failed/\n", dismissed)
			}
			if st.Halted != "" {
				fmt.Fprintf(w, "QUEUE STOPPED: %s\n", textsafe.Escape(st.Halted))
			}
			if st.ConfigError != "" {
				fmt.Fprintln(w, "CONFIGURATION NOT APPLIED (the supervisor runs on with the one it had):")
				for _, line := range strings.Split(st.ConfigError, "\n") {
					fmt.Fprintf(w, "  %s\n", textsafe.Escape(line))
				}
			}
			return nil
		},
	}
}

// memoryCell is a role's tree memory, over its memory_max when it has one:
// "312.5 MB", "312.5 MB/2 GB"; "-" when no program runs or it is not known.
func memoryCell(r control.RoleReply) string {
	if r.MemoryBytes == 0 {
		return "-"
	}
	limit := config.ByteSize(r.MemoryMaxBytes)
	if limit == 0 {
		return config.ByteSize(r.MemoryBytes).String()
	}
	return config.ByteSize(r.MemoryBytes).Like(limit) + "/" + limit.String()
}

// roleCounts counts the roles by state, in the order the states first
// appear: "5 roles: 3 ready, 2 fatal". The console's Team page says the same.
func roleCounts(roles []control.RoleReply) string {
	if len(roles) == 0 {
		return "no roles"
	}
	var order []string
	n := map[string]int{}
	for _, r := range roles {
		if n[r.State] == 0 {
			order = append(order, r.State)
		}
		n[r.State]++
	}
	parts := make([]string, len(order))
	for i, s := range order {
		parts[i] = fmt.Sprintf("%d %s", n[s], textsafe.Escape(s))
	}
	return fmt.Sprintf("%d %s: %s", len(roles), plural(len(roles), "role", "roles"), strings.Join(parts, ", "))
}

// slotsLine says how many of the bounded slots are in use and which roles
// wait for one: "slots 5/8 in use (agent.max_running), claude 2/2;
// waiting for a slot: ashigaru3, ashigaru4". Empty without a bound.
func slotsLine(st control.StatusReply) string {
	var parts []string
	if st.MaxRunning > 0 {
		parts = append(parts, fmt.Sprintf("slots %d/%d in use (agent.max_running)", st.SlotsInUse, st.MaxRunning))
	}
	clis := slices.Sorted(maps.Keys(st.CLISlots))
	for _, cli := range clis {
		n := st.CLISlots[cli]
		parts = append(parts, fmt.Sprintf("%s %d/%d", textsafe.Escape(cli), n.InUse, n.Max))
	}
	if len(parts) == 0 {
		return ""
	}
	line := strings.Join(parts, ", ")
	if st.MaxRunning == 0 {
		line = "slots in use (agent.max_running_per_cli): " + line
	}
	var waiting []string
	for _, r := range st.Roles {
		if r.State == string(supervisor.WaitingSlot) {
			waiting = append(waiting, textsafe.Escape(r.ID))
		}
	}
	if len(waiting) > 0 {
		line += "; waiting for a slot: " + strings.Join(waiting, ", ")
	}
	return line
}

// secs renders seconds for people.
func secs(s float64) string {
	if s <= 0 {
		return "-"
	}
	return (time.Duration(s * float64(time.Second))).Round(time.Second).String()
}

func screenCommand() *cli.Command {
	return &cli.Command{
		Name:      "screen",
		Usage:     "print a role's current screen as text",
		ArgsUsage: "ROLE",
		Flags:     []cli.Flag{workspaceFlag, &cli.BoolFlag{Name: "json", Usage: "print JSON: text, lines and cursor (docs/api.md)"}},
		Action: func(c *cli.Context) error {
			role, cl, err := roleClient(c)
			if err != nil {
				return err
			}
			scr, err := cl.Screen(role)
			if err != nil {
				return err
			}
			if c.Bool("json") {
				return json.NewEncoder(c.App.Writer).Encode(scr)
			}
			fmt.Fprintln(c.App.Writer, scr.Text)
			return nil
		},
	}
}

// exitUnconfirmed is the exit code of `shogun type --submit` when the text
// was typed and submitted but the screen never confirmed it.
const exitUnconfirmed = 4

func typeCommand() *cli.Command {
	return &cli.Command{
		Name:      "type",
		Usage:     "type text into a role by the typing rules (wait until ready, pause, separate submit, verify)",
		ArgsUsage: "ROLE TEXT",
		Description: fmt.Sprintf("Exit code 0 when the text was typed (with --submit: and the screen confirmed the program took it);\n"+
			"%d when it was typed and submitted but never confirmed (the text may still sit in the role's input:\n"+
			"look with shogun screen ROLE); 3 when no supervisor runs; 1 on any other error (refused text, role not running).", exitUnconfirmed),
		Flags: []cli.Flag{workspaceFlag, &cli.BoolFlag{Name: "submit", Usage: "submit the text (and verify it was taken)"}},
		Action: func(c *cli.Context) error {
			if c.NArg() < 2 {
				return usageErrorf("type needs a role and the text: shogun type ROLE TEXT [--submit]")
			}
			cl, err := client(c)
			if err != nil {
				return err
			}
			role, text := c.Args().Get(0), strings.Join(c.Args().Slice()[1:], " ")
			r, err := cl.Type(role, text, c.Bool("submit"))
			if err != nil {
				return err
			}
			if !c.Bool("submit") {
				return nil
			}
			if !r.Confirmed {
				return &exitError{code: exitUnconfirmed, err: fmt.Errorf("typed into %s and submitted %d time(s), but the screen never confirmed it: %s",
					textsafe.Escape(role), r.Submits, textsafe.Escape(r.Reason))}
			}
			fmt.Fprintf(c.App.ErrWriter, "shogun: typed into %s and submitted (confirmed after %d submit(s))\n", textsafe.Escape(role), r.Submits)
			return nil
		},
	}
}

func restartCommand() *cli.Command {
	return &cli.Command{
		Name:      "restart",
		Usage:     "stop a role's program and start it again (also a fatal or stopped role)",
		ArgsUsage: "ROLE",
		Flags:     []cli.Flag{workspaceFlag},
		Action: func(c *cli.Context) error {
			role, cl, err := roleClient(c)
			if err != nil {
				return err
			}
			rep, err := cl.Restart(role)
			if err != nil {
				return err
			}
			if rep.Reason != "" {
				fmt.Fprintf(c.App.ErrWriter, "shogun: %s is %s: %s\n", role, rep.Result, textsafe.Escape(rep.Reason))
				return nil
			}
			fmt.Fprintf(c.App.ErrWriter, "shogun: restarting %s\n", role)
			return nil
		},
	}
}

// stoppingLine says what `shogun stop` waits for: every role's program,
// or, when some roles run none (asleep, waiting for a slot, stopped), how
// many programs of how many roles.
func stoppingLine(st control.StatusReply) string {
	running := 0
	for _, r := range st.Roles {
		switch supervisor.State(r.State) {
		case supervisor.Sleeping, supervisor.WaitingSlot, supervisor.Stopped, supervisor.Exited, supervisor.Backoff, supervisor.Fatal:
		default:
			running++
		}
	}
	roles := fmt.Sprintf("%d %s", len(st.Roles), plural(len(st.Roles), "role", "roles"))
	switch {
	case running == len(st.Roles):
		return fmt.Sprintf("shogun: stopping the supervisor (pid %d) and its %s: each program is asked to quit, then its process tree is ended…", st.Pid, roles)
	case running == 0:
		return fmt.Sprintf("shogun: stopping the supervisor (pid %d): none of its %s runs a program (asleep or stopped)…", st.Pid, roles)
	}
	return fmt.Sprintf("shogun: stopping the supervisor (pid %d): %d %s running of %s (the roles asleep or stopped have none): each is asked to quit, then its process tree is ended…",
		st.Pid, running, plural(running, "program", "programs"), roles)
}

func stopCommand() *cli.Command {
	return &cli.Command{
		Name:  "stop",
		Usage: "stop the running supervisor gracefully (every role, then the supervisor)",
		Flags: []cli.Flag{workspaceFlag, &cli.DurationFlag{Name: "wait", Usage: "wait this long for it to be gone (0: do not wait)", Value: time.Minute}},
		Action: func(c *cli.Context) error {
			cl, err := client(c)
			if err != nil {
				return err
			}
			st, err := cl.Status()
			if err != nil {
				return err
			}
			if err := cl.Stop(); err != nil {
				return err
			}
			if c.Duration("wait") > 0 {
				fmt.Fprintln(c.App.ErrWriter, stoppingLine(st))
			}
			ws, err := workspaceDir(c)
			if err != nil {
				return err
			}
			lock := workspace.New(ws).Lock()
			asked := time.Now()
			deadline := asked.Add(c.Duration("wait"))
			for time.Now().Before(deadline) {
				if supervisor.Owner(lock) == 0 {
					fmt.Fprintf(c.App.ErrWriter, "shogun: stopped (%s)\n", time.Since(asked).Round(100*time.Millisecond))
					return nil
				}
				time.Sleep(100 * time.Millisecond)
			}
			if c.Duration("wait") > 0 {
				return fmt.Errorf("the supervisor is still stopping after %s", c.Duration("wait"))
			}
			fmt.Fprintln(c.App.ErrWriter, "shogun: stopping")
			return nil
		},
	}
}
