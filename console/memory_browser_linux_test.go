package console_test

import (
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/shogun-dev/shogun/console/consoletest"
)

// The team page shows what each running role's process tree holds, against
// its memory_max, on the role's process line.
func TestTeamPageShowsEachRolesMemory(t *testing.T) {
	ws := consoletest.Start(t, bin,
		consoletest.SimRole("holder", "--hold-memory", "60MB")+"    memory_max: 2GB\n",
		consoletest.SimRole("plain"))
	ctx := ws.Browser(t)
	if err := chromedp.Run(ctx, ws.Navigate("#/team")); err != nil {
		t.Fatal(err)
	}
	pid := func(id string) string {
		return `(document.querySelector('.role[data-role="` + id + `"] .pid') || {textContent: ''}).textContent`
	}
	waitJS(t, ctx, "holder's memory over its memory_max", `/, \d+ MB of 2000 MB$/.test(`+pid("holder")+`)`)
	waitJS(t, ctx, "plain's memory", `/up .*, \d+ MB$/.test(`+pid("plain")+`)`)
	var held int
	if err := chromedp.Run(ctx, chromedp.Evaluate(`parseInt(`+pid("holder")+`.match(/, (\d+) MB of/)[1])`, &held)); err != nil {
		t.Fatal(err)
	}
	if held < 60 {
		t.Errorf("holder's process line says %d MB, want its 60 MB at least", held)
	}
}
