package config

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/shogun-dev/shogun/atomicfile"
	"github.com/shogun-dev/shogun/policy"
	"github.com/shogun-dev/shogun/workspace"
)

// GeminiPolicyFile is where config/policy.yaml's shell deny rules are
// written for Gemini CLI, relative to the workspace.
const GeminiPolicyFile = workspace.GeminiPolicyFile

// geminiPolicyHeader is the first line of a GeminiPolicy file: a file
// that starts with it is shogun's to rewrite (WriteGeminiPolicy), any
// other is a person's and left alone.
const geminiPolicyHeader = "# Written by shogun from config/policy.yaml; rewritten at every shogun start.\n"

// geminiDenyPriority is the priority of the translated rules within
// their tier. .gemini/settings.json names the file in adminPolicyPaths
// (Gemini CLI 0.61.0 does not read a project's .gemini/policies/), so
// they are in the admin tier, above any allow rule of the user's own.
const geminiDenyPriority = 900

// GeminiPolicy translates p's shell deny rules into Gemini CLI's policy
// engine (TOML [[rule]] entries for run_shell_command with commandPrefix
// and decision "deny"), which refuses a matching command before any
// confirmation, as seen in the pinned Gemini CLI 0.61.0. Only what it can
// say exactly is translated (nativeDenies); everything else stays with
// shogun's reading of the screen and is listed in a comment. p nil (no
// policy) gives a file without rules.
func GeminiPolicy(p *policy.Policy) []byte {
	denies, skipped := nativeDenies(p)
	var out bytes.Buffer
	out.WriteString(geminiPolicyHeader)
	out.WriteString("# Gemini CLI refuses these shell commands itself, without asking;\n" +
		"# config/policy.yaml's other rules are applied to what Gemini CLI shows on\n" +
		"# its screen. Delete the first line to keep your own version of this file.\n")
	writeSkipped(&out, skipped)
	for _, d := range denies {
		fmt.Fprintf(&out, "\n# %s: %s\n[[rule]]\ntoolName = \"run_shell_command\"\ncommandPrefix = %s\ndecision = \"deny\"\npriority = %d\n",
			commentText(d.where), commentText(d.pattern), tomlString(strings.Join(d.words, " ")), geminiDenyPriority)
		if d.note != "" {
			fmt.Fprintf(&out, "deny_message = %s\n", tomlString(d.note))
		}
	}
	return out.Bytes()
}

// nativeDeny is one shell deny pattern a CLI's own rules can say exactly.
type nativeDeny struct {
	where, pattern, note string
	// words are the command's first words, plain.
	words []string
}

// nativeDenies picks the shell deny patterns of p that a CLI's prefix
// rules can enforce exactly: of a deny rule of kind shell whose only
// condition is its commands, the patterns that are plain words with at
// most a trailing " *" (a pattern already matches any words after it) and
// that no earlier shell rule allowing or asking may match too (the first
// rule that applies decides). skipped are comment lines for the others.
func nativeDenies(p *policy.Policy) (denies []nativeDeny, skipped []string) {
	if p == nil {
		return nil, nil
	}
	var before []policy.Rule // the shell rules that allow or ask, so far
	for _, r := range p.Rules {
		if r.Kind != policy.Shell {
			continue
		}
		if r.Decision != policy.Deny {
			before = append(before, r)
			continue
		}
		why := ""
		switch {
		case len(r.Commands) == 0:
			why = "it has no command"
		case len(r.Paths) > 0:
			why = "it has a path condition"
		case r.BaseBranch:
			why = "it applies on the base branch only"
		case len(r.Roles) > 0:
			why = "it applies to some roles only"
		}
		for _, c := range r.Commands {
			prefix, ok := geminiPrefix(c)
			reason := why
			switch {
			case reason != "":
			case !ok:
				reason = "the pattern is not a plain prefix"
			case overtaken(before, prefix):
				reason = "a shell rule before it that allows or asks may match the same commands"
			}
			if reason != "" {
				skipped = append(skipped, fmt.Sprintf("%s (%s): %s", c, r.Where, reason))
				continue
			}
			denies = append(denies, nativeDeny{where: r.Where, pattern: c.String(), note: r.Note, words: strings.Fields(prefix)})
		}
	}
	return denies, skipped
}

// writeSkipped lists the patterns not translated, as comments.
func writeSkipped(out *bytes.Buffer, skipped []string) {
	if len(skipped) == 0 {
		return
	}
	out.WriteString("#\n# Deny patterns not translated:\n")
	for _, s := range skipped {
		out.WriteString("#   " + commentText(s) + "\n")
	}
}

