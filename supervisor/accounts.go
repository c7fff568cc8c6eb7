package supervisor

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/shogun-dev/shogun/config"
	"github.com/shogun-dev/shogun/usage"
)

// A role with accounts (config.Account) runs its CLI on one of them. When
// that account meets a usage limit, the account is marked limited until the
// reset, and the role moves to the next account that is not limited (the
// ones never limited first, then the one limited longest ago): its program
// is stopped as any stop does, and started again on the other account with
// its own conversation resumed (resume_args, session.go), its file moved
// where the CLI looks for it (usage.Source.SessionFolder). With no account
// free the role stays limited until the reset, as a role without accounts
// does. The limits are kept in the history (AccountHistory), so a restarted
// supervisor does not start a role on an account still limited.

// AccountLimit is the last usage limit an account met.
type AccountLimit struct {
	// Account is the account's key (config.Account.Key); Role the role
	// that met the limit on it.
	Account, Role string
	// LimitedAt is when the limit was met; Until is when it lifts.
	LimitedAt, Until time.Time
}

// AccountHistory keeps the accounts' limits across restarts (the team's
// history, package store).
type AccountHistory interface {
	// AccountLimits are the last limits of the accounts that met one.
	AccountLimits() ([]AccountLimit, error)
	// RecordAccountLimit keeps l as its account's last limit.
	RecordAccountLimit(l AccountLimit) error
	// ConversationCopied is told, before a moved conversation's file
	// takes its name at path, that its first size bytes are the role's
	// records already counted in the file it was copied from.
	ConversationCopied(role, path string, size int64) error
}

// accountBook knows which accounts are limited until when.
type accountBook struct {
	hist AccountHistory // nil: kept in memory only
	log  zerolog.Logger

	mu     sync.Mutex
	limits map[string]AccountLimit // by account key
	// high holds the accounts a role left for being at accounts_switch_at,
	// with when their window starts again: not moved to before then,
	// so that two nearly spent accounts do not trade a role every task.
	high map[string]time.Time
}

func newAccountBook(hist AccountHistory, log zerolog.Logger) *accountBook {
	b := &accountBook{hist: hist, log: log, limits: map[string]AccountLimit{}, high: map[string]time.Time{}}
	if hist != nil {
		list, err := hist.AccountLimits()
		if err != nil {
			log.Warn().Err(err).Msg("read the accounts' limits: every account counts as free")
		}
		for _, l := range list {
			b.limits[l.Account] = l
		}
	}
	return b
}

// record marks an account limited, in memory and in the history.
func (b *accountBook) record(l AccountLimit) {
	b.mu.Lock()
	b.limits[l.Account] = l
	b.mu.Unlock()
	if b.hist != nil {
		if err := b.hist.RecordAccountLimit(l); err != nil {
			b.log.Warn().Err(err).Str("account", l.Account).Msg("record the account's limit")
		}
	}
}

// last is the account's last limit (zero when it never met one).
func (b *accountBook) last(key string) AccountLimit {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.limits[key]
}

// free reports whether the account is not limited at now.
func (b *accountBook) free(key string, now time.Time) bool {
	return !now.Before(b.last(key).Until)
}

// pick chooses the account a role starts on among list, leaving out skip:
// the first one never limited, else the one limited longest ago, among
// those free at now (ok true). With none free it is the one whose limit
// lifts first (ok false), or none at all when list holds only skip.
func (b *accountBook) pick(list []config.Account, skip string, now time.Time) (config.Account, bool) {
	var free, limited []config.Account
	for _, a := range list {
		switch {
		case a.Key == skip:
		case b.free(a.Key, now):
			free = append(free, a)
		default:
			limited = append(limited, a)
		}
	}
	if len(free) > 0 {
		sort.SliceStable(free, func(i, j int) bool {
			return b.last(free[i].Key).LimitedAt.Before(b.last(free[j].Key).LimitedAt)
		})
		return free[0], true
	}
	if len(limited) > 0 {
		sort.SliceStable(limited, func(i, j int) bool {
			return b.last(limited[i].Key).Until.Before(b.last(limited[j].Key).Until)
		})
		return limited[0], false
	}
	return config.Account{}, false
}

