package agentsim

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/shogun-dev/shogun/atomicfile"
)

// ChoicesFile is where, in its working directory, the agent saves every
// answer a dialog got: a JSON array of Choice, rewritten whole after each
// answer. It exists so that a test of the supervisor, which cannot see the
// agent's record unless it asked for one, can prove that nothing answered a
// dialog the supervisor should have left to a person.
const ChoicesFile = ".agentsim-choices.json"

// Choice is one answer saved in ChoicesFile.
type Choice struct {
	// At is when the answering key arrived, RFC 3339 with nanoseconds.
	At string `json:"at"`
	// Dialog names the dialog (DialogTrust, …).
	Dialog string `json:"dialog"`
	// Choice is the label of the option picked, without its number.
	Choice string `json:"choice"`
}

// A dialogOption is one numbered answer.
type dialogOption struct {
	label string
	// exit: picking it ends the agent with status 1, as "No, exit" does.
	exit bool
	// farewell and reason override the line printed and the error returned
	// when exit is set; the older dialog had its own words for them.
	farewell, reason string
}

// A dialogSpec is a dialog as the real CLIs draw it: text, then numbered
// options, the highlighted one marked `❯`. A digit picks its option at once,
// the arrows move the highlight, Enter picks the highlighted one, Escape and
// Ctrl-C pick cancel.
type dialogSpec struct {
	text    func(dir string) []string // the lines above the options
	options []dialogOption
	def     int    // the option highlighted at first
	cancel  int    // the option Escape and Ctrl-C pick; -1: they do nothing
	hint    string // the line below the options, if any
	// plain is the older numbered list: no highlight, no arrows and no
	// Escape; only digits, Enter (the first option) and Ctrl-C (cancel).
	plain bool
}

// rule opens a dialog as Claude Code's horizontal line does; layout cuts it
// to the terminal's width.
var rule = strings.Repeat("─", 240)

// dialogs are the dialogs Options.Dialogs may name. Their words are Claude
// Code 2.1.197's, with its lines broken to fit 80 columns, because those
// words are what a supervisor's attention patterns must recognise.
var dialogs = map[string]dialogSpec{
	DialogTrust: {
		text: func(dir string) []string {
			return []string{
				rule,
				" Accessing workspace:",
				"",
				" " + dir,
				"",
				" Quick safety check: Is this a project you created or one you trust? (Like",
				" your own code, a well-known open source project, or work from your team).",
				" If not, take a moment to review what's in this folder first.",
				"",
				" Claude Code'll be able to read, edit, and execute files here.",
				"",
				" Security guide",
				"",
			}
		},
		options: []dialogOption{{label: "Yes, I trust this folder"}, {label: "No, exit", exit: true}},
		def:     0,
		cancel:  1,
		hint:    " Enter to confirm · Esc to cancel",
	},
	DialogBypass: {
		text: func(string) []string {
			return []string{
				rule,
				"  WARNING: Claude Code running in Bypass Permissions mode",
				"",
				"  In Bypass Permissions mode, Claude Code will not ask for your approval",
				"  before running potentially dangerous commands.",
				"  This mode should only be used in a sandboxed container/VM that has",
				"  restricted internet access and can easily be restored if damaged.",
				"",
				"  By proceeding, you accept all responsibility for actions taken while",
				"  running in Bypass Permissions mode.",
				"",
				"  https://code.claude.com/docs/en/security",
				"",
			}
		},
		options: []dialogOption{{label: "No, exit", exit: true}, {label: "Yes, I accept"}},
		def:     0,
		cancel:  0,
		hint:    " Enter to confirm · Esc to cancel",
	},
	DialogAPIKey: {
		text: func(string) []string {
			return []string{
				rule,
				" Detected a custom API key in your environment",
				"",
				" ANTHROPIC_API_KEY: sk-ant-...agentsim",
				"",
				" Do you want to use this API key?",
				"",
			}
		},
		options: []dialogOption{{label: "Yes"}, {label: "No (recommended)"}},
		def:     1,
		cancel:  1,
		hint:    " Enter to confirm · Esc to cancel",
	},
	DialogPermission: {
		text: func(string) []string {
			return []string{
				rule,
				" Bash command",
				"",
				"   rm -rf build/",
				"   Remove the build directory",
				"",
				" Do you want to proceed?",
			}
		},
		options: []dialogOption{
			{label: "Yes"},
			{label: "Yes, and don't ask again for rm commands in this project"},
			{label: "No, and tell Claude what to do differently (esc)"},
		},
		def:    0,
		cancel: 2,
	},
	DialogFolder: {
		text: func(string) []string { return []string{"Do you trust the files in this folder?"} },
		options: []dialogOption{
			{label: "Yes, proceed"},
			{label: "No", exit: true, farewell: "Not trusted. Bye.", reason: "the folder is not trusted"},
		},
		def:    0,
		cancel: 1,
		plain:  true,
	},
}