// overtaken reports whether one of the earlier rules may decide a
// command that starts with prefix's words (a rule's first word must match
// the command's, which is prefix's first; a rule without commands applies
// to every command).
func overtaken(earlier []policy.Rule, prefix string) bool {
	first := strings.Fields(prefix)[0]
	for _, r := range earlier {
		if len(r.Commands) == 0 {
			return true
		}
		for _, c := range r.Commands {
			if w := strings.Fields(c.String())[0]; w == "*" || policy.Glob(w, first) {
				return true
			}
		}
	}
	return false
}

// geminiPrefix is the command prefix a pattern stands for, when it is
// plain words (a trailing "*" word dropped): no glob characters, nothing
// the shell would read differently from the words themselves.
func geminiPrefix(p policy.Pattern) (string, bool) {
	ws := strings.Fields(p.String())
	if len(ws) > 0 && ws[len(ws)-1] == "*" {
		ws = ws[:len(ws)-1]
	}
	if len(ws) == 0 {
		return "", false
	}
	for _, w := range ws {
		for _, c := range w {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("_-./:=@%+,", c)) {
				return "", false
			}
		}
	}
	return strings.Join(ws, " "), true
}

// tomlString quotes s as a TOML basic string, every control character
// escaped (TOML allows none but tab in a string; JSON leaves DEL as it
// is, which made Gemini CLI drop the whole file).
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case isControl(r):
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r) // invalid UTF-8 is written as U+FFFD
		}
	}
	b.WriteByte('"')
	return b.String()
}

// isControl reports whether r is a control character (C0, DEL, C1).
func isControl(r rune) bool { return r < 0x20 || r >= 0x7f && r < 0xa0 }

// commentText is s made safe for a one-line comment of a generated file:
// control characters (a newline would end the comment) escaped.
func commentText(s string) string {
	var b strings.Builder
	for _, r := range s {
		if isControl(r) {
			fmt.Fprintf(&b, `\u%04X`, r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// checkGeminiPolicy parses a generated file back, as Gemini CLI will, and
// checks it holds the rules meant: a file Gemini cannot read would drop
// every rule in it without a word.
func checkGeminiPolicy(data []byte, denies []nativeDeny) error {
	var parsed struct {
		Rule []struct {
			ToolName      string `toml:"toolName"`
			CommandPrefix string `toml:"commandPrefix"`
			Decision      string `toml:"decision"`
			Priority      int    `toml:"priority"`
			DenyMessage   string `toml:"deny_message"`
		} `toml:"rule"`
	}
	if _, err := toml.Decode(string(data), &parsed); err != nil {
		return fmt.Errorf("check %s: %w", GeminiPolicyFile, err)
	}
	if len(parsed.Rule) != len(denies) {
		return fmt.Errorf("check %s: %d rules read back, %d written", GeminiPolicyFile, len(parsed.Rule), len(denies))
	}
	for i, d := range denies {
		r := parsed.Rule[i]
		if r.CommandPrefix != strings.Join(d.words, " ") || r.DenyMessage != string([]rune(d.note)) || r.Decision != "deny" {
			return fmt.Errorf("check %s: rule %d read back as %q (%q), written from %s", GeminiPolicyFile, i+1, r.CommandPrefix, r.DenyMessage, d.where)
		}
	}
	return nil
}

// WriteGeminiPolicy writes GeminiPolicy(p) to the workspace's
// GeminiPolicyFile unless a person wrote the file that is there (it does
// not start with shogun's first line). It reports whether it wrote.
func WriteGeminiPolicy(ws string, p *policy.Policy) (bool, error) {
	content := GeminiPolicy(p)
	denies, _ := nativeDenies(p)
	if err := checkGeminiPolicy(content, denies); err != nil {
		return false, err
	}
	return writeGenerated(ws, GeminiPolicyFile, geminiPolicyHeader, content)
}

// writeGenerated writes content, which starts with header, to rel in ws
// unless the file there does not start with header (a person's).
func writeGenerated(ws, rel, header string, content []byte) (bool, error) {
	path := filepath.Join(ws, filepath.FromSlash(rel))
	old, err := os.ReadFile(path)
	switch {
	case err == nil && !bytes.HasPrefix(old, []byte(header)):
		return false, nil
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return false, fmt.Errorf("%s: %w", rel, err)
	}
	if bytes.Equal(old, content) {
		return false, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return false, fmt.Errorf("%s: %w", rel, err)
	}
	if err := atomicfile.Write(path, content, 0o644); err != nil {
		return false, fmt.Errorf("%s: %w", rel, err)
	}
	return true, nil
}
