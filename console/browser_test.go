//go:build !windows

package console_test

import (
	"context"
	"encoding/json"
	"fmt"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/shogun-dev/shogun/console/consoletest"
	"github.com/shogun-dev/shogun/control"
	"github.com/shogun-dev/shogun/shoguntest"
)

var bin string

func TestMain(m *testing.M) { shoguntest.Main(m, &bin) }

// waitJS polls a JavaScript expression in the page until it is true. The
// deadline only catches a hang.
// clickJS clicks the element sel finds, in the page, once it is there. A
// click by chromedp's node id fails when the live page redraws the element
// between the look and the click ("Could not find node with given id").
func clickJS(t *testing.T, ctx context.Context, what, sel string) {
	t.Helper()
	q, err := json.Marshal(sel)
	if err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, what, `(() => { const b = document.querySelector(`+string(q)+`); if (!b) return false; b.click(); return true; })()`)
}

func waitJS(t *testing.T, ctx context.Context, what, expr string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		var ok bool
		if err := chromedp.Run(ctx, chromedp.Evaluate(expr, &ok)); err != nil {
			t.Fatalf("waiting for %s: %v", what, err)
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			var body string
			_ = chromedp.Run(ctx, chromedp.Evaluate(`document.body.innerText`, &body))
			t.Fatalf("timed out waiting for %s; the page shows:\n%s", what, body)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func cardState(id string) string {
	return fmt.Sprintf(`(document.querySelector('.role[data-role=%q]') || {dataset: {}}).dataset.state`, id)
}

func TestTeamPageFollowsEachRolesState(t *testing.T) {
	ws := consoletest.Start(t, bin,
		consoletest.SimRole("ashigaru1", "--work-time", "4s"),
		consoletest.SimRole("ashigaru2"))
	ctx := ws.Browser(t)
	if err := chromedp.Run(ctx, ws.Navigate("#/team")); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"ashigaru1", "ashigaru2"} {
		waitJS(t, ctx, id+" ready on the team page", cardState(id)+` === 'ready'`)
	}
	waitJS(t, ctx, "the agent's screen in the preview",
		`document.querySelector('.role[data-role="ashigaru1"] .preview').textContent.includes('agent-sim')`)

	// A task makes the role busy, and the page says so without a reload.
	if out, err := cli(ws, "send", "--to", "ashigaru1", "--title", "Sharpen the blades", "--body", "all of them"); err != nil {
		t.Fatalf("send: %v %s", err, out)
	}
	waitJS(t, ctx, "ashigaru1 busy", cardState("ashigaru1")+` === 'busy'`)
	waitJS(t, ctx, "the task on the card", `document.querySelector('.role[data-role="ashigaru1"] .task').textContent.includes('Sharpen the blades')`)
	waitJS(t, ctx, "ashigaru1 ready again", cardState("ashigaru1")+` === 'ready'`)

	// The restart button restarts the role: a new program, shown on the card.
	old := pidOf(t, ws, "ashigaru2")
	clickJS(t, ctx, ".role[data-role=\"ashigaru2\"] button[data-action=\"restart\"]", `.role[data-role="ashigaru2"] button[data-action="restart"]`)
	shoguntest.WaitFor(t, "a new ashigaru2", 60*time.Second, func() bool { p := pidOf(t, ws, "ashigaru2"); return p != 0 && p != old })
	waitJS(t, ctx, "the new process on ashigaru2's card", fmt.Sprintf(`document.querySelector('.role[data-role="ashigaru2"] .pid').dataset.pid === '%d'`, pidOf(t, ws, "ashigaru2")))
	waitJS(t, ctx, "ashigaru2 ready after its restart", cardState("ashigaru2")+` === 'ready'`)
}

// The Team page's header counts the roles by state, as `shogun status`
// does: a role whose program is missing is fatal, not "running", and its
// card says why.
func TestTeamHeaderCountsRolesByState(t *testing.T) {
	ws := consoletest.Start(t, bin,
		consoletest.SimRole("ashigaru1"),
		"  - id: karo\n    prompt_path: roles/karo.md\n    command: {exec: shogun-test-no-such-cli}\n    cli: claude\n")
	ctx := ws.Browser(t)
	if err := chromedp.Run(ctx, ws.Navigate("#/team")); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "ashigaru1 ready and karo fatal", cardState("ashigaru1")+` === 'ready' && `+cardState("karo")+` === 'fatal'`)
	waitJS(t, ctx, "the header counting them by state", `document.querySelector('#team-summary').textContent.startsWith('2 roles: 1 ready, 1 fatal')`)
	waitJS(t, ctx, "karo's card naming the missing program",
		`document.querySelector('.role[data-role="karo"] .note').textContent.includes('"shogun-test-no-such-cli": executable file not found')`)
	out, err := cli(ws, "status")
	if err != nil || !strings.Contains(out, "2 roles: 1 ready, 1 fatal") {
		t.Errorf("shogun status does not count as the page does (%v):\n%s", err, out)
	}
}

