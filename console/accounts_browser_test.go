//go:build !windows

package console_test

import (
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/shogun-dev/shogun/console/consoletest"
)

// A role with accounts shows, on its card of the team page, the account
// its program runs on.
func TestTeamCardNamesTheRolesAccount(t *testing.T) {
	ws := consoletest.Start(t, bin, `  - id: worker
    prompt_path: roles/ashigaru.md
    command: {exec: /bin/sh, args: ["-c", "printf '› '; sleep 600"]}
    stop: {keys: "", timeout: 2s}
    accounts:
      - {name: spare, env: {SHOGUN_TEST_ACCOUNT: spare}}
`)
	ctx := ws.Browser(t)
	if err := chromedp.Run(ctx, ws.Navigate("#/team")); err != nil {
		t.Fatal(err)
	}
	note := `document.querySelector('.role[data-role="worker"] .note')`
	waitJS(t, ctx, "the account on the card", `!!`+note+` && `+note+`.textContent === 'worker/spare' && `+note+`.previousElementSibling.textContent === 'account'`)
}

// The Usage page lists the roles' accounts as GET /v1/accounts does: the
// account a role met its usage limit on is limited until its reset, the
// one it moved to is in use by it.
func TestUsagePageListsTheAccounts(t *testing.T) {
	worker := consoletest.SimRole("worker", "--limit-screen", "--limit-reset", "1h") +
		`    limit_pattern: "usage limit · resets (?P<reset>[0-9:]+)"
    accounts:
      - {name: a, env: {SHOGUN_TEST_ACCOUNT: a}}
      - {name: b, env: {SHOGUN_TEST_ACCOUNT: b}}
`
	ws := consoletest.Start(t, bin, worker)
	ctx := ws.Browser(t)
	if err := chromedp.Run(ctx, ws.Navigate("#/usage")); err != nil {
		t.Fatal(err)
	}
	row := func(acct string) string {
		return `document.querySelector('#usage-accounts tr[data-account="` + acct + `"]')`
	}
	// The page refreshes every 30 s; the Refresh button reads again now.
	waitJS(t, ctx, "account worker/a limited and worker/b in use", `(() => {
		document.querySelector('#usage-refresh')?.click();
		const a = `+row("worker/a")+`, b = `+row("worker/b")+`;
		return !!a && !!b && a.dataset.state === 'limited' && a.querySelector('.until').textContent !== '' &&
			a.querySelector('.roles').textContent === 'worker' &&
			b.dataset.state === 'in use' && b.querySelector('.state').textContent === 'in use by worker';
	})()`)
}
