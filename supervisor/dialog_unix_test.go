//go:build !windows

package supervisor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// dialogRole is a program that shows a first-run dialog and writes every
// byte it is sent to a file, like a CLI that saves the answer it gets: the
// file must stay empty unless a person typed.
func dialogRole(id, got string) string {
	return `
  - id: ` + id + `
    prompt_path: roles/` + id + `.md
    command: {exec: /bin/sh, args: ["-c", "stty raw -echo; printf 'Quick safety check: Do you trust the files in this folder?\r\n❯ 1. Yes, I trust this folder\r\n  2. No, exit\r\n'; exec cat > '` + got + `'"]}
    cli: generic
    ready_pattern: "(?m)^› $"
    attention_pattern: "Do you trust"
    stop: {keys: "/exit\r", timeout: 2s}
`
}

// Stopping a role whose screen asks for a person sends no keys: the trailing
// Enter of the stop keys would pick the dialog's default, and CLIs save it.
func TestStopSendsNoKeysIntoADialog(t *testing.T) {
	got := filepath.Join(t.TempDir(), "answers")
	ws := testWorkspace(t, "roles:"+dialogRole("trusting", got))
	r := start(t, ws, nil)
	r.waitState(t, "trusting", Attention, 15*time.Second)
	began := time.Now()
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(got); len(b) != 0 {
		t.Fatalf("the dialog received %q on stop", b)
	}
	// Straight to the signals: no wait for keys that were never sent.
	if took := time.Since(began); took > 1900*time.Millisecond {
		t.Errorf("stop took %v: it waited for stop keys it did not send", took)
	}
}

// A requested restart of a role in a dialog goes through the same stop:
// nothing is typed into the dialog, and the program starts again.
func TestRestartSendsNoKeysIntoADialog(t *testing.T) {
	got := filepath.Join(t.TempDir(), "answers")
	ws := testWorkspace(t, "roles:"+dialogRole("trusting", got))
	r := start(t, ws, nil)
	role := r.role(t, "trusting")
	r.waitState(t, "trusting", Attention, 15*time.Second)
	first := role.Status().Pid
	role.Restart()
	waitFor(t, "a new program in the dialog", 15*time.Second, func() bool {
		st := role.Status()
		return st.State == Attention && st.Pid != 0 && st.Pid != first
	})
	if b, _ := os.ReadFile(got); len(b) != 0 {
		t.Fatalf("the dialog received %q on restart", b)
	}
}

// Typing by hand through the typing procedure (as `shogun type` does) waits
// while the dialog shows, and nothing reaches it.
func TestTypeWaitsOutADialog(t *testing.T) {
	got := filepath.Join(t.TempDir(), "answers")
	ws := testWorkspace(t, "roles:"+dialogRole("trusting", got))
	r := start(t, ws, nil)
	r.waitState(t, "trusting", Attention, 15*time.Second)
	ctx, cancel := contextWithTimeout(t, 1500*time.Millisecond)
	defer cancel()
	if _, err := r.role(t, "trusting").Type(ctx, "hello", TypeOptions{}); err == nil {
		t.Fatal("Type returned without error while the dialog showed")
	}
	if b, _ := os.ReadFile(got); len(b) != 0 {
		t.Fatalf("the dialog received %q", b)
	}
}

// Typing for a person (RefuseAttention, as `shogun type` does) into a role
// that shows a dialog while the typing waits for it to be ready ends at
// once with ErrAttention, not when the caller's time runs out; nothing
// reaches the dialog.
func TestTypeRefusingAttentionEndsWhenADialogShows(t *testing.T) {
	got := filepath.Join(t.TempDir(), "answers")
	ws := testWorkspace(t, "roles:"+strings.Replace(dialogRole("trusting", got), "stty raw -echo;", "stty raw -echo; sleep 1;", 1))
	r := start(t, ws, nil)
	r.waitState(t, "trusting", Starting, 15*time.Second)
	ctx, cancel := contextWithTimeout(t, 30*time.Second)
	defer cancel()
	_, err := r.role(t, "trusting").Type(ctx, "hello", TypeOptions{RefuseAttention: true})
	if !errors.Is(err, ErrAttention) || ctx.Err() != nil {
		t.Fatalf("Type = %v (context: %v), want ErrAttention as the dialog showed", err, ctx.Err())
	}
	if s := r.role(t, "trusting").State(); s != Attention {
		t.Errorf("state %s, want attention", s)
	}
	if b, _ := os.ReadFile(got); len(b) != 0 {
		t.Fatalf("the dialog received %q", b)
	}
}

