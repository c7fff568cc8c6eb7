package policy

import (
	"slices"
	"strings"
)

// wrapper describes a program that runs the command after its own
// options: sudo -u root git push is git push, run as root.
type wrapper struct {
	// argOpts are its short options that take an argument (attached,
	// -o0, or the next word: -u root).
	argOpts string
	// longArgs are its long options that take the next word when written
	// without "=" (--user root).
	longArgs []string
	// positional is how many words come between its options and the
	// command (timeout's duration, chroot's new root).
	positional int
}

// wrappers are the programs whose command the rules judge, with the
// options that take an argument, so that "nice -n 5 git" is git and not 5.
var wrappers = map[string]wrapper{
	"sudo":     {argOpts: "ugpCDhrtTUR", longArgs: []string{"user", "group", "prompt", "close-from", "chdir", "host", "role", "type", "command-timeout", "other-user", "chroot"}},
	"doas":     {argOpts: "uC"},
	"env":      {argOpts: "uCS", longArgs: []string{"unset", "chdir", "split-string", "block-signal", "default-signal", "ignore-signal"}},
	"nice":     {argOpts: "n", longArgs: []string{"adjustment"}},
	"ionice":   {argOpts: "cnpPu", longArgs: []string{"class", "classdata"}},
	"timeout":  {argOpts: "sk", longArgs: []string{"signal", "kill-after"}, positional: 1},
	"stdbuf":   {argOpts: "ioe", longArgs: []string{"input", "output", "error"}},
	"nohup":    {},
	"setsid":   {},
	"time":     {argOpts: "fo", longArgs: []string{"format", "output"}},
	"command":  {},
	"exec":     {argOpts: "a"},
	"builtin":  {},
	"chronic":  {},
	"unbuffer": {},
	"chroot":   {longArgs: []string{"userspec", "groups"}, positional: 1},
	"taskset":  {positional: 1},
	"flock":    {argOpts: "wEc", longArgs: []string{"timeout", "conflict-exit-code", "command"}, positional: 1},
	"su":       {argOpts: "cgGsw", longArgs: []string{"command", "group", "supp-group", "shell", "whitelist-environment"}},
	"runuser":  {argOpts: "cgGsuw", longArgs: []string{"command", "group", "supp-group", "shell", "user", "whitelist-environment"}},
	"xargs":    {argOpts: "adEILnPs", longArgs: []string{"arg-file", "delimiter", "max-args", "max-procs", "max-chars", "process-slot-var"}},
	"watch":    {argOpts: "nq", longArgs: []string{"interval", "equexit"}},
	"script":   {argOpts: "cEIOBTm", longArgs: []string{"command", "echo", "log-in", "log-out", "log-io", "log-timing", "logging-format", "output-limit"}},
	"busybox":  {},
	"toybox":   {},
	"pkexec":   {longArgs: []string{"user"}},
}

// syntaxWords are the shell's own words that may come before a command
// (if git push -f; then …; while …; do …; ! …); they run nothing.
var syntaxWords = map[string]bool{"if": true, "then": true, "else": true, "elif": true, "fi": true, "do": true,
	"done": true, "while": true, "until": true, "esac": true, "!": true, "coproc": true, "{": true, "}": true}

// headerWords start a command that runs nothing itself: for x in a b,
// case $x in, function f.
var headerWords = map[string]bool{"for": true, "case": true, "select": true, "function": true}

// privileged are the wrappers that run a command as someone else: an
// allow must name them as well as the command (sudo git is not git).
var privileged = map[string]bool{"sudo": true, "doas": true, "su": true, "runuser": true, "pkexec": true, "chroot": true}

// option is one option of a wrapper as given: "-u" or "--user", with
// its argument when it takes one.
type option struct {
	name  string
	value word
}

// parseOptions reads a wrapper's options from the front of words and
// returns them and the words after them ("--" ends them too).
func parseOptions(words []word, wr wrapper) (opts []option, rest []word) {
	i := 0
	for ; i < len(words); i++ {
		a := words[i].text
		if a == "--" {
			i++
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			break
		}
		if name, ok := strings.CutPrefix(a, "--"); ok {
			name, val, has := strings.Cut(name, "=")
			o := option{name: "--" + name, value: word{text: val, dynamic: words[i].dynamic}}
			if !has && slices.Contains(wr.longArgs, name) && i+1 < len(words) {
				i++
				o.value = words[i]
			}
			opts = append(opts, o)
			continue
		}
		for k := 1; k < len(a); k++ {
			o := option{name: "-" + a[k:k+1]}
			if strings.IndexByte(wr.argOpts, a[k]) >= 0 {
				if k+1 < len(a) {
					o.value = word{text: a[k+1:], dynamic: words[i].dynamic}
				} else if i+1 < len(words) {
					i++
					o.value = words[i]
				}
				opts = append(opts, o)
				break
			}
			opts = append(opts, o)
		}
	}
	return opts, words[i:]
}

// optionValue is the value of the first of opts named one of names.
func optionValue(opts []option, names ...string) (word, bool) {
	for _, o := range opts {
		if slices.Contains(names, o.name) {
			return o.value, true
		}
	}
	return word{}, false
}

