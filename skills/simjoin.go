package skills

import (
	"cmp"
	"math"
	"math/bits"
	"runtime"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// unionFind is a disjoint-set forest over item indexes.
type unionFind []int32

func newUnionFind(n int) unionFind {
	u := make(unionFind, n)
	for i := range u {
		u[i] = int32(i)
	}
	return u
}

func (u unionFind) find(x int32) int32 {
	for u[x] != x {
		u[x] = u[u[x]] // path halving
		x = u[x]
	}
	return x
}

// union joins the sets of a and b, the smaller index becoming the root, so
// that roots do not depend on the order of unions.
func (u unionFind) union(a, b int32) int32 {
	ra, rb := u.find(a), u.find(b)
	if ra == rb {
		return ra
	}
	if rb < ra {
		ra, rb = rb, ra
	}
	u[rb] = ra
	return ra
}

// sharedUnionFind is a disjoint-set forest that goroutines join and read
// at once, without a lock (path halving and linking by compare-and-swap,
// as in Anderson and Woll). As in unionFind, the smaller index becomes
// the root, so the forest's sets, and their roots, do not depend on the
// order the goroutines came in.
type sharedUnionFind []int32

func newSharedUnionFind(n int) sharedUnionFind { return sharedUnionFind(newUnionFind(n)) }

func (u sharedUnionFind) find(x int32) int32 {
	for {
		p := atomic.LoadInt32(&u[x])
		if p == x {
			return x
		}
		gp := atomic.LoadInt32(&u[p])
		if gp != p {
			atomic.CompareAndSwapInt32(&u[x], p, gp) // halving: lost races are harmless
		}
		x = gp
	}
}

func (u sharedUnionFind) union(a, b int32) {
	for {
		ra, rb := u.find(a), u.find(b)
		if ra == rb {
			return
		}
		if rb < ra {
			ra, rb = rb, ra
		}
		// rb stays a root only if nobody linked it meanwhile; else again.
		if atomic.CompareAndSwapInt32(&u[rb], rb, ra) {
			return
		}
	}
}

// clusterSimilar connects every two sets whose Jaccard similarity is at
// least t and returns the union-find of the result: single-link clusters,
// exactly (no sampling). Each set must be sorted, without repeats; sets of
// fewer than two tokens are never connected. freq gives each token's
// number of sets, to order the tokens rarest first; nil means the token
// numbers already are in that order.
func clusterSimilar(sets [][]int32, freq []int32, t float64, progress func(done, total int)) unionFind {
	if freq != nil {
		order := make([]int32, len(freq))
		for i := range order {
			order[i] = int32(i)
		}
		sort.Slice(order, func(a, b int) bool {
			fa, fb := freq[order[a]], freq[order[b]]
			if fa != fb {
				return fa < fb
			}
			return order[a] < order[b]
		})
		rank := make([]int32, len(freq))
		for r, tok := range order {
			rank[tok] = int32(r)
		}
		ranked := make([][]int32, len(sets))
		for i, s := range sets {
			r := make([]int32, len(s))
			for j, tok := range s {
				r[j] = rank[tok]
			}
			slices.Sort(r)
			ranked[i] = r
		}
		sets = ranked
	}
	return clusterRanked(func(i int) []int32 { return sets[i] }, len(sets), t, 0, progress)
}

// overlapFloor is the fewest tokens two sets of n and at least m tokens
// share when their Jaccard similarity is at least t.
func overlapFloor(t float64, n, m int) int {
	return int(math.Ceil(t*float64(n+m)/(1+t) - 1e-9))
}

// clusterRanked is clusterSimilar over sets whose token numbers rank them
// rarest first.
//
// It is a prefix-filtering similarity join (AllPairs, PPJoin). Identical
// sets are joined at once and the distinct ones taken shortest first;
// two sets at least t alike share at least a = ceil(t(|x|+|y|)/(1+t))
// tokens, so the first |x|-a+k tokens of x and of y hold at least k of the
// shared ones, for k up to a. A set is indexed under the first tokens of
// it that a longer one needs, and looks up those of its first tokens a
// shorter one needs; only the sets found under k = 2 of them (1 when
// fewer are shared) are compared. On a large history most tokens of a set
// are rare words, which another set shares one of by chance but seldom
// two, so few pairs are compared that are not alike. The lookups of the
// sets are independent, so they run on all CPUs. workers > 0 forces how
// many goroutines share them.
func clusterRanked(set func(i int) []int32, n int, t float64, workers int, progress func(done, total int)) unionFind {
	return clusterRankedList(set, n, t, workers, rareList, pairBudget, progress)
}

// clusterRankedList is clusterRanked with the most sets a rare token may
// index, and the most entries of the pair index held at once, given
// (tests).
func clusterRankedList(set func(i int) []int32, n int, t float64, workers, rareMax, budget int, progress func(done, total int)) unionFind {
	uf := newUnionFind(n)
	if n == 0 || t <= 0 || t > 1 {
		return uf
	}
	// Identical sets: sorted by a hash of their tokens, then compared.
	type hashed struct {
		h uint64
		i int32
	}
	forced := workers > 0
	if !forced {
		workers = max(1, min(cpus(), n/4000))
	}
	hs := make([]hashed, n)
	inParallel(n, workers, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			if s := set(i); len(s) >= 2 {
				hs[i] = hashed{hashSet(s), int32(i)}
			} else {
				hs[i] = hashed{i: -1}
			}
		}
	})
	hs = slices.DeleteFunc(hs, func(e hashed) bool { return e.i < 0 })
	// Sorted on two CPUs: split by the hash's top bit, each half apart.
	byHash := func(a, b hashed) int {
		if a.h != b.h {
			return cmp.Compare(a.h, b.h)
		}
		return cmp.Compare(a.i, b.i)
	}
	low := 0
	for k := range hs {
		if hs[k].h < 1<<63 {
			hs[low], hs[k] = hs[k], hs[low]
			low++
		}
	}
	halves := [][]hashed{hs[:low], hs[low:]}
	inParallel(2, min(workers, 2), func(_, lo, hi int) {
		for _, half := range halves[lo:hi] {
			slices.SortFunc(half, byHash)
		}
	})
	var distinct []int32
	for a := 0; a < len(hs); {
		b := a
		for b < len(hs) && hs[b].h == hs[a].h {
			b++
		}
		first := len(distinct)
		for _, e := range hs[a:b] {
			found := false
			for _, d := range distinct[first:] {
				if slices.Equal(set(int(d)), set(int(e.i))) {
					uf.union(d, e.i)
					found = true
					break
				}
			}
			if !found {
				distinct = append(distinct, e.i)
			}
		}
		a = b
	}
	hs = nil
	// Shortest first, then by index; the rest of the join speaks of places
	// in this order. A counting sort by length: sorting took a tenth of a
	// second at a million sets.
	distinct = byLength(distinct, n, func(i int32) int { return len(set(int(i))) })
	m := len(distinct)
	if m == 0 {
		return uf // no set of two tokens or more: nothing to compare
	}
	if !forced {
		workers = max(1, min(cpus(), m/2000))
	}
	j := &join{set: set, distinct: distinct, t: t, rareMax: rareMax, workers: workers}
	j.build()
	// The pair index is built and probed a range of first tokens at a
	// time, holding at most budget entries: on a long history the whole
	// of it took more memory than the sets themselves. A pair of sets is
	// a candidate when it shares k rare tokens (the first pass) or one
	// pair (whichever pass holds its first token), so the passes find the
	// candidates one pass over the whole index would.
	parts := j.pairRanges(budget)
	var (
		done   atomic.Int64
		joined = newSharedUnionFind(m)
		counts = make([][]uint8, workers)
	)
	total := m * max(1, len(parts))
	var stop chan struct{}
	var pw sync.WaitGroup
	if progress != nil {
		stop = make(chan struct{})
		pw.Add(1)
		go func() {
			defer pw.Done()
			for {
				progress(int(done.Load()), total)
				select {
				case <-stop:
					return
				case <-waitTick():
				}
			}
		}()
	}
	for p := 0; p == 0 || p < len(parts); p++ {
		var r [2]int32
		if len(parts) > 0 {
			r = parts[p]
			j.indexPairs(r[0], r[1])
		}
		var (
			wg  sync.WaitGroup
			cur atomic.Int64
		)
		for w := range workers {
			if counts[w] == nil {
				counts[w] = make([]uint8, m)
			}
			wg.Add(1)
			go func(count []uint8) {
				defer wg.Done()
				j.probe(count, &cur, p == 0, r, joined, &done)
			}(counts[w])
		}
		wg.Wait()
	}
	j.pairEntries = nil
	if progress != nil {
		close(stop)
		pw.Wait()
		progress(total, total)
	}
	for p := range int32(m) {
		if r := joined.find(p); r != p {
			uf.union(distinct[r], distinct[p])
		}
	}
	return uf
}

