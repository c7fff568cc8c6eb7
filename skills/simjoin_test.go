package skills

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// bruteClusters connects every pair at or above t by comparing them all:
// what clusterSimilar must find, exactly.
func bruteClusters(sets [][]int32, t float64) unionFind {
	uf := newUnionFind(len(sets))
	for i := range sets {
		for j := i + 1; j < len(sets); j++ {
			if len(sets[i]) >= 2 && len(sets[j]) >= 2 && jaccard(sets[i], sets[j]) >= t-1e-12 {
				uf.union(int32(i), int32(j))
			}
		}
	}
	return uf
}

// randomSets makes sets drawn around a few templates, so that many pairs
// sit near any threshold.
func randomSets(r *rand.Rand, n, vocab int) ([][]int32, []int32) {
	templates := make([][]int32, 8)
	for i := range templates {
		for k := 0; k < 4+r.IntN(10); k++ {
			templates[i] = append(templates[i], int32(r.IntN(vocab)))
		}
	}
	sets := make([][]int32, n)
	freq := make([]int32, vocab)
	for i := range sets {
		var s []int32
		for _, tok := range templates[r.IntN(len(templates))] {
			if r.IntN(5) > 0 {
				s = append(s, tok)
			}
		}
		for k := 0; k < r.IntN(5); k++ {
			s = append(s, int32(r.IntN(vocab)))
		}
		slices.Sort(s)
		s = slices.Compact(s)
		for _, tok := range s {
			freq[tok]++
		}
		sets[i] = s
	}
	return sets, freq
}

func TestClusterSimilarMatchesBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 120; round++ {
		n, vocab := 20+r.IntN(200), 10+r.IntN(60)
		threshold := []float64{0.3, 0.5, 0.6, 0.75, 0.9, 1}[round%6]
		sets, freq := randomSets(r, n, vocab)
		var got unionFind
		if round%2 == 0 {
			got = clusterSimilar(sets, freq, threshold, nil)
		} else {
			// Every token frequent, or nearly: the lookups by pairs.
			got = clusterRankedList(func(i int) []int32 { return sets[i] }, len(sets), threshold, 1+r.IntN(3), r.IntN(4), []int{1, 7, 50, pairBudget}[r.IntN(4)], nil)
		}
		want := bruteClusters(sets, threshold)
		for i := range sets {
			for j := i + 1; j < len(sets); j++ {
				g := got.find(int32(i)) == got.find(int32(j))
				w := want.find(int32(i)) == want.find(int32(j))
				if g != w {
					t.Fatalf("round %d (n %d, t %v): sets %d %v and %d %v together: got %v, want %v",
						round, n, threshold, i, sets[i], j, sets[j], g, w)
				}
			}
		}
	}
}

func TestSimilarAtLeast(t *testing.T) {
	cases := []struct {
		a, b []int32
		t    float64
		want bool
	}{
		{[]int32{1, 2, 3}, []int32{1, 2, 3}, 1, true},
		{[]int32{1, 2, 3, 4, 5}, []int32{1, 2, 3, 4, 6}, 0.6, true},  // 4/6
		{[]int32{1, 2, 3, 4, 5}, []int32{1, 2, 3, 6, 7}, 0.6, false}, // 3/7
		{[]int32{1, 2}, []int32{3, 4}, 0.1, false},
		{[]int32{1, 2, 3}, []int32{1, 2, 3, 4, 5}, 0.6, true}, // 3/5 exactly
	}
	for _, c := range cases {
		if got := similarAtLeast(c.a, c.b, c.t); got != c.want {
			t.Errorf("similarAtLeast(%v, %v, %v) = %v, want %v (jaccard %v)", c.a, c.b, c.t, got, c.want, jaccard(c.a, c.b))
		}
	}
}

// TestClusterSimilarWithoutSetsToCompare: sets of fewer than two tokens are
// never connected, and a history made of only such sets (or of one set
// and its copies) joins nothing else, without failing.
func TestClusterSimilarWithoutSetsToCompare(t *testing.T) {
	for _, sets := range [][][]int32{
		{{1}, {2}, {}, {1}},
		{{1, 2}, {1, 2}, {3}},
	} {
		uf := clusterSimilar(sets, nil, 0.6, nil)
		want := bruteClusters(sets, 0.6)
		for i := range sets {
			for j := i + 1; j < len(sets); j++ {
				if g, w := uf.find(int32(i)) == uf.find(int32(j)), want.find(int32(i)) == want.find(int32(j)); g != w {
					t.Errorf("sets %v: %d and %d together: got %v, want %v", sets, i, j, g, w)
				}
			}
		}
	}
}

func TestByLengthOrdersByLengthThenNumber(t *testing.T) {
	lengths := []int{3, 2, 5, 2, 3, 0, 2}
	got := byLength([]int32{6, 4, 0, 1, 2, 3}, len(lengths), func(i int32) int { return lengths[i] })
	want := []int32{1, 3, 6, 0, 4, 2}
	if !slices.Equal(got, want) {
		t.Fatalf("byLength = %v, want %v", got, want)
	}
}

func TestSortBySecondSortsPlaceOrderedEntries(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for _, n := range []int{0, 1, 7, 255, 256, 1000, 20000} {
		for _, tokBits := range []int{1, 8, 14, 20} {
			b := make([]uint64, n)
			for i := range b {
				tok := rng.Uint64N(1 << tokBits)
				b[i] = tok<<32 | uint64(i) // places ascending, as the join fills them
			}
			want := slices.Clone(b)
			slices.Sort(want)
			sortBySecond(b, nil, tokBits)
			if !slices.Equal(b, want) {
				t.Fatalf("n=%d tokBits=%d: not sorted by second token, then place", n, tokBits)
			}
		}
	}
}
