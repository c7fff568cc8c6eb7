package store

import (
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/shogun-dev/shogun/usage"
)

// AccountLimit is the last usage limit one account of a role met: the
// supervisor moves a role off an account until then, and a restarted
// supervisor reads it back so that it does not start a role on an account
// still limited.
type AccountLimit struct {
	// Account is the account's key (config.Account.Key).
	Account string
	// Role is the role that met the limit on it.
	Role string
	// LimitedAt is when the limit was met; Until is when it lifts.
	LimitedAt, Until time.Time
}

// RecordAccountLimit keeps l as its account's last limit.
func (s *Store) RecordAccountLimit(l AccountLimit) error {
	err := s.write(func(tx *writeTx) error {
		_, err := tx.Exec(`INSERT INTO account_limits (account, role, limited_at, until) VALUES (?, ?, ?, ?)
ON CONFLICT (account) DO UPDATE SET role = excluded.role, limited_at = excluded.limited_at, until = excluded.until`,
			l.Account, l.Role, formatTime(l.LimitedAt), formatTime(l.Until))
		return err
	})
	if err != nil {
		return fmt.Errorf("record the limit of account %s: %w", l.Account, err)
	}
	return nil
}

// AccountLimits are the last limits of every account that met one.
func (s *Store) AccountLimits() ([]AccountLimit, error) {
	rows, err := s.read().Query(`SELECT account, role, limited_at, until FROM account_limits ORDER BY account`)
	if err != nil {
		return nil, fmt.Errorf("read account limits: %w", err)
	}
	defer rows.Close()
	var out []AccountLimit
	for rows.Next() {
		var l AccountLimit
		var at, until sql.NullString
		if err := rows.Scan(&l.Account, &l.Role, &at, &until); err != nil {
			return nil, fmt.Errorf("read account limits: %w", err)
		}
		if l.LimitedAt, err = parseTime(at); err == nil {
			l.Until, err = parseTime(until)
		}
		if err != nil {
			return nil, fmt.Errorf("read account limits: %w", err)
		}
		out = append(out, l)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read account limits: %w", err)
	}
	return out, nil
}

// TokensUnder sums the tokens of day (UTC) read from record files inside
// folder: an account's tokens, when it has a config folder of its own.
func (s *Store) TokensUnder(folder string, day time.Time) (usage.Tokens, error) {
	var t usage.Tokens
	prefix := strings.TrimRight(folder, `/\`)
	escaped := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(prefix)
	err := s.read().QueryRow(`SELECT COALESCE(SUM(input), 0), COALESCE(SUM(output), 0), COALESCE(SUM(cache_read), 0),
  COALESCE(SUM(cache_write), 0), COALESCE(SUM(reasoning), 0)
FROM usage_records WHERE day = ? AND (file LIKE ? ESCAPE '\' OR file LIKE ? ESCAPE '\')`,
		day.UTC().Format(time.DateOnly), escaped+`/%`, escaped+`\\%`).Scan(&t.Input, &t.Output, &t.CacheRead, &t.CacheWrite, &t.Reasoning)
	if err != nil {
		return t, fmt.Errorf("tokens under %s: %w", folder, err)
	}
	return t, nil
}
