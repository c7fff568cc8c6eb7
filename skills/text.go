package skills

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxNameLength and MaxDescriptionLength are the Agent Skills limits.
const (
	MaxNameLength        = 64
	MaxDescriptionLength = 1024
)

var nameRe = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// ValidName reports why name is not a valid Agent Skills name, or nil: 1–64
// characters of lowercase letters, digits and single hyphens, neither first
// nor last.
func ValidName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("skill name is empty")
	case len(name) > MaxNameLength:
		return fmt.Errorf("skill name %q is %d characters, over %d", name, len(name), MaxNameLength)
	case !nameRe.MatchString(name):
		return fmt.Errorf("skill name %q must be lowercase letters, digits and single hyphens, not starting or ending with one", name)
	}
	return nil
}

// ValidDescription reports why description is not a valid Agent Skills
// description, or nil: 1–1024 characters, not blank.
func ValidDescription(description string) error {
	switch n := utf8.RuneCountInString(description); {
	case strings.TrimSpace(description) == "":
		return fmt.Errorf("skill description is empty")
	case n > MaxDescriptionLength:
		return fmt.Errorf("skill description is %d characters, over %d", n, MaxDescriptionLength)
	}
	return nil
}

// Slug makes a valid name from free text: lowercase ASCII letters and
// digits, everything else a single hyphen, at most 64 characters cut at a
// hyphen. It returns "" when nothing usable is left (text in another
// script, say).
func Slug(s string) string {
	var b strings.Builder
	hyphen := false
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			if hyphen && b.Len() > 0 {
				b.WriteByte('-')
			}
			hyphen = false
			b.WriteRune(r)
		default:
			if f, ok := latinFold[r]; ok {
				if hyphen && b.Len() > 0 {
					b.WriteByte('-')
				}
				hyphen = false
				b.WriteString(f)
				continue
			}
			hyphen = true
		}
	}
	return cutName(b.String(), MaxNameLength)
}

// cutName shortens a valid name to at most n characters, at a hyphen when
// there is one.
func cutName(name string, n int) string {
	if len(name) <= n {
		return name
	}
	name = name[:n]
	if i := strings.LastIndexByte(name, '-'); i > 0 {
		name = name[:i]
	}
	return strings.Trim(name, "-")
}

// latinFold spells common accented letters in ASCII for names.
var latinFold = map[rune]string{
	'à': "a", 'á': "a", 'â': "a", 'ä': "a", 'ã': "a", 'å': "a", 'æ': "ae", 'ç': "c",
	'è': "e", 'é': "e", 'ê': "e", 'ë': "e", 'ì': "i", 'í': "i", 'î': "i", 'ï': "i",
	'ñ': "n", 'ò': "o", 'ó': "o", 'ô': "o", 'ö': "o", 'õ': "o", 'ø': "o", 'œ': "oe",
	'ù': "u", 'ú': "u", 'û': "u", 'ü': "u", 'ý': "y", 'ÿ': "y", 'ß': "ss",
}

// shortHash is a stable short name for text that gives no slug.
func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:4])
}

// word is a word of a text, as written, with its byte offsets.
type word struct {
	text       string
	start, end int
}

// splitWords cuts text into words: runs of letters and digits (an
// apostrophe inside a word ends it). A run of Han, Hiragana or Katakana,
// which has no spaces, is cut into overlapping pairs of characters, so
// that similar Japanese text shares words.
func splitWords(s string) []word {
	var out []word
	start := -1
	cjk := false
	flush := func(end int) {
		if start < 0 {
			return
		}
		if cjk {
			out = appendBigrams(out, s[start:end], start)
		} else {
			out = append(out, word{text: s[start:end], start: start, end: end})
		}
		start = -1
	}
	for i, r := range s {
		isCJK := unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Katakana, r)
		isWord := unicode.IsLetter(r) || unicode.IsDigit(r)
		switch {
		case !isWord:
			flush(i)
		case start >= 0 && isCJK != cjk:
			flush(i)
			start, cjk = i, isCJK
		case start < 0:
			start, cjk = i, isCJK
		}
	}
	flush(len(s))
	return out
}

