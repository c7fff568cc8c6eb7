package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/shogun-dev/shogun/control"
	"github.com/shogun-dev/shogun/store"
	"github.com/shogun-dev/shogun/team"
	"github.com/shogun-dev/shogun/textsafe"
	"github.com/shogun-dev/shogun/usage"
)

func usageCommand() *cli.Command {
	return &cli.Command{
		Name:  "usage",
		Usage: "tokens the roles' CLIs used, per role, task, day or model, with an estimated cost",
		Description: "Tokens are counted from each CLI's own records (Claude Code's transcripts, Codex's\n" +
			"rollouts, Gemini CLI's chat files), read by the supervisor every 30 seconds and when\n" +
			"a task closes. The cost is an estimate from a dated price table (usage.prices in\n" +
			"settings.yaml adds or replaces entries); see docs/usage.md.\n\n" +
			"--since counts the days (UTC) from WHEN's on: a date (2026-11-22), or a span back\n" +
			"from now (7d, 36h).",
		Flags: []cli.Flag{
			workspaceFlag,
			&cli.StringFlag{Name: "by", Value: "role", Usage: "group by `WHAT`: " + strings.Join(control.UsageGroupings, ", ")},
			&cli.StringFlag{Name: "since", Usage: "only the days from `WHEN`'s on: a date, or 7d, 36h…"},
			&cli.BoolFlag{Name: "json", Usage: "print JSON (keys in docs/json.md)"},
		},
		Action: func(c *cli.Context) error {
			ws, err := workspaceDir(c)
			if err != nil {
				return err
			}
			by := c.String("by")
			if !contains(control.UsageGroupings, by) {
				return usageErrorf("--by %q: want one of %s", by, strings.Join(control.UsageGroupings, ", "))
			}
			var since time.Time
			if v := c.String("since"); v != "" {
				if since, err = parseWhen(v, time.Now()); err != nil {
					return usageErrorf("--since: %w", err)
				}
				y, m, d := since.UTC().Date()
				since = time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
			}
			cfg, err := readingConfig(ws, c.App.ErrWriter)
			if err != nil {
				return err
			}
			if err := team.CheckHistory(cfg, false); err != nil {
				return err
			}
			path := cfg.Settings.Data.SQLitePath
			if _, err := os.Stat(path); err != nil {
				return fmt.Errorf("no history yet at %s: start the supervisor first", path)
			}
			st, err := openStore(c, nil, ws, path)
			if err != nil {
				return err
			}
			defer st.Close()
			sums, err := st.Usage(store.UsageFilter{Since: since})
			if err != nil {
				return err
			}
			rep := control.UsageFrom(sums, by, since, usage.DefaultPrices().With(cfg.Settings.Usage.Prices))
			if rep.Budgets, err = control.BudgetsToday(st, cfg.Settings.Usage, time.Now()); err != nil {
				return err
			}
			if c.Bool("json") {
				return printJSON(c.App.Writer, rep)
			}
			return printUsage(c.App.Writer, rep)
		},
	}
}

// printUsage prints rep as a table, its total last.
func printUsage(w io.Writer, rep control.UsageReply) error {
	if len(rep.Rows) == 0 {
		fmt.Fprintln(w, "no tokens recorded yet")
		return nil
	}
	tw := termTable(w, -1)
	fmt.Fprintf(tw, "%s\tINPUT\tOUTPUT\tCACHE READ\tCACHE WRITE\tREASONING\tCALLS\tCOST (EST.)\n", strings.ToUpper(rep.By))
	row := func(r control.UsageRow, key string) {
		cost := fmt.Sprintf("$%.2f", r.CostUSD)
		if len(r.Unpriced) > 0 {
			cost += "+?"
		}
		t := r.Tokens
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\n", key, t.Input, t.Output, t.CacheRead, t.CacheWrite, t.Reasoning, r.Calls, cost)
	}
	for _, r := range rep.Rows {
		key := textsafe.Escape(r.Key)
		if key == "" {
			key = "(no task)"
		}
		row(r, key)
	}
	row(rep.Total, "TOTAL")
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "Tokens are counted from the CLIs' records; cost is an estimate (prices as of %s).\n", rep.PricesAsOf)
	for _, b := range rep.Budgets {
		whose := "Team"
		if b.Role != "" {
			whose = textsafe.Escape(b.Role) + "'s"
		}
		held := ""
		if b.Reached {
			held = ": reached, no new task is typed"
		}
		fmt.Fprintf(w, "%s daily budget: %d%%, %s%s.\n", whose, b.Percent, b.Text, held)
	}
	if len(rep.Total.Unpriced) > 0 {
		fmt.Fprintf(w, "No price for %s (+?): add it to usage.prices in settings.yaml.\n", textsafe.Escape(strings.Join(rep.Total.Unpriced, ", ")))
	}
	return nil
}
