package control

import (
	"net/http"
	"os"
	"time"

	"github.com/shogun-dev/shogun/config"
	"github.com/shogun-dev/shogun/usage"
)

// AccountReply is one account of the roles, as `shogun accounts --json`
// prints it.
type AccountReply struct {
	// Account is the account's key: its pool, or the role that lists it,
	// then its name ("claude-team/a").
	Account string `json:"account"`
	Name    string `json:"name"`
	// Pool is the settings.yaml pool it comes from; left out for a role's
	// own account.
	Pool string `json:"pool,omitempty"`
	// Roles are the enabled roles that may run on it.
	Roles []string `json:"roles"`
	// State is "limited" until its last usage limit lifts, else "in use"
	// while a role's program runs on it, else "ok".
	State string `json:"state"`
	// InUseBy are the roles whose program runs on it now (known while a
	// supervisor runs).
	InUseBy []string `json:"in_use_by"`
	// LimitedAt and LimitedUntil are when its last usage limit was met
	// and when it lifts (left out when it met none).
	LimitedAt    time.Time `json:"limited_at,omitzero"`
	LimitedUntil time.Time `json:"limited_until,omitzero"`
	// TokensToday are the tokens of the day (UTC) recorded in its own
	// config folder; left out when it shares its folder with another
	// account, so its tokens cannot be told apart.
	TokensToday *usage.Tokens `json:"tokens_today,omitempty"`
}

// AccountLimit is an account's last usage limit, as the history keeps it.
type AccountLimit struct {
	LimitedAt, Until time.Time
}

// The states of an account.
const (
	AccountOK      = "ok"
	AccountLimited = "limited"
	AccountInUse   = "in use"
)

// AccountsFrom lists the accounts of cfg's enabled roles in the order of
// the roles and their lists: limits by account key, inUse the account key
// each running role's program runs on, folder says which config folder an
// account's records are in ("" when it has none of its own) and tokens
// sums a day's tokens of a folder.
func AccountsFrom(cfg *config.Config, limits map[string]AccountLimit, inUse map[string]string, now time.Time,
	folder func(config.Role, config.Account) string, tokens func(folder string) (usage.Tokens, error)) ([]AccountReply, error) {
	out := []AccountReply{}
	at := map[string]int{}
	for _, rc := range cfg.Enabled() {
		for _, a := range rc.Accounts {
			i, ok := at[a.Key]
			if !ok {
				i = len(out)
				at[a.Key] = i
				l := limits[a.Key]
				out = append(out, AccountReply{Account: a.Key, Name: a.Name, Pool: a.Pool, Roles: []string{}, InUseBy: []string{},
					LimitedAt: l.LimitedAt.UTC(), LimitedUntil: l.Until.UTC()})
				if l.LimitedAt.IsZero() {
					out[i].LimitedAt, out[i].LimitedUntil = time.Time{}, time.Time{}
				}
				if dir := folder(rc, a); dir != "" {
					t, err := tokens(dir)
					if err != nil {
						return nil, err
					}
					out[i].TokensToday = &t
				}
			}
			out[i].Roles = append(out[i].Roles, rc.ID)
			if inUse[rc.ID] == a.Key {
				out[i].InUseBy = append(out[i].InUseBy, rc.ID)
			}
		}
	}
	for i := range out {
		switch {
		case now.Before(out[i].LimitedUntil):
			out[i].State = AccountLimited
		case len(out[i].InUseBy) > 0:
			out[i].State = AccountInUse
		default:
			out[i].State = AccountOK
		}
	}
	return out, nil
}

// AccountFolder is the config folder in which an account's CLI records its
// conversations, "" when another account of the role shares it (or the
// CLI's records are not read). lookup is the supervisor's environment.
func AccountFolder(rc config.Role, a config.Account, lookup func(string) (string, bool)) string {
	home := func(acct config.Account) string {
		src, ok := usage.SourceFor(rc.ID, rc.CLI, rc.Command.Cwd, func(k string) (string, bool) {
			if v, ok := acct.Env[k]; ok {
				return v, true
			}
			if v, ok := rc.Command.Env[k]; ok {
				return v, true
			}
			return lookup(k)
		})
		if !ok {
			return ""
		}
		return src.Home
	}
	mine := home(a)
	for _, other := range rc.Accounts {
		if other.Key != a.Key && home(other) == mine {
			return ""
		}
	}
	return mine
}

// accountsReport answers GET /v1/accounts: the accounts of the roles, as
// `shogun accounts --json` prints them.
func (s *Server) accountsReport(w http.ResponseWriter, _ *http.Request) {
	st := s.team.Store()
	kept, err := st.AccountLimits()
	if err != nil {
		fail(w, http.StatusInternalServerError, err)
		return
	}
	limits := map[string]AccountLimit{}
	for _, l := range kept {
		limits[l.Account] = AccountLimit{LimitedAt: l.LimitedAt, Until: l.Until}
	}
	inUse := map[string]string{}
	for _, a := range s.team.Supervisor().Accounts() {
		for _, role := range a.InUseBy {
			inUse[role] = a.Key
		}
	}
	now := time.Now()
	list, err := AccountsFrom(s.team.Config(), limits, inUse, now,
		func(rc config.Role, a config.Account) string { return AccountFolder(rc, a, os.LookupEnv) },
		func(dir string) (usage.Tokens, error) { return st.TokensUnder(dir, now) })
	if err != nil {
		fail(w, http.StatusInternalServerError, err)
		return
	}
	reply(w, list)
}
