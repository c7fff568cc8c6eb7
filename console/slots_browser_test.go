//go:build !windows

package console_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/shogun-dev/shogun/console/consoletest"
)

// Under agent.max_running 1 (and the same bound for the generic CLI), the
// team page says the slot is in use and names the role that waits for
// one, as `shogun status` does, and stops naming it once it has the slot.
func TestTeamPageShowsTheSlotsInUseAndWhoWaits(t *testing.T) {
	ws := consoletest.StartWithAgent(t, bin, "  max_running: 1\n  max_running_per_cli: {generic: 1}\n",
		consoletest.SimRole("a", "--work-time", "8s"),
		consoletest.SimRole("b", "--work-time", "8s"))
	ctx := ws.Browser(t)
	if err := chromedp.Run(ctx, ws.Navigate("#/team")); err != nil {
		t.Fatal(err)
	}
	line := `document.querySelector('#team-slots').textContent`
	// Which of the two takes the slot at start is the supervisor's choice.
	waitJS(t, ctx, "one role ready, the other asleep", `[`+cardState("a")+`, `+cardState("b")+`].sort().join() === 'ready,sleeping'`)
	waitJS(t, ctx, "the slot in use", line+` === 'slots 1/1 in use (agent.max_running), generic 1/1'`)
	live, asleep := "a", "b"
	var state string
	if err := chromedp.Run(ctx, chromedp.Evaluate(cardState("a"), &state)); err != nil {
		t.Fatal(err)
	}
	if state == "sleeping" {
		live, asleep = "b", "a"
	}

	// The live role is busy for 8 s: the other, given work, waits for
	// the slot it holds.
	if out, err := cli(ws, "send", "--to", live, "--title", "Count the arrows", "--body", "all of them"); err != nil {
		t.Fatalf("send: %v %s", err, out)
	}
	waitJS(t, ctx, live+" busy", cardState(live)+` === 'busy'`)
	if out, err := cli(ws, "send", "--to", asleep, "--title", "Sharpen the blades", "--body", "all of them"); err != nil {
		t.Fatalf("send: %v %s", err, out)
	}
	want := "slots 1/1 in use (agent.max_running), generic 1/1; waiting for a slot: " + asleep
	waitJS(t, ctx, asleep+" waiting for the slot", line+` === '`+want+`'`)
	if out, err := cli(ws, "status"); err != nil || !strings.Contains(out, want) {
		t.Errorf("shogun status does not say what the page says, %q (%v):\n%s", want, err, out)
	}

	// The task done, the live role sleeps to make room and the other
	// takes the slot.
	waitJS(t, ctx, asleep+" out of the wait", cardState(asleep)+` !== 'waiting-slot' && `+line+` === 'slots 1/1 in use (agent.max_running), generic 1/1'`)
}
