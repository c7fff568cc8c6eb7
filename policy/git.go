package policy

import (
	"slices"
	"strings"
)

// This file reads a git command the way git will run it: its global
// options taken off (-c, -C, --git-dir, --no-pager …), aliases given on
// the command line expanded, and its flags spelled out, so that a rule
// written "git push * --force" matches "git -C . push -fq", "git push
// --forc" and "git push --mirror".

// gitGlobalArgs are git's options before the subcommand that take the
// next word as their argument.
var gitGlobalArgs = map[string]bool{"-c": true, "-C": true, "--git-dir": true, "--work-tree": true,
	"--namespace": true, "--super-prefix": true, "--config-env": true, "--attr-source": true, "--list-cmds": true}

// maxAliasDepth bounds aliases that name aliases.
const maxAliasDepth = 16

// gitFlags are the options of a git subcommand that matter to a rule.
type gitFlags struct {
	long  []string          // long option names, without "--"
	short map[byte]string   // short option → its long name
	arg   string            // short options that take an argument
	imply map[string]string // a long option → one it implies
}

// gitSubcommands are the subcommands whose flags are spelled out: those
// that can throw work away or rewrite history.
var gitSubcommands = map[string]gitFlags{
	"push": {
		long: []string{"all", "branches", "mirror", "delete", "tags", "follow-tags", "dry-run", "porcelain", "force",
			"force-with-lease", "force-if-includes", "no-force-with-lease", "no-force-if-includes", "atomic", "no-atomic",
			"signed", "no-signed", "push-option", "receive-pack", "exec", "repo", "set-upstream", "thin", "no-thin",
			"quiet", "verbose", "progress", "no-progress", "prune", "verify", "no-verify", "recurse-submodules",
			"no-recurse-submodules", "ipv4", "ipv6"},
		short: map[byte]string{'f': "force", 'q': "quiet", 'v': "verbose", 'u': "set-upstream", 'd': "delete", 'n': "dry-run", 'o': "push-option", '4': "ipv4", '6': "ipv6"},
		arg:   "o",
		imply: map[string]string{"mirror": "force"},
	},
	"reset": {
		long:  []string{"hard", "soft", "mixed", "merge", "keep", "quiet", "no-quiet", "patch", "intent-to-add", "pathspec-from-file", "pathspec-file-nul", "recurse-submodules", "no-recurse-submodules", "refresh", "no-refresh"},
		short: map[byte]string{'q': "quiet", 'p': "patch", 'N': "intent-to-add"},
	},
	"clean": {
		long:  []string{"force", "dry-run", "quiet", "interactive", "exclude"},
		short: map[byte]string{'f': "force", 'n': "dry-run", 'q': "quiet", 'i': "interactive", 'e': "exclude", 'd': "", 'x': "", 'X': ""},
		arg:   "e",
	},
	"checkout": {
		long:  []string{"force", "quiet", "ours", "theirs", "track", "no-track", "detach", "orphan", "merge", "patch", "ignore-other-worktrees", "overwrite-ignore", "no-overwrite-ignore", "conflict", "progress", "no-progress", "recurse-submodules", "no-recurse-submodules", "pathspec-from-file", "pathspec-file-nul", "guess", "no-guess", "ignore-skip-worktree-bits"},
		short: map[byte]string{'f': "force", 'q': "quiet", 'b': "", 'B': "", 'l': "", 'm': "merge", 'p': "patch", 't': "track"},
		arg:   "bB",
	},
	"branch": {
		long:  []string{"delete", "force", "move", "copy", "list", "all", "remotes", "verbose", "quiet", "track", "no-track", "set-upstream-to", "unset-upstream", "edit-description", "contains", "no-contains", "merged", "no-merged", "show-current", "create-reflog", "column", "no-column", "sort", "points-at", "format", "color", "no-color", "ignore-case", "abbrev", "no-abbrev", "recurse-submodules", "omit-empty"},
		short: map[byte]string{'d': "delete", 'D': "delete", 'f': "force", 'm': "move", 'M': "move", 'c': "copy", 'C': "copy", 'l': "list", 'a': "all", 'r': "remotes", 'v': "verbose", 'q': "quiet", 't': "track", 'u': "set-upstream-to", 'i': "ignore-case"},
		arg:   "u",
		imply: map[string]string{},
	},
	"commit": {
		long:  []string{"all", "patch", "reuse-message", "reedit-message", "fixup", "squash", "reset-author", "short", "branch", "porcelain", "long", "null", "file", "author", "date", "message", "template", "signoff", "no-signoff", "trailer", "no-verify", "verify", "allow-empty", "allow-empty-message", "cleanup", "edit", "no-edit", "amend", "no-post-rewrite", "include", "only", "pathspec-from-file", "pathspec-file-nul", "untracked-files", "verbose", "quiet", "dry-run", "status", "no-status", "gpg-sign", "no-gpg-sign"},
		short: map[byte]string{'a': "all", 'p': "patch", 'C': "reuse-message", 'c': "reedit-message", 'F': "file", 'm': "message", 't': "template", 's': "signoff", 'n': "no-verify", 'e': "edit", 'i': "include", 'o': "only", 'u': "untracked-files", 'v': "verbose", 'q': "quiet", 'z': "null", 'S': "gpg-sign"},
		arg:   "CcFmt",
	},
}

