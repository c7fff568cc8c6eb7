package skills

import (
	"cmp"
	"math"
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
	return clusterRankedList(set, n, t, workers, rareList, progress)
}

// clusterRankedList is clusterRanked with the most sets a rare token may
// index given (tests).
func clusterRankedList(set func(i int) []int32, n int, t float64, workers, rareMax int, progress func(done, total int)) unionFind {
	uf := newUnionFind(n)
	if n == 0 || t <= 0 || t > 1 {
		return uf
	}
	// Identical sets: sorted by a hash of their tokens, then compared.
	type hashed struct {
		h uint64
		i int32
	}
	var hs []hashed
	for i := 0; i < n; i++ {
		if s := set(i); len(s) >= 2 {
			hs = append(hs, hashed{hashSet(s), int32(i)})
		}
	}
	slices.SortFunc(hs, func(a, b hashed) int {
		if a.h != b.h {
			return cmp.Compare(a.h, b.h)
		}
		return cmp.Compare(a.i, b.i)
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
	slices.Sort(distinct)
	// Shortest first; the rest of the join speaks of places in this order.
	sort.SliceStable(distinct, func(a, b int) bool { return len(set(int(distinct[a]))) < len(set(int(distinct[b]))) })
	m := len(distinct)
	length := make([]int32, m)
	maxLen := 0
	for p, i := range distinct {
		length[p] = int32(len(set(int(i))))
		maxLen = max(maxLen, len(set(int(i))))
	}
	// firstOfLen[l] is the first place of a set of l tokens or more.
	firstOfLen := make([]int32, maxLen+2)
	for l, p := 0, 0; l <= maxLen+1; l++ {
		for p < m && int(length[p]) < l {
			p++
		}
		firstOfLen[l] = int32(p)
	}
	indexLen := func(l int) (int, int) {
		o := overlapFloor(t, l, l) // with a set at least as long
		k := min(2, o)
		return l - o + k, k
	}
	probeLen := func(l int) (int, int) {
		o := int(math.Ceil(t*float64(l) - 1e-9)) // with a set as short as it may be
		k := min(2, o)
		return l - o + k, k
	}
	// The index. Sets are found under their first tokens; a frequent token
	// (in many sets' first tokens) would make long lists to read, so when
	// two shared tokens are needed, a frequent token is only looked up
	// paired with another of the set's first tokens: the first two tokens
	// two sets share are both rare (found under each), or make a pair one
	// of them is frequent in (found under the pair).
	maxTok := int32(0)
	for _, i := range distinct {
		maxTok = max(maxTok, set(int(i))[len(set(int(i)))-1])
	}
	pairs := t > 0.5 // then every pair of sets needs two shared tokens
	count := make([]int32, maxTok+2)
	for _, i := range distinct {
		p, _ := indexLen(len(set(int(i))))
		for _, tok := range set(int(i))[:p] {
			count[tok+1]++
		}
	}
	isRare := make([]bool, maxTok+1)
	for tok := range isRare {
		isRare[tok] = !pairs || int(count[tok+1]) <= rareMax
	}
	rare := func(tok int32) bool { return isRare[tok] }
	start := make([]int32, maxTok+2)
	for tok := int32(0); tok <= maxTok; tok++ {
		start[tok+1] = start[tok]
		if rare(tok) {
			start[tok+1] += count[tok+1]
		}
	}
	entries := make([]int32, start[len(start)-1])
	next := append([]int32(nil), start[:len(start)-1]...)
	// The pairs, by their first token (the rarer); under it, the second
	// token and the set in one number, sorted.
	pairFirst := make([]int32, maxTok+2)
	eachPair := func(fn func(a, b int32, p int32)) {
		for p, i := range distinct {
			ip, _ := indexLen(len(set(int(i))))
			pre := set(int(i))[:ip]
			for a, tok := range pre {
				for _, tok2 := range pre[a+1:] {
					if !rare(tok) || !rare(tok2) {
						fn(tok, tok2, int32(p))
					}
				}
			}
		}
	}
	for p, i := range distinct {
		ip, _ := indexLen(len(set(int(i))))
		for _, tok := range set(int(i))[:ip] {
			if rare(tok) {
				entries[next[tok]] = int32(p)
				next[tok]++
			}
		}
	}
	var pairEntries []uint64
	if pairs {
		eachPair(func(a, _ int32, _ int32) { pairFirst[a+1]++ })
		for tok := 1; tok < len(pairFirst); tok++ {
			pairFirst[tok] += pairFirst[tok-1]
		}
		pairEntries = make([]uint64, pairFirst[len(pairFirst)-1])
		fill := append([]int32(nil), pairFirst[:len(pairFirst)-1]...)
		eachPair(func(a, b int32, p int32) {
			pairEntries[fill[a]] = uint64(uint32(b))<<32 | uint64(uint32(p))
			fill[a]++
		})
		for tok := 0; tok+1 < len(pairFirst); tok++ {
			slices.Sort(pairEntries[pairFirst[tok]:pairFirst[tok+1]])
		}
	}
	next, count = nil, nil

	if workers <= 0 {
		workers = max(1, min(runtime.GOMAXPROCS(0), m/2000))
	}
	// A sketch of each set tells most candidates that cannot be alike
	// apart without reading their sets.
	sketches := make([]sketch, m)
	var orders []uint64
	for p, i := range distinct {
		orders = orders[:0]
		for _, tok := range set(int(i)) {
			orders = append(orders, uint64(tok))
		}
		sketches[p] = sketchOf(orders)
	}
	// The places are joined as pairs are found, so that a pair already in
	// one cluster is not compared: in a family of recurring work most
	// candidates are, and only the clusters are wanted, not every pair.
	var (
		done   atomic.Int64
		wg     sync.WaitGroup
		joined = newSharedUnionFind(m)
		chunk  = int64(256)
		cur    atomic.Int64
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			count := make([]int32, m)
			var touched []int32
			hit := func(py int32, n int32) {
				if count[py] == 0 {
					touched = append(touched, py)
				}
				count[py] += n
			}
			for {
				lo := cur.Add(chunk) - chunk
				if lo >= int64(m) {
					return
				}
				hi := min(int64(m), lo+chunk)
				for px := int32(lo); px < int32(hi); px++ {
					x := set(int(distinct[px]))
					lx := len(x)
					pp, kx := probeLen(lx)
					minLen := int(math.Ceil(t*float64(lx) - 1e-9))
					from := firstOfLen[min(minLen, maxLen+1)]
					pre := x[:pp]
					for a, tok := range pre {
						if rare(tok) {
							list := entries[start[tok]:start[tok+1]]
							k, hi := 0, len(list)
							for k < hi {
								mid := int(uint(k+hi) >> 1)
								if list[mid] < from {
									k = mid + 1
								} else {
									hi = mid
								}
							}
							for _, py := range list[k:] {
								if py >= px {
									break
								}
								hit(py, 1)
							}
						}
						if !pairs {
							continue
						}
						bucket := pairEntries[pairFirst[tok]:pairFirst[tok+1]]
						for _, tok2 := range pre[a+1:] {
							if rare(tok) && rare(tok2) {
								continue
							}
							want := uint64(uint32(tok2))<<32 | uint64(uint32(from))
							lo, hi := 0, len(bucket)
							for lo < hi {
								mid := int(uint(lo+hi) >> 1)
								if bucket[mid] < want {
									lo = mid + 1
								} else {
									hi = mid
								}
							}
							for _, e := range bucket[lo:] {
								if int32(e>>32) != tok2 || int32(uint32(e)) >= px {
									break
								}
								hit(int32(uint32(e)), 2)
							}
						}
					}
					for _, py := range touched {
						c := count[py]
						count[py] = 0
						_, ky := indexLen(int(length[py]))
						if int(c) < min(kx, ky) || !sketches[px].mayShare(sketches[py], overlapFloor(t, lx, int(length[py]))) ||
							joined.find(px) == joined.find(py) {
							continue
						}
						if similarAtLeast(x, set(int(distinct[py])), t) {
							joined.union(px, py)
						}
					}
					touched = touched[:0]
				}
				if progress != nil {
					done.Add(hi - lo)
				}
			}
		}()
	}
	if progress != nil {
		stop := make(chan struct{})
		var pw sync.WaitGroup
		pw.Add(1)
		go func() {
			defer pw.Done()
			for {
				progress(int(done.Load()), m)
				select {
				case <-stop:
					return
				case <-waitTick():
				}
			}
		}()
		wg.Wait()
		close(stop)
		pw.Wait()
		progress(m, m)
	} else {
		wg.Wait()
	}
	for p := range int32(m) {
		if r := joined.find(p); r != p {
			uf.union(distinct[r], distinct[p])
		}
	}
	return uf
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