// HasFreeAccount reports whether the role has an account that is not
// limited now: where it would move, or has moved, on meeting a limit. A
// role without accounts has none. (What a fallback to another role asks
// before it takes over a limited role's tasks.)
func (r *Role) HasFreeAccount() bool {
	now := time.Now()
	for _, a := range r.conf().Accounts {
		if r.sup.accounts.free(a.Key, now) {
			return true
		}
	}
	return false
}

// Account is the key of the account the role's program runs on, or last
// ran on; "" for a role without accounts.
func (r *Role) Account() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.account.Key
}

// AccountStatus is one account of the supervised roles as the supervisor
// sees it now. (`shogun accounts` builds its list from the configuration,
// the history and the status, control.AccountsFrom, so that it works with
// no supervisor running.)
type AccountStatus struct {
	// Key, Name and Pool are the account's (config.Account).
	Key, Name, Pool string
	// Roles are the supervised roles that may run on it; InUseBy those
	// whose program runs on it now.
	Roles, InUseBy []string
	// Limit is its last usage limit (zero when it met none); it is
	// limited while Limit.Until is ahead.
	Limit AccountLimit
}

// Accounts lists the accounts of the supervised roles, in the order of
// the roles and their lists.
func (s *Supervisor) Accounts() []AccountStatus {
	var out []AccountStatus
	at := map[string]int{}
	for _, r := range s.Roles() {
		r.mu.Lock()
		cur, running := r.account.Key, r.session != nil
		r.mu.Unlock()
		for _, a := range r.conf().Accounts {
			i, ok := at[a.Key]
			if !ok {
				i = len(out)
				at[a.Key] = i
				out = append(out, AccountStatus{Key: a.Key, Name: a.Name, Pool: a.Pool, Limit: s.accounts.last(a.Key)})
			}
			out[i].Roles = append(out[i].Roles, r.id)
			if running && cur == a.Key {
				out[i].InUseBy = append(out[i].InUseBy, r.id)
			}
		}
	}
	return out
}

// takeAccount decides the account of the program about to start and
// returns it with the account the previous program ran on: the one a limit
// asked to move to, else the current one while it is configured and free,
// else the best free one (pick).
func (r *Role) takeAccount(cfg *config.Role) (next, prev config.Account) {
	r.mu.Lock()
	defer r.mu.Unlock()
	prev = r.account
	if len(cfg.Accounts) == 0 {
		r.account, r.moveTo = config.Account{}, ""
		return r.account, prev
	}
	now := time.Now()
	key := r.moveTo
	r.moveTo = ""
	select {
	case <-r.moveReq:
		// Asked of a program that ended by itself first: this start
		// is the move, and must not be stopped for it.
	default:
	}
	if key == "" && r.sup.accounts.free(prev.Key, now) {
		key = prev.Key
	}
	if i := slices.IndexFunc(cfg.Accounts, func(a config.Account) bool { return a.Key == key }); i >= 0 {
		r.account = cfg.Accounts[i]
	} else {
		r.account, _ = r.sup.accounts.pick(cfg.Accounts, "", now)
	}
	return r.account, prev
}

// limitMet records that the role's account met a usage limit that lifts
// at until and, when another account of the role is free, asks for the
// program to move to it. It returns why the role is limited, for its
// state.
func (r *Role) limitMet(until time.Time) string {
	why := "usage limit reached; resumes at " + until.Format("15:04:05")
	cfg := r.conf()
	cur := r.Account()
	if cur == "" || len(cfg.Accounts) == 0 {
		return why
	}
	now := time.Now()
	r.sup.accounts.record(AccountLimit{Account: cur, Role: r.id, LimitedAt: now, Until: until})
	next, ok := r.sup.accounts.pick(cfg.Accounts, cur, now)
	if !ok {
		return fmt.Sprintf("usage limit on account %s, and no other account of the role is free; resumes at %s", cur, until.Format("15:04:05"))
	}
	r.mu.Lock()
	r.moveTo = next.Key
	r.mu.Unlock()
	select {
	case r.moveReq <- struct{}{}:
	default: // a move is already asked for
	}
	r.log.Info().Str("account", cur).Str("to", next.Key).Time("until", until).Msg("usage limit on the account: moving to another")
	return fmt.Sprintf("usage limit on account %s until %s; moving to account %s", cur, until.Format("15:04:05"), next.Key)
}