// byLength returns items (distinct numbers below n) ordered by length,
// then by number.
func byLength(items []int32, n int, length func(i int32) int) []int32 {
	in := make([]bool, n)
	for _, i := range items {
		in[i] = true
	}
	var at []int32 // by length: where the next item of that length goes
	for _, i := range items {
		l := length(i)
		for len(at) <= l+1 {
			at = append(at, 0)
		}
		at[l+1]++
	}
	for l := 1; l < len(at); l++ {
		at[l] += at[l-1]
	}
	out := make([]int32, len(items))
	for i := range int32(n) {
		if in[i] {
			l := length(i)
			out[at[l]] = i
			at[l]++
		}
	}
	return out
}

// cpus is how many goroutines share a full scan's work.
func cpus() int { return max(1, runtime.GOMAXPROCS(0)) }

// inParallel calls fn with ranges that split [0, n) among workers
// goroutines, and returns when all are done: the serial parts of a join
// over a long history took as long as its probes.
func inParallel(n, workers int, fn func(w, lo, hi int)) {
	if workers <= 1 || n < workers {
		fn(0, 0, n)
		return
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(w, n*w/workers, n*(w+1)/workers)
		}()
	}
	wg.Wait()
}

// pairBudget is the most entries of the similarity join's pair index held
// at once (8 bytes each).
const pairBudget = 1 << 21

