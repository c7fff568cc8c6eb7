package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"

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

// Every control character, DEL and bytes that are not UTF-8 in a rule's
// note or pattern are escaped in both generated files, which read back
// as written: one bad character used to make Gemini CLI drop every rule.
func TestNativeFilesEscapeEveryControlCharacter(t *testing.T) {
	var weird strings.Builder
	for r := rune(0); r < 0x20; r++ {
		weird.WriteRune(r)
	}
	weird.WriteString("\x7f\u0085\u009f \"quoted\" back\\slash \xff\xfe end")
	note := weird.String()
	p := &policy.Policy{Rules: []policy.Rule{
		{Decision: policy.Deny, Kind: policy.Shell, Commands: pats(t, "git init", "bad\x7fword\x01 *"), Note: note, Where: "p:1"},
	}}
	ws := t.TempDir()
	if _, err := WriteGeminiPolicy(ws, p); err != nil {
		t.Fatalf("WriteGeminiPolicy: %v", err)
	}
	data, err := os.ReadFile(filepath.Join(ws, filepath.FromSlash(GeminiPolicyFile)))
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Rule []struct {
			CommandPrefix string `toml:"commandPrefix"`
			DenyMessage   string `toml:"deny_message"`
		} `toml:"rule"`
	}
	if _, err := toml.Decode(string(data), &back); err != nil {
		t.Fatalf("the Gemini file does not parse: %v\n%q", err, data)
	}
	if len(back.Rule) != 1 || back.Rule[0].CommandPrefix != "git init" || back.Rule[0].DenyMessage != string([]rune(note)) {
		t.Errorf("read back %+v, want git init with the note %q", back.Rule, note)
	}
	if _, err := WriteCodexRules(ws, p); err != nil {
		t.Fatalf("WriteCodexRules: %v", err)
	}
	for _, f := range []string{GeminiPolicyFile, CodexRulesFile} {
		data, err := os.ReadFile(filepath.Join(ws, filepath.FromSlash(f)))
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(data), "\n") {
			if strings.IndexFunc(line, isControl) >= 0 {
				t.Errorf("%s line %d holds a raw control character: %q", f, i+1, line)
			}
		}
		if !strings.Contains(string(data), `bad\u007Fword\u0001 *`) {
			t.Errorf("%s does not list the skipped pattern escaped:\n%s", f, data)
		}
	}
	if err := checkGeminiPolicy([]byte("[[rule]]\ndeny_message = \"a\x7fb\"\n"), nil); err == nil {
		t.Error("checkGeminiPolicy accepts a raw DEL")
	}
	if err := checkCodexRules([]byte("prefix_rule(\n    justification = \"open,\n)\n"), 1); err == nil {
		t.Error("checkCodexRules accepts a string left open")
	}
}
