package agentsim

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/ptyhost"
)

// The agent in a Windows pseudo console, as shogun runs it: it finds its
// console whatever its standard handles are (Wine gives none), and what it
// draws is what the terminal shows, whether the console interprets escape
// sequences (Windows) or the agent drives it through the console API
// (Wine 8): the composer shows what is typed, and after the submit the
// answer stands above a composer that is empty again, with nothing of the
// old one left.
func TestAgentInAPseudoConsole(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	opts, err := json.Marshal(Options{PasteWindow: DefaultPasteWindow, WorkTime: DefaultWorkTime})
	if err != nil {
		t.Fatal(err)
	}
	s, err := ptyhost.Open(ptyhost.Options{Command: ptyhost.Command{
		Path: exe,
		Env:  append(os.Environ(), childEnv+"=1", optionsEnv+"="+string(opts), "SHOGUN_ROLE=tester"),
		Cols: 80, Rows: 24,
	}})
	if err != nil {
		t.Fatalf("open a pseudo console session: %v", err)
	}
	t.Cleanup(func() {
		_ = s.Kill()
		_ = s.Close()
	})

	waitScreen := func(what string, cond func([]string) bool) []string {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			lines := s.Screen().Lines
			if cond(lines) {
				return lines
			}
			if time.Now().After(deadline) {
				t.Fatalf("no %s within 20 s; the screen:\n%s", what, strings.Join(lines, "\n"))
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	// count counts the rows that start with prefix; a row's trailing
	// blanks do not count (a console may write them out or not).
	count := func(lines []string, prefix string) int {
		n := 0
		for _, l := range lines {
			if strings.HasPrefix(strings.TrimRight(l, " "), prefix) {
				n++
			}
		}
		return n
	}

	waitScreen("composer", func(l []string) bool { return count(l, "›") == 1 })
	if _, err := s.Write([]byte("hello there")); err != nil {
		t.Fatal(err)
	}
	waitScreen("typed text in the composer", func(l []string) bool { return count(l, "› hello there") == 1 })
	time.Sleep(4 * DefaultPasteWindow) // a submit, not a pasted newline
	if _, err := s.Write([]byte("\r")); err != nil {
		t.Fatal(err)
	}
	waitScreen("the answer above an empty composer and its hint", func(l []string) bool {
		return count(l, "Understood: hello there") == 1 && count(l, "› ") == 0 && count(l, "›") == 1 &&
			count(l, "  ? for shortcuts") == 1
	})

	// /exit ends the agent cleanly, with exit code 0.
	if _, err := s.Write([]byte("/exit")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(4 * DefaultPasteWindow)
	if _, err := s.Write([]byte("\r")); err != nil {
		t.Fatal(err)
	}
	exited := make(chan ptyhost.Exit, 1)
	go func() { ex, _ := s.Wait(); exited <- ex }()
	select {
	case ex := <-exited:
		if !ex.Success() {
			t.Errorf("the agent exited with %v after /exit, want success", ex)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the agent still runs 20 s after /exit")
	}
}
