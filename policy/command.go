package policy

import (
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// subject is what the rules look at in one simple command: its words,
// read several ways, and the paths it names.
type subject struct {
	// views are readings of the command's words, the command by its
	// base name (/usr/bin/git is git): views[0] with wrappers,
	// assignments and git's global options taken off, as written; then
	// the same normalized where the command is known (git's flags split
	// and spelled out, a force push said as --force); then the line as
	// written with its wrappers when one of them changes who runs it
	// (sudo -u root git …). A deny or ask pattern needs one view to
	// match, an allow pattern every view, so that what a rule allows is
	// what will run.
	views [][]string
	// wrapped are readings only a deny or ask looks at: the command with
	// the wrappers that run it unchanged (timeout 5 git …, bash -c '…',
	// then …), which an allow of the command itself covers.
	wrapped [][]string
	// paths are the files the command names: its arguments (and the
	// values of --opt=PATH, key=PATH), its redirections, and where a
	// glob or brace word can lead.
	paths []pathArg
	// opaque: the line holds a command substitution, a backquote, eval,
	// a command given by a variable, or a shell reading a script the line
	// does not show, whose effect no rule can see.
	opaque bool
}

// withSubcommands are programs whose first argument names what they do
// (git config, go test, make build), not a file.
var withSubcommands = map[string]bool{"git": true, "go": true, "npm": true, "pnpm": true, "yarn": true, "npx": true,
	"cargo": true, "docker": true, "podman": true, "kubectl": true, "gh": true, "pip": true, "pip3": true,
	"uv": true, "apt": true, "apt-get": true, "brew": true, "systemctl": true, "make": true, "bun": true, "deno": true}

// commandName is the name a command is matched by: its base name, with
// Windows' .exe taken off.
func commandName(w string) string {
	name := filepath.Base(strings.ReplaceAll(w, `\`, "/"))
	if strings.HasSuffix(strings.ToLower(name), ".exe") {
		name = name[:len(name)-4]
	}
	return name
}

// commandReader turns one raw command into subjects.
type commandReader struct {
	place Place
	cwd   string // the shell's folder, "" when unknown
	depth int
	// extra are the subjects of what the command runs besides itself:
	// bash -c's line, find -exec's command, an alias's expansion.
	extra []subject
	// env are the NAME=value words given to the command (before it, or
	// to env).
	env []word
	// privileged: a wrapper runs the command as someone else.
	privileged bool
}

// line judges text as a line of shell run by the command, in folder cwd.
func (r *commandReader) line(text string, dynamic bool, cwd string) {
	if dynamic || r.depth >= maxShellDepth {
		r.extra = append(r.extra, subject{opaque: true})
		return
	}
	r.extra = append(r.extra, splitDepth(text, r.place, cwd, r.depth+1)...)
}

// subjects turns a raw command into what the rules see, following cd,
// wrappers and the commands it runs. cwd is the shell's directory, ""
// when unknown; it is updated by cd.
func (rc rawCommand) subjects(place Place, cwd *string, opaque bool, depth int) []subject {
	r := &commandReader{place: place, cwd: *cwd, depth: depth}
	s := subject{opaque: opaque}
	for _, w := range rc.redirects {
		s.paths = append(s.paths, r.pathsOf(w, *cwd, true)...)
	}
	redirected := s.paths
	for _, sub := range rc.substitutions {
		r.line(sub, false, *cwd)
	}
	mark := len(r.extra)
	words, outer, cmdCwd, unknownArgs := r.unwrap(rc.words, *cwd)
	env := r.env
	if len(words) == 0 {
		switch {
		case outer == nil:
		case len(r.extra) > mark && !r.privileged:
			// watch, script -c …: only the line they run is judged.
			r.through(mark, outer, false, s.paths)
			s.paths = nil
		default:
			s.views = [][]string{outer}
		}
		if len(s.views) == 0 && len(s.paths) == 0 {
			return r.extra
		}
		return append([]subject{s}, r.extra...)
	}
	if words[0].dynamic || words[0].glob || words[0].brace {
		// A command given by a variable or a pattern: which program
		// runs is not known.
		s.opaque = true
	}
	name := commandName(words[0].text)
	written := append([]string{name}, texts(words[1:])...)
	s.views = [][]string{written}
	args := words[1:]
	switch {
	case name == "git":
		g := r.readGit(words, cmdCwd, env)
		s.views = g.views
		s.opaque = s.opaque || g.opaque
		args = g.pathWords
	case name == "find":
		args = r.readFind(words[1:], cmdCwd)
	case shells[name]:
		if r.readShell(rc, words[1:], cmdCwd) {
			s.opaque = true
		}
		args = nil
		if len(r.extra) == mark {
			args = words[1:] // a script file
		}
	case name == "eval" || name == "source" || name == "." || name == "alias":
		s.opaque = true
	case name == "trap" && len(args) > 0:
		// trap 'LINE' SIGNAL runs LINE later.
		r.line(args[0].text, args[0].dynamic, cmdCwd)
		args = nil
	case name == "cmd" || name == "cmd.exe":
		// cmd /c LINE, on Windows.
		for i, a := range args {
			if strings.EqualFold(a.text, "/c") || strings.EqualFold(a.text, "/k") {
				dynamic := slices.ContainsFunc(args[i+1:], func(w word) bool { return w.dynamic })
				r.line(strings.Join(texts(args[i+1:]), " "), dynamic, cmdCwd)
				args = args[:i]
				break
			}
		}
	case name == "powershell" || name == "pwsh":
		if r.readPowerShell(args, cmdCwd) {
			s.opaque = true
		}
		args = nil
	case name == "echo" || name == "printf":
		args = nil // text, not files
	case awks[name]:
		// awk's program is a language of its own: system(), pipes,
		// getline and print > FILE run commands and touch files no rule
		// sees, so such a program is read like a script (never allowed).
		// The program is text, not a file.
		prog, opaque := awkProgram(args)
		s.opaque = s.opaque || opaque
		if prog >= 0 {
			args = append(args[:prog:prog], args[prog+1:]...)
		}
	case withSubcommands[name]:
		// The first argument that is not an option names an action.
		for i, w := range args {
			if !strings.HasPrefix(w.text, "-") {
				args = append(args[:i:i], args[i+1:]...)
				break
			}
		}
	}
	for _, w := range args {
		s.paths = append(s.paths, r.pathsOf(w, cmdCwd, false)...)
	}
	if unknownArgs {
		// xargs adds arguments that only its input knows.
		s.paths = append(s.paths, pathArg{})
	}
	if len(s.paths) == 0 {
		// A command that names no file works in its folder (make, ls):
		// where that is decides whether it is inside.
		s.paths = []pathArg{{}}
		if cmdCwd != "" {
			s.paths[0] = pathArg{abs: realPath(cmdCwd), known: true}
		}
	}
	if name == "cd" || name == "pushd" {
		*cwd = r.chdir(words, *cwd)
	}
	if (shells[name] || name == "trap" || name == "cmd" || name == "cmd.exe" || name == "powershell" || name == "pwsh") &&
		len(r.extra) > mark && !s.opaque {
		// A shell given its line is judged by that line: its commands,
		// with the shell as one more reading for a deny or an ask, and
		// the shell's redirections as their files.
		r.through(mark, s.views[0], false, redirected)
		if outer != nil {
			r.through(mark, outer, r.privileged, nil)
		}
		return r.extra
	}
	if outer != nil {
		if r.privileged {
			s.views = append(s.views, outer)
		} else {
			s.wrapped = append(s.wrapped, outer)
		}
	}
	return append([]subject{s}, r.extra...)
}

// through gives the subjects r.extra[from:], which a command runs, the
// command's words as a reading: one they must match too when full (sudo
// -u root bash -c …), else one only a deny or ask looks at (timeout 5
// bash -c …); and its paths (its redirections take their output).
func (r *commandReader) through(from int, view []string, full bool, paths []pathArg) {
	for i := from; i < len(r.extra); i++ {
		x := &r.extra[i]
		if full {
			x.views = append(x.views, view)
		} else {
			x.wrapped = append(x.wrapped, view)
		}
		x.paths = append(x.paths, paths...)
	}
}

// chdir is where cd words leads from cwd: "" when not known.
func (r *commandReader) chdir(words []word, cwd string) string {
	for len(words) > 1 && strings.HasPrefix(words[1].text, "-") && words[1].text != "-" {
		words = append(words[:1:1], words[2:]...) // cd -P dir
	}
	switch {
	case len(words) == 1 || words[1].text == "~":
		return r.place.Home
	case words[1].text == "-":
		return ""
	}
	if p := resolveWord(r.place, cwd, words[1]); p.known {
		return p.abs
	}
	return ""
}

// shells run a line of their own: their -c argument, a here-document or
// here-string, or what comes through a pipe.
var shells = map[string]bool{"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "mksh": true,
	"ash": true, "fish": true, "rbash": true}

// readShell judges what a shell runs; opaque reports that it reads a
// script the line does not show (a pipe, a file fed to its input).
func (r *commandReader) readShell(rc rawCommand, args []word, cwd string) (opaque bool) {
	hasC := false
	i := 0
	for ; i < len(args); i++ {
		a := args[i].text
		if a == "--" || a == "-" {
			i++
			break
		}
		if !strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "+") || a == "+" {
			break
		}
		if strings.HasPrefix(a, "--") {
			if a == "--rcfile" || a == "--init-file" {
				i++
			}
			continue
		}
		if strings.ContainsRune(a[1:], 'c') {
			hasC = true
		}
		if strings.HasSuffix(a, "o") || strings.HasSuffix(a, "O") {
			i++ // -o errexit
		}
	}
	switch {
	case hasC && i < len(args):
		r.line(args[i].text, args[i].dynamic, cwd)
		return false
	case hasC:
		return true
	case i < len(args):
		return false // a script file, which is a path
	}
	for _, in := range rc.inputs {
		r.line(in.text, in.dynamic, cwd)
	}
	return len(rc.inputs) == 0 && (rc.piped || rc.redirectedIn)
}

// readPowerShell judges the line PowerShell is given with -Command (or
// -c); opaque reports one it cannot read (-EncodedCommand, a script from
// its input).
func (r *commandReader) readPowerShell(args []word, cwd string) (opaque bool) {
	for i, a := range args {
		opt := strings.ToLower(a.text)
		switch {
		case strings.HasPrefix(opt, "-e") && strings.HasPrefix("-encodedcommand", opt):
			return true
		case opt == "-c" || len(opt) > 2 && strings.HasPrefix("-command", opt):
			dynamic := slices.ContainsFunc(args[i+1:], func(w word) bool { return w.dynamic })
			r.line(strings.Join(texts(args[i+1:]), " "), dynamic, cwd)
			return false
		case opt == "-":
			return true
		}
	}
	return false
}

// texts are the words' texts.
func texts(ws []word) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.text
	}
	return out
}

// isAssignment reports whether w is NAME=value.
func isAssignment(w string) bool {
	eq := strings.IndexByte(w, '=')
	if eq <= 0 {
		return false
	}
	for i, c := range w[:eq] {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// awks are the awk implementations.
var awks = map[string]bool{"awk": true, "gawk": true, "mawk": true, "nawk": true}

// awkEffects finds what an awk program does beyond printing: running a
// command (system, a pipe), reading a file or a command (getline), or
// printing into a file (print … > FILE).
var awkEffects = regexp.MustCompile(`\bsystem\s*\(|\|&?|\bgetline\b|\bprintf?\b[^;{}\n]*>`)

// awkProgram finds awk's program among its arguments (its index, -1 for
// none) and reports whether it is opaque: it does more than read its
// input files and print (an effect of awkEffects), or comes from a file
// (-f) or a variable.
func awkProgram(args []word) (int, bool) {
	for i := 0; i < len(args); i++ {
		a := args[i].text
		switch {
		case a == "--":
			if i+1 < len(args) {
				return i + 1, awkProgramOpaque(args[i+1])
			}
			return -1, false
		case strings.HasPrefix(a, "-f") || strings.HasPrefix(a, "--file") || strings.HasPrefix(a, "-E") ||
			strings.HasPrefix(a, "--exec") || strings.HasPrefix(a, "-e") || strings.HasPrefix(a, "--source"):
			return -1, true // a program file the line does not show, or gawk's -e/--source
		case a == "-v" || a == "-F":
			i++ // its value
		case strings.HasPrefix(a, "-"):
		default:
			return i, awkProgramOpaque(args[i])
		}
	}
	return -1, false
}

func awkProgramOpaque(w word) bool {
	return w.dynamic || awkEffects.MatchString(strings.ReplaceAll(w.text, "||", " "))
}