// unwrap takes assignments and wrappers off the front of words and
// returns the command they run, the words as written from the first
// wrapper on (nil when there is none), the folder the command runs in,
// and whether it gets arguments the line does not show (xargs). What a
// wrapper runs as a line of its own (su -c, watch, script -c) goes to
// r.extra.
func (r *commandReader) unwrap(words []word, cwd string) (inner []word, outer []string, cmdCwd string, unknownArgs bool) {
	cmdCwd = cwd
	for steps := 0; len(words) > 0 && steps < 4*maxShellDepth; steps++ {
		if isAssignment(words[0].text) {
			r.env = append(r.env, words[0])
			words = words[1:]
			continue
		}
		if !words[0].dynamic && syntaxWords[words[0].text] {
			words = words[1:]
			continue
		}
		if !words[0].dynamic && headerWords[words[0].text] {
			return nil, outer, cmdCwd, false
		}
		name := commandName(words[0].text)
		wr, ok := wrappers[name]
		if !ok || words[0].dynamic {
			break
		}
		if outer == nil {
			outer = append([]string{name}, texts(words[1:])...)
		}
		r.privileged = r.privileged || privileged[name]
		opts, rest := parseOptions(words[1:], wr)
		if name == "busybox" || name == "toybox" {
			rest = words[1:] // the applet follows at once
		}
		if d, ok := optionValue(opts, "-C", "--chdir", "-D"); ok && name != "flock" {
			cmdCwd = ""
			if p := resolveWord(r.place, cwd, d); p.known {
				cmdCwd = p.abs
			}
		}
		switch name {
		case "env":
			if len(rest) > 0 && rest[0].text == "-" {
				rest = rest[1:] // env - is env -i
			}
			if s, ok := optionValue(opts, "-S", "--split-string"); ok {
				// env -S 'git push -f' runs those words.
				var split []word
				for _, f := range strings.Fields(s.text) {
					split = append(split, word{text: f, dynamic: s.dynamic})
				}
				rest = append(split, rest...)
			}
		case "su", "runuser", "flock":
			if name == "flock" && len(rest) > 1 {
				// flock FILE -c LINE: its options may follow the file.
				more, after := parseOptions(rest[1:], wr)
				opts, rest = append(opts, more...), append(rest[:1:1], after...)
			}
			if c, ok := optionValue(opts, "-c", "--command"); ok {
				r.line(c.text, c.dynamic, cmdCwd)
				return nil, outer, cmdCwd, false
			}
			if name == "su" {
				// A login shell, whose commands come from its input.
				r.extra = append(r.extra, subject{opaque: true})
				return nil, outer, cmdCwd, false
			}
		case "script":
			if c, ok := optionValue(opts, "-c", "--command"); ok {
				r.line(c.text, c.dynamic, cmdCwd)
			}
			// What is left is the typescript file, written.
			return nil, outer, cmdCwd, false
		case "watch":
			if _, exec := optionValue(opts, "-x", "--exec"); !exec {
				// watch runs its words through sh -c.
				dynamic := slices.ContainsFunc(rest, func(w word) bool { return w.dynamic })
				r.line(strings.Join(texts(rest), " "), dynamic, cmdCwd)
				return nil, outer, cmdCwd, false
			}
		case "taskset":
			if _, pid := optionValue(opts, "-p", "--pid"); pid {
				return nil, outer, cmdCwd, false
			}
		case "xargs":
			unknownArgs = true
			if len(rest) == 0 {
				rest = []word{{text: "echo"}}
			}
		}
		if wr.positional > len(rest) {
			return nil, outer, cmdCwd, unknownArgs
		}
		words = rest[wr.positional:]
	}
	return words, outer, cmdCwd, unknownArgs
}

// readFind judges what find runs (-exec, -execdir, -ok, -okdir) and
// deletes (-delete, judged as rm -r of its starting points), and returns
// the words that name files: the starting points and the expression's
// arguments.
func (r *commandReader) readFind(args []word, cwd string) []word {
	i := 0
	for i < len(args) && (args[i].text == "-H" || args[i].text == "-L" || args[i].text == "-P" || strings.HasPrefix(args[i].text, "-O")) {
		i++
	}
	if i < len(args) && args[i].text == "-D" {
		i += 2
	}
	start := i
	for i < len(args) && !strings.HasPrefix(args[i].text, "-") && args[i].text != "(" && args[i].text != "!" {
		i++
	}
	starts := args[start:min(i, len(args))]
	if len(starts) == 0 {
		starts = []word{{text: "."}}
	}
	var names []word
	names = append(names, starts...)
	for ; i < len(args); i++ {
		switch args[i].text {
		case "-delete":
			rm := append([]word{{text: "rm"}, {text: "-r"}}, starts...)
			r.extra = append(r.extra, rawCommand{words: rm}.subjects(r.place, &cwd, false, r.depth+1)...)
		case "-exec", "-execdir", "-ok", "-okdir":
			j := i + 1
			for j < len(args) && args[j].text != ";" && args[j].text != "+" {
				j++
			}
			// {} stands for the files found, under the starting points.
			var run []word
			if (j-i)*len(starts) > maxExpansions {
				r.extra = append(r.extra, subject{opaque: true})
				i = j
				continue
			}
			for _, w := range args[i+1 : j] {
				if !strings.Contains(w.text, "{}") {
					run = append(run, w)
					continue
				}
				for _, s := range starts {
					run = append(run, word{text: strings.ReplaceAll(w.text, "{}", s.text), dynamic: w.dynamic || s.dynamic, glob: s.glob, brace: s.brace})
				}
			}
			if r.depth < maxShellDepth && len(run) > 0 {
				c := cwd
				r.extra = append(r.extra, rawCommand{words: run}.subjects(r.place, &c, false, r.depth+1)...)
			} else if len(run) > 0 {
				r.extra = append(r.extra, subject{opaque: true})
			}
			i = j
		default:
			if !strings.HasPrefix(args[i].text, "-") {
				names = append(names, args[i])
			}
		}
	}
	return names
}
