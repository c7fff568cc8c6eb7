//go:build !windows

package console_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/shogun-dev/shogun/console/consoletest"
	"github.com/shogun-dev/shogun/shoguntest"
)

func rowState(id string) string {
	return fmt.Sprintf(`(document.querySelector('#roles tr[data-role=%q]') || {dataset: {}}).dataset.state`, id)
}

func running(t *testing.T, ws *consoletest.Workspace, id string) bool {
	for _, r := range ws.Status(t).Roles {
		if r.ID == id {
			return true
		}
	}
	return false
}

// The Roles page manages config/roles.yaml: a role created in its form
// starts, a role disabled there stops, and an edit whose result would not
// load is refused with the line and column of the problem, saving nothing.
func TestRolesPageCreatesDisablesAndRefusesAnInvalidEdit(t *testing.T) {
	ws := consoletest.Start(t, bin, consoletest.SimRole("a"))
	ws.WaitState(t, "a", "ready")
	rolesPath := filepath.Join(ws.Dir, "config", "roles.yaml")
	ctx := ws.Browser(t)
	if err := chromedp.Run(ctx, ws.Navigate("#/roles")); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "a ready in the table", rowState("a")+` === 'ready'`)

	// A new role from the form starts at once.
	if err := chromedp.Run(ctx,
		chromedp.Click(`#new-role`, chromedp.ByQuery),
		chromedp.WaitVisible(`#role-form[data-mode="create"]`, chromedp.ByQuery),
		chromedp.SetValue(`#role-form [name="id"]`, "b", chromedp.ByQuery),
		chromedp.SetValue(`#role-form [name="cli"]`, "generic", chromedp.ByQuery),
		chromedp.SetValue(`#role-form [name="command.exec"]`, "${SHOGUN_EXE}", chromedp.ByQuery),
		chromedp.SetValue(`#role-form [name="command.args"]`, "agent-sim\n--work-time\n200ms", chromedp.ByQuery),
		chromedp.SetValue(`#role-form [name="ready_pattern"]`, "› ", chromedp.ByQuery),
		chromedp.SetValue(`#role-form [name="busy_pattern"]`, "esc to interrupt", chromedp.ByQuery),
		chromedp.SetValue(`#role-form [name="submit_delay"]`, "80ms", chromedp.ByQuery),
		chromedp.Click(`#role-save`, chromedp.ByQuery),
	); err != nil {
		t.Fatal(err)
	}
	ws.WaitState(t, "b", "ready")
	waitJS(t, ctx, "b ready in the table", rowState("b")+` === 'ready'`)
	waitJS(t, ctx, "the form closed", `document.querySelector('#role-form') === null`)
	saved, err := os.ReadFile(rolesPath)
	if err != nil {
		t.Fatal(err)
	}
	if want := "roles:\n" + consoletest.SimRole("a") + "  - id: b\n"; !strings.HasPrefix(string(saved), want) {
		t.Errorf("roles.yaml after the create:\n%s\nwant it to start with:\n%s", saved, want)
	}
	if !strings.Contains(string(saved), "    args: [agent-sim, --work-time, 200ms]\n") {
		t.Errorf("roles.yaml lacks b's arguments:\n%s", saved)
	}

	// Disabled from its row, the role stops.
	clickJS(t, ctx, "#roles tr[data-role=\"b\"] button[data-action=\"disable\"]", `#roles tr[data-role="b"] button[data-action="disable"]`)
	shoguntest.WaitFor(t, "b stopped", 60*time.Second, func() bool { return !running(t, ws, "b") })
	waitJS(t, ctx, "b disabled in the table", rowState("b")+` === 'disabled'`)
	waitJS(t, ctx, "b's row offers enable", `!!document.querySelector('#roles tr[data-role="b"] button[data-action="enable"]')`)

	// An edit that would not load: refused with its line and column, the
	// file untouched, the role running on.
	before, _ := os.ReadFile(rolesPath)
	pid := pidOf(t, ws, "a")
	if err := chromedp.Run(ctx,
		chromedp.Click(`#roles tr[data-role="a"] button[data-action="edit"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#role-form[data-mode="edit"]`, chromedp.ByQuery),
		chromedp.SetValue(`#role-form [name="terminal.cols"]`, "wide", chromedp.ByQuery),
		chromedp.Click(`#role-save`, chromedp.ByQuery),
	); err != nil {
		t.Fatal(err)
	}
	// a's last key is on line 9; the new terminal mapping follows it.
	waitJS(t, ctx, "the refusal with its line and column",
		`(document.querySelector('#form-errors') || {textContent: ''}).textContent.includes('config/roles.yaml:11:13: "cols" must be an integer')`)
	if now, _ := os.ReadFile(rolesPath); string(now) != string(before) {
		t.Errorf("a refused edit changed roles.yaml:\n%s", now)
	}
	if p := pidOf(t, ws, "a"); p != pid || !running(t, ws, "a") {
		t.Errorf("a refused edit touched role a (pid %d, was %d)", p, pid)
	}

	// Fixed in the same form, the edit is saved and the role restarts with
	// its new terminal.
	if err := chromedp.Run(ctx,
		chromedp.SetValue(`#role-form [name="terminal.cols"]`, "100", chromedp.ByQuery),
		chromedp.Click(`#role-save`, chromedp.ByQuery),
	); err != nil {
		t.Fatal(err)
	}
	shoguntest.WaitFor(t, "a restarted", 60*time.Second, func() bool { p := pidOf(t, ws, "a"); return p != 0 && p != pid })
	if now, _ := os.ReadFile(rolesPath); !strings.Contains(string(now), "    terminal:\n      cols: 100\n") {
		t.Errorf("roles.yaml after the edit:\n%s", now)
	}

	// Deleted (two clicks), the role leaves the table and the file. The
	// armed Delete is the same button after other roles' state changes
	// reach the page: a row built anew under the pointer would swallow
	// the second click.
	const del = `#roles tr[data-role="b"] button[data-action="delete"]`
	ws.WaitState(t, "a", "ready")
	if err := chromedp.Run(ctx,
		chromedp.Click(del, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelector('`+del+`').dataset.kept = '1'`, nil),
	); err != nil {
		t.Fatal(err)
	}
	if out, err := cli(ws, "send", "--to", "a", "--title", "Count the arrows", "--body", "All quivers."); err != nil {
		t.Fatalf("send: %v\n%s", err, out)
	}
	waitJS(t, ctx, "a working in the table", rowState("a")+` !== 'ready'`)
	var kept bool
	if err := chromedp.Run(ctx, chromedp.Evaluate(`(document.querySelector('`+del+`') || {dataset: {}}).dataset.kept === '1'`, &kept)); err != nil {
		t.Fatal(err)
	}
	if !kept {
		t.Fatal("b's row was built anew when a's state changed: the armed Delete was lost")
	}
	// The second click deletes; if the page was slow enough for the armed
	// Delete to time out (5 s), it is armed again first, in the same turn
	// of the page's event loop so that no timer falls between.
	if err := chromedp.Run(ctx, chromedp.Evaluate(`(() => { const b = document.querySelector('`+del+`'); if (!b.dataset.armed) b.click(); b.click(); })()`, nil)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "b gone from the table", `document.querySelector('#roles tr[data-role="b"]') === null`)
	if now, _ := os.ReadFile(rolesPath); strings.Contains(string(now), "id: b") {
		t.Errorf("roles.yaml still has b:\n%s", now)
	}
}
