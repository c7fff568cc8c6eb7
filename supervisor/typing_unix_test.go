//go:build !windows

package supervisor

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/shoguntest"
)

// markedSimRole is an agent-sim role whose composer starts with marker, and
// that has no startup prompt, so a test types into it first.
func markedSimRole(id, marker, extra string, simArgs ...string) string {
	quoted := make([]string, 0, len(simArgs)+1)
	for _, a := range append([]string{"agent-sim"}, simArgs...) {
		quoted = append(quoted, strconv.Quote(a))
	}
	return fmt.Sprintf(`
  - id: %s
    prompt_path: roles/%s.md
    command: {exec: "${SHOGUN_EXE}", args: [%s]}
    cli: generic
    ready_pattern: "(?m)^[│ ]*%s"
    busy_pattern: "esc to interrupt"
    input_marker: "%s"
    submit_delay: 100ms
    startup_prompt: ""
%s`, id, id, strings.Join(quoted, ", "), marker, marker, extra)
}

// Each shape of program a real CLI takes: the typing procedure confirms a
// delivery only when the agent really submitted the text (its own record
// says so), exactly once, whatever the program's screen does with it.
func TestTypingConfirmsOnlyRealSubmits(t *testing.T) {
	cases := []struct {
		name   string
		marker string
		args   []string
		// minSubmits is the least number of submit keys the shape needs.
		minSubmits int
		// learns: the role keeps a submit delay longer than the paste window.
		learns time.Duration
	}{
		{"paste window longer than submit_delay", "›", []string{"--paste-window", "400ms"}, 2, 400 * time.Millisecond},
		{"composer that grows a line (rules)", "❯", []string{"--composer", "rules", "--paste-window", "400ms"}, 2, 400 * time.Millisecond},
		{"boxed composer that grows a line", "❯", []string{"--composer", "box", "--paste-window", "400ms"}, 2, 400 * time.Millisecond},
		{"program that echoes nothing", "›", []string{"--echo", "none"}, 1, 0},
		{"program that echoes nothing, with a paste window", "›", []string{"--echo", "none", "--paste-window", "400ms"}, 1, 0},
		{"program that redraws the whole screen on every key", "›", []string{"--redraw", "full", "--paste-window", "400ms"}, 2, 400 * time.Millisecond},
		{"program that moves the text into a transcript", "›", []string{"--transcript"}, 1, 0},
		{"transcript and a paste window", "›", []string{"--transcript", "--paste-window", "400ms"}, 2, 400 * time.Millisecond},
	}
	for _, c := range cases {
		// Not parallel: supervisors in one process would take each other's
		// agents for leftovers to stop (the subreaper is per process).
		t.Run(c.name, func(t *testing.T) {
			rec := filepath.Join(t.TempDir(), "received.jsonl")
			args := append([]string{"--record", rec, "--work-time", "200ms"}, c.args...)
			ws := testWorkspace(t, "roles:"+markedSimRole("agent", c.marker, "", args...))
			r := start(t, ws, nil)
			r.waitState(t, "agent", Ready, 15*time.Second)
			role := r.role(t, "agent")
			text := "Read the file notes.txt and say what it holds."
			d, err := role.Type(t.Context(), text, TypeOptions{})
			if err != nil || !d.Confirmed {
				t.Fatalf("type: %+v, %v; screen:\n%s", d, err, role.Session().Screen().Text())
			}
			if d.Attempts < c.minSubmits {
				t.Errorf("confirmed after %d submit(s), want at least %d for this shape", d.Attempts, c.minSubmits)
			}
			shoguntest.WaitFor(t, "the agent's record of the submit", 5*time.Second, func() bool {
				return len(shoguntest.Kinds(shoguntest.Records(t, rec), "submit")) > 0
			})
			time.Sleep(300 * time.Millisecond) // a second, wrong submit would show by now
			subs := shoguntest.Kinds(shoguntest.Records(t, rec), "submit")
			if len(subs) != 1 || strings.TrimSpace(subs[0].Line) != text {
				t.Fatalf("agent's submits = %+v, want exactly one of %q", subs, text)
			}
			if c.learns > 0 {
				if got := role.Status().SubmitDelay; got <= c.learns {
					t.Errorf("submit delay after a newline = %v, want more than the %v paste window", got, c.learns)
				}
				// The learned delay makes the next delivery one submit.
				d, err := role.Type(t.Context(), "And now the second file.", TypeOptions{})
				if err != nil || d.Attempts != 1 {
					t.Errorf("second delivery: %+v, %v; want one confirmed submit", d, err)
				}
			}
		})
	}
}

