package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shogun-dev/shogun/policy"
)

func pats(t *testing.T, ss ...string) []policy.Pattern {
	t.Helper()
	var ps []policy.Pattern
	for _, s := range ss {
		p, err := policy.ParsePattern(s)
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	return ps
}

func TestGeminiPolicyTranslatesPlainDenyPrefixes(t *testing.T) {
	outside, err := policy.ParsePathCond("outside")
	if err != nil {
		t.Fatal(err)
	}
	p := &policy.Policy{Default: policy.Ask, Rules: []policy.Rule{
		{Decision: policy.Allow, Kind: policy.Read, Where: "p:1"},
		{Decision: policy.Deny, Kind: policy.Shell, Commands: pats(t, "git init *", "git push * --force", `terraform "destroy"`), Note: `say "no"`, Where: "p:2"},
		{Decision: policy.Deny, Kind: policy.Shell, Commands: pats(t, "rm -rf"), Paths: []policy.PathCond{outside}, Where: "p:3"},
		{Decision: policy.Deny, Kind: policy.Shell, Commands: pats(t, "git reset --hard"), BaseBranch: true, Where: "p:4"},
		{Decision: policy.Deny, Kind: policy.Shell, Commands: pats(t, "shutdown"), Roles: []string{"karo"}, Where: "p:5"},
		{Decision: policy.Allow, Kind: policy.Shell, Commands: pats(t, "make *"), Where: "p:6"},
		{Decision: policy.Deny, Kind: policy.Shell, Commands: pats(t, "make deploy", "curl evil.example"), Where: "p:7"},
		{Decision: policy.Ask, Kind: policy.Shell, Paths: []policy.PathCond{outside}, Where: "p:9"},
		{Decision: policy.Deny, Kind: policy.Shell, Commands: pats(t, "dd"), Where: "p:10"},
		{Decision: policy.Deny, Kind: policy.Write, Where: "p:8"},
	}}
	got := string(GeminiPolicy(p))
	if !strings.HasPrefix(got, geminiPolicyHeader) {
		t.Errorf("no header:\n%s", got)
	}
	rule := `
# p:2: git init *
[[rule]]
toolName = "run_shell_command"
commandPrefix = "git init"
decision = "deny"
priority = 900
deny_message = "say \"no\""
`
	if !strings.Contains(got, rule) || !strings.Contains(got, "# p:7: curl evil.example\n") || strings.Count(got, "[[rule]]") != 2 {
		t.Errorf("want exactly the rule\n%s\nin\n%s", rule, got)
	}
	for _, skip := range []string{
		"#   git push * --force (p:2): the pattern is not a plain prefix",
		`#   terraform "destroy" (p:2): the pattern is not a plain prefix`,
		"#   rm -rf (p:3): it has a path condition",
		"#   git reset --hard (p:4): it applies on the base branch only",
		"#   shutdown (p:5): it applies to some roles only",
		"#   make deploy (p:7): a shell rule before it that allows or asks may match the same commands",
		"#   dd (p:10): a shell rule before it that allows or asks may match the same commands",
	} {
		if !strings.Contains(got, skip+"\n") {
			t.Errorf("missing %q in\n%s", skip, got)
		}
	}
	if nilPol := string(GeminiPolicy(nil)); strings.Contains(nilPol, "[[rule]]") || !strings.HasPrefix(nilPol, geminiPolicyHeader) {
		t.Errorf("GeminiPolicy(nil) =\n%s", nilPol)
	}
}

func TestWriteGeminiPolicyKeepsAPersonsFile(t *testing.T) {
	ws := t.TempDir()
	p := &policy.Policy{Rules: []policy.Rule{{Decision: policy.Deny, Kind: policy.Shell, Commands: pats(t, "git init"), Where: "p:1"}}}
	path := filepath.Join(ws, filepath.FromSlash(GeminiPolicyFile))
	if wrote, err := WriteGeminiPolicy(ws, p); err != nil || !wrote {
		t.Fatalf("first write: %v %v", wrote, err)
	}
	if b, _ := os.ReadFile(path); string(b) != string(GeminiPolicy(p)) {
		t.Errorf("written:\n%s", b)
	}
	if wrote, err := WriteGeminiPolicy(ws, p); err != nil || wrote {
		t.Errorf("unchanged policy rewritten: %v %v", wrote, err)
	}
	if wrote, err := WriteGeminiPolicy(ws, nil); err != nil || !wrote {
		t.Errorf("changed policy not rewritten: %v %v", wrote, err)
	}
	mine := "# my own rules\n[[rule]]\ntoolName = \"run_shell_command\"\ndecision = \"deny\"\npriority = 1\n"
	if err := os.WriteFile(path, []byte(mine), 0o644); err != nil {
		t.Fatal(err)
	}
	if wrote, err := WriteGeminiPolicy(ws, p); err != nil || wrote {
		t.Errorf("a person's file overwritten: %v %v", wrote, err)
	}
	if b, _ := os.ReadFile(path); string(b) != mine {
		t.Errorf("a person's file changed:\n%s", b)
	}
}

func TestCodexRulesTranslatesPlainDenyPrefixes(t *testing.T) {
	p := &policy.Policy{Rules: []policy.Rule{
		{Decision: policy.Deny, Kind: policy.Shell, Commands: pats(t, "git init *", "git push * --force"), Note: `say "no"`, Where: "p:2"},
	}}
	got := string(CodexRules(p))
	want := codexRulesHeader + `# Codex refuses these commands itself, without asking; config/policy.yaml's
# other rules are applied to what Codex shows on its screen. Delete the first
# line to keep your own version of this file.
#
# Deny patterns not translated:
#   git push * --force (p:2): the pattern is not a plain prefix

# p:2: git init *
prefix_rule(
    pattern = ["git", "init"],
    decision = "forbidden",
    justification = "say \"no\"",
)
`
	if got != want {
		t.Errorf("CodexRules =\n%s\nwant\n%s", got, want)
	}
	ws := t.TempDir()
	if wrote, err := WriteCodexRules(ws, p); err != nil || !wrote {
		t.Fatalf("write: %v %v", wrote, err)
	}
	path := filepath.Join(ws, filepath.FromSlash(CodexRulesFile))
	if err := os.WriteFile(path, []byte("prefix_rule(pattern = [\"rm\"], decision = \"forbidden\")\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if wrote, err := WriteCodexRules(ws, nil); err != nil || wrote {
		t.Errorf("a person's rules overwritten: %v %v", wrote, err)
	}
}
