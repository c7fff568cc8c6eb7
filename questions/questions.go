// Package questions reads the question a CLI shows on its screen (a
// permission prompt, a trust or sign-in dialog) into a Question: what it
// asks about, its options and the keys that pick them, so that a person can
// answer it with `shogun answer` or the console instead of attaching.
//
// The screen is the agent's output, so everything here is hostile text: a
// Question only describes what was on screen, callers escape it before
// printing, and an answer is typed only while the very same question is
// still there (Same).
package questions

import (
	"regexp"
	"strconv"
	"strings"
)

// Kind is what a question is about.
type Kind string

// The kinds of question.
const (
	// Permission asks whether the agent may run a command, write a file
	// or use a tool.
	Permission Kind = "permission"
	// Trust asks whether the CLI may trust the folder.
	Trust Kind = "trust"
	// SignIn asks how to sign in, or whether to use an API key.
	SignIn Kind = "sign-in"
	// Other is any other dialog (a mode warning, a choice).
	Other Kind = "other"
)

// The answers a person gives to a permission question.
const (
	Yes    = "yes"
	Always = "always"
	No     = "no"
)

// Option is one choice of a question.
type Option struct {
	// Key is the number the CLI shows before it ("1").
	Key string `json:"key"`
	// Label is the option's text.
	Label string `json:"label"`
	// Answer is Yes, Always or No when the option means one of them;
	// "" otherwise.
	Answer string `json:"answer,omitempty"`
}

// Question is a question on a CLI's screen.
type Question struct {
	Kind Kind `json:"kind"`
	// Prompt is the line that asks ("Do you want to proceed?").
	Prompt string `json:"prompt"`
	// Subject is the command or file it asks about, when it names one.
	Subject string `json:"subject,omitempty"`
	// Options are the choices, in screen order.
	Options []Option `json:"options"`
	// Selected is the index in Options of the one under the cursor.
	Selected int `json:"selected"`
}

// Same reports whether q and o are the same question, whichever option is
// under the cursor: what must still be on screen when an answer is typed.
func (q Question) Same(o Question) bool {
	if q.Kind != o.Kind || q.Prompt != o.Prompt || q.Subject != o.Subject || len(q.Options) != len(o.Options) {
		return false
	}
	for i := range q.Options {
		if q.Options[i] != o.Options[i] {
			return false
		}
	}
	return true
}

// Pick returns the index of the option that gives answer, or -1.
func (q Question) Pick(answer string) int {
	for i, o := range q.Options {
		if o.Answer == answer {
			return i
		}
	}
	return -1
}

// optionLine is a numbered option, with the selection cursor of any of
// the CLIs before it (❯ Claude Code and Copilot CLI, › and > Codex, ●
// Gemini CLI).
var optionLine = regexp.MustCompile(`^\s*([❯›>●])?\s*(\d)\.\s+(\S.*?)\s*$`)

// maxPromptDistance is how far above its first option a question's prompt
// may be.
const maxPromptDistance = 12

// Parse reads the question at the bottom of a screen (its rows, as the
// screen model gives them). ok is false when there is none: no group of
// options numbered from 1 with a cursor on one of them.
func Parse(lines []string) (q Question, ok bool) {
	rows := make([]string, len(lines))
	for i, l := range lines {
		rows[i] = unbox(l)
	}
	first, last, opts, sel := lastOptionGroup(rows)
	if first < 0 || sel < 0 {
		return Question{}, false
	}
	q = Question{Options: opts, Selected: sel}
	top := max(0, first-maxPromptDistance)
	// The dialog starts below the transcript: at the nearest rule or box
	// top above the options, else maxPromptDistance rows up.
	for i := first - 1; i >= top; i-- {
		if isRule(lines[i]) {
			top = i + 1
			break
		}
	}
	// A permission question's heading may be far above its options, over
	// a long command (Codex: "Would you like to run the following
	// command?", then Environment, Reason and the command's rows).
	if h := headingAbove(lines, rows, first); h >= 0 && h < top {
		top = h
	}
	dialog := rows[top : last+1]
	above := rows[top:first]
	for i := len(above) - 1; i >= 0; i-- {
		// Codex's "Reason: …" is the agent's own words, not the question.
		if strings.Contains(above[i], "?") && !strings.HasPrefix(above[i], "Reason:") {
			q.Prompt = strings.TrimSpace(above[i])
			break
		}
	}
	if q.Prompt == "" {
		for _, l := range above {
			if t := strings.TrimSpace(l); t != "" {
				q.Prompt = t
				break
			}
		}
	}
	q.Kind = kindOf(strings.Join(dialog, "\n"))
	if q.Kind == Permission {
		q.Subject = subjectOf(lines[top:first])
		for i := range q.Options {
			q.Options[i].Answer = answerOf(q.Options[i].Label)
		}
	}
	return q, true
}