// A role with a ready pattern is never ready on silence alone, however long
// the program is quiet: a CLI still loading is often silent, and the
// startup prompt typed then is lost.
func TestReadyOnlyWhenThePatternShows(t *testing.T) {
	got := filepath.Join(t.TempDir(), "typed")
	ws := testWorkspace(t, `
roles:
  - id: loading
    prompt_path: roles/loading.md
    command: {exec: /bin/sh, args: ["-c", "stty raw -echo; printf 'Loading configuration'; exec cat > '`+got+`'"]}
    cli: generic
    ready_pattern: "(?m)^› $"
    ready_quiet: 100ms
`)
	r := start(t, ws, nil)
	waitFor(t, "the loading screen", 10*time.Second, func() bool {
		s := r.role(t, "loading").Session()
		return s != nil && strings.Contains(s.Screen().Text(), "Loading")
	})
	time.Sleep(time.Second)
	if s := r.role(t, "loading").State(); s != Starting {
		t.Errorf("state after 1 s of silence = %s, want starting", s)
	}
	if b, _ := os.ReadFile(got); len(b) != 0 {
		t.Errorf("typed into a program that never showed its prompt: %q", b)
	}
}

// A role without a ready pattern is not ready before its program drew
// anything, however long it is quiet.
func TestNotReadyBeforeTheFirstOutput(t *testing.T) {
	ws := testWorkspace(t, `
roles:
  - id: silent
    prompt_path: roles/silent.md
    command: {exec: /bin/sh, args: ["-c", "sleep 1.5; printf 'ok> '; exec sleep 60"]}
    cli: generic
    ready_quiet: 200ms
`)
	r := start(t, ws, nil)
	time.Sleep(time.Second)
	if s := r.role(t, "silent").State(); s != Starting {
		t.Fatalf("state before the first output = %s, want starting", s)
	}
	r.waitState(t, "silent", Ready, 10*time.Second)
}

// A program that exits at start shows why: its last line is in the status
// and in the fatal reason.
func TestFatalReasonIsTheLastOutputLine(t *testing.T) {
	ws := testWorkspace(t, `
roles:
  - id: rootless
    prompt_path: roles/rootless.md
    command: {exec: /bin/sh, args: ["-c", "echo 'Welcome'; echo '--dangerously-skip-permissions cannot be used with root/sudo privileges'; exit 1"]}
    restart: {policy: on-failure, max_restarts: 1, window: 1m}
`)
	r := start(t, ws, func(o *Options) { o.Backoff = RestartBackoff{Base: 20 * time.Millisecond, Max: 50 * time.Millisecond} })
	r.waitState(t, "rootless", Fatal, 20*time.Second)
	st := r.role(t, "rootless").Status()
	want := "--dangerously-skip-permissions cannot be used with root/sudo privileges"
	if st.LastLine != want || !strings.Contains(st.LastError, want) {
		t.Errorf("status last line %q, last error %q; want both to name %q", st.LastLine, st.LastError, want)
	}
}

// A program that says why it gives up and then adds a hint and a link, as
// Claude Code does offline ("Failed to connect to api.anthropic.com:
// ENOTFOUND", then "https://anthropic.com/supported-countries"), is fatal
// for its error line, not for the link; and the fatal reason, the event
// that reports it and the status count the same restarts.
func TestFatalReasonIsTheErrorLineNotTheLink(t *testing.T) {
	ws := testWorkspace(t, `
roles:
  - id: offline
    prompt_path: roles/offline.md
    command: {exec: /bin/sh, args: ["-c", "echo ' Unable to connect to Anthropic services'; echo; echo ' Failed to connect to api.anthropic.com: ENOTFOUND'; echo; echo ' Please check your internet connection and network settings.'; echo; echo ' https://anthropic.com/supported-countries'; exit 1"]}
    restart: {policy: on-failure, max_restarts: 2, window: 1m}
`)
	r := start(t, ws, func(o *Options) { o.Backoff = RestartBackoff{Base: 20 * time.Millisecond, Max: 50 * time.Millisecond} })
	r.waitState(t, "offline", Fatal, 20*time.Second)
	st := r.role(t, "offline").Status()
	const line = "Failed to connect to api.anthropic.com: ENOTFOUND"
	if st.LastLine != line {
		t.Errorf("status last line %q, want %q", st.LastLine, line)
	}
	if want := "last output: " + line + "; given up after 2 restarts within 1m0s"; st.LastError != want {
		t.Errorf("status last error %q, want %q", st.LastError, want)
	}
	if st.Restarts != 2 {
		t.Errorf("status restarts %d, want 2", st.Restarts)
	}
	ev := r.waitEvent(t, "the fatal event", 5*time.Second, func(e Event) bool { return e.Kind == EventState && e.State == Fatal })
	if ev.Message != st.LastError {
		t.Errorf("the fatal event says %q, the status %q: want one reason", ev.Message, st.LastError)
	}
}

