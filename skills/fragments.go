package skills

import (
	"slices"
	"sort"
	"strings"
)

// fragment is one step-sized piece of a text: a list item, a line or a
// sentence, with its meaningful words as token ids so that fragments
// worded alike compare cheaply.
type fragment struct {
	text    string
	toks    []int32 // token ids, sorted, without repeats
	key     string  // toks as a map key
	pos     float64 // 0 at the start of its text, towards 1 at the end
	warning bool
}

// fragmentsOf cuts text into fragments: list items and the sentences of
// paragraphs, a paragraph's lines joined first (text wrapped by hand
// breaks sentences). It leaves out code blocks, headings, table rows,
// sentences that introduce a list ("Steps:"), and fragments of fewer than
// two meaningful words.
func (dict *tokDict) fragmentsOf(text string) []fragment {
	var raw []string
	var para strings.Builder
	flush := func() {
		if para.Len() > 0 {
			raw = appendSentences(raw, para.String())
			para.Reset()
		}
	}
	fence := false
	for len(text) > 0 {
		line := text
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			line, text = text[:i], text[i+1:]
		} else {
			text = ""
		}
		l := strings.TrimSpace(line)
		if strings.HasPrefix(l, "```") || strings.HasPrefix(l, "~~~") {
			flush()
			fence = !fence
			continue
		}
		if fence || l == "" || l[0] == '#' || l[0] == '|' {
			flush()
			continue
		}
		l = strings.TrimLeft(l, "> ")
		if item := stripListMarker(l); item != l {
			flush()
			l = item
		}
		if para.Len() > 0 {
			para.WriteByte(' ')
		}
		para.WriteString(l)
	}
	flush()
	out := make([]fragment, 0, len(raw))
	for i, s := range raw {
		if strings.HasSuffix(s, ":") {
			continue
		}
		toks := dict.ids(s)
		if len(toks) < 2 {
			continue
		}
		out = append(out, fragment{
			text: clip(s, 200), toks: toks, key: idsKey(toks),
			pos: float64(i) / float64(len(raw)), warning: isWarning(s),
		})
	}
	return out
}

// idsKey turns token ids into a string usable as a map key.
func idsKey(ids []int32) string {
	b := make([]byte, 0, 4*len(ids))
	for _, id := range ids {
		b = append(b, byte(id), byte(id>>8), byte(id>>16), byte(id>>24))
	}
	return string(b)
}

// sortStable sorts s stably by less.
func sortStable[T any](s []T, less func(a, b T) bool) {
	sort.SliceStable(s, func(i, j int) bool { return less(s[i], s[j]) })
}

// stripListMarker removes a list item's marker ("- ", "* ", "+ ", "• ",
// "1. ", "2) ") and a task box after it ("[ ] ", "[x] ").
func stripListMarker(l string) string {
	out := l
	for _, m := range []string{"- ", "* ", "+ ", "• "} {
		if strings.HasPrefix(out, m) {
			out = strings.TrimSpace(out[len(m):])
			break
		}
	}
	if out == l {
		i := 0
		for i < len(l) && i < 3 && l[i] >= '0' && l[i] <= '9' {
			i++
		}
		if i > 0 && i+1 < len(l) && (l[i] == '.' || l[i] == ')') && l[i+1] == ' ' {
			out = strings.TrimSpace(l[i+2:])
		}
	}
	for _, box := range []string{"[ ] ", "[x] ", "[X] "} {
		if strings.HasPrefix(out, box) {
			return strings.TrimSpace(out[len(box):])
		}
	}
	return out
}

// appendSentences cuts a line after ". ", "! " or "? " followed by a
// capital.
func appendSentences(out []string, line string) []string {
	start := 0
	for i := 0; i+2 < len(line); i++ {
		c := line[i]
		if (c == '.' || c == '!' || c == '?') && line[i+1] == ' ' && line[i+2] >= 'A' && line[i+2] <= 'Z' {
			out = append(out, strings.TrimSpace(line[start:i+1]))
			start = i + 2
		}
	}
	if s := strings.TrimSpace(line[start:]); s != "" {
		out = append(out, s)
	}
	return out
}

// Words that mark a sentence as a warning, a pitfall to list apart: one
// word, or two in a row.
var (
	warningWords = map[string]bool{"avoid": true, "careful": true, "carefully": true, "beware": true, "pitfall": true,
		"pitfalls": true, "gotcha": true, "never": true, "warning": true, "caution": true, "otherwise": true, "dont": true}
	warningPairs = map[[2]string]bool{{"do", "not"}: true, {"don", "t"}: true, {"must", "not"}: true, {"mustn", "t"}: true,
		{"watch", "out"}: true, {"note", "that"}: true, {"remember", "to"}: true}
)

// isWarning reports whether s holds a warning word or pair, whole words,
// in any case.
func isWarning(s string) bool {
	prev := ""
	found := false
	var buf [32]byte
	for i := 0; i < len(s) && !found; {
		if !asciiWordByte(s[i]) && s[i] != '\'' {
			i++
			continue
		}
		j := i
		w := buf[:0]
		for j < len(s) && asciiWordByte(s[j]) {
			c := s[j]
			if c >= 'A' && c <= 'Z' {
				c += 'a' - 'A'
			}
			if len(w) < cap(w) {
				w = append(w, c)
			}
			j++
		}
		if j == i { // an apostrophe
			i++
			continue
		}
		word := string(w)
		found = warningWords[word] || warningPairs[[2]string{prev, word}]
		prev = word
		i = j
	}
	return found
}

// fragStat is a fragment as it recurs across a group's sample.
type fragStat struct {
	toks   []int32
	texts  []wording
	tasks  []int // sample positions of the tasks it is in, ascending
	first  int   // order of first appearance
	posSum float64
	posN   int
}