// moveWhenFree is limitMet's later look, while the role stays limited
// with no account free: when another account of the role has become free
// (its limit lifted before this one's), the program moves to it. It
// returns when to look again: when the next other account's limit lifts
// (zero: none will before the role's own).
func (r *Role) moveWhenFree(until time.Time) time.Time {
	cfg := r.conf()
	r.mu.Lock()
	cur, asked := r.account.Key, r.moveTo != ""
	r.mu.Unlock()
	if cur == "" || asked || len(cfg.Accounts) < 2 {
		return time.Time{}
	}
	now := time.Now()
	if next, ok := r.sup.accounts.pick(cfg.Accounts, cur, now); ok {
		r.mu.Lock()
		r.moveTo = next.Key
		r.mu.Unlock()
		select {
		case r.moveReq <- struct{}{}:
		default:
		}
		r.log.Info().Str("account", cur).Str("to", next.Key).Msg("another account's usage limit lifted: moving to it")
		return time.Time{}
	}
	var first time.Time
	for _, a := range cfg.Accounts {
		if l := r.sup.accounts.last(a.Key); a.Key != cur && l.Until.Before(until) && (first.IsZero() || l.Until.Before(first)) {
			first = l.Until
		}
	}
	return first
}

// SwitchAccountBeforeTask is asked before the role's next task is typed,
// between tasks: when the account the role runs on has used its usage
// window up to the role's accounts_switch_at, as its CLI recorded it since
// the program started (usage.Source.Window), and another of its accounts
// is free and not known to be as spent, the program is asked to move to
// that one, as at a limit but before it. why says so (for the history);
// moving is also true while a move asked before is under way, for the
// next task to wait for the program on the new account.
func (r *Role) SwitchAccountBeforeTask() (why string, moving bool) {
	cfg := r.conf()
	r.mu.Lock()
	cur, pending, sess := r.account, r.moveTo != "", r.session
	r.mu.Unlock()
	if pending {
		return "", true
	}
	if cfg.AccountsSwitchAt == 0 || cur.Key == "" || len(cfg.Accounts) < 2 || sess == nil {
		return "", false
	}
	src, ok := usage.SourceFor(cfg.ID, cfg.CLI, cfg.Command.Cwd, r.sup.lookupIn(withAccount(*cfg, cur)))
	if !ok {
		return "", false
	}
	w, ok, err := src.Window(sess.Started())
	if err != nil {
		r.log.Warn().Err(err).Msg("read how much of its usage window the account used")
	}
	if !ok || w.UsedPercent < float64(cfg.AccountsSwitchAt) {
		return "", false
	}
	now := time.Now()
	resets := w.Resets
	if !resets.After(now) {
		resets = now.Add(time.Hour) // no reset recorded: look again later
	}
	b := r.sup.accounts
	b.mu.Lock()
	b.high[cur.Key] = resets
	var others []config.Account
	for _, a := range cfg.Accounts {
		if !now.Before(b.high[a.Key]) {
			others = append(others, a)
		}
	}
	b.mu.Unlock()
	next, free := b.pick(others, cur.Key, now)
	if !free {
		return "", false
	}
	r.mu.Lock()
	r.moveTo = next.Key
	r.mu.Unlock()
	select {
	case r.moveReq <- struct{}{}:
	default:
	}
	why = fmt.Sprintf("account %s has used %.0f%% of its usage window (accounts_switch_at %d%%): moving to account %s before the next task",
		cur.Key, w.UsedPercent, cfg.AccountsSwitchAt, next.Key)
	r.log.Info().Str("account", cur.Key).Str("to", next.Key).Float64("used_percent", w.UsedPercent).Msg(why)
	return why, true
}

