package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/shogun-dev/shogun/config"
	"github.com/shogun-dev/shogun/console"
	"github.com/shogun-dev/shogun/queue"
	"github.com/shogun-dev/shogun/skills"
	"github.com/shogun-dev/shogun/store"
	"github.com/shogun-dev/shogun/supervisor"
	"github.com/shogun-dev/shogun/team"
	"github.com/shogun-dev/shogun/workspace"
)

// demoOrder is what the demo asks of the shogun: the karo splits it among
// the three ashigaru.
var demoOrder = queue.Command{
	To:    "shogun",
	Title: "Add a login page",
	Body: "Add a login page to the web app: a form with email and password,\n" +
		"server-side validation, and a test for both.",
	Tags: []string{"frontend"},
}

func demoCommand() *cli.Command {
	return &cli.Command{
		Name:  "demo",
		Usage: "run a whole team of simulated agents through the file queue and print what happened",
		Description: "Creates a demo workspace (`shogun init --demo`) in --dir or a new temporary folder and\n" +
			"starts the supervisor. Once every role is ready it hands the shogun one order; the\n" +
			"shogun passes it to the karo, the karo splits it into three tasks for the ashigaru,\n" +
			"reports flow back up. Then it stops cleanly and prints the task table. Ctrl-C stops it early.\n\n" +
			"A temporary workspace is removed at the end. With --keep the team and its web console stay\n" +
			"up until you press Enter, and the workspace is kept to look at afterwards; without it there\n" +
			"is no console (its link would be dead a second later).",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "dir", Usage: "demo workspace `DIR`, kept afterwards (default: a new temporary folder, removed)"},
			&cli.BoolFlag{Name: "keep", Usage: "once done, keep the team and its web console running until Enter, and keep the workspace"},
			&cli.DurationFlag{Name: "linger", Usage: "how long to keep running once the order is done", Value: time.Second},
			&cli.DurationFlag{Name: "timeout", Usage: "give up after this long", Value: 90 * time.Second},
			&cli.IntFlag{Name: "port", Usage: "with --keep, serve the web console on `PORT` (default: ui.port, or a free port when that one is in use)"},
		},
		Action: func(c *cli.Context) error {
			dir, temporary, err := demoDir(c.String("dir"))
			if err != nil {
				return err
			}
			keep := c.Bool("keep")
			kept := keep || !temporary
			if p := c.Int("port"); c.IsSet("port") && (p < 1 || p > 65535 || !keep) {
				if !keep {
					return usageErrorf("demo --port needs --keep: without it the demo has no web console")
				}
				return usageErrorf("demo --port %d: want a port from 1 to 65535", p)
			}
			if !kept {
				defer os.RemoveAll(dir)
			}
			w := c.App.Writer
			fmt.Fprintf(w, "shogun demo: workspace %s\n", dir)
			if _, err := config.Scaffold(dir, config.ScaffoldOptions{Demo: true, Force: true, Lang: "en"}); err != nil {
				return fmt.Errorf("demo workspace: %w", err)
			}
			cfg, err := startConfig(dir)
			if err != nil {
				return err
			}
			// The console only when it stays up for someone to look at.
			cfg.Settings.UI.Enabled = cfg.Settings.UI.Enabled && keep
			if c.IsSet("port") {
				cfg.Settings.UI.Port = c.Int("port")
			}
			ctx, stop := signalContext(context.Background())
			defer stop()

			ready := newPromptWatch(len(cfg.Enabled()))
			started := time.Now()
			var (
				outcome error
				tasks   []store.Task
				took    time.Duration
				printed bool // the summary, before waiting for Enter
			)
			err = withTeam(ctx, c, dir, cfg, nil, ready.observe, func(ctx context.Context, t *team.Team) error {
				runCtx, stopRun := context.WithCancel(ctx)
				defer stopRun()
				done := make(chan error, 1)
				go func() { done <- t.Run(runCtx) }()
				driveCtx, cancelDrive := context.WithTimeout(runCtx, c.Duration("timeout"))
				outcome = driveDemo(driveCtx, w, dir, t, ready, c.Duration("linger"), keep, kept)
				cancelDrive()
				took = time.Since(started)
				var err error
				if tasks, err = t.Store().Tasks(store.TaskFilter{}); err != nil {
					fmt.Fprintf(w, "cannot read the history: %v\n", err)
				}
				if keep && outcome == nil {
					printDemoSummary(w, dir, cfg.Settings.Data.SQLitePath, tasks, took, true)
					printed = true
					waitForEnter(runCtx, c, w, dir, cfg)
				}
				stopRun()
				return <-done
			})
			if err != nil {
				return err
			}
			if !printed {
				printDemoSummary(w, dir, cfg.Settings.Data.SQLitePath, tasks, took, kept)
			}
			if outcome != nil {
				return &exitError{code: 1, err: outcome}
			}
			return nil
		},
	}
}

