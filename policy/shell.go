package policy

import (
	"path/filepath"
	"strings"
)

// subject is what the rules look at in one simple command: its words,
// with wrappers (sudo, env, nohup …) and variable assignments taken off
// the front, and the paths it names (arguments and redirections).
type subject struct {
	words []string
	paths []pathArg
	// opaque: the line holds a command substitution, a backquote or
	// eval, whose effect no rule can see.
	opaque bool
}

// wrappers run the command that follows them; the rules judge that
// command.
var wrappers = map[string]bool{"sudo": true, "doas": true, "env": true, "nohup": true, "time": true,
	"command": true, "exec": true, "nice": true, "builtin": true}

// shells run their -c argument, which is judged as a line of its own.
var shells = map[string]bool{"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true}

// maxShellDepth bounds "bash -c 'bash -c …'".
const maxShellDepth = 4

// splitShell splits a command line, run in the role's working directory,
// into simple commands as a POSIX shell would: at ; & && || | newlines and parentheses, with quotes, backslashes
// and here-documents. It is not a shell: it errs on the side of judging
// more (the inside of $(…) is judged as a command of its own, and marks
// the whole line opaque).
func splitShell(line string, place Place) []subject {
	return splitDepth(line, place, place.Dir, 0)
}

func splitDepth(line string, place Place, cwd string, depth int) []subject {
	raw, opaque := tokenize(line)
	var out []subject
	for _, rc := range raw {
		out = append(out, rc.subjects(place, &cwd, opaque, depth)...)
	}
	if opaque {
		for i := range out {
			out[i].opaque = true
		}
	}
	return out
}

// word is one shell word, unquoted; dynamic when it holds an unquoted or
// double-quoted $ expansion, so its value is not known before it runs.
type word struct {
	text    string
	dynamic bool
}

// rawCommand is one simple command as tokenized: words and the targets
// of its redirections.
type rawCommand struct {
	words     []word
	redirects []word
}

// subjects turns a raw command into what the rules see, following cd and
// sh -c. cwd is the shell's directory, "" when unknown; it is updated by cd.
func (rc rawCommand) subjects(place Place, cwd *string, opaque bool, depth int) []subject {
	words := rc.words
	for len(words) > 0 {
		w := words[0].text
		switch {
		case isAssignment(w):
			words = words[1:]
			continue
		case wrappers[w]:
			words = words[1:]
			// Their own options (sudo -u root, env -i, nice -n 5) go too.
			for len(words) > 0 && (strings.HasPrefix(words[0].text, "-") || isAssignment(words[0].text)) {
				words = words[1:]
			}
			continue
		}
		break
	}
	s := subject{opaque: opaque}
	for _, w := range words {
		s.words = append(s.words, w.text)
	}
	for _, r := range rc.redirects {
		s.paths = append(s.paths, resolveWord(place, *cwd, r))
	}
	if len(words) == 0 {
		if len(s.paths) == 0 {
			return nil
		}
		return []subject{s}
	}
	name := filepath.Base(words[0].text)
	for _, w := range words[1:] {
		if strings.HasPrefix(w.text, "-") {
			continue
		}
		s.paths = append(s.paths, resolveWord(place, *cwd, w))
	}
	switch {
	case name == "cd" || name == "pushd":
		switch {
		case len(words) == 1 || words[1].text == "~":
			*cwd = place.Home
		case words[1].text == "-":
			*cwd = ""
		default:
			p := resolveWord(place, *cwd, words[1])
			*cwd = ""
			if p.known {
				*cwd = p.abs
			}
		}
	case name == "eval" || name == "source" || name == ".":
		s.opaque = true
	case shells[name]:
		for i := 1; i+1 < len(words); i++ {
			if words[i].text == "-c" || strings.HasPrefix(words[i].text, "-") && strings.HasSuffix(words[i].text, "c") && !strings.HasPrefix(words[i].text, "--") {
				if depth >= maxShellDepth || words[i+1].dynamic {
					s.opaque = true
					break
				}
				inner := splitDepth(words[i+1].text, place, *cwd, depth+1)
				return append([]subject{s}, inner...)
			}
		}
	}
	return []subject{s}
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

// tokenize splits line into raw commands; opaque reports a substitution
// or backquote anywhere in it.
func tokenize(line string) (cmds []rawCommand, opaque bool) {
	var (
		cur      rawCommand
		w        strings.Builder
		inWord   bool
		dynamic  bool
		redirect bool     // the next word is a redirection's target
		heredocs []string // delimiters of here-documents opened on this line
	)
	endWord := func() {
		if !inWord {
			return
		}
		wd := word{text: w.String(), dynamic: dynamic}
		if redirect {
			cur.redirects = append(cur.redirects, wd)
			redirect = false
		} else {
			cur.words = append(cur.words, wd)
		}
		w.Reset()
		inWord, dynamic = false, false
	}
	endCommand := func() {
		endWord()
		if len(cur.words) > 0 || len(cur.redirects) > 0 {
			cmds = append(cmds, cur)
		}
		cur = rawCommand{}
		redirect = false
	}
	rs := []rune(line)
	for i := 0; i < len(rs); i++ {
		c := rs[i]
		next := func(k int) rune {
			if i+k < len(rs) {
				return rs[i+k]
			}
			return 0
		}
		switch {
		case c == '\\':
			if i+1 < len(rs) {
				i++
				if rs[i] != '\n' {
					w.WriteRune(rs[i])
					inWord = true
				}
			}
		case c == '\'':
			inWord = true
			for i++; i < len(rs) && rs[i] != '\''; i++ {
				w.WriteRune(rs[i])
			}
		case c == '"':
			inWord = true
			for i++; i < len(rs) && rs[i] != '"'; i++ {
				switch {
				case rs[i] == '\\' && i+1 < len(rs) && strings.ContainsRune("\\\"$`\n", rs[i+1]):
					i++
					w.WriteRune(rs[i])
				case rs[i] == '`' || rs[i] == '$' && i+1 < len(rs) && rs[i+1] == '(':
					opaque, dynamic = true, true
					w.WriteRune(rs[i])
				case rs[i] == '$':
					dynamic = true
					w.WriteRune(rs[i])
				default:
					w.WriteRune(rs[i])
				}
			}
		case c == '$' && next(1) == '(' || c == '`' || (c == '<' || c == '>') && next(1) == '(':
			// The inside is split as commands of their own at the
			// parenthesis or backquote below.
			opaque = true
			if c == '$' {
				dynamic, inWord = true, true
				w.WriteRune(c)
			} else {
				endCommand()
				if c != '`' {
					i++ // the "(" of <( or >(
				}
			}
		case c == '$':
			dynamic, inWord = true, true
			w.WriteRune(c)
		case c == '\n':
			endCommand()
			if len(heredocs) > 0 {
				i = skipHeredocs(rs, i+1, heredocs) - 1
				heredocs = nil
			}
		case c == ';' || c == '&' || c == '|' || c == '(' || c == ')' || c == '{' && !inWord && (next(1) == ' ' || next(1) == '\n') || c == '}' && !inWord:
			if c == '&' && next(1) == '>' { // &> file
				endWord()
				i++
				if next(1) == '>' {
					i++
				}
				redirect = true
				continue
			}
			endCommand()
		case c == '<' && next(1) == '<':
			endWord()
			i++
			if next(1) == '<' { // <<< here-string: a word, not a file
				i++
				continue
			}
			if next(1) == '-' {
				i++
			}
			j := i + 1
			for j < len(rs) && (rs[j] == ' ' || rs[j] == '\t') {
				j++
			}
			k := j
			for k < len(rs) && !strings.ContainsRune(" \t\n;&|<>()", rs[k]) {
				k++
			}
			heredocs = append(heredocs, strings.Trim(string(rs[j:k]), `'"\`))
			i = k - 1
		case c == '>' || c == '<':
			// A number before it (2>) is the descriptor, not a word.
			if inWord && isDigits(w.String()) {
				w.Reset()
				inWord = false
			}
			endWord()
			if next(1) == '>' || next(1) == '|' {
				i++
			}
			if next(1) == '&' { // >&2: a descriptor
				i++
				for i+1 < len(rs) && (rs[i+1] >= '0' && rs[i+1] <= '9' || rs[i+1] == '-') {
					i++
				}
				continue
			}
			// An input file is read, not written: it is still a path
			// the command touches.
			redirect = true
		case c == ' ' || c == '\t' || c == '\r':
			endWord()
		case c == '#' && !inWord:
			for i < len(rs) && rs[i] != '\n' {
				i++
			}
			i--
		default:
			w.WriteRune(c)
			inWord = true
		}
	}
	endCommand()
	return cmds, opaque
}

// skipHeredocs returns the index after the here-documents that start at
// i, one per delimiter, each ending at a line that is its delimiter
// (leading tabs allowed, for <<-).
func skipHeredocs(rs []rune, i int, delims []string) int {
	for _, d := range delims {
		for i < len(rs) {
			end := i
			for end < len(rs) && rs[end] != '\n' {
				end++
			}
			line := strings.TrimLeft(string(rs[i:end]), "\t")
			i = end + 1
			if line == d {
				break
			}
		}
	}
	if i > len(rs) {
		return len(rs)
	}
	return i
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