// DialogNames lists the dialogs Options.Dialogs may name, sorted.
func DialogNames() []string {
	names := make([]string, 0, len(dialogs))
	for n := range dialogs {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// A dialog is one being shown.
type dialog struct {
	name     string
	spec     dialogSpec
	selected int
}

func newDialog(name string) *dialog {
	spec := dialogs[name]
	return &dialog{name: name, spec: spec, selected: spec.def}
}

// lines draws the dialog, for the pane's header.
func (d *dialog) lines(dir string) []string {
	lines := slices.Clone(d.spec.text(dir))
	for i, o := range d.spec.options {
		switch {
		case d.spec.plain:
			lines = append(lines, fmt.Sprintf(" %d. %s", i+1, o.label))
		case i == d.selected:
			lines = append(lines, fmt.Sprintf(" ❯ %d. %s", i+1, o.label))
		default:
			lines = append(lines, fmt.Sprintf("   %d. %s", i+1, o.label))
		}
	}
	if d.spec.hint != "" {
		lines = append(lines, "", d.spec.hint)
	}
	return lines
}

// key handles a key; it returns the option picked, or -1 when the key only
// moved the highlight or meant nothing, and whether the dialog must be drawn
// again.
func (d *dialog) key(k key) (picked int, redraw bool) {
	n := len(d.spec.options)
	switch k.kind {
	case keyChar:
		if k.b >= '1' && int(k.b-'1') < n {
			return int(k.b - '1'), false
		}
	case keyEnter, keyNewline:
		if d.spec.plain {
			return 0, false
		}
		return d.selected, false
	case keyInterrupt:
		return d.spec.cancel, false
	case keyEsc:
		if !d.spec.plain {
			return d.spec.cancel, false
		}
	case keyUp, keyDown:
		if d.spec.plain {
			break
		}
		if k.kind == keyUp {
			d.selected = (d.selected + n - 1) % n
		} else {
			d.selected = (d.selected + 1) % n
		}
		return -1, true
	}
	return -1, false
}

// saveChoice adds c to ChoicesFile in the working directory. A file that is
// there but not a list of choices is left as it is: it may be someone's.
func saveChoice(c Choice) error {
	var all []Choice
	data, err := os.ReadFile(ChoicesFile)
	switch {
	case err == nil:
		if err := json.Unmarshal(data, &all); err != nil {
			return fmt.Errorf("read %s: not a list of choices: %w", ChoicesFile, err)
		}
	case !errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("read %s: %w", ChoicesFile, err)
	}
	all = append(all, c)
	data, err = json.MarshalIndent(all, "", "  ")
	if err != nil {
		return fmt.Errorf("encode choices: %w", err)
	}
	if err := atomicfile.Write(ChoicesFile, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("save choices: %w", err)
	}
	return nil
}

// choiceAt stamps an answer.
func choiceAt(at time.Time, name, label string) Choice {
	return Choice{At: stamp(at), Dialog: name, Choice: label}
}