// wording is one way a fragment was written, and how often.
type wording struct {
	text string
	n    int
}

func (s *fragStat) add(text string) {
	for i := range s.texts {
		if s.texts[i].text == text {
			s.texts[i].n++
			return
		}
	}
	s.texts = append(s.texts, wording{text, 1})
}

// text is the most used wording (the first in byte order on a tie).
func (s *fragStat) text() string {
	best := s.texts[0]
	for _, w := range s.texts[1:] {
		if w.n > best.n || (w.n == best.n && w.text < best.text) {
			best = w
		}
	}
	return best.text
}

// fragmentStats are the fragments of a group's sample: steps from the task
// bodies, outcomes from the report details, and warnings from either.
type fragmentStats struct {
	steps, outcomes, warnings []*fragStat
}

// fragments gathers the fragments of the sample's bodies and report
// details, leaving out those that only restate the task's title.
func (d *distiller) fragments() fragmentStats {
	type bucket struct {
		byKey map[string]*fragStat
		order []*fragStat
	}
	var buckets [3]bucket // steps, outcomes, warnings
	for i := range buckets {
		buckets[i].byKey = map[string]*fragStat{}
	}
	n := 0
	for ti, t := range d.tasks {
		d.cut(t)
		title := idsKey(t.titleIDs)
		for src, frags := range [][]fragment{t.bodyFrags, t.detailFrags} {
			for _, f := range frags {
				if f.key == title {
					continue
				}
				b := &buckets[src]
				if f.warning {
					b = &buckets[2]
				}
				s := b.byKey[f.key]
				if s == nil {
					s = &fragStat{toks: f.toks, first: n}
					n++
					b.byKey[f.key] = s
					b.order = append(b.order, s)
				}
				s.add(f.text)
				if len(s.tasks) == 0 || s.tasks[len(s.tasks)-1] != ti {
					s.tasks = append(s.tasks, ti)
				}
				s.posSum += f.pos
				s.posN++
			}
		}
	}
	return fragmentStats{
		steps:    mergeSimilar(buckets[0].order),
		outcomes: mergeSimilar(buckets[1].order),
		warnings: mergeSimilar(buckets[2].order),
	}
}

// mergeSimilar folds fragments worded slightly differently (token sets at
// least 70% alike) into the one found in most tasks, when there are few
// enough to compare pairwise. The result is in order of first appearance.
func mergeSimilar(stats []*fragStat) []*fragStat {
	if len(stats) > 400 {
		return stats
	}
	sorted := append([]*fragStat(nil), stats...)
	sortStable(sorted, func(a, b *fragStat) bool { return len(a.tasks) > len(b.tasks) })
	var kept []*fragStat
	for _, s := range sorted {
		var into *fragStat
		for _, k := range kept {
			if jaccard(k.toks, s.toks) >= 0.7 {
				into = k
				break
			}
		}
		if into == nil {
			kept = append(kept, s)
			continue
		}
		for _, w := range s.texts {
			for i := 0; i < w.n; i++ {
				into.add(w.text)
			}
		}
		into.tasks = unionSorted(into.tasks, s.tasks)
		into.posSum += s.posSum
		into.posN += s.posN
		into.first = min(into.first, s.first)
	}
	sortStable(kept, func(a, b *fragStat) bool { return a.first < b.first })
	return kept
}

// recurring keeps the fragments found in at least min tasks, in the order
// they tend to come in their texts.
func recurring(stats []*fragStat, min int) []*fragStat {
	var out []*fragStat
	for _, s := range stats {
		if len(s.tasks) >= min {
			out = append(out, s)
		}
	}
	sortStable(out, func(a, b *fragStat) bool {
		pa, pb := a.posSum/float64(a.posN), b.posSum/float64(b.posN)
		if pa != pb {
			return pa < pb
		}
		return a.first < b.first
	})
	return out
}

// tokDict numbers the tokens of one group's texts, so that fragments
// compare as sets of numbers.
type tokDict struct{ m map[string]int32 }

func newTokDict() *tokDict { return &tokDict{m: map[string]int32{}} }

// ids returns the token numbers of s, sorted, without repeats.
func (dict *tokDict) ids(s string) []int32 {
	var out []int32
	eachToken(s, nil, func(tok []byte) {
		id, ok := dict.m[string(tok)]
		if !ok {
			id = int32(len(dict.m))
			dict.m[string(tok)] = id
		}
		out = append(out, id)
	})
	slices.Sort(out)
	return slices.Compact(out)
}

// cut cuts what distill needs of a task, once: its title's token numbers,
// the fragments of its body and report details, and its file paths.
func (d *distiller) cut(t *stask) *stask {
	if t.cutDone {
		return t
	}
	t.titleIDs = d.dict.ids(t.Title)
	t.bodyFrags = d.dict.fragmentsOf(t.Body)
	t.detailFrags = d.dict.fragmentsOf(t.Details)
	seen := map[string]bool{}
	t.filePaths = []string{}
	for _, list := range [][]string{t.Files, paths(t.Body), paths(t.Details)} {
		for _, p := range list {
			p = strings.TrimPrefix(strings.Trim(strings.TrimSpace(p), "`'\""), "./")
			if p != "" && !seen[p] {
				seen[p] = true
				t.filePaths = append(t.filePaths, p)
			}
		}
	}
	t.cutDone = true
	return t
}

// unionSorted merges two ascending lists without repeats.
func unionSorted(a, b []int) []int {
	out := make([]int, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j >= len(b) || (i < len(a) && a[i] < b[j]):
			out = append(out, a[i])
			i++
		case i >= len(a) || b[j] < a[i]:
			out = append(out, b[j])
			j++
		default:
			out = append(out, a[i])
			i++
			j++
		}
	}
	return out
}
