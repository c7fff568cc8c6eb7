//go:build !windows

package console_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/shogun-dev/shogun/console/consoletest"
	"github.com/shogun-dev/shogun/shoguntest"
)

// A role whose screen is full (sixty lines scrolled through a forty-row
// terminal, then a green "Working…" and a composer at the bottom) shows,
// in its preview on the team page, the bottom of the screen, the newest
// rows in view and in their colour, not the oldest rows at the top.
func TestTeamPreviewShowsTheBottomOfAFullScreen(t *testing.T) {
	script := `i=1; while [ $i -le 60 ]; do printf 'row-%02d of the log\n' $i; i=$((i+1)); done; ` +
		`printf '\033[32mWorking… (esc to interrupt)\033[0m\n› '; sleep 600`
	ws := consoletest.Start(t, bin, `  - id: full
    prompt_path: roles/ashigaru.md
    command: {exec: /bin/sh, args: ["-c", "`+strings.ReplaceAll(script, `\`, `\\`)+`"]}
    terminal: {cols: 120, rows: 40}
    stop: {keys: "", timeout: 2s}
`)
	ctx := ws.Browser(t)
	if err := chromedp.Run(ctx, ws.Navigate("#/team")); err != nil {
		t.Fatal(err)
	}
	pre := `document.querySelector('.role[data-role="full"] .preview')`
	waitJS(t, ctx, "the composer in the preview", `!!`+pre+` && `+pre+`.textContent.includes('› ')`)
	var text string
	if err := chromedp.Run(ctx, chromedp.Evaluate(pre+`.textContent`, &text)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text, "row-60") || !strings.Contains(text, "Working…") || strings.Contains(text, "row-40") {
		t.Errorf("the preview does not hold the bottom of the screen:\n%s", text)
	}
	// What the preview's box shows: the newest rows, not clipped away.
	visible := `(() => {
	  const p = ` + pre + `, box = p.getBoundingClientRect();
	  const walk = document.createTreeWalker(p, NodeFilter.SHOW_TEXT);
	  let node;
	  while ((node = walk.nextNode()) && !node.data.includes('Working'));
	  if (!node) return 'no Working… in the preview';
	  const range = document.createRange();
	  range.setStart(node, node.data.indexOf('Working'));
	  range.setEnd(node, node.data.indexOf('Working') + 7);
	  const r = range.getBoundingClientRect();
	  if (r.top < box.top || r.bottom > box.bottom + 1) return 'Working… is outside the box: ' + r.top + '-' + r.bottom + ' in ' + box.top + '-' + box.bottom;
	  if (getComputedStyle(node.parentElement).color === getComputedStyle(p).color) return 'Working… is not in its colour';
	  return 'ok';
	})()`
	var got string
	if err := chromedp.Run(ctx, chromedp.Evaluate(visible, &got)); err != nil {
		t.Fatal(err)
	}
	if got != "ok" {
		t.Errorf("the preview: %s\n%s", got, text)
	}
}

// A rejected command file's alert is shown on the team page until a person
// dismisses it there; the file stays in failed/.
func TestTeamPageDismissesRejectedFileAlerts(t *testing.T) {
	ws := consoletest.Start(t, bin, consoletest.SimRole("ashigaru1"))
	ws.WaitState(t, "ashigaru1", "ready")
	ctx := ws.Browser(t)
	if err := chromedp.Run(ctx, ws.Navigate("#/team")); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(ws.Dir, "runtime", "queue", "commands")
	if err := os.WriteFile(filepath.Join(dir, ".typo.tmp"), []byte("to: nobody\ntitle: t\nbody: b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(dir, ".typo.tmp"), filepath.Join(dir, "typo.yaml")); err != nil {
		t.Fatal(err)
	}
	alert := `[...document.querySelectorAll('#attention p')].some(p => p.textContent.startsWith('rejected typo.yaml'))`
	waitJS(t, ctx, "the rejected file's alert", alert)
	clickJS(t, ctx, "#dismiss-rejected", `#dismiss-rejected`)
	waitJS(t, ctx, "the alert gone", `!(`+alert+`) && !document.querySelector('#dismiss-rejected')`)
	// Gone for good: the next status the page gets does not bring it back.
	time.Sleep(6 * time.Second)
	waitJS(t, ctx, "the alert still gone", `!(`+alert+`)`)
	for _, a := range ws.Status(t).Attention {
		if strings.HasPrefix(a, "rejected typo.yaml") {
			t.Errorf("the status still has the alert: %s", a)
		}
	}
	shoguntest.WaitFor(t, "typo.yaml in failed/", 5*time.Second, func() bool {
		_, err := os.Stat(filepath.Join(ws.Dir, "runtime", "queue", "failed", "typo.yaml"))
		return err == nil
	})
}