// join is the state of a similarity join: the distinct sets, shortest
// first, and the index of their first tokens.
type join struct {
	set      func(i int) []int32
	distinct []int32
	t        float64
	rareMax  int

	workers    int
	places     []placeInfo
	pre        []int32  // the sets' first tokens, by place (prefix)
	preOff     []uint32 // where each place's first tokens start in pre
	maxLen     int
	firstOfLen []int32 // firstOfLen[l]: the first place of a set of l tokens or more
	maxTok     int32
	pairs      bool // every pair of sets needs two shared tokens
	isRare     []bool
	start      []int32 // rare tokens: where their places start in entries
	entries    []int32
	// The pairs of the current range of first tokens (the rarer): under
	// each, the second token and the place in one number, sorted.
	pairFirst   []int32
	pairEntries []uint64
	pairCount   []int32   // by first token: the pairs under it
	workerPairs [][]int32 // the same, of each goroutine's places
}

// placeInfo is what the probes read of a set they found, together: read
// from three arrays, each candidate cost three misses of the CPU's caches.
type placeInfo struct {
	sketch sketch // of its tokens, which tells most sets that cannot be alike apart
	length int32
	k      uint8 // how many first tokens a longer set must share with it
}

func (j *join) setAt(p int32) []int32 { return j.set(int(j.distinct[p])) }

// indexLen is how many first tokens a set of l tokens is indexed under,
// and how many of them it must share with a set at least as long.
func (j *join) indexLen(l int) (int, int) {
	o := overlapFloor(j.t, l, l)
	k := min(2, o)
	return l - o + k, k
}

// probeLen is the same for a set looking up those shorter than it.
func (j *join) probeLen(l int) (int, int) {
	o := int(math.Ceil(j.t*float64(l) - 1e-9))
	k := min(2, o)
	return l - o + k, k
}

