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