// headingAbove finds the row of a permission question's heading (a row
// ending in "?" in the words of one) above the options that start at
// first, up to the nearest rule, box top or transcript entry ("• " Codex,
// "⏺ " Claude Code) above them; -1 when there is none.
func headingAbove(lines, rows []string, first int) int {
	for i := first - 1; i >= 0; i-- {
		t := rows[i]
		if isRule(lines[i]) || strings.HasPrefix(t, "• ") || strings.HasPrefix(t, "⏺ ") {
			return -1
		}
		if strings.HasSuffix(t, "?") && !strings.HasPrefix(t, "Reason:") && permissionWords.MatchString(t) {
			return i
		}
	}
	return -1
}

// lastOptionGroup finds the lowest group of options numbered 1, 2, 3 … (a
// line between two options, such as a description, is allowed) and the
// one the cursor is on (-1 when none shows a cursor).
func lastOptionGroup(rows []string) (first, last int, opts []Option, sel int) {
	first, last, sel = -1, -1, -1
	for i := len(rows) - 1; i >= 0; i-- {
		m := optionLine.FindStringSubmatch(rows[i])
		if m == nil || m[2] != "1" {
			continue
		}
		// A group starts here: read it downwards.
		var group []Option
		cursor, end, gap := -1, i, 0
		for j := i; j < len(rows) && gap <= 2; j++ {
			m := optionLine.FindStringSubmatch(rows[j])
			if m == nil || m[2] != strconv.Itoa(len(group)+1) {
				if m != nil {
					break
				}
				gap++
				continue
			}
			gap = 0
			if m[1] != "" {
				cursor = len(group)
			}
			group = append(group, Option{Key: m[2], Label: m[3]})
			end = j
		}
		if len(group) < 2 {
			continue
		}
		return i, end, group, cursor
	}
	return -1, -1, nil, -1
}

// unbox takes the frame of a box off a row: "│ text │" and nested ones.
func unbox(l string) string {
	t := strings.TrimSpace(l)
	for strings.HasPrefix(t, "│") && strings.HasSuffix(t, "│") && len(t) > len("│") {
		t = strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(t, "│"), "│"))
	}
	return t
}

// isRule reports whether a row is a horizontal rule or a box's top edge.
func isRule(l string) bool {
	t := strings.TrimSpace(l)
	return strings.HasPrefix(t, "────") || strings.HasPrefix(t, "╭─")
}

var (
	signInWords     = regexp.MustCompile(`(?i)\bsign in\b|\blog ?in\b|authenticat|\bAPI key\b`)
	trustWords      = regexp.MustCompile(`(?i)\btrust\b`)
	permissionWords = regexp.MustCompile(`(?i)want to proceed|run the following command|run this command|allow execution|requires approval|make this edit|want to (?:create|edit|write|make)|allow .* to`)
)

// kindOf classifies a dialog by its words. Sign-in and trust come first:
// an answer typed into them is saved by the CLI, and shogun never types
// into them unless a person asked for that kind by name.
func kindOf(text string) Kind {
	switch {
	case signInWords.MatchString(text):
		return SignIn
	case trustWords.MatchString(text):
		return Trust
	case permissionWords.MatchString(text):
		return Permission
	}
	return Other
}

// subjectOf finds what a permission question is about, in the rows of its
// dialog above the options: a "$ command" line (Codex), a line framed
// twice (Gemini CLI, Copilot CLI: the command in a box of its own), or the
// line under a "… command" or "… file" heading (Claude Code).
func subjectOf(rows []string) string {
	for i, l := range rows {
		t := unbox(l)
		if !strings.HasPrefix(t, "$ ") {
			continue
		}
		// A long command wraps over the rows below, down to a blank row;
		// Codex ends one too long to show with "[… N lines]".
		parts := []string{strings.TrimSpace(t[2:])}
		for _, next := range rows[i+1:] {
			n := unbox(next)
			if n == "" {
				break
			}
			if strings.HasPrefix(n, "[…") {
				parts = append(parts, "…")
				break
			}
			parts = append(parts, n)
		}
		return strings.Join(parts, " ")
	}
	for _, l := range rows {
		t := strings.TrimSpace(l)
		if strings.Count(t, "│") >= 4 {
			return unbox(t)
		}
	}
	for i, l := range rows {
		t := strings.ToLower(unbox(l))
		if !strings.HasSuffix(t, " command") && !strings.HasSuffix(t, " file") {
			continue
		}
		for _, next := range rows[i+1:] {
			if s := unbox(next); s != "" {
				return s
			}
		}
	}
	return ""
}

// answerOf says what an option of a permission question means.
func answerOf(label string) string {
	l := strings.ToLower(strings.ReplaceAll(label, "’", "'"))
	switch {
	case strings.HasPrefix(l, "no"):
		return No
	case strings.Contains(l, "don't ask again") || strings.Contains(l, "always") || strings.Contains(l, "for this session") || strings.Contains(l, "remember"):
		return Always
	case strings.HasPrefix(l, "yes") || strings.HasPrefix(l, "allow"):
		return Yes
	}
	return ""
}