// A text that stays in the composer after every submit is undelivered,
// never delivered: the agent's record has no submit of it.
func TestTextStuckInTheComposerIsUndelivered(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "received.jsonl")
	// A paste window longer than every pause: each Enter becomes a newline.
	ws := testWorkspace(t, "roles:"+markedSimRole("agent", "›", "", "--record", rec, "--paste-window", "10s"))
	r := start(t, ws, func(o *Options) { o.VerifyTimeout = 300 * time.Millisecond })
	r.waitState(t, "agent", Ready, 15*time.Second)
	d, err := r.role(t, "agent").Type(t.Context(), "this never gets through", TypeOptions{})
	if err == nil || d.Confirmed {
		t.Fatalf("type into a composer that never submits: %+v, %v; want undelivered", d, err)
	}
	if !strings.Contains(err.Error(), "stayed in the input area") {
		t.Errorf("error %q does not say the text stayed in the input area", err)
	}
	if subs := shoguntest.Kinds(shoguntest.Records(t, rec), "submit"); len(subs) != 0 {
		t.Fatalf("agent submitted %+v", subs)
	}
	if nl := shoguntest.Kinds(shoguntest.Records(t, rec), "newline"); len(nl) != d.Attempts {
		t.Errorf("agent saw %d newlines for %d submit keys", len(nl), d.Attempts)
	}
}

// A dialog that appears between a submit that became a newline and the
// next try gets no key: the delivery waits until a person answered it,
// then the text arrives once.
func TestDialogBetweenSubmitRetriesGetsNoKey(t *testing.T) {
	dir := t.TempDir()
	rec := filepath.Join(dir, "received.jsonl")
	ws := testWorkspace(t, "roles:"+markedSimRole("agent", "›", "    attention_pattern: \"Do you want to proceed\"\n",
		"--record", rec, "--paste-window", "400ms", "--dialog-after", "1200ms"))
	r := start(t, ws, nil)
	r.waitState(t, "agent", Ready, 15*time.Second)
	role := r.role(t, "agent")
	// Hold the prompt back until just before the dialog, so the first
	// submit becomes a newline and the dialog shows while typing retries.
	time.Sleep(900 * time.Millisecond)
	type result struct {
		d   Delivery
		err error
	}
	done := make(chan result, 1)
	go func() {
		d, err := role.Type(t.Context(), "read the task file", TypeOptions{})
		done <- result{d, err}
	}()
	r.waitState(t, "agent", Attention, 10*time.Second)
	time.Sleep(time.Second) // retries would have gone out by now
	if got := shoguntest.Kinds(shoguntest.Records(t, rec), "dialog"); len(got) != 0 {
		t.Fatalf("the dialog was answered by the supervisor: %+v", got)
	}
	if _, err := os.Stat(filepath.Join(ws, ".agentsim-choices.json")); err == nil {
		t.Fatal("the agent saved a dialog choice nobody made")
	}
	select {
	case res := <-done:
		t.Fatalf("Type returned while the dialog showed: %+v, %v", res.d, res.err)
	default:
	}
	// A person answers; the delivery goes on and the text arrives once.
	if _, err := role.Session().Write([]byte("1")); err != nil {
		t.Fatal(err)
	}
	var res result
	select {
	case res = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Type did not finish after the dialog was answered")
	}
	if res.err != nil || !res.d.Confirmed {
		t.Fatalf("type after the dialog: %+v, %v", res.d, res.err)
	}
	if subs := shoguntest.Kinds(shoguntest.Records(t, rec), "submit"); len(subs) != 1 || !strings.Contains(subs[0].Line, "read the task file") {
		t.Fatalf("agent's submits = %+v, want the text once", subs)
	}
}

// unmarkedSimRole is an agent-sim role without an input marker, as a CLI
// with no preset is configured (cli: generic), with submit_delay 100ms.
func unmarkedSimRole(id, extra string, simArgs ...string) string {
	quoted := make([]string, 0, len(simArgs)+1)
	for _, a := range append([]string{"agent-sim"}, simArgs...) {
		quoted = append(quoted, strconv.Quote(a))
	}
	return fmt.Sprintf(`
  - id: %s
    prompt_path: roles/%s.md
    command: {exec: "${SHOGUN_EXE}", args: [%s]}
    cli: generic
    ready_pattern: "› "
    busy_pattern: "esc to interrupt"
    submit_delay: 100ms
    startup_prompt: ""
%s`, id, id, strings.Join(quoted, ", "), extra)
}

