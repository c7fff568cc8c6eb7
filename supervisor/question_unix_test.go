//go:build !windows

package supervisor

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/agentsim"
	"github.com/shogun-dev/shogun/questions"
	"github.com/shogun-dev/shogun/shoguntest"
)

// A permission prompt on a role's screen is read as a question and
// answered with keys: "always" picks the second option, which the program
// records; an answer for a question no longer on screen types nothing.
func TestAnswerAQuestionOnScreen(t *testing.T) {
	ws := testWorkspace(t, "roles:"+simRole("asker", `    attention_pattern: "Do you want to proceed"
`, "--dialog", "permission"))
	r := start(t, ws, nil)
	r.waitState(t, "asker", Attention, 15*time.Second)
	role := r.role(t, "asker")
	q, ok := role.Question()
	if !ok || q.Kind != questions.Permission || q.Subject != "rm -rf build/\nRemove the build directory" || q.Pick(questions.Always) != 1 {
		t.Fatalf("question = %+v, %v", q, ok)
	}
	if again, _ := role.Question(); again.ID != q.ID || len(q.ID) < 10 {
		t.Fatalf("the question on screen has id %q, then %q: want one id, the same while it stays", q.ID, again.ID)
	}
	stale := q
	stale.Subject = "rm -rf dist/"
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := role.Answer(ctx, stale, 1); !errors.Is(err, ErrQuestionChanged) {
		t.Fatalf("an answer to another question: %v, want ErrQuestionChanged", err)
	}
	// The same words asked again later are another question: an answer
	// meant for the earlier one is not typed into it.
	earlier := q
	earlier.ID = "s-0123456789abcdef"
	if err := role.Answer(ctx, earlier, 1); !errors.Is(err, ErrQuestionChanged) {
		t.Fatalf("an answer to a question of another id: %v, want ErrQuestionChanged", err)
	}
	if err := role.Answer(ctx, q, q.Pick(questions.Always)); err != nil {
		t.Fatal(err)
	}
	var choices []agentsim.Choice
	waitFor(t, "the program's record of the answer", 10*time.Second, func() bool {
		b, err := os.ReadFile(filepath.Join(ws, agentsim.ChoicesFile))
		return err == nil && json.Unmarshal(b, &choices) == nil && len(choices) > 0
	})
	if len(choices) != 1 || choices[0].Choice != "Yes, and don't ask again for rm commands in this project" {
		t.Errorf("the program recorded %+v, want the second option only", choices)
	}
	r.waitState(t, "asker", Ready, 15*time.Second)
	if _, ok := role.Question(); ok {
		t.Error("a question is still read once the dialog is gone")
	}
}

// A dialog that shows while shogun types is answered by a person through
// Answer at once: the delivery waiting for the dialog to go must not hold
// the keys the answer needs (it once did, and the answer hung until the
// control API gave up). The answer goes through, and so does the text,
// once.
func TestAnswerWhileTypingWaitsForIt(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "received.jsonl")
	ws := testWorkspace(t, "roles:"+markedSimRole("agent", "›", "    attention_pattern: \"Do you want to proceed\"\n",
		"--record", rec, "--paste-window", "400ms", "--dialog-after", "1200ms"))
	r := start(t, ws, nil)
	r.waitState(t, "agent", Ready, 15*time.Second)
	role := r.role(t, "agent")
	// Type just before the dialog, so that it shows while the delivery
	// retries its submit (the paste window turns the first into a newline).
	time.Sleep(900 * time.Millisecond)
	type result struct {
		d   Delivery
		err error
	}
	typed := make(chan result, 1)
	go func() {
		d, err := role.Type(t.Context(), "read the task file", TypeOptions{})
		typed <- result{d, err}
	}()
	r.waitState(t, "agent", Attention, 10*time.Second)
	q, ok := role.Question()
	if !ok || q.Kind != questions.Permission {
		t.Fatalf("question = %+v, %v", q, ok)
	}
	answered := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		answered <- role.Answer(ctx, q, 0)
	}()
	select {
	case err := <-answered:
		if err != nil {
			t.Fatalf("answer while shogun types: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the answer did not go through while shogun's delivery waited for it (deadlock)")
	}
	var res result
	select {
	case res = <-typed:
	case <-time.After(30 * time.Second):
		t.Fatal("the delivery did not go on after the answer")
	}
	if res.err != nil || !res.d.Confirmed {
		t.Fatalf("delivery after the answer: %+v, %v", res.d, res.err)
	}
	recs := shoguntest.Records(t, rec)
	if got := shoguntest.Kinds(recs, "dialog"); len(got) != 1 || got[0].Line != "Yes" {
		t.Errorf("the program's dialog answers = %+v, want the person's one Yes", got)
	}
	if subs := shoguntest.Kinds(recs, "submit"); len(subs) != 1 || !strings.Contains(subs[0].Line, "read the task file") {
		t.Errorf("the program's submits = %+v, want the text once", subs)
	}
}
