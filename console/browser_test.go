//go:build !windows

package console_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/shogun-dev/shogun/console/consoletest"
	"github.com/shogun-dev/shogun/shoguntest"
)

var bin string

func TestMain(m *testing.M) { shoguntest.Main(m, &bin) }

func TestTeamPageListsTheRoles(t *testing.T) {
	ws := consoletest.Start(t, bin, consoletest.SimRole("ashigaru1"), consoletest.SimRole("ashigaru2"))
	ctx := ws.Browser(t)
	ws.WaitState(t, "ashigaru1", "ready")
	var text string
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(text, "ashigaru2") || !strings.Contains(text, "ready") {
		if time.Now().After(deadline) {
			t.Fatalf("team page shows %q", text)
		}
		if err := chromedp.Run(ctx, chromedp.Text("#team", &text, chromedp.ByQuery)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