// build makes the index of the rare tokens, the sketches, and counts the
// pairs under each first token.
func (j *join) build() {
	m := len(j.distinct)
	j.places = make([]placeInfo, m)
	j.preOff = make([]uint32, m+1)
	maxTok := make([]int32, j.workers)
	inParallel(m, j.workers, func(w, lo, hi int) {
		for p := lo; p < hi; p++ {
			s := j.setAt(int32(p))
			j.places[p].length = int32(len(s))
			_, k := j.indexLen(len(s))
			j.places[p].k = uint8(k)
			pp, _ := j.probeLen(len(s))
			j.preOff[p+1] = uint32(pp)
			maxTok[w] = max(maxTok[w], s[len(s)-1])
		}
	})
	j.maxLen = int(j.places[m-1].length) // shortest first
	j.maxTok = slices.Max(maxTok)
	for p := range m {
		j.preOff[p+1] += j.preOff[p]
	}
	// The first tokens of the sets, one after the other in the order of
	// their places: the probes read them once a range of pairs, and
	// reading them where the sets are took a miss of the CPU's caches
	// each. A sketch of each set tells most candidates that cannot be
	// alike apart without reading their sets.
	j.pre = make([]int32, j.preOff[m])
	inParallel(m, j.workers, func(_, lo, hi int) {
		var orders []uint64
		for p := lo; p < hi; p++ {
			s := j.setAt(int32(p))
			copy(j.prefix(int32(p)), s)
			orders = orders[:0]
			for _, tok := range s {
				orders = append(orders, uint64(tok))
			}
			j.places[p].sketch = sketchOf(orders)
		}
	})
	j.firstOfLen = make([]int32, j.maxLen+2)
	for l, p := 0, 0; l <= j.maxLen+1; l++ {
		for p < m && int(j.places[p].length) < l {
			p++
		}
		j.firstOfLen[l] = int32(p)
	}
	// Sets are found under their first tokens; a frequent token (in many
	// sets' first tokens) would make long lists to read, so when two shared
	// tokens are needed, a frequent token is only looked up paired with
	// another of the set's first tokens: the first two tokens two sets
	// share are both rare (found under each), or make a pair one of them is
	// frequent in (found under the pair).
	j.pairs = j.t > 0.5
	count := make([]int32, j.maxTok+2)
	for p := range int32(m) {
		for _, tok := range j.indexed(p) {
			count[tok+1]++
		}
	}
	j.isRare = make([]bool, j.maxTok+1)
	for tok := range j.isRare {
		j.isRare[tok] = !j.pairs || int(count[tok+1]) <= j.rareMax
	}
	j.start = make([]int32, j.maxTok+2)
	for tok := int32(0); tok <= j.maxTok; tok++ {
		j.start[tok+1] = j.start[tok]
		if j.isRare[tok] {
			j.start[tok+1] += count[tok+1]
		}
	}
	j.entries = make([]int32, j.start[len(j.start)-1])
	next := append([]int32(nil), j.start[:len(j.start)-1]...)
	for p := range int32(m) {
		for _, tok := range j.indexed(p) {
			if j.isRare[tok] {
				j.entries[next[tok]] = p
				next[tok]++
			}
		}
	}
	if j.pairs {
		// Counted by the goroutines that fill the pair index, each over
		// its own places: each fills its own part of each bucket.
		j.pairCount = make([]int32, j.maxTok+1)
		j.workerPairs = make([][]int32, j.workers)
		inParallel(m, j.workers, func(w, lo, hi int) {
			count := make([]int32, j.maxTok+1)
			j.eachPair(int32(lo), int32(hi), 0, j.maxTok+1, func(a, _ int32, _ int32) { count[a]++ })
			j.workerPairs[w] = count
		})
		for _, count := range j.workerPairs {
			for tok, c := range count {
				j.pairCount[tok] += c
			}
		}
	}
}

// prefix is the first tokens of the set at place p that it looks up (the
// first of them are those it is indexed under).
func (j *join) prefix(p int32) []int32 { return j.pre[j.preOff[p]:j.preOff[p+1]] }

// indexed is the first tokens of the set at place p that it is indexed
// under.
func (j *join) indexed(p int32) []int32 {
	ip, _ := j.indexLen(int(j.places[p].length))
	return j.prefix(p)[:ip]
}