func pidOf(t *testing.T, ws *consoletest.Workspace, id string) int {
	for _, r := range ws.Status(t).Roles {
		if r.ID == id {
			return r.Pid
		}
	}
	return 0
}

func TestTerminalShowsTheScreenAndTakesTyping(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "rec.jsonl")
	ws := consoletest.Start(t, bin, consoletest.SimRole("ashigaru1", "--record", rec))
	ws.WaitState(t, "ashigaru1", "ready")
	shoguntest.WaitFor(t, "the startup prompt", 60*time.Second, func() bool { return len(shoguntest.Submits(t, rec)) == 1 })
	ctx := ws.BrowserSized(t, 1000, 600)
	if err := chromedp.Run(ctx, ws.Navigate("#/terminal/ashigaru1")); err != nil {
		t.Fatal(err)
	}
	rows := `(document.querySelector('#terminal .xterm-rows') || {textContent: ''}).textContent`
	waitJS(t, ctx, "the agent's banner in the terminal", rows+`.includes('✻ agent-sim · a simulated AI coding CLI')`)
	waitJS(t, ctx, "read-only mode", `document.querySelector('#terminal').dataset.mode === 'watch'`)

	// The type box types a line by the typing rules; wide characters come
	// back on the agent's screen.
	line := "from the type box 侍の刀"
	if err := chromedp.Run(ctx,
		chromedp.SendKeys(`#type-line`, line, chromedp.ByQuery),
		chromedp.Click(`#type-send`, chromedp.ByQuery)); err != nil {
		t.Fatal(err)
	}
	shoguntest.WaitFor(t, "the typed line at the agent", 60*time.Second, func() bool {
		s := shoguntest.Submits(t, rec)
		return len(s) == 2 && s[1].Line == line
	})
	waitJS(t, ctx, "the agent's answer in the terminal", rows+`.includes('Understood: from the type box 侍の刀')`)

	// Take control: keys typed into the terminal reach the agent, and the
	// role takes the browser's size until control is released.
	if err := chromedp.Run(ctx, chromedp.Click(`#take-control`, chromedp.ByQuery)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "control", `document.querySelector('#terminal').dataset.mode === 'control'`)
	sized := screenRows(t, ws)
	if sized == 40 {
		t.Errorf("in control the role kept its configured 40 rows; want the browser's")
	}
	// A second person cannot take control at the same time.
	other := ws.Browser(t)
	if err := chromedp.Run(other, ws.Navigate("#/terminal/ashigaru1")); err != nil {
		t.Fatal(err)
	}
	waitJS(t, other, "the second tab watching", `(document.querySelector('#terminal') || {dataset: {}}).dataset.mode === 'watch'`)
	if err := chromedp.Run(other, chromedp.Click(`#take-control`, chromedp.ByQuery)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, other, "the refusal", `document.querySelector('#toast').textContent.includes('already attached')`)
	waitJS(t, other, "the second tab back to watching", `document.querySelector('#terminal').dataset.mode === 'watch'`)

	if err := chromedp.Run(ctx, consoletest.TypeInto(`#terminal .xterm-helper-textarea`, "typed live\r")); err != nil {
		t.Fatal(err)
	}
	shoguntest.WaitFor(t, "the keys at the agent", 60*time.Second, func() bool {
		s := shoguntest.Submits(t, rec)
		return len(s) == 3 && s[2].Line == "typed live"
	})
	waitJS(t, other, "the watcher sees the typed line", rows+`.includes('Understood: typed live')`)

	if err := chromedp.Run(ctx, chromedp.Click(`#release-control`, chromedp.ByQuery)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "watching again", `document.querySelector('#terminal').dataset.mode === 'watch'`)
	shoguntest.WaitFor(t, "the role's own size back", 30*time.Second, func() bool { return screenRows(t, ws) == 40 })
}

