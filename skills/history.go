package skills

import (
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/shogun-dev/shogun/store"
)

// mtask is a finished task prepared for mining.
type mtask struct {
	store.FinishedTask
	norm      string   // normalised title
	titleToks []string // folded title tokens, without repeats
	set       []int32  // title and body tokens, as sorted unique ids

	// Cut by cut when a group's sample first needs them, dropped after the
	// last such group (samples counts them down).
	cutDone                bool
	titleIDs               []int32
	bodyFrags, detailFrags []fragment
	filePaths              []string
	samples                int
}

// history is every finished task, in arrival order, with the token
// dictionary their sets and fragments are written in.
type history struct {
	tasks []*mtask
	// mu guards dict and freq after buildHistory, for cut on several
	// goroutines meeting a token no text had (it should not happen).
	mu   sync.RWMutex
	dict map[string]int32
	freq []int32 // task sets holding each token
	// workers, if set, is how many goroutines share the work, whatever
	// the size (for tests); 0 means workersFor.
	workers int
}

// minChunk is the fewest tasks worth a goroutine of their own.
const minChunk = 2000

// workersFor is how many goroutines share n tasks: one per CPU, each with
// at least minChunk tasks, unless h.workers says otherwise.
func (h *history) workersFor(n int) int {
	if h.workers > 0 {
		return h.workers
	}
	return max(1, min(runtime.GOMAXPROCS(0), n/minChunk))
}

// inChunks runs fn on w contiguous ranges of n items, each on its own
// goroutine, and waits for them. The ranges depend only on n and w.
func inChunks(n, w int, fn func(i, lo, hi int)) {
	size := (n + w - 1) / w
	var wg sync.WaitGroup
	for i := 0; i < w; i++ {
		lo, hi := min(n, i*size), min(n, (i+1)*size)
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(i, lo, hi)
		}()
	}
	wg.Wait()
}

// buildHistory prepares finished tasks (in arrival order) for mining:
// normalised titles, and every task's title and body as a set of token
// ids. The work is spread over the CPUs, each range of tasks with its own
// dictionary, merged at the end into one whose ids follow the byte order
// of the tokens, so the result does not depend on the number of CPUs.
// Tokens of report details are put in the dictionary too (in no task's
// set), so that cutting fragments only reads it. workers > 0 forces the
// number of goroutines (tests); 0 picks it from the size and the CPUs.
func buildHistory(fts []store.FinishedTask, workers int) *history {
	n := len(fts)
	h := &history{tasks: make([]*mtask, n), workers: workers}
	type local struct {
		dict  map[string]int32
		words []string
	}
	w := h.workersFor(n)
	locals := make([]local, w)
	inChunks(n, w, func(c, lo, hi int) {
		l := local{dict: map[string]int32{}}
		id := func(tok []byte) int32 {
			v, ok := l.dict[string(tok)]
			if !ok {
				v = int32(len(l.words))
				s := string(tok)
				l.dict[s] = v
				l.words = append(l.words, s)
			}
			return v
		}
		var buf []byte
		for i := lo; i < hi; i++ {
			t := &mtask{FinishedTask: fts[i]}
			tt := tokens(t.Title)
			t.norm = strings.Join(tt, " ")
			t.titleToks = uniqueStrings(tt)
			add := func(tok []byte) { t.set = append(t.set, id(tok)) }
			buf = eachToken(t.Title, buf, add)
			buf = eachToken(t.Body, buf, add)
			buf = eachToken(t.Details, buf, func(tok []byte) { id(tok) })
			h.tasks[i] = t
		}
		locals[c] = l
	})

	var words []string
	for _, l := range locals {
		words = append(words, l.words...)
	}
	slices.Sort(words)
	words = slices.Compact(words)
	h.dict = make(map[string]int32, len(words))
	for i, s := range words {
		h.dict[s] = int32(i)
	}

	freqs := make([][]int32, w)
	inChunks(n, w, func(c, lo, hi int) {
		remap := make([]int32, len(locals[c].words))
		for i, s := range locals[c].words {
			remap[i] = h.dict[s]
		}
		freq := make([]int32, len(words))
		for i := lo; i < hi; i++ {
			t := h.tasks[i]
			for k, v := range t.set {
				t.set[k] = remap[v]
			}
			slices.Sort(t.set)
			// A copy of the exact size: the set was built with repeats.
			t.set = append([]int32(nil), slices.Compact(t.set)...)
			for _, id := range t.set {
				freq[id]++
			}
		}
		freqs[c] = freq
	})
	h.freq = make([]int32, len(words))
	for _, f := range freqs {
		for i, c := range f {
			h.freq[i] += c
		}
	}
	return h
}

