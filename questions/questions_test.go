package questions

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/shogun-dev/shogun/ptyhost"
)

// want is what a recorded screen asks.
type want struct {
	kind    Kind
	subject string
	answers string // the options' answers, "/"-joined
}

// Every screen of the real CLIs recorded by `make fixtures` that waits for
// a person is read as the question it shows; no other screen is a
// question.
func TestRecordedScreens(t *testing.T) {
	dir := filepath.Join("..", "supervisor", "testdata", "screens")
	b, err := os.ReadFile(filepath.Join(dir, "index.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var index struct {
		Screens []struct {
			File, CLI, State, Shows string
			Cols, Rows              int
		} `yaml:"screens"`
	}
	if err := yaml.Unmarshal(b, &index); err != nil {
		t.Fatal(err)
	}
	expect := map[string]*want{
		// Claude Code's description of the command ("fakemodel step")
		// is drawn under it, in the same column, told apart only by its
		// colour: it is shown as part of the subject, never cut off.
		"claude-permission.raw": {Permission, "python3 -c \"print(1)\"\nfakemodel step", "yes/always/no"},
		"codex-permission.raw":  {Permission, "touch x", "yes/always/no"},
		// The prompt 34 rows above the options, the command wrapped over
		// 28 of them and cut (its last option, No, is off the screen).
		"codex-permission-long.raw":     {Permission, longCommand, "yes/always"},
		"gemini-permission.raw":         {Permission, `python3 -c "print(1)"`, "yes/always/no"},
		"copilot-permission.raw":        {Permission, `python3 -c "print(1)"`, "yes/always/no"},
		"claude-trust.raw":              {Trust, "", "/"},
		"codex-trust.raw":               {Trust, "", "/"},
		"gemini-trust.raw":              {Trust, "", "//"},
		"copilot-trust.raw":             {Trust, "", "//"},
		"claude-api-key.raw":            {SignIn, "", "/"},
		"codex-sign-in.raw":             {SignIn, "", "//"},
		"gemini-auth.raw":               {SignIn, "", "//"},
		"claude-bypass-permissions.raw": {Other, "", "/"},
		"gemini-limit.raw":              {Other, "", "/"},
		"codex-new-worktree.raw":        {Other, "", "/"},
		// A composer under a notice: nothing to choose, so nothing to
		// answer here (shogun attach, /login).
		"claude-not-logged-in.raw": nil,
		"copilot-sign-in.raw":      nil,
	}
	permissions := map[string]bool{}
	for _, f := range index.Screens {
		t.Run(strings.TrimSuffix(f.File, ".raw"), func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join(dir, f.File))
			if err != nil {
				t.Fatal(err)
			}
			q, ok := Parse(ptyhost.ReplayScreen(raw, f.Cols, f.Rows).Lines)
			w, listed := expect[f.File]
			if f.State != "attention" || (listed && w == nil) {
				if ok {
					t.Errorf("%s (%s) is read as a question: %+v", f.File, f.Shows, q)
				}
				return
			}
			if !listed {
				t.Fatalf("%s (%s) waits for a person and has no expectation here", f.File, f.Shows)
			}
			if !ok {
				t.Fatalf("%s (%s): no question read", f.File, f.Shows)
			}
			var answers []string
			for _, o := range q.Options {
				answers = append(answers, o.Answer)
			}
			if q.Kind != w.kind || q.Subject != w.subject || strings.Join(answers, "/") != w.answers || q.Prompt == "" {
				t.Errorf("%s (%s) = %s about %q, answers %q, prompt %q; want %s about %q, answers %q", f.File, f.Shows,
					q.Kind, q.Subject, strings.Join(answers, "/"), q.Prompt, w.kind, w.subject, w.answers)
			}
			if q.Kind == Permission {
				permissions[f.CLI] = true
				if q.Selected != 0 || q.Options[0].Key != "1" || strings.HasSuffix(w.answers, "/no") && q.Pick(No) != 2 {
					t.Errorf("%s: selected %d, options %+v", f.File, q.Selected, q.Options)
				}
				if strings.HasPrefix(q.Prompt, "Reason:") || !permissionWords.MatchString(q.Prompt) {
					t.Errorf("%s: prompt %q, want the question's heading", f.File, q.Prompt)
				}
			}
		})
	}
	if len(permissions) != 4 {
		t.Errorf("permission screens read of %v, want one of each CLI", permissions)
	}
}

// longCommand is what codex-permission-long shows of its command: the
// rows on screen, as wrapped there, and the mark of the rows left out.
var longCommand = func() string {
	var b strings.Builder
	b.WriteString("touch")
	for i := range 112 {
		sep := " "
		if i > 0 && i%4 == 0 {
			sep = "\n"
		}
		fmt.Fprintf(&b, "%sbuild/output-file-%03d.txt", sep, i)
	}
	return b.String() + "\n…"
}()

func TestSameIgnoresTheCursor(t *testing.T) {
	lines := []string{"Bash command", "  rm -rf build", "Do you want to proceed?", "❯ 1. Yes", "  2. No"}
	a, ok := Parse(lines)
	if !ok {
		t.Fatal("no question")
	}
	moved := []string{"Bash command", "  rm -rf build", "Do you want to proceed?", "  1. Yes", "❯ 2. No"}
	b, _ := Parse(moved)
	other := []string{"Bash command", "  rm -rf dist", "Do you want to proceed?", "❯ 1. Yes", "  2. No"}
	c, _ := Parse(other)
	if !a.Same(b) || b.Selected != 1 || a.Same(c) {
		t.Errorf("Same: cursor moved %v (selected %d), other command %v", a.Same(b), b.Selected, a.Same(c))
	}
}