// eachPair calls fn with every pair of the first tokens of a set at a
// place in [from, to) that is looked up as a pair (one of them frequent)
// whose first token is in [lo, hi), and the set's place.
func (j *join) eachPair(from, to, lo, hi int32, fn func(a, b int32, p int32)) {
	for p := from; p < to; p++ {
		pre := j.indexed(p)
		for x, tok := range pre {
			if tok < lo {
				continue
			}
			if tok >= hi {
				break
			}
			for _, tok2 := range pre[x+1:] {
				if !j.isRare[tok] || !j.isRare[tok2] {
					fn(tok, tok2, p)
				}
			}
		}
	}
}

// pairRanges splits the first tokens into ranges whose pairs number at
// most budget each (or hold one token); none when no pairs are looked up.
func (j *join) pairRanges(budget int) [][2]int32 {
	if !j.pairs {
		return nil
	}
	var out [][2]int32
	lo, n := int32(0), 0
	for tok := int32(0); tok <= j.maxTok; tok++ {
		c := int(j.pairCount[tok])
		if n > 0 && n+c > budget {
			out = append(out, [2]int32{lo, tok})
			lo, n = tok, 0
		}
		n += c
	}
	return append(out, [2]int32{lo, j.maxTok + 1})
}

// indexPairs builds the pair index of the first tokens in [lo, hi).
func (j *join) indexPairs(lo, hi int32) {
	j.pairFirst = make([]int32, hi-lo+1)
	n := 0
	for tok := lo; tok < hi; tok++ {
		n += int(j.pairCount[tok])
		j.pairFirst[tok-lo+1] = int32(n)
	}
	if cap(j.pairEntries) >= n {
		j.pairEntries = j.pairEntries[:n]
	} else {
		j.pairEntries = make([]uint64, n)
	}
	inParallel(len(j.distinct), j.workers, func(w, from, to int) {
		// This goroutine's part of each bucket follows those of the
		// goroutines before it.
		fill := append([]int32(nil), j.pairFirst[:len(j.pairFirst)-1]...)
		for _, count := range j.workerPairs[:w] {
			for tok := lo; tok < hi; tok++ {
				fill[tok-lo] += count[tok]
			}
		}
		j.eachPair(int32(from), int32(to), lo, hi, func(a, b int32, p int32) {
			j.pairEntries[fill[a-lo]] = uint64(uint32(b))<<32 | uint64(uint32(p))
			fill[a-lo]++
		})
	})
	// Each bucket is in place order already (each goroutine filled its
	// part in order, after those of the goroutines before it): a stable
	// sort by second token finishes it, by radix rather than comparisons.
	tokBits := bits.Len32(uint32(j.maxTok))
	inParallel(int(hi-lo), j.workers, func(_, from, to int) {
		var tmp []uint64
		for k := from; k < to; k++ {
			tmp = sortBySecond(j.pairEntries[j.pairFirst[k]:j.pairFirst[k+1]], tmp, tokBits)
		}
	})
}

// sortBySecond sorts pair entries (second token << 32 | place) that are in
// place order by their second token, of at most tokBits bits, keeping the
// place order among equal ones; tmp is scratch, returned for the next.
func sortBySecond(b, tmp []uint64, tokBits int) []uint64 {
	if len(b) < 256 {
		slices.Sort(b)
		return tmp
	}
	if cap(tmp) < len(b) {
		tmp = make([]uint64, len(b))
	}
	src, dst := b, tmp[:len(b)]
	for shift := 32; shift < 32+tokBits; shift += 8 {
		var at [257]int
		for _, e := range src {
			at[int(byte(e>>shift))+1]++
		}
		for d := 1; d < len(at); d++ {
			at[d] += at[d-1]
		}
		for _, e := range src {
			d := byte(e >> shift)
			dst[at[d]] = e
			at[d]++
		}
		src, dst = dst, src
	}
	if &src[0] != &b[0] {
		copy(b, src)
	}
	return tmp
}