// gitRead is a git command as git will run it.
type gitRead struct {
	views     [][]string
	pathWords []word // the words that name files
	opaque    bool   // a setting runs a program no rule sees
}

// readGit reads words (words[0] is git); an alias given with -c is
// expanded, and a shell alias ("!…") judged as a line of its own.
func (r *commandReader) readGit(words []word, cwd string, env []word) gitRead {
	var g gitRead
	config := gitEnvConfig(env, &g.opaque)
	for round := 0; ; round++ {
		i := 1
		for ; i < len(words); i++ {
			a := words[i].text
			if a == "--" {
				i++
				break
			}
			if !strings.HasPrefix(a, "-") {
				break
			}
			name, val, has := strings.Cut(a, "=")
			if !has && gitGlobalArgs[name] && i+1 < len(words) {
				i++
				val = words[i].text
			}
			v := word{text: val, dynamic: words[i].dynamic}
			switch name {
			case "-c":
				key, value, _ := strings.Cut(v.text, "=")
				config[strings.ToLower(key)] = word{text: value, dynamic: v.dynamic}
			case "--config-env":
				key, _, _ := strings.Cut(v.text, "=")
				config[strings.ToLower(key)] = word{dynamic: true} // the value is in the environment
			case "-C", "--git-dir", "--work-tree":
				g.pathWords = append(g.pathWords, v)
			case "--exec-path":
				// git push runs DIR/git-push.
				g.opaque = g.opaque || has
			}
		}
		for key, v := range config {
			if gitRunsProgram(key) || v.dynamic && strings.HasPrefix(key, "alias.") {
				g.opaque = true
			}
		}
		if i >= len(words) {
			g.views = [][]string{{"git"}}
			return g
		}
		sub, args := words[i].text, words[i+1:]
		alias, isAlias := config["alias."+strings.ToLower(sub)]
		if isAlias && round >= maxAliasDepth {
			// An alias of an alias … deeper than is followed: what
			// runs is not known.
			g.opaque = true
		}
		if isAlias && round < maxAliasDepth {
			if line, ok := strings.CutPrefix(alias.text, "!"); ok {
				// A shell alias runs its line with the arguments after it.
				for _, a := range args {
					line += " " + shellQuote(a.text)
				}
				r.line(line, alias.dynamic || slices.ContainsFunc(args, func(w word) bool { return w.dynamic }), cwd)
			} else {
				expanded := []word{{text: "git"}}
				for _, f := range strings.Fields(alias.text) {
					expanded = append(expanded, word{text: f})
				}
				words = append(expanded, args...)
				continue
			}
		}
		written := append([]string{"git", sub}, texts(args)...)
		g.views = [][]string{written}
		if norm := normalizeGit(sub, args); !slices.Equal(norm, written) {
			g.views = append(g.views, norm)
		}
		if sub == "config" {
			// Keys and values, not files; only --file names one.
			for k, a := range args {
				if f, ok := strings.CutPrefix(a.text, "--file="); ok {
					g.pathWords = append(g.pathWords, word{text: f, dynamic: a.dynamic})
				} else if (a.text == "-f" || a.text == "--file") && k+1 < len(args) {
					g.pathWords = append(g.pathWords, args[k+1])
				}
			}
		} else {
			g.pathWords = append(g.pathWords, args...)
		}
		return g
	}
}

