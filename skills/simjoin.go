package skills

import (
	"math"
	"slices"
	"sort"
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

// postingGroup is the part of a token's posting list that belonged to one
// component when it was last looked at.
type postingGroup struct {
	root    int32
	entries []spost
}

// posting is a set holding the token, where the token is in it, and the
// set's length (kept here so that filtering never touches the set).
type spost struct{ id, pos, len int32 }

// clusterSimilar connects every two sets whose Jaccard similarity is at
// least t and returns the union-find of the result: single-link clusters,
// exactly (no sampling). Each set must be sorted, without repeats, over
// token ids 0..tokens-1; freq gives each token's number of sets.
//
// It is the prefix-filtering similarity join (AllPairs): sets are visited
// shortest first with their tokens ordered rarest first, and two sets can
// only reach t if they share a token among the first few of each, so only
// those are compared. Two changes make it cheap on repetitive histories,
// where thousands of tasks are near-copies of each other: posting lists
// keep their entries grouped by cluster, so a set skips a whole cluster it
// already belongs to in one step, and one successful comparison joins a
// cluster, so the rest of that cluster is never compared.
func clusterSimilar(sets [][]int32, freq []int32, t float64, progress func(done, total int)) unionFind {
	n := len(sets)
	uf := newUnionFind(n)
	if n == 0 || t <= 0 || t > 1 {
		return uf
	}
	// Rank tokens rarest first and rewrite every set in rank order.
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
	ranked := make([][]int32, n)
	for i, s := range sets {
		r := make([]int32, len(s))
		for j, tok := range s {
			r[j] = rank[tok]
		}
		slices.Sort(r)
		ranked[i] = r
	}
	visit := make([]int32, n)
	for i := range visit {
		visit[i] = int32(i)
	}
	sort.SliceStable(visit, func(a, b int) bool { return len(ranked[visit[a]]) < len(ranked[visit[b]]) })

	const eps = 1e-9
	postings := make([][]postingGroup, len(freq))
	// seen[y] counts the tokens x shares with y so far, or is -1 once y
	// has been compared or ruled out for this x; touched lists the ys to
	// reset.
	seen := make([]int32, n)
	var touched, need []int32
	for done, x := range visit {
		if progress != nil && done%1024 == 0 {
			progress(done, n)
		}
		xs := ranked[x]
		lx := len(xs)
		if lx < 2 {
			continue
		}
		minLen := int(math.Ceil(t*float64(lx) - eps))
		probe := lx - minLen + 1
		// need[ly-minLen] is the overlap a set of length ly needs.
		need = need[:0]
		for ly := minLen; ly <= lx; ly++ {
			need = append(need, int32(math.Ceil(t*float64(lx+ly)/(1+t)-eps)))
		}
		for i, tok := range xs[:probe] {
			list := postings[tok]
			for gi := range list {
				g := &list[gi]
				g.root = uf.find(g.root)
				if g.root == uf.find(x) {
					continue
				}
				for _, e := range g.entries {
					a := seen[e.id]
					if a < 0 {
						continue
					}
					if a == 0 {
						touched = append(touched, e.id)
					}
					a++
					// Sets are visited shortest first, so e.len <= lx.
					// Positional filter: every token x and y share before
					// this one is counted in a (both sets are in the same
					// order and y's are indexed up to here), so they share
					// at most a plus what is left after it in both.
					if int(e.len) < minLen || a+min(int32(lx-i-1), e.len-e.pos-1) < need[int(e.len)-minLen] {
						seen[e.id] = -1
						continue
					}
					seen[e.id] = -1
					if similarAtLeast(xs, ranked[e.id], t) {
						uf.union(x, e.id)
						break
					}
				}
			}
		}
		for _, y := range touched {
			seen[y] = 0
		}
		touched = touched[:0]
		// Index x under its shorter indexing prefix, in the group of its
		// cluster, merging groups that now share a root.
		index := lx - int(math.Ceil(2*t/(1+t)*float64(lx)-eps)) + 1
		rx := uf.find(x)
		for pos, tok := range xs[:index] {
			postings[tok] = addToPosting(postings[tok], uf, rx, spost{id: x, pos: int32(pos), len: int32(lx)})
		}
	}
	if progress != nil {
		progress(n, n)
	}
	return uf
}

// addToPosting puts p into the list's group for root rx, merging every
// group whose cluster has become rx.
func addToPosting(list []postingGroup, uf unionFind, rx int32, p spost) []postingGroup {
	at := -1
	for i := 0; i < len(list); i++ {
		list[i].root = uf.find(list[i].root)
		if list[i].root != rx {
			continue
		}
		if at < 0 {
			at = i
			continue
		}
		// Merge the smaller into the larger and drop it.
		a, b := &list[at], &list[i]
		if len(b.entries) > len(a.entries) {
			a.entries, b.entries = b.entries, a.entries
		}
		a.entries = append(a.entries, b.entries...)
		list[i] = list[len(list)-1]
		list = list[:len(list)-1]
		i--
	}
	if at < 0 {
		return append(list, postingGroup{root: rx, entries: []spost{p}})
	}
	list[at].entries = append(list[at].entries, p)
	return list
}

// similarAtLeast reports whether the Jaccard similarity of two sorted sets
// is at least t, stopping as soon as the answer is known.
func similarAtLeast(a, b []int32, t float64) bool {
	// |a∩b| / (|a|+|b|-|a∩b|) >= t  ⇔  |a∩b| >= t(|a|+|b|)/(1+t)
	need := int(math.Ceil(t*float64(len(a)+len(b))/(1+t) - 1e-9))
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