// demoDir is the demo's workspace: dir, or a new temporary folder
// (temporary is then true).
func demoDir(dir string) (abs string, temporary bool, err error) {
	if dir == "" {
		tmp, err := os.MkdirTemp("", "shogun-demo-")
		if err != nil {
			return "", false, fmt.Errorf("demo workspace: %w", err)
		}
		dir, temporary = tmp, true
	}
	abs, err = filepath.Abs(dir)
	return abs, temporary, err
}

// waitForEnter keeps the finished demo's team running, with its console,
// until the person presses Enter (or standard input ends) or Ctrl-C.
func waitForEnter(ctx context.Context, c *cli.Context, w io.Writer, ws string, cfg *config.Config) {
	// The demo's supervisor is this process: its console's state names it.
	ui, err := runningConsole(ws, cfg.Settings.UI, os.Getpid())
	if err == nil {
		var tok string
		if tok, err = console.ReadToken(ws); err == nil {
			err = console.Probe(ui, tok)
		}
	}
	if err == nil {
		// The login token never goes into a link printed or handed on:
		// shogun ui makes a one-time link.
		fmt.Fprintf(w, "web console: %s (log in with %s ui --workspace %s)\n", console.Address(ui), selfCommand(), ws)
	} else {
		fmt.Fprintf(w, "web console: %v\n", err)
	}
	fmt.Fprintf(w, "shogun demo: the team is kept running: try %s status --workspace %s in another terminal.\n"+
		"Press Enter (or Ctrl-C) here to stop it; the workspace stays in %s.\n", selfCommand(), ws, ws)
	entered := make(chan struct{})
	// The read cannot be cancelled; it ends with the process.
	go func() {
		_, _ = bufio.NewReader(c.App.Reader).ReadString('\n')
		close(entered)
	}()
	select {
	case <-entered:
	case <-ctx.Done():
	}
}

// promptWatch tells when every role has taken its startup prompt.
type promptWatch struct {
	mu   sync.Mutex
	want int
	seen map[string]bool
	all  chan struct{}
}

func newPromptWatch(n int) *promptWatch {
	return &promptWatch{want: n, seen: map[string]bool{}, all: make(chan struct{})}
}