// withAccount is cfg with the account's environment over its command's.
func withAccount(cfg config.Role, a config.Account) config.Role {
	if len(a.Env) == 0 {
		return cfg
	}
	env := make(map[string]string, len(cfg.Command.Env)+len(a.Env))
	for k, v := range cfg.Command.Env {
		env[k] = v
	}
	for k, v := range a.Env {
		env[k] = v
	}
	cfg.Command.Env = env
	return cfg
}

// moveConversation copies the role's conversation, session (its own, as
// its hook told it; "" for the newest of the folder, for resume_args
// without SessionPlaceholder), from the config folder of account from to
// that of account to, where the resumed CLI looks for it, and returns the
// file written. ok says whether
// the conversation can be resumed on to: the accounts share a config
// folder (nothing to move), or it was moved; false for a CLI whose
// conversations shogun does not move between folders.
func (s *Supervisor) moveConversation(cfg config.Role, from, to config.Account, session string) (file string, ok bool, err error) {
	src, known := usage.SourceFor(cfg.ID, cfg.CLI, cfg.Command.Cwd, s.lookupIn(withAccount(cfg, from)))
	dst, _ := usage.SourceFor(cfg.ID, cfg.CLI, cfg.Command.Cwd, s.lookupIn(withAccount(cfg, to)))
	if known && filepath.Clean(src.Home) == filepath.Clean(dst.Home) {
		return "", true, nil
	}
	newest, rel, canMove, err := src.Conversation(session)
	if !known || !canMove || dst.Home == "" {
		// An unknown CLI keeps its conversations where shogun cannot
		// tell; the environment that selects an account may not be its
		// config folder at all (an API key only).
		return "", !known, nil
	}
	if err != nil || newest == "" {
		return "", false, err
	}
	out := filepath.Join(dst.Home, rel)
	if err := os.MkdirAll(filepath.Dir(out), 0o700); err != nil {
		return "", false, fmt.Errorf("move the conversation to account %s: %w", to.Key, err)
	}
	// Copied under another name first: the usage reader, which reads
	// *.jsonl, is told to skip what was counted already before it can
	// see the file.
	tmp := out + ".shogun-copy"
	size, err := copyFile(newest, tmp)
	if err == nil && s.accounts.hist != nil {
		err = s.accounts.hist.ConversationCopied(cfg.ID, out, size)
	}
	if err == nil {
		err = os.Rename(tmp, out)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return "", false, fmt.Errorf("move the conversation to account %s: %w", to.Key, err)
	}
	return out, true, nil
}

// lookupIn looks a variable up in the environment a role's program gets:
// its command's env over the supervisor's.
func (s *Supervisor) lookupIn(cfg config.Role) func(string) (string, bool) {
	return func(k string) (string, bool) {
		if v, ok := cfg.Command.Env[k]; ok {
			return v, true
		}
		for _, kv := range s.env {
			if name, v, ok := strings.Cut(kv, "="); ok && name == k {
				return v, true
			}
		}
		return "", false
	}
}

// copyFile copies a regular file, not following a link at src (the CLI's
// folder is the agent's to write), and returns its size.
func copyFile(src, dst string) (int64, error) {
	fi, err := os.Lstat(src)
	if err != nil {
		return 0, err
	}
	if !fi.Mode().IsRegular() {
		return 0, fmt.Errorf("%s is not a regular file", src)
	}
	in, err := os.Open(src)
	if err != nil {
		return 0, err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(out, in)
	if err != nil {
		out.Close()
		return n, err
	}
	return n, out.Close()
}

// isResumed reports whether the current program resumed a conversation.
func (r *Role) isResumed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.resumed
}