// The user's report: a role without an input marker, whose program takes a
// `\r` within its paste window (longer than submit_delay) for a newline.
// Two newlines leave the cursor's row and the one above it blank; that was
// once taken for an emptied composer, and the text was "delivered" while it
// sat in the composer. Every delivery must be one the agent's own record
// shows it took, recorded before Type says so, and the role must end with a
// submit delay that gets past the paste window.
func TestTypingWithoutMarkerWaitsOutThePasteWindow(t *testing.T) {
	cases := []struct {
		name   string
		window time.Duration
		extra  string
	}{
		{"no paste window", 0, ""},
		{"paste window 400ms", 400 * time.Millisecond, ""},
		{"paste window 600ms", 600 * time.Millisecond, ""},
		// Five rows: the composer sits at the bottom, and each newline
		// scrolls the text up instead of moving the cursor down.
		{"paste window 400ms at the bottom of the screen", 400 * time.Millisecond, "    terminal: {rows: 5}\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			flag := c.window.String()
			if c.window == 0 {
				flag = "-1ms" // agent-sim's 0 is its default window; -1ms is none
			}
			rec := filepath.Join(t.TempDir(), "received.jsonl")
			ws := testWorkspace(t, "roles:"+unmarkedSimRole("agent", c.extra, "--record", rec, "--work-time", "0s", "--paste-window", flag))
			r := start(t, ws, nil)
			r.waitState(t, "agent", Ready, 15*time.Second)
			role := r.role(t, "agent")
			if m := role.conf().InputMarker; m != "" {
				t.Fatalf("role has input marker %q, want none", m)
			}
			texts := []string{"Read the file notes.txt and say what it holds.", "And now the second file, please."}
			for i, text := range texts {
				d, err := role.Type(t.Context(), text, TypeOptions{})
				// The agent records a submit before it draws anything, so a
				// confirmed delivery must find it recorded already.
				subs := shoguntest.Kinds(shoguntest.Records(t, rec), "submit")
				if err != nil || !d.Confirmed {
					t.Fatalf("delivery %d: %+v, %v; agent's submits %+v; screen:\n%s", i+1, d, err, subs, role.Session().Screen().Text())
				}
				if len(subs) != i+1 || strings.TrimSpace(subs[i].Line) != text {
					t.Fatalf("delivery %d confirmed after %d submit key(s), but the agent's submits are %+v; screen:\n%s",
						i+1, d.Attempts, subs, role.Session().Screen().Text())
				}
				t.Logf("delivery %d: %d submit key(s), submit delay now %v", i+1, d.Attempts, d.SubmitDelay)
			}
			time.Sleep(300 * time.Millisecond) // a late, wrong submit would show by now
			if subs := shoguntest.Kinds(shoguntest.Records(t, rec), "submit"); len(subs) != len(texts) {
				t.Fatalf("agent's submits = %+v, want one per delivery", subs)
			}
			if got := role.Status().SubmitDelay; got < c.window {
				t.Errorf("submit delay = %v, want at least the %v paste window", got, c.window)
			}
		})
	}
}

// A program that paints its history before its live frame (Gemini CLI's
// Ink: the submitted text moves into the transcript, and for a moment the
// screen shows no composer at all, its last prompt-marked row the text just
// sent), with a placeholder in its empty composer. The same text typed again
// and again, each right after the last was taken, is submitted once each
// time: a torn frame is neither the empty composer to compare with nor the
// text still waiting in it.
func TestTornPaintsAreNotTheComposer(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "received.jsonl")
	ws := testWorkspace(t, "roles:"+markedSimRole("agent", "›", "", "--record", rec, "--work-time", "0",
		"--transcript", "--redraw", "full", "--torn-paint", "60ms", "--placeholder", "Type your message or @path/to/file"))
	r := start(t, ws, nil)
	r.waitState(t, "agent", Ready, 15*time.Second)
	role := r.role(t, "agent")
	text := "Read runtime/queue/tasks/agent.yaml and carry out the task."
	const times = 5
	for i := range times {
		d, err := role.Type(t.Context(), text, TypeOptions{})
		if err != nil || !d.Confirmed || d.Attempts != 1 {
			t.Errorf("delivery %d: %+v, %v; want one confirmed submit; screen:\n%s", i+1, d, err, role.Session().Screen().Text())
		}
	}
	time.Sleep(500 * time.Millisecond) // a second, wrong submit would show by now
	if subs := shoguntest.Kinds(shoguntest.Records(t, rec), "submit"); len(subs) != times {
		t.Errorf("agent took %d submits of %d deliveries: %+v", len(subs), times, subs)
	}
}
