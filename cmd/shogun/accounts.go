package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/shogun-dev/shogun/config"
	"github.com/shogun-dev/shogun/control"
	"github.com/shogun-dev/shogun/team"
	"github.com/shogun-dev/shogun/textsafe"
	"github.com/shogun-dev/shogun/usage"
)

func accountsCommand() *cli.Command {
	return &cli.Command{
		Name:  "accounts",
		Usage: "the roles' accounts: which roles use them, which is limited until when, tokens today",
		Description: "An account is what signs a role's CLI in (a config folder, an API key's variable):\n" +
			"the accounts key of roles.yaml, or a pool of settings.yaml. When a role's account meets\n" +
			"a usage limit, the role moves to its next free account; see docs/accounts.md.",
		Flags: []cli.Flag{
			workspaceFlag,
			&cli.BoolFlag{Name: "json", Usage: "print JSON (keys in docs/json.md)"},
		},
		Action: func(c *cli.Context) error {
			ws, err := workspaceDir(c)
			if err != nil {
				return err
			}
			cfg, err := loadConfig(ws)
			if err != nil {
				return err
			}
			limits := map[string]control.AccountLimit{}
			tokens := func(string) (usage.Tokens, error) { return usage.Tokens{}, nil }
			if path := cfg.Settings.Data.SQLitePath; fileExists(path) {
				if err := team.CheckHistory(cfg, false); err != nil {
					return err
				}
				st, err := openStore(c, nil, ws, path)
				if err != nil {
					return err
				}
				defer st.Close()
				list, err := st.AccountLimits()
				if err != nil {
					return err
				}
				for _, l := range list {
					limits[l.Account] = control.AccountLimit{LimitedAt: l.LimitedAt, Until: l.Until}
				}
				tokens = func(dir string) (usage.Tokens, error) { return st.TokensUnder(dir, time.Now()) }
			}
			inUse := map[string]string{}
			if status, err := control.NewClient(ws).Status(); err == nil {
				for _, r := range status.Roles {
					if r.Account != "" && r.Pid != 0 {
						inUse[r.ID] = r.Account
					}
				}
			}
			list, err := control.AccountsFrom(cfg, limits, inUse, time.Now(), accountFolder, tokens)
			if err != nil {
				return err
			}
			if c.Bool("json") {
				return printJSON(c.App.Writer, list)
			}
			return printAccounts(c.App.Writer, list)
		},
	}
}

// accountFolder is the config folder in which an account's CLI records
// its conversations, "" when another account of the role shares it.
func accountFolder(rc config.Role, a config.Account) string {
	return control.AccountFolder(rc, a, os.LookupEnv)
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// printAccounts prints the accounts as a table.
func printAccounts(w io.Writer, list []control.AccountReply) error {
	if len(list) == 0 {
		fmt.Fprintln(w, "no role has accounts (the accounts key of config/roles.yaml; see docs/accounts.md)")
		return nil
	}
	tw := termTable(w, -1)
	fmt.Fprintln(tw, "ACCOUNT\tROLES\tSTATE\tLIMITED UNTIL\tTOKENS TODAY")
	for _, a := range list {
		until := "-"
		if !a.LimitedUntil.IsZero() && a.State == control.AccountLimited {
			until = a.LimitedUntil.Local().Format("2006-01-02 15:04")
		}
		state := a.State
		if len(a.InUseBy) > 0 {
			state += " (" + strings.Join(a.InUseBy, ", ") + ")"
		}
		tokens := "-"
		if t := a.TokensToday; t != nil {
			tokens = fmt.Sprint(t.Input + t.Output + t.CacheRead + t.CacheWrite + t.Reasoning)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", textsafe.Escape(a.Account), strings.Join(a.Roles, ", "), state, until, tokens)
	}
	return tw.Flush()
}
