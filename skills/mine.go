package skills

import (
	"sort"
	"strings"
)

// Kinds of group a candidate is mined from.
const (
	// KindProposed: tasks whose reports proposed the same skill_candidate
	// name, with every mined group that shares a task with them.
	KindProposed = "proposed"
	// KindTitle: one role's tasks with the same normalised title.
	KindTitle = "title"
	// KindSimilar: tasks whose titles and bodies are near-duplicates, by
	// token-set (Jaccard) similarity, clustered by single link.
	KindSimilar = "similar"
	// KindTag: tasks sharing a tag.
	KindTag = "tag"
)

// minChains is how many chains of commands a group of kind needs to stand
// for a candidate: the threshold, and two for a cluster. A proposal needs
// none.
func minChains(kind string, threshold int) int {
	switch kind {
	case KindProposed:
		return 0
	case KindSimilar:
		return max(2, threshold)
	}
	return threshold
}

// kindRank orders kinds from the most specific to the broadest.
func kindRank(kind string) int {
	switch kind {
	case KindProposed:
		return 0
	case KindTitle:
		return 1
	case KindSimilar:
		return 2
	}
	return 3
}

// sgroup is a group as settling sees it: a proposal, or a title or similar
// group big enough to count (at least the threshold of finished tasks, one
// of them done; a cluster of two or more).
type sgroup struct {
	gid  uint64
	kind string
	key  string
	size int
	// links are the other settling groups it shares finished tasks with,
	// and how many.
	links map[*sgroup]int

	settled bool
	into    *sgroup   // the kept group it belongs to (itself if kept)
	parts   []*sgroup // for a kept group: itself, then the groups it took in
}

func link(a, b *sgroup, n int) {
	if a.links == nil {
		a.links = map[*sgroup]int{}
	}
	if b.links == nil {
		b.links = map[*sgroup]int{}
	}
	a.links[b] += n
	b.links[a] += n
}

// specificOrder is the order groups are settled in: largest first, then
// the more specific kind, then by key.
func specificOrder(a, b *sgroup) bool {
	if a.size != b.size {
		return a.size > b.size
	}
	if kindRank(a.kind) != kindRank(b.kind) {
		return kindRank(a.kind) < kindRank(b.kind)
	}
	return a.key < b.key
}

// settle decides which groups stand for a candidate ("kept") and which
// join another, so that one kind of repeated work gives one candidate:
//   - proposals are kept, by key;
//   - a title or similar group sharing a task with a proposal joins it
//     (the proposal with the smallest key, if several);
//   - else, taken largest first, it joins the kept group that holds the
//     most of its tasks, if that is at least half of them (on a tie, the
//     one whose key sorts first), and is kept otherwise.
//
// It returns the kept groups in order. Each task is in one title group and
// one cluster at most, so the tasks a title group shares with a kept group
// are those it shares with the clusters in it, and the other way round:
// the links' counts are all settling needs. The groups of a connected part
// of the links settle the same whatever else is settled with them, which
// is what lets a scan settle again only the parts that changed.
func settle(props, specific []*sgroup) []*sgroup {
	sort.Slice(props, func(i, j int) bool { return props[i].key < props[j].key })
	sort.Slice(specific, func(i, j int) bool { return specificOrder(specific[i], specific[j]) })
	kept := make([]*sgroup, 0, len(props)+len(specific))
	for _, p := range props {
		p.settled, p.into, p.parts = true, p, []*sgroup{p}
		kept = append(kept, p)
	}
	for _, g := range specific {
		var into *sgroup
		for c := range g.links {
			if c.kind == KindProposed && (into == nil || c.key < into.key) {
				into = c
			}
		}
		if into == nil {
			count := map[*sgroup]int{}
			for c, n := range g.links {
				if c.settled && c.kind != KindProposed && c.kind != g.kind {
					count[c.into] += n
				}
			}
			var best *sgroup
			bestN := 0
			for k, n := range count {
				if n > bestN || (n == bestN && k.key < best.key) {
					best, bestN = k, n
				}
			}
			if best != nil && 2*bestN >= g.size {
				into = best
			}
		}
		g.settled = true
		if into != nil {
			g.into = into
			into.parts = append(into.parts, g)
			continue
		}
		g.into, g.parts = g, []*sgroup{g}
		kept = append(kept, g)
	}
	return kept
}

// tagOrder orders tag groups: largest first, then by key.
func tagOrder(aSize int, aKey string, bSize int, bKey string) bool {
	if aSize != bSize {
		return aSize > bSize
	}
	return aKey < bKey
}

// outputLess is the order of the settled groups in a scan's result:
// proposals by key, then title and similar groups largest first, then tag
// groups largest first.
func outputLess(a, b *output) bool {
	ca, cb := outputClass(a.kind), outputClass(b.kind)
	if ca != cb {
		return ca < cb
	}
	if ca == 0 {
		return a.key < b.key
	}
	if a.own != b.own {
		return a.own > b.own
	}
	if kindRank(a.kind) != kindRank(b.kind) {
		return kindRank(a.kind) < kindRank(b.kind)
	}
	return a.key < b.key
}

func outputClass(kind string) int {
	switch kind {
	case KindProposed:
		return 0
	case KindTag:
		return 2
	}
	return 1
}

// roleOfTitleKey is the role in a title group's key.
func roleOfTitleKey(key string) string {
	rest := strings.TrimPrefix(key, KindTitle+":")
	if i := strings.LastIndexByte(rest, ':'); i >= 0 {
		return rest[:i]
	}
	return rest
}