// gitEnvConfig reads the settings a command's environment gives git
// (GIT_CONFIG_COUNT with GIT_CONFIG_KEY_n and GIT_CONFIG_VALUE_n, as -c
// does); *opaque is set by variables that make git run a program or
// read settings no rule sees.
func gitEnvConfig(env []word, opaque *bool) map[string]word {
	config := map[string]word{}
	vals := map[string]word{}
	for _, w := range env {
		name, val, _ := strings.Cut(w.text, "=")
		vals[name] = word{text: val, dynamic: w.dynamic}
		switch {
		case name == "GIT_CONFIG_PARAMETERS", name == "GIT_CONFIG", name == "GIT_CONFIG_GLOBAL", name == "GIT_CONFIG_SYSTEM",
			name == "GIT_EXEC_PATH", name == "GIT_TEMPLATE_DIR", name == "GIT_EXTERNAL_DIFF", name == "GIT_PROXY_COMMAND",
			strings.HasPrefix(name, "GIT_SSH"), strings.HasSuffix(name, "EDITOR"), strings.HasSuffix(name, "PAGER"),
			strings.HasSuffix(name, "ASKPASS"):
			*opaque = true
		}
	}
	for name, key := range vals {
		n, ok := strings.CutPrefix(name, "GIT_CONFIG_KEY_")
		if !ok {
			continue
		}
		config[strings.ToLower(key.text)] = vals["GIT_CONFIG_VALUE_"+n]
		if key.dynamic {
			*opaque = true
		}
	}
	return config
}

// gitRunsProgram reports whether a -c setting makes git run a program
// of its value (core.pager, core.sshCommand, a filter …).
func gitRunsProgram(key string) bool {
	for _, p := range []string{"filter.", "pager.", "include.", "includeif.", "protocol.", "credential", "difftool.", "mergetool.", "merge.", "gpg.", "core.hookspath", "core.fsmonitor", "core.sshcommand", "core.pager", "core.editor", "core.askpass", "core.gitproxy", "core.alternaterefscommand", "sequence.editor", "diff.external", "uploadpack.", "remote."} {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	for _, s := range []string{".command", ".cmd", ".program", ".textconv", ".driver", ".helper", ".receivepack", ".uploadpack"} {
		if strings.HasSuffix(key, s) {
			return true
		}
	}
	return false
}

// normalizeGit spells out a subcommand's flags: combined short flags
// split (-fq is -f -q), each with its long name (-f --force), a long
// option's abbreviation with every option it may stand for (--forc is
// --force, --force-with-lease and --force-if-includes), and what an
// option implies (push --mirror and a +refspec force).
func normalizeGit(sub string, args []word) []string {
	out := []string{"git", sub}
	fl, known := gitSubcommands[sub]
	if !known {
		return append(out, texts(args)...)
	}
	force := false
	emitLong := func(name, val string) {
		long := fl.long
		var cands []string
		if slices.Contains(long, name) {
			cands = []string{name}
		} else {
			for _, l := range long {
				if strings.HasPrefix(l, name) {
					cands = append(cands, l)
				}
			}
		}
		if len(cands) == 0 {
			cands = []string{name}
		}
		for _, c := range cands {
			out = append(out, "--"+c+val)
			for s, l := range fl.short {
				if l == c && s != 'D' && s != 'M' && s != 'C' {
					out = append(out, "-"+string(s))
				}
			}
			if fl.imply[c] == "force" {
				force = true
			}
		}
	}
	for k := 0; k < len(args); k++ {
		a := args[k].text
		switch {
		case a == "--":
			out = append(out, texts(args[k:])...)
			k = len(args)
		case strings.HasPrefix(a, "--") && len(a) > 2:
			name, val, has := strings.Cut(a[2:], "=")
			if has {
				val = "=" + val
			}
			emitLong(name, val)
		case strings.HasPrefix(a, "-") && len(a) > 1:
			for c := 1; c < len(a); c++ {
				out = append(out, "-"+a[c:c+1])
				if l := fl.short[a[c]]; l != "" {
					out = append(out, "--"+l)
				}
				if sub == "branch" && (a[c] == 'D' || a[c] == 'M' || a[c] == 'C') {
					out = append(out, "--force") // -D is --delete --force
				}
				if strings.IndexByte(fl.arg, a[c]) >= 0 {
					if c+1 < len(a) {
						out = append(out, a[c+1:])
					} else if k+1 < len(args) {
						k++
						out = append(out, args[k].text)
					}
					break
				}
			}
		default:
			out = append(out, a)
			if sub == "push" && strings.HasPrefix(a, "+") {
				force = true
			}
		}
	}
	if force {
		out = append(out, "--force", "-f")
	}
	return out
}

// shellQuote quotes s for a shell line.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
