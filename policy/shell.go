package policy

import (
	"slices"
	"strconv"
	"strings"
)

// This file reads a shell line into simple commands: words, redirections
// and what is fed to each command's input. command.go turns each simple
// command into what the rules see.

// maxShellDepth bounds "bash -c 'bash -c …'", aliases that run aliases,
// and wrappers that run wrappers.
const maxShellDepth = 4

// splitShell splits a command line, run in the role's working directory,
// into simple commands as a POSIX shell would: at ; & && || | newlines and
// parentheses, with quotes (ANSI-C $'…' too), backslashes, here-strings
// and here-documents. It is not a shell: it errs on the side of judging
// more (the inside of $(…) is judged as a command of its own, and marks
// the whole line opaque).
func splitShell(line string, place Place) []subject {
	return splitDepth(line, place, place.Dir, 0)
}

func splitDepth(line string, place Place, cwd string, depth int) []subject {
	raw, opaque := tokenize(line)
	opaque = opaque || slices.ContainsFunc(raw, changesLaterCommands)
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

// changesLaterCommands reports a command that changes what the line's
// later commands run: an alias, or git's settings in the environment
// (export GIT_CONFIG_COUNT=1 …).
func changesLaterCommands(rc rawCommand) bool {
	if len(rc.words) == 0 {
		return false
	}
	switch commandName(rc.words[0].text) {
	case "alias":
		return true
	case "export", "declare", "typeset", "readonly", "local":
		return slices.ContainsFunc(rc.words[1:], func(w word) bool { return strings.HasPrefix(w.text, "GIT_") })
	}
	return false
}

// word is one shell word, unquoted.
type word struct {
	text string
	// dynamic: it holds an unquoted or double-quoted $ expansion, so its
	// value is not known before it runs.
	dynamic bool
	// glob: it holds an unquoted *, ? or [, which the shell expands to
	// the files that match; brace: an unquoted {, which it may expand
	// to several words ({a,b}, {1..3}).
	glob, brace bool
}

// input is text fed to a command's standard input by the line itself: a
// here-document's body or a here-string's word.
type input struct {
	text string
	// dynamic: expansions in it ($VAR, $(…)) are done before the command
	// reads it.
	dynamic bool
}

// rawCommand is one simple command as tokenized: words, the targets of
// its redirections and what the line feeds to its input.
type rawCommand struct {
	words     []word
	redirects []word
	inputs    []input
	// substitutions are the insides of $(…) and `…` in its unquoted
	// here-documents, which the shell runs first.
	substitutions []string
	// piped: its input comes from the command before it in a pipeline;
	// redirectedIn: from a file ("< file").
	piped, redirectedIn bool
}

// heredoc is a here-document opened on the current line, read after the
// line's end.
type heredoc struct {
	delim  string
	quoted bool // a quoted delimiter: the body is taken as written
	cmd    int  // the index its command has (or will have) in the list
}

// tokenize splits line into raw commands; opaque reports a substitution
// or backquote anywhere in it.
func tokenize(line string) (cmds []rawCommand, opaque bool) {
	var (
		cur        rawCommand
		w          strings.Builder
		inWord     bool
		cw         word // the flags of the word being read
		redirect   bool // the next word is a redirection's target
		herestring bool // the next word is a here-string
		heredocs   []heredoc
		pipeNext   bool // the next command reads the previous one's output
		holdsInput bool // cur has a here-document whose body comes later
	)
	endWord := func() {
		if !inWord {
			return
		}
		cw.text = w.String()
		switch {
		case herestring:
			cur.inputs = append(cur.inputs, input{text: cw.text, dynamic: cw.dynamic})
			herestring = false
		case redirect:
			cur.redirects = append(cur.redirects, cw)
			redirect = false
		default:
			cur.words = append(cur.words, cw)
		}
		w.Reset()
		inWord, cw = false, word{}
	}
	endCommand := func(pipe bool) {
		endWord()
		if len(cur.words) > 0 || len(cur.redirects) > 0 || len(cur.inputs) > 0 || holdsInput {
			cur.piped = pipeNext
			cmds = append(cmds, cur)
		}
		cur = rawCommand{}
		redirect, herestring, holdsInput = false, false, false
		pipeNext = pipe
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
		case c == '$' && next(1) == '\'':
			// ANSI-C quoting: $'\x67it' is "git".
			inWord = true
			i = readANSIC(rs, i+2, &w)
		case c == '\'':
			inWord = true
			for i++; i < len(rs) && rs[i] != '\''; i++ {
				w.WriteRune(rs[i])
			}
		case c == '"' || c == '$' && next(1) == '"':
			if c == '$' {
				i++ // $"…" is a translated "…"
			}
			inWord = true
			for i++; i < len(rs) && rs[i] != '"'; i++ {
				switch {
				case rs[i] == '\\' && i+1 < len(rs) && strings.ContainsRune("\\\"$`\n", rs[i+1]):
					i++
					w.WriteRune(rs[i])
				case rs[i] == '`' || rs[i] == '$' && i+1 < len(rs) && rs[i+1] == '(':
					opaque, cw.dynamic = true, true
					w.WriteRune(rs[i])
				case rs[i] == '$':
					cw.dynamic = true
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
				cw.dynamic, inWord = true, true
				w.WriteRune(c)
			} else {
				endCommand(false)
				if c != '`' {
					i++ // the "(" of <( or >(
				}
			}
		case c == '$':
			cw.dynamic, inWord = true, true
			w.WriteRune(c)
		case c == '\n':
			endCommand(false)
			if len(heredocs) > 0 {
				var bodies []string
				i, bodies = readHeredocs(rs, i+1, heredocs)
				i--
				for k, h := range heredocs {
					if h.cmd < len(cmds) {
						in := input{text: bodies[k], dynamic: !h.quoted && strings.Contains(bodies[k], "$")}
						cmds[h.cmd].inputs = append(cmds[h.cmd].inputs, in)
					}
					if subs := substitutions(bodies[k]); !h.quoted && len(subs) > 0 {
						// A substitution in the body runs before the
						// command does: judged as commands of their own.
						opaque = true
						if h.cmd < len(cmds) {
							cmds[h.cmd].substitutions = append(cmds[h.cmd].substitutions, subs...)
						}
					}
				}
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
			pipe := c == '|' && next(1) != '|'
			if c == '|' && next(1) == '&' { // |& pipes stderr too
				i++
			}
			if c == next(1) && (c == '|' || c == '&') {
				i++
			}
			endCommand(pipe)
		case c == '<' && next(1) == '<':
			endWord()
			i++
			if next(1) == '<' { // <<< word: a here-string, fed to the input
				i++
				herestring = true
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
			raw := string(rs[j:k])
			heredocs = append(heredocs, heredoc{delim: strings.Trim(raw, `'"\`), quoted: strings.ContainsAny(raw, `'"\`), cmd: len(cmds)})
			holdsInput = true
			i = k - 1
		case c == '>' || c == '<':
			// A number before it (2>) is the descriptor, not a word.
			if inWord && isDigits(w.String()) {
				w.Reset()
				inWord = false
			}
			endWord()
			if c == '<' {
				cur.redirectedIn = true
			}
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
			switch c {
			case '*', '?', '[':
				cw.glob = true
			case '{':
				cw.brace = true
			}
			w.WriteRune(c)
			inWord = true
		}
	}
	endCommand(false)
	return cmds, opaque
}

// readANSIC reads the inside of $'…' from i (after the quote) into w, with
// bash's escapes, and returns the index of the closing quote.
func readANSIC(rs []rune, i int, w *strings.Builder) int {
	simple := map[rune]rune{'n': '\n', 't': '\t', 'r': '\r', 'a': '\a', 'b': '\b', 'f': '\f', 'v': '\v',
		'e': 0x1b, 'E': 0x1b, '\\': '\\', '\'': '\'', '"': '"', '?': '?'}
	// digits reads up to max digits of base from i+1 on.
	digits := func(i, n, base int) (rune, int) {
		set := "01234567"
		if base == 16 {
			set = "0123456789abcdefABCDEF"
		}
		j := i + 1
		for j < len(rs) && j-i-1 < n && strings.ContainsRune(set, rs[j]) {
			j++
		}
		v, err := strconv.ParseUint(string(rs[i+1:j]), base, 32)
		if err != nil || j == i+1 {
			return -1, i
		}
		return rune(v), j - 1
	}
	for ; i < len(rs) && rs[i] != '\''; i++ {
		if rs[i] != '\\' || i+1 >= len(rs) {
			w.WriteRune(rs[i])
			continue
		}
		i++
		e := rs[i]
		if r, ok := simple[e]; ok {
			w.WriteRune(r)
			continue
		}
		var r rune = -1
		switch {
		case e == 'x':
			r, i = digits(i, 2, 16)
		case e == 'u':
			r, i = digits(i, 4, 16)
		case e == 'U':
			r, i = digits(i, 8, 16)
		case e >= '0' && e <= '7':
			r, i = digits(i-1, 3, 8)
		case e == 'c' && i+1 < len(rs):
			i++
			r = rs[i] & 0x1f
		}
		if r < 0 {
			w.WriteRune('\\')
			w.WriteRune(e)
			continue
		}
		w.WriteRune(r)
	}
	return i
}

// readHeredocs reads the here-documents that start at i, one per
// delimiter, each ending at a line that is its delimiter (leading tabs
// allowed, for <<-), and returns the index after them and their bodies.
func readHeredocs(rs []rune, i int, docs []heredoc) (int, []string) {
	bodies := make([]string, len(docs))
	for k, d := range docs {
		var body strings.Builder
		for i < len(rs) {
			end := i
			for end < len(rs) && rs[end] != '\n' {
				end++
			}
			line := strings.TrimLeft(string(rs[i:end]), "\t")
			i = end + 1
			if line == d.delim {
				break
			}
			body.WriteString(line)
			body.WriteByte('\n')
		}
		bodies[k] = body.String()
	}
	if i > len(rs) {
		return len(rs), bodies
	}
	return i, bodies
}

// substitutions are the insides of the $(…) and `…` in text.
func substitutions(text string) []string {
	var out []string
	for i := 0; i < len(text); i++ {
		switch {
		case text[i] == '\\':
			i++
		case text[i] == '`':
			end := strings.IndexByte(text[i+1:], '`')
			if end < 0 {
				return append(out, text[i+1:])
			}
			out = append(out, text[i+1:i+1+end])
			i += end + 1
		case text[i] == '$' && i+1 < len(text) && text[i+1] == '(':
			depth, j := 0, i+1
			for ; j < len(text); j++ {
				if text[j] == '(' {
					depth++
				} else if text[j] == ')' {
					depth--
					if depth == 0 {
						break
					}
				}
			}
			out = append(out, text[i+2:min(j, len(text))])
			i = j
		}
	}
	return out
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
