package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/shogun-dev/shogun/config"
	"github.com/shogun-dev/shogun/supervisor"
)

func demoCommand() *cli.Command {
	return &cli.Command{
		Name:  "demo",
		Usage: "run a whole team of simulated agents and print what happened",
		Description: "Creates a demo workspace (`shogun init --demo`) in --dir or a new temporary folder,\n" +
			"starts the supervisor, waits until every role is ready and has taken its startup\n" +
			"prompt, lets it run for --linger, stops it cleanly and prints a summary.\n" +
			"Ctrl-C stops it early.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "dir", Usage: "demo workspace `DIR` (default: a new temporary folder)"},
			&cli.DurationFlag{Name: "linger", Usage: "how long to keep running once every role took its prompt", Value: 2 * time.Second},
			&cli.DurationFlag{Name: "timeout", Usage: "give up waiting for the roles after this long", Value: 60 * time.Second},
		},
		Action: func(c *cli.Context) error {
			dir := c.String("dir")
			if dir == "" {
				tmp, err := os.MkdirTemp("", "shogun-demo-")
				if err != nil {
					return fmt.Errorf("demo workspace: %w", err)
				}
				dir = tmp
			}
			dir, err := filepath.Abs(dir)
			if err != nil {
				return err
			}
			w := c.App.Writer
			fmt.Fprintf(w, "shogun demo: workspace %s\n", dir)
			if _, err := config.Scaffold(dir, config.ScaffoldOptions{Demo: true, Force: true, Lang: "en"}); err != nil {
				return fmt.Errorf("demo workspace: %w", err)
			}
			cfg, err := loadConfig(dir)
			if err != nil {
				return err
			}
			ctx, stop := signalContext(context.Background())
			defer stop()
			ctx, cancel := context.WithCancel(ctx)
			defer cancel()

			want := len(cfg.Enabled())
			var mu sync.Mutex
			prompted := map[string]bool{}
			allPrompted := make(chan struct{})
			observe := func(e supervisor.Event) {
				if e.Kind != supervisor.EventPrompted {
					return
				}
				mu.Lock()
				defer mu.Unlock()
				prompted[e.Role] = true
				if len(prompted) == want {
					close(allPrompted)
				}
			}
			go func() {
				select {
				case <-allPrompted:
					fmt.Fprintf(w, "shogun demo: all %d roles are ready and took their startup prompt; stopping in %s\n", want, c.Duration("linger"))
					select {
					case <-time.After(c.Duration("linger")):
					case <-ctx.Done():
					}
				case <-time.After(c.Duration("timeout")):
					fmt.Fprintf(w, "shogun demo: gave up after %s\n", c.Duration("timeout"))
				case <-ctx.Done():
				}
				cancel()
			}()
			started := time.Now()
			sup, err := runSupervisor(ctx, c, dir, cfg, nil, observe)
			if err != nil {
				return err
			}
			printSummary(w, dir, sup, time.Since(started))
			mu.Lock()
			n := len(prompted)
			mu.Unlock()
			if n != want {
				return &exitError{code: 1, err: fmt.Errorf("demo: only %d of %d roles took their startup prompt", n, want)}
			}
			return nil
		},
	}
}

// printSummary prints one screen about the finished run: each role's final
// state, restarts, whether it took its startup prompt, and its log.
func printSummary(w io.Writer, ws string, sup *supervisor.Supervisor, took time.Duration) {
	fmt.Fprintf(w, "\nshogun demo: finished in %s\n\n", took.Round(100*time.Millisecond))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ROLE\tNAME\tSTATE\tLAST EXIT\tRESTARTS\tPROMPT\tLOG")
	for _, r := range sup.Roles() {
		st := r.Status()
		logPath := filepath.Join(ws, "runtime", "logs", st.ID+".log")
		size := "-"
		if fi, err := os.Stat(logPath); err == nil {
			size = fmt.Sprintf("%d bytes", fi.Size())
		}
		prompt := "not delivered"
		if st.Prompted {
			prompt = "delivered"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\n", st.ID, st.Name, st.State, st.LastExit, st.Restarts, prompt, size)
	}
	tw.Flush()
	fmt.Fprintf(w, "\nlogs: %s\nsupervisor log: %s\n", filepath.Join(ws, "runtime", "logs"), filepath.Join(ws, "runtime", "logs", "shogun.log"))
}