// probe looks up, for each place taken from cur, the shorter sets it may
// be alike through the rare tokens' index (if rare) and the pairs whose
// first token is in r, and joins those alike. count is the caller's, all
// zero, and left so: a byte a place, which stays in the CPU's caches
// where four did not, for only whether a count reached k (at most 2)
// matters, and counts stop short of overflowing.
func (j *join) probe(count []uint8, cur *atomic.Int64, rare bool, r [2]int32, joined sharedUnionFind, done *atomic.Int64) {
	const chunk = 256
	m := int64(len(j.distinct))
	t := j.t
	var (
		touched []int32
		need    []int
	)
	hit := func(py int32, n uint8) {
		c := count[py]
		if c == 0 {
			touched = append(touched, py)
		}
		if c < math.MaxUint8-2 {
			count[py] = c + n
		}
	}
	for {
		lo := cur.Add(chunk) - chunk
		if lo >= m {
			return
		}
		hi := min(m, lo+chunk)
		for px := int32(lo); px < int32(hi); px++ {
			lx := int(j.places[px].length)
			pp, kx := j.probeLen(lx)
			minLen := int(math.Ceil(t*float64(lx) - 1e-9))
			from := j.firstOfLen[min(minLen, j.maxLen+1)]
			pre := j.prefix(px)[:pp]
			// The overlap a set of each length from minLen to lx needs.
			need = need[:0]
			for ly := minLen; ly <= lx; ly++ {
				need = append(need, overlapFloor(t, lx, ly))
			}
			for a, tok := range pre {
				if rare && j.isRare[tok] {
					list := j.entries[j.start[tok]:j.start[tok+1]]
					k, _ := slices.BinarySearch(list, from) // the first set long enough
					for _, py := range list[k:] {
						if py >= px {
							break
						}
						hit(py, 1)
					}
				}
				if !j.pairs || tok < r[0] || tok >= r[1] {
					continue
				}
				bucket := j.pairEntries[j.pairFirst[tok-r[0]]:j.pairFirst[tok-r[0]+1]]
				for _, tok2 := range pre[a+1:] {
					if j.isRare[tok] && j.isRare[tok2] {
						continue
					}
					// The second tokens ascend: each is looked up after
					// the last.
					lo, _ := slices.BinarySearch(bucket, uint64(uint32(tok2))<<32|uint64(uint32(from)))
					bucket = bucket[lo:]
					for _, e := range bucket {
						if int32(e>>32) != tok2 || int32(uint32(e)) >= px {
							break
						}
						hit(int32(uint32(e)), 2)
					}
				}
			}
			sx := j.places[px].sketch
			for _, py := range touched {
				c := count[py]
				count[py] = 0
				y := &j.places[py]
				if int(c) < min(kx, int(y.k)) || !sx.mayShare(y.sketch, need[int(y.length)-minLen]) ||
					joined.find(px) == joined.find(py) {
					continue
				}
				if similarAtLeast(j.setAt(px), j.setAt(py), t) {
					joined.union(px, py)
				}
			}
			touched = touched[:0]
		}
		done.Add(hi - lo)
	}
}

// rareList is the most sets a token may index and still be looked up
// alone; a more frequent one is only looked up paired.
const rareList = 16

// waitTick paces the progress reports of a long join.
func waitTick() <-chan time.Time { return time.After(100 * time.Millisecond) }

func hashSet(s []int32) uint64 {
	h := uint64(14695981039346656037)
	for _, v := range s {
		h ^= uint64(uint32(v))
		h *= 1099511628211
	}
	return h
}

// similarAtLeast reports whether the Jaccard similarity of two sorted sets
// is at least t, stopping as soon as the answer is known: token numbers of
// a full scan's join or token orders of the kept state alike.
func similarAtLeast[T int32 | uint64](a, b []T, t float64) bool {
	// |a∩b| / (|a|+|b|-|a∩b|) >= t  ⇔  |a∩b| >= t(|a|+|b|)/(1+t)
	need := overlapFloor(t, len(a), len(b))
	i, j, common := 0, 0, 0
	for i < len(a) && j < len(b) {
		if common+min(len(a)-i, len(b)-j) < need {
			return false
		}
		switch {
		case a[i] == b[j]:
			common++
			i++
			j++
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	return common >= need
}

// jaccard is the Jaccard similarity of two sorted sets.
func jaccard(a, b []int32) float64 {
	if len(a) == 0 && len(b) == 0 {
		return 1
	}
	i, j, common := 0, 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] == b[j]:
			common++
			i++
			j++
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	return float64(common) / float64(len(a)+len(b)-common)
}
