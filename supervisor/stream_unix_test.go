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

	"golang.org/x/term"
)

// streamerEnv makes the test binary the streamer program (runStreamer);
// its value is the file the program writes when its answer is done.
const streamerEnv = "SHOGUN_TEST_STREAMER"

// runStreamer draws a composer ("› ") and answers a submitted line the
// way Codex 0.169 streams a long answer: "• Working (esc to interrupt)"
// for a moment, then the status line hidden while the answer's chunks
// arrive, one every 700 ms, the composer on screen all the while; then
// "Answer done." and the time of it in the file.
func runStreamer(done string) int {
	old, err := term.MakeRaw(0)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = term.Restore(0, old) }()
	var history []string
	draw := func(status, composer string) {
		var b strings.Builder
		b.WriteString("\x1b[H\x1b[2J")
		for _, h := range history {
			b.WriteString(h + "\r\n")
		}
		if status != "" {
			b.WriteString(status + "\r\n")
		}
		b.WriteString("\r\n› " + composer)
		_, _ = os.Stdout.WriteString(b.String())
	}
	draw("", "")
	composer := ""
	buf := make([]byte, 256)
	for {
		n, err := os.Stdin.Read(buf)
		if err != nil {
			return 0
		}
		for _, c := range string(buf[:n]) {
			switch c {
			case '\r':
				history = append(history, "› "+composer)
				composer = ""
				draw("• Working (0s • esc to interrupt)", "")
				time.Sleep(300 * time.Millisecond)
				for i := range 8 {
					history = append(history, fmt.Sprintf("  chunk %d of the answer", i+1))
					draw("", "")
					time.Sleep(700 * time.Millisecond)
				}
				_ = os.WriteFile(done, []byte(strconv.FormatInt(time.Now().UnixNano(), 10)), 0o644)
				history = append(history, "Answer done.")
				draw("", "")
			case 0x15: // Ctrl-U
				composer = ""
				draw("", composer)
			default:
				composer += string(c)
				draw("", composer)
			}
		}
	}
}

// A long answer streamed in chunks, with the busy line gone between them
// (Codex 0.169 hides it while an answer streams), keeps the role busy: it
// is ready once the answer is done, not after every chunk (it flapped
// ready⇄busy about once a second).
func TestBusyHoldsWhileAnAnswerStreams(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	done := filepath.Join(t.TempDir(), "done")
	ws := testWorkspace(t, fmt.Sprintf(`
roles:
  - id: streamer
    prompt_path: roles/streamer.md
    command: {exec: %q, env: {%s: %q}}
    cli: generic
    ready_pattern: "(?m)^› "
    busy_pattern: "esc to interrupt"
    input_marker: "›"
    submit_delay: 50ms
    startup_prompt: ""
`, self, streamerEnv, done))
	r := start(t, ws, nil)
	r.waitState(t, "streamer", Ready, 15*time.Second)
	role := r.role(t, "streamer")
	d, err := role.Type(t.Context(), "tell me a long story", TypeOptions{})
	if err != nil || !d.Confirmed {
		t.Fatalf("type: %+v, %v", d, err)
	}
	typed := time.Now()
	var doneAt time.Time
	waitFor(t, "the end of the answer", 30*time.Second, func() bool {
		b, err := os.ReadFile(done)
		if err != nil || len(b) == 0 {
			return false
		}
		ns, _ := strconv.ParseInt(string(b), 10, 64)
		doneAt = time.Unix(0, ns)
		return true
	})
	r.waitState(t, "streamer", Ready, 15*time.Second)
	var flaps []string
	for _, e := range r.events.all() {
		if e.Role == "streamer" && e.Kind == EventState && e.State == Ready && e.Time.After(typed) && e.Time.Before(doneAt) {
			flaps = append(flaps, fmt.Sprintf("%v before the end (%s)", doneAt.Sub(e.Time).Round(time.Millisecond), e.Message))
		}
	}
	if len(flaps) > 0 {
		t.Errorf("ready %d times while the answer streamed: %v", len(flaps), flaps)
	}
}