// commonTokenShare and commonTokenMin decide which tokens are too common to
// tell kinds of work apart: those in more than a tenth of the history, once
// that is over a hundred tasks. A checklist line that every command
// carries ("run the tests, update the changelog") would otherwise make
// unrelated tasks near-duplicates and chain them into one cluster.
const (
	commonTokenShare = 10
	commonTokenMin   = 100
)

// dropCommonTokens removes the too-common tokens from every task's set
// (not from titles: title groups compare whole titles).
func (h *history) dropCommonTokens() {
	limit := int32(max(commonTokenMin, len(h.tasks)/commonTokenShare))
	for _, t := range h.tasks {
		kept := t.set[:0]
		for _, id := range t.set {
			if h.freq[id] <= limit {
				kept = append(kept, id)
			}
		}
		t.set = kept
	}
}

// ids returns the token ids of s, sorted, without repeats. A token the
// dictionary lacks is added (in no task's set).
func (h *history) ids(s string) []int32 {
	var out []int32
	var missing []string
	h.mu.RLock()
	eachToken(s, nil, func(tok []byte) {
		if id, ok := h.dict[string(tok)]; ok {
			out = append(out, id)
		} else {
			missing = append(missing, string(tok))
		}
	})
	h.mu.RUnlock()
	if len(missing) > 0 {
		h.mu.Lock()
		for _, tok := range missing {
			id, ok := h.dict[tok]
			if !ok {
				id = int32(len(h.freq))
				h.dict[tok] = id
				h.freq = append(h.freq, 0)
			}
			out = append(out, id)
		}
		h.mu.Unlock()
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// cut cuts what distill needs of a task, once: its title's token ids, the
// fragments of its body and report details, and its file paths.
func (h *history) cut(t *mtask) *mtask {
	if t.cutDone {
		return t
	}
	t.titleIDs = h.ids(t.Title)
	t.bodyFrags = h.fragmentsOf(t.Body)
	t.detailFrags = h.fragmentsOf(t.Details)
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

// countSamples counts, for every task, the groups whose sample it is in,
// so that what cut made for it can be let go after the last one.
func (h *history) countSamples(groups []*group) {
	for _, g := range groups {
		for _, m := range sample(g.members) {
			h.tasks[m].samples++
		}
	}
}

// cutAhead cuts the sample tasks of groups that are not cut yet, spread
// over the CPUs, so that distill (one group after the other) finds them
// ready. Taking the groups a batch at a time bounds the memory the cuts
// hold.
func (h *history) cutAhead(groups []*group) {
	var need []*mtask
	seen := map[*mtask]bool{}
	for _, g := range groups {
		for _, m := range sample(g.members) {
			if t := h.tasks[m]; !t.cutDone && !seen[t] {
				seen[t] = true
				need = append(need, t)
			}
		}
	}
	inChunks(len(need), h.workersFor(len(need)), func(_, lo, hi int) {
		for _, t := range need[lo:hi] {
			h.cut(t)
		}
	})
}

// doneWithSample lets go of what cut made for t after the last group
// whose sample holds it: on a large history it would otherwise outgrow
// the history itself.
func (h *history) doneWithSample(t *mtask) {
	if t.samples--; t.samples <= 0 {
		t.cutDone, t.titleIDs, t.bodyFrags, t.detailFrags, t.filePaths = false, nil, nil, nil, nil
	}
}