func appendBigrams(out []word, run string, offset int) []word {
	var idx []int
	for i := range run {
		idx = append(idx, i)
	}
	idx = append(idx, len(run))
	if len(idx) <= 2 {
		return append(out, word{text: run, start: offset, end: offset + len(run)})
	}
	for i := 0; i+2 < len(idx); i++ {
		out = append(out, word{text: run[idx[i]:idx[i+2]], start: offset + idx[i], end: offset + idx[i+2]})
	}
	return out
}

// fold turns a word into the token that compares across tasks, or "" for a
// word that says nothing about the kind of work: stop words, numbers,
// single ASCII characters. Case is folded and an English plural s dropped,
// so "Tests" and "test" match.
func fold(w string) string {
	w = strings.ToLower(w)
	if len(w) == 1 && w[0] < utf8.RuneSelf {
		return ""
	}
	digits := true
	for i := 0; i < len(w); i++ {
		if w[i] < '0' || w[i] > '9' {
			digits = false
			break
		}
	}
	if digits || stopWords[w] {
		return ""
	}
	if n := len(w); n > 3 && w[n-1] == 's' && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is") {
		w = w[:n-1]
	}
	return w
}

// eachToken calls fn with every folded token of s, in order, as fold
// would give them. The slice passed to fn is reused: copy it to keep it.
// ASCII text, the common case, is tokenised without allocating.
func eachToken[T string | []byte](s T, buf []byte, fn func(tok []byte)) []byte {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			for _, w := range splitWords(string(s)) {
				if t := fold(w.text); t != "" {
					buf = append(buf[:0], t...)
					fn(buf)
				}
			}
			return buf
		}
	}
	for i := 0; i < len(s); {
		if !asciiWordByte(s[i]) {
			i++
			continue
		}
		j := i
		buf = buf[:0]
		for ; j < len(s) && asciiWordByte(s[j]); j++ {
			buf = append(buf, lowerWord[s[j]])
		}
		i = j
		if tok := foldASCII(buf); tok != nil {
			fn(tok)
		}
	}
	return buf
}

// asciiWordByte reports whether c is an ASCII letter or digit.
func asciiWordByte(c byte) bool { return lowerWord[c] != 0 }

// foldASCII is fold for a lower-case ASCII word, in place; nil for none.
func foldASCII(w []byte) []byte {
	if len(w) <= 1 {
		return nil
	}
	digits := true
	for _, c := range w {
		if c < '0' || c > '9' {
			digits = false
			break
		}
	}
	if digits || (len(w) <= maxStopWord && isStopIn(&stopTable, hashToken(w), w)) {
		return nil
	}
	if n := len(w); n > 3 && w[n-1] == 's' && !(w[n-2] == 's' || (w[n-2] == 'u' || w[n-2] == 'i')) {
		return w[:n-1]
	}
	return w
}

// tokens returns the folded tokens of s, in order, repeats kept.
func tokens(s string) []string {
	var out []string
	eachToken(s, nil, func(tok []byte) { out = append(out, string(tok)) })
	return out
}

// uniqueStrings drops repeats, keeping the first of each.
func uniqueStrings(s []string) []string {
	out := make([]string, 0, len(s))
	seen := make(map[string]bool, len(s))
	for _, v := range s {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// normTitle is a title with case, punctuation, numbers and stop words
// folded: "Fix flaky test #123." and "fix the flaky tests" both give
// "fix flaky test".
func normTitle(title string) string {
	norm, _ := appendNormTitle(nil, title, nil)
	return string(norm)
}

// appendNormTitle appends normTitle(title) to dst, with buf as eachToken's:
// without a string a token, for the million titles of a full scan.
func appendNormTitle(dst []byte, title string, buf []byte) ([]byte, []byte) {
	start := len(dst)
	buf = eachToken(title, buf, func(tok []byte) {
		if len(dst) > start {
			dst = append(dst, ' ')
		}
		dst = append(dst, tok...)
	})
	return dst, buf
}

// stopWords are English words that carry no meaning of their own in a task
// title or body.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an the and or but nor so yet to of in on at by for from with without into
onto upon as is are was were be been being am it its it's this that these those there here
please pls also then than too very just only again still even such some any all each every both either neither
can could should would will shall may might must do does did doing done have has had having
not no yes our ours your yours my mine we you i me us them they he she him his her hers their theirs
when where which who whom whose what how why if else while until unless because since
more most less least much many few other another same own
up down out over under about above below after before between through during
via per etc eg ie e.g i.e let lets let's make sure`) {
		m[w] = true
	}
	return m
}()

