//go:build !windows

package supervisor

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/term"
)

// popupsEnv makes the test binary the popups program (runPopups) instead
// of running tests; its value is the file the program records into.
const popupsEnv = "SHOGUN_TEST_POPUPS"

// runPopups is a program that raises a dialog at random moments: after
// two quiet seconds, an empty composer ("› ") for 0 to 40 ms, then "Do you want to proceed?" for 5 to
// 30 ms, and so on until it is killed. It records each Enter it reads, in
// order: "submit", or "dialog BYTES UNIX-NANOSECONDS" when the dialog was
// on the screen, with how many bytes the program had written when all of
// the dialog was written, and when that was (a key read while the dialog
// is drawn waits for the drawing to end).
func runPopups(record string) int {
	old, err := term.MakeRaw(0)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = term.Restore(0, old) }()
	f, err := os.OpenFile(record, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer f.Close()
	var (
		mu      sync.Mutex
		dialog  bool
		shownAt time.Time
		written int64 // bytes written so far (raw mode: the terminal passes them as they are)
		shownTo int64 // written, once the dialog was
	)
	draw := func() {
		if dialog {
			n, _ := os.Stdout.WriteString("\x1b[H\x1b[2JDo you want to proceed?\r\n❯ 1. Yes\r\n  2. No\r\n")
			shownAt, written = time.Now(), written+int64(n)
			shownTo = written
			return
		}
		n, _ := os.Stdout.WriteString("\x1b[H\x1b[2J› ")
		written += int64(n)
	}
	mu.Lock()
	draw()
	mu.Unlock()
	go func() {
		buf := make([]byte, 256)
		for {
			n, err := os.Stdin.Read(buf)
			if err != nil {
				return
			}
			mu.Lock()
			for range strings.Count(string(buf[:n]), "\r") {
				if dialog {
					fmt.Fprintf(f, "dialog %d %d\n", shownTo, shownAt.UnixNano())
				} else {
					fmt.Fprintln(f, "submit")
				}
			}
			mu.Unlock()
		}
	}()
	// Quiet at first, so that the role is seen ready (the test waits for
	// that) before the dialogs begin: between two of them the composer
	// shows for less than the settle time.
	time.Sleep(2 * time.Second)
	for {
		time.Sleep(rand.N(40 * time.Millisecond))
		mu.Lock()
		dialog = true
		draw()
		mu.Unlock()
		time.Sleep(5*time.Millisecond + rand.N(25*time.Millisecond))
		mu.Lock()
		dialog = false
		draw()
		mu.Unlock()
	}
}

// Automatic typing never answers a dialog: a program raises one at random
// moments while the typing procedure's key writer sends submit keys as fast
// as it may; no key arrives into a dialog whose output the supervisor had
// read when it looked. 600 keys by default (15 to 30 s by the machine's
// load); $SHOGUN_POPUP_TRIALS=5000 for a longer run.
func TestAutomaticKeysNeverReachARandomDialog(t *testing.T) {
	trials := 600
	if v := os.Getenv("SHOGUN_POPUP_TRIALS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("SHOGUN_POPUP_TRIALS=%q: want a positive count", v)
		}
		trials = n
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	rec := filepath.Join(t.TempDir(), "popups.txt")
	ws := testWorkspace(t, fmt.Sprintf(`
roles:
  - id: popups
    prompt_path: roles/popups.md
    command: {exec: %q, env: {%s: %q}}
    cli: generic
    ready_pattern: "(?m)^› "
    attention_pattern: "Do you want to proceed"
    submit_delay: 10ms
    startup_prompt: ""
`, self, popupsEnv, rec))
	r := start(t, ws, nil)
	r.waitState(t, "popups", Ready, 15*time.Second)
	role := r.role(t, "popups")
	role.mu.Lock()
	sess, gen := role.session, role.generation
	role.mu.Unlock()
	k := keyWriter{r: role, sess: sess, gen: gen}
	began := time.Now()
	held := 0
	type look struct {
		at   time.Time // when the look at the terminal before a key began
		seen int64     // how much output had been read then
	}
	var looks []look
	for len(looks) < trials {
		switch err := k.write("\r"); {
		case errors.Is(err, ErrAttention):
			held++
			time.Sleep(time.Millisecond)
		case err != nil:
			t.Fatalf("key %d: %v", len(looks)+1, err)
		default:
			looks = append(looks, look{k.looked, k.seen})
			time.Sleep(rand.N(3 * time.Millisecond))
		}
	}
	took := time.Since(began)
	var got int
	waitFor(t, "the program's record of every key", 10*time.Second, func() bool {
		b, err := os.ReadFile(rec)
		got = strings.Count(string(b), "\n")
		return err == nil && got >= trials
	})
	b, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	// The n-th Enter the program read is the n-th key sent. A key into a
	// dialog is a failure when the look before it had read the dialog's
	// output: the screen checked then showed it. One whose look came
	// before the dialog reached the terminal's reading side (Linux hands a
	// program's output over through a kernel work queue, milliseconds
	// later on a loaded machine) lost a race no program can win.
	var raced int
	var into []string
	for i, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var to, ns int64
		if _, err := fmt.Sscanf(line, "dialog %d %d", &to, &ns); err != nil {
			continue
		}
		if looks[i].seen < to {
			raced++
			continue
		}
		into = append(into, fmt.Sprintf("key %d, looked %v after the dialog was written",
			i+1, looks[i].at.Sub(time.Unix(0, ns)).Round(10*time.Microsecond)))
	}
	t.Logf("%d keys in %v (%d held back by a dialog on screen); %d reached a dialog not yet readable when they went out",
		trials, took.Round(time.Millisecond), held, raced)
	if len(into) > 0 {
		t.Fatalf("%d of %d automatic keys went into a dialog the supervisor had read: %v", len(into), trials, into[:min(len(into), 10)])
	}
	if got != trials {
		t.Errorf("the program read %d Enter keys, %d were sent", got, trials)
	}
}
