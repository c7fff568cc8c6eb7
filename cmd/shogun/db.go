package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/shogun-dev/shogun/store"
	"github.com/shogun-dev/shogun/supervisor"
	"github.com/shogun-dev/shogun/team"
	"github.com/shogun-dev/shogun/workspace"
)

// storeOptions are the store.Open options of every command that opens the
// history: building the search index of a history from an older shogun
// (once; about a minute per million tasks) shows its progress on stderr,
// and ctx, when it is not nil, interrupts it (the work done is kept).
func storeOptions(c *cli.Context, ctx context.Context) []store.Option {
	opts := []store.Option{store.WithProgress(newIndexProgress(c.App.ErrWriter, !c.Bool("quiet")).update)}
	if ctx != nil {
		opts = append(opts, store.WithContext(ctx))
	}
	return opts
}

// openStore opens the workspace's history for a command other than
// start, with storeOptions. A history from an older shogun is upgraded
// when opened, which an older supervisor still running on it could not
// cope with (the search index's triggers call a function only this shogun
// has: it would fail to record tasks); so while a supervisor runs, such a
// history is left alone and the error says what to do.
func openStore(c *cli.Context, ctx context.Context, ws, path string) (*store.Store, error) {
	if pid := supervisor.Owner(workspace.New(ws).Lock()); pid != 0 && pid != os.Getpid() {
		// A supervisor still starting has recorded no run yet: it may be
		// migrating the history this moment, and Open waits for it.
		if v, running, err := store.Peek(path, pid); err == nil && running && v < store.SchemaVersion {
			return nil, fmt.Errorf("the history %s is from an older shogun (schema %d, this one upgrades it to %d), and the supervisor running this workspace (pid %d) is that older shogun, which an upgrade under it would stop from recording work: stop it (`shogun stop`) and start it with this shogun, which upgrades the history, then run this command again",
				displayPath(ws, path), v, store.SchemaVersion, pid)
		}
	}
	return store.Open(path, storeOptions(c, ctx)...)
}

// indexProgress shows how far a long step of store.Open has come: a bar
// redrawn in place on a terminal, else a line at the start and one at the
// end, so a log shows why the command took a while.
type indexProgress struct {
	w        io.Writer
	wanted   bool
	terminal bool
	began    time.Time
	drawn    string
}

func newIndexProgress(w io.Writer, wanted bool) *indexProgress {
	f, ok := w.(*os.File)
	return &indexProgress{w: w, wanted: wanted, terminal: ok && term.IsTerminal(int(f.Fd()))}
}

func (p *indexProgress) update(pr store.Progress) {
	if !p.wanted || pr.Total <= 0 {
		return
	}
	now := time.Now()
	if p.began.IsZero() {
		p.began = now
		if !p.terminal {
			fmt.Fprintf(p.w, "shogun: %s of %d tasks (once, for this history) …\n", pr.Step, pr.Total)
		}
	}
	end := pr.Done >= pr.Total
	if p.terminal {
		const width = 30
		filled := int(pr.Done * width / pr.Total)
		left := ""
		if el := now.Sub(p.began); pr.Done > 0 && !end && el > time.Second {
			if rest := time.Duration(float64(el) * float64(pr.Total-pr.Done) / float64(pr.Done)).Round(time.Second); rest > 0 {
				left = ", " + rest.String() + " left"
			}
		}
		line := fmt.Sprintf("\rshogun: %s [%s%s] %3d%% %d/%d tasks%s", pr.Step, strings.Repeat("#", filled),
			strings.Repeat(".", width-filled), pr.Done*100/pr.Total, pr.Done, pr.Total, left)
		if line != p.drawn {
			// Pad over what a longer previous line left.
			fmt.Fprintf(p.w, "%-*s", len(p.drawn), line)
			p.drawn = line
		}
	}
	if end {
		if p.terminal {
			fmt.Fprintln(p.w)
		}
		fmt.Fprintf(p.w, "shogun: %s: done, %d tasks in %s\n", pr.Step, pr.Total, time.Since(p.began).Round(100*time.Millisecond))
	}
}

func dbCommand() *cli.Command {
	return &cli.Command{
		Name:  "db",
		Usage: "look after the history database (data/shogun.db)",
		Subcommands: []*cli.Command{
			{
				Name:  "vacuum",
				Usage: "compact the history database; the supervisor must be stopped",
				Description: "Merges the search index, rewrites the database without its free pages (after events\n" +
					"and logs older than data.retain were pruned, or after a large history was deleted by\n" +
					"hand) and empties its write-ahead log into it. It needs the database to itself: it\n" +
					"refuses to run while the supervisor runs, and while it runs `shogun start` refuses to\n" +
					"start. Nothing is removed: tasks, reports and skills are all kept.",
				Flags: []cli.Flag{workspaceFlag},
				Action: func(c *cli.Context) error {
					ws, err := workspaceDir(c)
					if err != nil {
						return err
					}
					cfg, err := loadConfig(ws)
					if err != nil {
						return err
					}
					path := cfg.Settings.Data.SQLitePath
					if err := team.CheckHistory(cfg, false); err != nil {
						return err
					}
					if _, err := os.Stat(path); err != nil {
						return fmt.Errorf("no history at %s: nothing to compact", path)
					}
					// The supervisor's lock, taken for the time of the vacuum:
					// a running supervisor would be blocked from writing (and
					// fail), and one starting meanwhile must wait.
					lock, err := supervisor.AcquireLock(workspace.New(ws).Lock())
					var locked *supervisor.LockError
					if errors.As(err, &locked) {
						return fmt.Errorf("the supervisor (pid %d) is running this workspace, and compacting the database would stop it from recording work: stop it first (`shogun stop`), then run `shogun db vacuum` again", locked.Pid)
					}
					if err != nil {
						return err
					}
					defer lock.Release()
					ctx, stop := signalContext(context.Background())
					defer stop()
					st, err := store.Open(path, storeOptions(c, ctx)...)
					stop() // VACUUM is one statement: Ctrl-C ends it the usual way, and SQLite undoes it
					if err != nil {
						return err
					}
					began := time.Now()
					before, after, err := st.Vacuum()
					if cerr := st.Close(); err == nil {
						err = cerr
					}
					if err != nil {
						return err
					}
					fmt.Fprintf(c.App.Writer, "compacted %s: %s → %s in %s\n", displayPath(ws, path), mib(before), mib(after),
						time.Since(began).Round(10*time.Millisecond))
					return nil
				},
			},
		},
	}
}

// mib formats a size in bytes for people.
func mib(n int64) string {
	if n < 1<<20 {
		return fmt.Sprintf("%.0f KiB", float64(n)/1024)
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}