// The echo of what shogun types into the composer is not work: a role
// that is ready stays ready while a text (and the clear before it) is
// typed, rather than going ready⇄busy⇄ready with every key write (a team
// typing between_tasks and then a nudge flapped five times in a second).
func TestTypingIntoTheComposerIsNotWork(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ws := testWorkspace(t, fmt.Sprintf(`
roles:
  - id: streamer
    prompt_path: roles/streamer.md
    command: {exec: %q, env: {%s: %q}}
    cli: generic
    ready_pattern: "(?m)^› "
    busy_pattern: "esc to interrupt"
    input_marker: "›"
    submit_delay: 50ms
    startup_prompt: ""
`, self, streamerEnv, filepath.Join(t.TempDir(), "done")))
	r := start(t, ws, nil)
	r.waitState(t, "streamer", Ready, 15*time.Second)
	role := r.role(t, "streamer")
	time.Sleep(300 * time.Millisecond) // past the settle time of the first drawing
	before := time.Now()
	if _, err := role.Type(t.Context(), "a draft not yet submitted", TypeOptions{NoSubmit: true}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // longer than the settle time an echo would be busy for
	var changes []string
	for _, e := range r.events.all() {
		if e.Role == "streamer" && e.Kind == EventState && e.Time.After(before) {
			changes = append(changes, fmt.Sprintf("%s (%s)", e.State, e.Message))
		}
	}
	if len(changes) > 0 {
		t.Errorf("typing into the composer changed the role's state: %v", changes)
	}
}

// A program whose answer to the startup prompt streamed for seconds is
// not a noisy one: its next answer, streamed the same way, keeps the role
// busy to its end too. Every role with a startup prompt (agent-sim's
// "Understood", Codex's streamed reply) was taken for a program writing
// while ready, and its turns ended at the settle time ever after, where a
// woken role's (no startup prompt) waited streamHold.
func TestAStreamedAnswerToTheStartupPromptLeavesTheRoleQuiet(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	done := filepath.Join(t.TempDir(), "done")
	ws := testWorkspace(t, fmt.Sprintf(`
roles:
  - id: streamer
    prompt_path: roles/streamer.md
    command: {exec: %q, env: {%s: %q}}
    cli: generic
    ready_pattern: "(?m)^› "
    busy_pattern: "esc to interrupt"
    input_marker: "›"
    submit_delay: 50ms
    startup_prompt: "you are the streamer"
`, self, streamerEnv, done))
	r := start(t, ws, nil)
	r.waitEvent(t, "the startup prompt delivered", 20*time.Second, func(e Event) bool { return e.Kind == EventPrompted })
	waitFor(t, "the end of the answer to the startup prompt", 30*time.Second, func() bool {
		b, err := os.ReadFile(done)
		return err == nil && len(b) > 0
	})
	r.waitState(t, "streamer", Ready, 15*time.Second)
	if err := os.Remove(done); err != nil {
		t.Fatal(err)
	}
	role := r.role(t, "streamer")
	d, err := role.Type(t.Context(), "tell me a long story", TypeOptions{})
	if err != nil || !d.Confirmed {
		t.Fatalf("type: %+v, %v", d, err)
	}
	typed := time.Now()
	var doneAt time.Time
	waitFor(t, "the end of the second answer", 30*time.Second, func() bool {
		b, err := os.ReadFile(done)
		if err != nil || len(b) == 0 {
			return false
		}
		ns, _ := strconv.ParseInt(string(b), 10, 64)
		doneAt = time.Unix(0, ns)
		return true
	})
	r.waitState(t, "streamer", Ready, 15*time.Second)
	var flaps []string
	for _, e := range r.events.all() {
		if e.Role == "streamer" && e.Kind == EventState && e.State == Ready && e.Time.After(typed) && e.Time.Before(doneAt) {
			flaps = append(flaps, fmt.Sprintf("%v before the end (%s)", doneAt.Sub(e.Time).Round(time.Millisecond), e.Message))
		}
	}
	if len(flaps) > 0 {
		t.Errorf("ready %d times while the second answer streamed: %v", len(flaps), flaps)
	}
}
