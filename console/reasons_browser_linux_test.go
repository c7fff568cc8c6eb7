package console_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/shogun-dev/shogun/console/consoletest"
)

// why is the text of a role's "why it takes no task now" line on the team
// page, "" while there is none.
func why(id string) string {
	return `(document.querySelector('.role[data-role="` + id + `"] .why') || {textContent: ''}).textContent`
}

// A role that shogun restarts for holding more than its memory_max says
// so on its card and on its terminal page, as `shogun status` words it,
// rather than only "backoff".
func TestTeamPageSaysABackoffIsForMemory(t *testing.T) {
	ws := consoletest.Start(t, bin,
		consoletest.SimRole("hog", "--hold-memory", "150MB")+"    memory_max: 64MB\n    restart: {policy: on-failure, max_restarts: 50, window: 10m}\n",
		consoletest.SimRole("plain"))
	ctx := ws.Browser(t)
	if err := chromedp.Run(ctx, ws.Navigate("#/team")); err != nil {
		t.Fatal(err)
	}
	// Each restart waits longer than the last, so a backoff soon lasts
	// long enough to be seen whatever the machine's speed.
	waitJS(t, ctx, "hog's card saying its backoff is for memory",
		`/^backoff \(memory [\d.]+ MB over memory_max 64 MB\)$/.test(`+why("hog")+`)`)
	var plain string
	if err := chromedp.Run(ctx, chromedp.Evaluate(why("plain"), &plain)); err != nil {
		t.Fatal(err)
	}
	if plain != "" {
		t.Errorf("plain's card says %q, want nothing: it takes tasks", plain)
	}
	if err := chromedp.Run(ctx, ws.Navigate("#/terminal/hog")); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "hog's terminal page saying its backoff is for memory",
		`/^backoff \(memory [\d.]+ MB over memory_max 64 MB\)$/.test((document.querySelector('#term-why') || {}).textContent)`)
}

// A role held since its approvals hook went off says why on its card, its
// terminal page and its row of the roles page. The reason names a file an
// agent could name (here its HOME, whose folder is named as markup), and
// every page shows it as text, never as HTML.
func TestTeamPageShowsWhyARoleIsHeldAsText(t *testing.T) {
	const markup = `<img src=x onerror=document.body.dataset.pwned=1>`
	home := filepath.Join(t.TempDir(), markup)
	if err := os.MkdirAll(filepath.Join(home, ".claude"), 0o700); err != nil {
		t.Fatal(err)
	}
	entry := strings.Replace(consoletest.SimRole("claude1"), "cli: generic", "cli: claude\n    startup_prompt: \"\"", 1)
	entry = strings.Replace(entry, `args: ["agent-sim"]}`, `args: ["agent-sim"], env: {HOME: "`+home+`"}}`, 1)
	ws := consoletest.Start(t, bin, entry)
	ctx := ws.Browser(t)
	if err := chromedp.Run(ctx, ws.Navigate("#/team")); err != nil {
		t.Fatal(err)
	}
	ws.WaitState(t, "claude1", "ready")
	settings := filepath.Join(home, ".claude", "settings.json")
	if err := os.WriteFile(settings, []byte(`{"disableAllHooks": true}`), 0o600); err != nil {
		t.Fatal(err)
	}
	want := "held: " + settings + " sets disableAllHooks"
	waitJS(t, ctx, "claude1's card saying why it is held", why("claude1")+` === `+js(want))
	var tags int
	var pwned string
	if err := chromedp.Run(ctx,
		chromedp.Evaluate(`document.querySelectorAll('#team img').length`, &tags),
		chromedp.Evaluate(`document.body.dataset.pwned || ''`, &pwned)); err != nil {
		t.Fatal(err)
	}
	if tags != 0 || pwned != "" {
		t.Errorf("the held reason became markup: %d img element(s) on the team page, onerror ran: %q", tags, pwned)
	}
	if err := chromedp.Run(ctx, ws.Navigate("#/terminal/claude1")); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "claude1's terminal page saying why it is held", `(document.querySelector('#term-why') || {}).textContent === `+js(want))
	if err := chromedp.Run(ctx, chromedp.Evaluate(`document.querySelectorAll('.termbar img').length`, &tags)); err != nil {
		t.Fatal(err)
	}
	if tags != 0 {
		t.Errorf("the held reason became markup on the terminal page: %d img element(s)", tags)
	}
	if err := chromedp.Run(ctx, ws.Navigate("#/roles")); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "claude1's row on the roles page saying why it is held",
		`(document.querySelector('#roles tr[data-role="claude1"] .why') || {}).textContent === `+js(want))
	if err := chromedp.Run(ctx, chromedp.Evaluate(`document.querySelectorAll('#roles img').length`, &tags)); err != nil {
		t.Fatal(err)
	}
	if tags != 0 {
		t.Errorf("the held reason became markup on the roles page: %d img element(s)", tags)
	}
}