// The terminal view draws what a full-screen program draws: the alternate
// screen, colours, box drawing and wide characters, from the screen as it
// is when the page opens.
func TestTerminalDrawsAFullScreenProgram(t *testing.T) {
	script := "printf '\x1b[?1049h\x1b[H\x1b[2J┌────┐\r\n│\x1b[31mRED\x1b[0m │ 侍\r\n└────┘\r\n'; exec sleep 100000"
	ws := consoletest.Start(t, bin, fmt.Sprintf(`  - id: tui
    prompt_path: roles/ashigaru.md
    command: {exec: /bin/sh, args: ["-c", %q]}
    stop: {keys: "", timeout: 2s}
`, script))
	shoguntest.WaitFor(t, "the program's screen", 60*time.Second, func() bool {
		b, _ := ws.Get(t, "/v1/roles/tui/screen")
		return strings.Contains(string(b), "RED")
	})
	ctx := ws.Browser(t)
	if err := chromedp.Run(ctx, ws.Navigate("#/terminal/tui")); err != nil {
		t.Fatal(err)
	}
	rows := `(document.querySelector('#terminal .xterm-rows') || {textContent: ''}).textContent`
	waitJS(t, ctx, "the box", rows+`.includes('┌────┐') && `+rows+`.includes('└────┘')`)
	waitJS(t, ctx, "the alternate screen", `document.querySelector('#terminal').terminal.buffer.active.type === 'alternate'`)
	waitJS(t, ctx, "red text", `[...document.querySelectorAll('#terminal .xterm-rows .xterm-fg-1')].some(s => s.textContent.includes('RED'))`)
	waitJS(t, ctx, "the wide character in two cells", `(() => {
		const line = document.querySelector('#terminal').terminal.buffer.active.getLine(1);
		const c = line.getCell(7);
		return c.getChars() === '侍' && c.getWidth() === 2;
	})()`)
}

func screenRows(t *testing.T, ws *consoletest.Workspace) int {
	t.Helper()
	b, code := ws.Get(t, "/v1/roles/ashigaru1/screen")
	var s control.ScreenReply
	if code != 200 || json.Unmarshal(b, &s) != nil {
		t.Fatalf("screen: %d %s", code, b)
	}
	return len(s.Lines)
}

func TestBrowserWithoutTheTokenIsRefused(t *testing.T) {
	ws := consoletest.Start(t, bin, consoletest.SimRole("ashigaru1"))
	ctx := consoletest.NewBrowser(t, 800, 600)
	var body string
	if err := chromedp.Run(ctx, chromedp.Navigate(ws.Base+"/#/team"), chromedp.Text("body", &body, chromedp.ByQuery)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(body, "not logged in") || strings.Contains(body, "ashigaru1") {
		t.Errorf("without the token the page shows %q; want a refusal", body)
	}
}

func cli(ws *consoletest.Workspace, args ...string) (string, error) {
	out, err := osexec.Command(ws.Bin, append(args, "-w", ws.Dir)...).CombinedOutput()
	return string(out), err
}

// A person keeps many console pages open in one browser. Each team page
// follows two streams; as server-sent events they held one of the six
// connections a browser opens to a host each, and the fourth page never
// loaded. Eight team pages and a tasks page all load and follow live.
func TestManyPagesInOneBrowserAllFollowLive(t *testing.T) {
	ws := consoletest.Start(t, bin, consoletest.SimRole("ashigaru1", "--work-time", "3s"))
	ws.WaitState(t, "ashigaru1", "ready")
	first := ws.Browser(t)
	pages := []context.Context{first}
	for len(pages) < 9 {
		// A window of its own: a background tab would not draw.
		id, err := target.CreateTarget("about:blank").WithNewWindow(true).
			Do(cdp.WithExecutor(first, chromedp.FromContext(first).Browser))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := chromedp.NewContext(first, chromedp.WithTargetID(id))
		t.Cleanup(cancel)
		route := "#/team"
		if len(pages) == 8 {
			route = "#/tasks"
		}
		if err := chromedp.Run(ctx, chromedp.Navigate(ws.Base+"/"+route)); err != nil {
			t.Fatalf("page %d: %v", len(pages)+1, err)
		}
		pages = append(pages, ctx)
	}
	for i, ctx := range pages[:8] {
		waitJS(t, ctx, fmt.Sprintf("team page %d showing ashigaru1 ready", i+1), cardState("ashigaru1")+` === 'ready'`)
	}
	if out, err := cli(ws, "send", "--to", "ashigaru1", "--title", "Count the arrows", "--body", "all of them"); err != nil {
		t.Fatalf("send: %v %s", err, out)
	}
	for i, ctx := range pages[:8] {
		waitJS(t, ctx, fmt.Sprintf("team page %d showing ashigaru1 busy", i+1), cardState("ashigaru1")+` === 'busy'`)
	}
	waitJS(t, pages[8], "the task on the ninth page, the tasks list", `document.body.innerText.includes('Count the arrows')`)
}