func (p *promptWatch) observe(e supervisor.Event) {
	if e.Kind != supervisor.EventPrompted {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.seen[e.Role] {
		p.seen[e.Role] = true
		if len(p.seen) == p.want {
			close(p.all)
		}
	}
}

// driveDemo waits for the team, hands the shogun its order, and waits until
// every task is closed.
func driveDemo(ctx context.Context, w io.Writer, ws string, t *team.Team, ready *promptWatch, linger time.Duration, keep, kept bool) error {
	select {
	case <-ready.all:
	case <-ctx.Done():
		return errors.New("demo: the roles did not all become ready in time")
	}
	fmt.Fprintf(w, "shogun demo: all roles ready; ordering the shogun: %q\n", demoOrder.Title)
	id, _, err := queue.Send(ws, demoOrder, time.Now())
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "shogun demo: command %s dropped into runtime/queue/commands/\n", id)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return errors.New("demo: timed out before every task was done")
		case <-tick.C:
		}
		tasks, err := t.Store().Tasks(store.TaskFilter{})
		if err != nil {
			return err
		}
		// shogun → karo → three ashigaru: five tasks, all closed.
		if len(tasks) == 5 && allClosed(tasks) {
			if keep {
				fmt.Fprintf(w, "shogun demo: all %d tasks closed; the team is kept running (--keep)\n", len(tasks))
			} else {
				fmt.Fprintf(w, "shogun demo: all %d tasks closed; stopping in %s\n", len(tasks), linger)
			}
			select {
			case <-time.After(linger):
			case <-ctx.Done():
			}
			for _, task := range tasks {
				if task.Status != store.StatusDone {
					return fmt.Errorf("demo: task %s ended %s", task.ID, task.Status)
				}
			}
			return demoSkills(w, ws, t, kept)
		}
	}
}

// demoSkills mines the finished tasks for skill candidates, as the
// supervisor does after reports, and shows what it found.
func demoSkills(w io.Writer, ws string, t *team.Team, kept bool) error {
	res, err := skills.Scan(t.Store(), skills.ScanOptions{})
	if err != nil {
		return fmt.Errorf("demo: skills scan: %w", err)
	}
	if len(res.Candidates) == 0 {
		// The order and its parts are one chain of commands: one piece of
		// work, which makes no candidate by itself.
		fmt.Fprintf(w, "shogun demo: skills scan over %d finished tasks found no candidate: they are one order and its parts, "+
			"one piece of work; work repeated across orders becomes a candidate\n", res.Tasks)
		return nil
	}
	fmt.Fprintf(w, "shogun demo: skills scan over %d finished tasks found %d candidate(s):\n", res.Tasks, len(res.Candidates))
	for _, c := range res.Candidates {
		fmt.Fprintf(w, "  %-28s %d tasks  %s\n", c.Name, c.Tasks, short(c.Description, 70))
	}
	if kept {
		fmt.Fprintf(w, "shogun demo: review them with: %s skills review --workspace %s\n", selfCommand(), ws)
	}
	return nil
}

func allClosed(tasks []store.Task) bool {
	for _, t := range tasks {
		if !store.Closed(t.Status) {
			return false
		}
	}
	return true
}

// printDemoSummary prints the final task table and, when the workspace is
// kept, where to look next; else that it is gone and how to keep one.
func printDemoSummary(w io.Writer, ws, db string, tasks []store.Task, took time.Duration, kept bool) {
	fmt.Fprintf(w, "\nshogun demo: finished in %s\n\n", took.Round(100*time.Millisecond))
	tw := newTableWriter(w)
	fmt.Fprintln(tw, "TASK\tROLE\tFROM\tSTATUS\tATTEMPTS\tTITLE\tREPORT")
	for i := len(tasks) - 1; i >= 0; i-- {
		t := tasks[i]
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\n", t.ID, t.Role, orDash(t.From), t.Status, t.Attempts, short(t.Title, 44), short(t.Summary, 40))
	}
	tw.Flush()
	if !kept {
		fmt.Fprintf(w, "\nThe demo's workspace is removed. To look around: %[1]s demo --keep (the team and its web console\n"+
			"stay up until you press Enter), or %[1]s demo --dir DIR (the workspace is kept in DIR).\n", selfCommand())
		return
	}
	fmt.Fprintf(w, "\ndashboard: %s\nhistory:   %s\nlogs:      %s\n",
		workspace.New(ws).Dashboard(), db, workspace.New(ws).Logs())
	fmt.Fprintf(w, "try:       %s tasks --workspace %s\n", selfCommand(), ws)
}

func orDash(s string) string {
	if strings.TrimSpace(s) == "" {
		return "-"
	}
	return s
}