// A program that cannot be found is fatal at its first try, for that: the
// reason names the program and the fix, not a restart count or an older
// program's output, and it is not restarted (a missing program does not
// appear by itself). Once it is there, a restart request starts it.
func TestMissingProgramIsFatalAtOnceWithTheFix(t *testing.T) {
	dir := t.TempDir()
	program := filepath.Join(dir, "shogun-test-agent")
	ws := testWorkspace(t, fmt.Sprintf(`
roles:
  - id: missing
    prompt_path: roles/missing.md
    command: {exec: shogun-test-no-such-program}
    restart: {policy: on-failure, max_restarts: 5, window: 1m}
  - id: later
    prompt_path: roles/later.md
    command: {exec: %q}
    cli: generic
    restart: {policy: never}
`, program))
	r := start(t, ws, func(o *Options) { o.Backoff = RestartBackoff{Base: 20 * time.Millisecond, Max: 50 * time.Millisecond} })
	r.waitState(t, "missing", Fatal, 20*time.Second)
	r.waitState(t, "later", Fatal, 20*time.Second)
	st := r.role(t, "missing").Status()
	want := `cannot start: ptyhost: start "shogun-test-no-such-program": exec: "shogun-test-no-such-program": executable file not found in $PATH; ` +
		"not restarted, as a missing program does not appear by itself: install it or change command.exec in config/roles.yaml"
	if st.LastError != want || st.Restarts != 0 {
		t.Errorf("status last error %q, restarts %d; want %q, 0", st.LastError, st.Restarts, want)
	}
	ev := r.waitEvent(t, "the fatal event", 5*time.Second, func(e Event) bool { return e.Kind == EventState && e.State == Fatal && e.Role == "missing" })
	if ev.Message != st.LastError {
		t.Errorf("the fatal event says %q, the status %q: want one reason", ev.Message, st.LastError)
	}
	time.Sleep(300 * time.Millisecond) // many backoffs' worth
	tries := 0
	for _, e := range r.events.all() {
		if e.Role == "missing" && e.Kind == EventState && e.State == Starting {
			tries++
		}
	}
	if tries != 1 {
		t.Errorf("the missing program was tried %d times, want once; events:\n%s", tries, r.describe())
	}

	// Installed now: a restart request starts it, policy never or not.
	if err := os.WriteFile(program, []byte("#!/bin/sh\nsleep 30\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	r.role(t, "later").Restart()
	waitFor(t, "the installed program running", 20*time.Second, func() bool { return r.role(t, "later").Status().Pid > 0 })
	if st := r.role(t, "later").Status(); st.LastError != "" {
		t.Errorf("the running role still shows the old reason %q", st.LastError)
	}
}

// Claude Code without a key or a sign-in draws its composer as usual, with
// "Not logged in · Run /login" in the footer (the recorded screen, played
// through a real terminal): the role waits for a person, and neither the
// startup prompt nor anything else is typed.
func TestNotLoggedInWaitsForAPerson(t *testing.T) {
	screen, err := filepath.Abs(filepath.Join("testdata", "screens", "claude-not-logged-in.raw"))
	if err != nil {
		t.Fatal(err)
	}
	got := filepath.Join(t.TempDir(), "typed")
	ws := testWorkspace(t, `
roles:
  - id: claude
    prompt_path: roles/claude.md
    command: {exec: /bin/sh, args: ["-c", "stty raw -echo; cat '`+screen+`'; exec cat > '`+got+`'"]}
    cli: claude
`)
	r := start(t, ws, nil)
	r.waitState(t, "claude", Attention, 15*time.Second)
	// Long enough for a ready role to have had its startup prompt typed.
	time.Sleep(2 * time.Second)
	if s := r.role(t, "claude").State(); s != Attention {
		t.Errorf("state %s, want attention", s)
	}
	// The screen model answers the capture's device-attributes query; a
	// person-less terminal does that. Anything else was typed.
	b, _ := os.ReadFile(got)
	if typed := regexp.MustCompile(`\x1b\[[?>0-9;]*c`).ReplaceAllString(string(b), ""); typed != "" {
		t.Errorf("typed into a program that is not logged in: %q", typed)
	}
}

func contextWithTimeout(t *testing.T, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(t.Context(), d)
}