// maxStopWord is the length of the longest stop word: longer words need
// no lookup.
var maxStopWord = func() int {
	n := 0
	for w := range stopWords {
		n = max(n, len(w))
	}
	return n
}()

// pathExts are the extensions that make a lone word a file name.
var pathExts = func() map[string]bool {
	m := map[string]bool{}
	for _, e := range strings.Fields(`go ts tsx js jsx mjs py rb rs java kt swift c h cc cpp hpp cs php sh ps1 md
yaml yml json toml ini sql css scss html vue svelte tf proto lock mod sum txt env`) {
		m[e] = true
	}
	return m
}()

// paths returns the file paths mentioned in text, in order, without
// repeats: words with a slash (a/b/c.ext, ./x, dir/), words ending in a
// known extension (main.go), Makefile and Dockerfile. URLs are not paths.
func paths(text string) []string {
	var out []string
	var seen map[string]bool
	for len(text) > 0 {
		i := strings.IndexAny(text, " \t\n\r")
		f := text
		if i >= 0 {
			f, text = text[:i], text[i+1:]
		} else {
			text = ""
		}
		if strings.IndexByte(f, '/') < 0 && strings.IndexByte(f, '.') < 0 && !strings.Contains(f, "file") {
			continue
		}
		p := strings.TrimRight(strings.Trim(f, "`'\"()[]{}<>,;:!?"), ".")
		if !isPath(p) {
			continue
		}
		if seen == nil {
			seen = map[string]bool{}
		}
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

func isPath(p string) bool {
	switch {
	case len(p) < 2 || strings.Contains(p, "://") || strings.HasPrefix(p, "//") || strings.ContainsAny(p, "=@*$%&|\\"):
		return false
	case p == "Makefile" || p == "Dockerfile" || strings.HasSuffix(p, "/Makefile") || strings.HasSuffix(p, "/Dockerfile"):
		return true
	}
	letters := false
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			letters = true
		case c >= '0' && c <= '9' || c == '/' || c == '.' || c == '_' || c == '-':
		default:
			return false
		}
	}
	if !letters {
		return false
	}
	if strings.Contains(p, "/") {
		// A slash between names ("web/src", "api/handlers/"), not "and/or",
		// "N/A" or "I/O".
		longest := 0
		for _, seg := range strings.Split(p, "/") {
			longest = max(longest, len(seg))
		}
		return longest >= 2 && p != "and/or" && p != "or/and"
	}
	if dot := strings.LastIndexByte(p, '.'); dot > 0 {
		return pathExts[strings.ToLower(p[dot+1:])]
	}
	return false
}

// oneLine collapses whitespace, so text fits on one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// clip shortens s to at most n characters, at a word boundary when one is
// near, marking the cut with an ellipsis.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)[:n-1]
	cut := string(r)
	if i := strings.LastIndexByte(cut, ' '); i > len(cut)*2/3 {
		cut = cut[:i]
	}
	return strings.TrimRight(cut, " ,;:-") + "…"
}

// upperFirst and lowerFirst change the first letter only.
func upperFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
}

func lowerFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 {
		return s
	}
	// Keep acronyms ("CI", "API") as written.
	if r2, _ := utf8.DecodeRuneInString(s[n:]); unicode.IsUpper(r2) {
		return s
	}
	return string(unicode.ToLower(r)) + s[n:]
}
