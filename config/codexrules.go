package config

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/shogun-dev/shogun/policy"
	"github.com/shogun-dev/shogun/workspace"
)

// CodexRulesFile is where config/policy.yaml's shell deny rules are
// written for Codex, relative to the workspace.
const CodexRulesFile = workspace.CodexRulesFile

// codexRulesHeader is the first line of a CodexRules file: a file that
// starts with it is shogun's to rewrite, any other a person's.
const codexRulesHeader = "# Written by shogun from config/policy.yaml; rewritten at every shogun start.\n"

// CodexRules translates p's shell deny rules that prefix rules can say
// exactly (nativeDenies) into Codex's execpolicy: prefix_rule entries with
// decision "forbidden" and the rule's note as justification, which Codex
// 0.169.0 loads from every .rules file of a trusted project's
// .codex/rules/ and applies before it runs a command, sandboxed or not.
// The other patterns are listed in a comment and stay with shogun's
// reading of the screen. p nil gives a file without rules.
func CodexRules(p *policy.Policy) []byte {
	denies, skipped := nativeDenies(p)
	var out bytes.Buffer
	out.WriteString(codexRulesHeader)
	out.WriteString("# Codex refuses these commands itself, without asking; config/policy.yaml's\n" +
		"# other rules are applied to what Codex shows on its screen. Delete the first\n" +
		"# line to keep your own version of this file.\n")
	writeSkipped(&out, skipped)
	for _, d := range denies {
		words := make([]string, len(d.words))
		for i, w := range d.words {
			words[i] = starlarkString(w)
		}
		fmt.Fprintf(&out, "\n# %s: %s\nprefix_rule(\n    pattern = [%s],\n    decision = \"forbidden\",\n", commentText(d.where), commentText(d.pattern), strings.Join(words, ", "))
		if d.note != "" {
			fmt.Fprintf(&out, "    justification = %s,\n", starlarkString(d.note))
		}
		out.WriteString(")\n")
	}
	return out.Bytes()
}

// starlarkString quotes s as a Starlark string literal: tomlString's
// quoting (\", \\, \n, \t, \uXXXX) is Starlark's too.
func starlarkString(s string) string { return tomlString(s) }

// checkCodexRules is a minimal check of a generated rules file (no
// Starlark parser is at hand): no raw control character but the line
// ends, and one prefix_rule per rule meant, its strings closed on their
// line.
func checkCodexRules(data []byte, rules int) error {
	for i, line := range strings.Split(string(data), "\n") {
		if strings.IndexFunc(line, isControl) >= 0 {
			return fmt.Errorf("check %s: line %d holds a control character", CodexRulesFile, i+1)
		}
		if strings.HasPrefix(line, "#") {
			continue
		}
		// Outside comments, quotes come in pairs once escapes are taken out.
		if strings.Count(strings.ReplaceAll(strings.ReplaceAll(line, `\\`, ""), `\"`, ""), `"`)%2 != 0 {
			return fmt.Errorf("check %s: line %d has a string left open", CodexRulesFile, i+1)
		}
	}
	if n := strings.Count(string(data), "\nprefix_rule(\n"); n != rules {
		return fmt.Errorf("check %s: %d rules written, %d meant", CodexRulesFile, n, rules)
	}
	return nil
}

// WriteCodexRules writes CodexRules(p) to the workspace's CodexRulesFile
// unless a person wrote the file that is there. It reports whether it
// wrote.
func WriteCodexRules(ws string, p *policy.Policy) (bool, error) {
	content := CodexRules(p)
	denies, _ := nativeDenies(p)
	if err := checkCodexRules(content, len(denies)); err != nil {
		return false, err
	}
	return writeGenerated(ws, CodexRulesFile, codexRulesHeader, content)
}
