//go:build !windows

package console_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/shogun-dev/shogun/console/consoletest"
)

// TestScreenshots writes a PNG of every page of the console into the folder
// SHOGUN_SCREENSHOTS names (make screenshots: docs/console/). It is skipped
// without it.
func TestScreenshots(t *testing.T) {
	dir := os.Getenv("SHOGUN_SCREENSHOTS")
	if dir == "" {
		t.Skip("set SHOGUN_SCREENSHOTS to a folder (make screenshots)")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ws := consoletest.Start(t, bin,
		consoletest.SimRole("karo", "--work-time", "20s"),
		consoletest.SimRole("ashigaru1"),
		consoletest.SimRole("ashigaru2"),
		consoletest.SimRole("ashigaru3", "--work-time", "20s"))
	for _, id := range []string{"karo", "ashigaru1", "ashigaru2", "ashigaru3"} {
		ws.WaitState(t, id, "ready")
	}
	for _, send := range [][]string{
		{"send", "--to", "karo", "--title", "Plan the castle walls", "--body", "Split the work between the ashigaru."},
		{"send", "--to", "ashigaru3", "--title", "Survey the east gate", "--body", "Measure it."},
		{"send", "--to", "ashigaru2", "--title", "Count the arrows", "--body", "All quivers."},
		// Twice the same work: a skill candidate for the Skills page.
		{"send", "--to", "ashigaru1", "--title", "Sharpen the swords", "--body", "Every sword of the east wing."},
		{"send", "--to", "ashigaru1", "--title", "Sharpen the swords", "--body", "Every sword of the west wing."},
	} {
		if out, err := cli(ws, send...); err != nil {
			t.Fatalf("%v: %v %s", send, err, out)
		}
	}
	ws.WaitState(t, "karo", "busy")
	ctx := ws.BrowserSized(t, 1280, 800)
	pages := []struct{ file, route, ready string }{
		{"team.png", "#/team", `document.querySelectorAll('.role .preview').length === 4 && [...document.querySelectorAll('.role .preview')].every(p => p.textContent.includes('agent-sim'))`},
		{"terminal.png", "#/terminal/karo", `(document.querySelector('#terminal .xterm-rows') || {textContent: ''}).textContent.includes('agent-sim')`},
		{"tasks.png", "#/tasks", `document.querySelector('#page').children.length > 0`},
		{"history.png", "#/history", `document.querySelector('#page').children.length > 0`},
		{"skills.png", "#/skills", `document.querySelectorAll('.skill').length > 0 || (document.querySelector('#skills-refresh') && document.querySelector('#skills-refresh').click(), false)`},
		{"roles.png", "#/roles", `document.querySelector('#page').children.length > 0`},
	}
	for _, p := range pages {
		if err := chromedp.Run(ctx, ws.Navigate(p.route)); err != nil {
			t.Fatal(err)
		}
		waitJS(t, ctx, p.route+" drawn", p.ready)
		time.Sleep(1500 * time.Millisecond) // live data settles, fonts load
		var png []byte
		if err := chromedp.Run(ctx, chromedp.CaptureScreenshot(&png)); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p.file), png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %s (%d KiB)", p.route, filepath.Join(dir, p.file), len(png)/1024)
	}
}
