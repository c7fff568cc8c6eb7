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
	"slices"
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
	// Dialog is the whole dialog, row by row, its frames taken off and
	// the cursor taken out of the options: what Same compares.
	Dialog []string `json:"dialog"`
	// ID names this question while it is on screen; Parse leaves it
	// empty, the supervisor sets it (the role, the dialog and when it
	// appeared), and Same compares it.
	ID string `json:"id,omitempty"`
}

// Same reports whether q and o are the same question, whichever option is
// under the cursor: what must still be on screen when an answer is typed.
// The whole dialog is compared, not only its prompt and subject: a dialog
// that asks about another command with the same first line is another
// question.
func (q Question) Same(o Question) bool {
	return q.ID == o.ID && q.Kind == o.Kind && q.Prompt == o.Prompt && q.Subject == o.Subject &&
		slices.Equal(q.Options, o.Options) && slices.Equal(q.Dialog, o.Dialog)
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
	q.Dialog = dialogRows(rows[top:last+1], first-top)
	above := rows[top:first]
	q.Prompt = promptOf(above)
	q.Kind = kindOf(strings.Join(q.Dialog, "\n"))
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

// dialogRows is a dialog's rows (unboxed) as Same compares them: an
// option's row without the cursor before it, which moves.
func dialogRows(rows []string, firstOption int) []string {
	out := make([]string, len(rows))
	for i, l := range rows {
		if m := optionLine.FindStringSubmatch(l); m != nil && i >= firstOption {
			l = m[2] + ". " + m[3]
		}
		out[i] = l
	}
	return out
}

// promptOf is the line that asks, in the rows of a dialog above its
// options: the lowest with a question mark, else the first that is not
// empty. Codex's "Reason:" paragraph is the model's own words, never the
// prompt.
func promptOf(above []string) string {
	reason := make([]bool, len(above))
	for i := range above {
		if isReason(above[i]) {
			for j := i; j < len(above) && strings.TrimSpace(above[j]) != ""; j++ {
				reason[j] = true
			}
		}
	}
	for i := len(above) - 1; i >= 0; i-- {
		if strings.Contains(above[i], "?") && !reason[i] {
			return strings.TrimSpace(above[i])
		}
	}
	for _, l := range above {
		if t := strings.TrimSpace(l); t != "" {
			return t
		}
	}
	return ""
}

// isReason reports whether a row is Codex's "Reason:" line, the model's
// justification for what it asks.
func isReason(row string) bool { return strings.HasPrefix(unbox(row), "Reason:") }

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
// dialog above the options, whole: the command block nearest the options.
// The rows hold the model's own words too (its transcript above a dialog
// without a rule, Codex's "Reason:", the description Gemini CLI and
// Copilot CLI show above the command), so each layout's command is taken
// from where that CLI puts it, never from the first line that looks like
// one:
//   - Codex: the rows from the first "$ command" line after its prompt and
//     its Reason paragraph down to the options;
//   - Gemini CLI, Copilot CLI: the rows framed twice (the command in a
//     box of its own) nearest the options;
//   - Claude Code: the block under the "… command" or "… file" heading
//     that opens its dialog, up to the first empty row (a screen does not
//     say where the command ends and its description starts, so a
//     description line is part of it).
//
// A command of several rows is their lines joined with "\n".
func subjectOf(rows []string) string {
	if s := dollarCommand(rows); s != "" {
		return s
	}
	if s := boxedCommand(rows); s != "" {
		return s
	}
	return headedCommand(rows)
}

// dollarCommand is Codex's command: after the last row that asks or gives
// the model's reason (and the rest of that paragraph), from the first row
// that starts with "$ " to the options; with neither, from the "$ " row
// nearest the options.
func dollarCommand(rows []string) string {
	from := 0
	for i, l := range rows {
		if isReason(l) || (strings.Contains(l, "?") && permissionWords.MatchString(l)) {
			from = i + 1
			for from < len(rows) && unbox(rows[from]) != "" {
				from++ // the rest of a Reason paragraph
			}
		}
	}
	start := from
	if from == 0 {
		// No prompt read: the "$ " row nearest the options, since the
		// rows above may be the model's.
		for i := len(rows) - 1; i > 0; i-- {
			if strings.HasPrefix(unbox(rows[i]), "$ ") {
				start = i
				break
			}
		}
	}
	for i := start; i < len(rows); i++ {
		if t := unbox(rows[i]); strings.HasPrefix(t, "$ ") {
			// The "$ " is a prompt's, not the command's: blanked, so that
			// the rows under it keep their indentation relative to it.
			first := rows[i]
			if at := strings.Index(first, "$ "); !strings.HasPrefix(strings.TrimSpace(first), "│") {
				first = strings.Repeat(" ", at+2) + first[at+2:]
			} else {
				first = t[2:]
			}
			rest := rows[i+1:]
			cut := ""
			// Codex ends a command too long to show with "[… N lines]".
			if k := slices.IndexFunc(rest, func(l string) bool { return strings.HasPrefix(unbox(l), "[…") }); k >= 0 {
				rest, cut = rest[:k], "\n…"
			}
			return strings.TrimLeft(block(append([]string{first}, rest...)), " ") + cut
		}
	}
	return ""
}

// boxedCommand is the group of rows framed twice nearest the options.
func boxedCommand(rows []string) string {
	end := len(rows)
	for end > 0 && strings.Count(rows[end-1], "│") < 4 {
		end--
	}
	start := end
	for start > 0 && strings.Count(rows[start-1], "│") >= 4 {
		start--
	}
	return block(rows[start:end])
}

// headedCommand is the block under the heading that opens a Claude Code
// dialog ("Bash command", "Edit file"): the first row that is not empty.
func headedCommand(rows []string) string {
	for i, l := range rows {
		t := strings.ToLower(unbox(l))
		if t == "" || isRule(l) {
			continue
		}
		if !strings.HasSuffix(t, " command") && !strings.HasSuffix(t, " file") {
			return ""
		}
		rest := rows[i+1:]
		for len(rest) > 0 && unbox(rest[0]) == "" {
			rest = rest[1:]
		}
		end := slices.IndexFunc(rest, func(l string) bool { return unbox(l) == "" })
		if end < 0 {
			end = len(rest)
		}
		return block(rest[:end])
	}
	return ""
}

// block is rows as one text: each unboxed, the indentation they share
// taken off, and the empty rows at either end left out.
func block(rows []string) string {
	lines := make([]string, 0, len(rows))
	indent := -1
	for _, l := range rows {
		if strings.HasPrefix(strings.TrimSpace(l), "│") {
			l = unframe(l)
		}
		l = strings.TrimRight(l, " ")
		if t := strings.TrimLeft(l, " "); t != "" && (indent < 0 || len(l)-len(t) < indent) {
			indent = len(l) - len(t)
		}
		lines = append(lines, l)
	}
	for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	for i, l := range lines {
		lines[i] = l[min(len(l), max(indent, 0)):]
	}
	return strings.Join(lines, "\n")
}

// unframe takes the frames of nested boxes off a row as unbox does, but
// keeps the indentation inside the innermost one (one space of padding
// taken off), so that an indented line of a command stays indented.
func unframe(l string) string {
	t := strings.TrimSpace(l)
	for strings.HasPrefix(t, "│") && strings.HasSuffix(t, "│") && len(t) > len("│") {
		t = strings.TrimSuffix(strings.TrimPrefix(t, "│"), "│")
		t = strings.TrimSuffix(strings.TrimPrefix(t, " "), " ")
		if inner := strings.TrimSpace(t); !strings.HasPrefix(inner, "│") {
			return t
		}
		t = strings.TrimSpace(t)
	}
	return t
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
