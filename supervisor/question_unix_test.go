//go:build !windows

package supervisor

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/agentsim"
	"github.com/shogun-dev/shogun/questions"
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
