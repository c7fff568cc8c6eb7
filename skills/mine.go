package skills

import (
	"slices"
	"sort"
	"strings"

	"github.com/shogun-dev/shogun/store"
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

// group is a set of finished tasks that may make one skill.
type group struct {
	kind, key string
	members   []int // indexes into history.tasks, ascending (arrival order)
	// For KindTitle, the role; for KindTag, the tag; for KindProposed, the
	// name and description the agent gave (from the latest proposal).
	role, tag             string
	proposed, proposedDoc string
}

// mineOptions are the settings mining needs.
type mineOptions struct {
	threshold  int
	similarity float64
	progress   func(stage string, done, total int)
}

// mine finds the groups of h, in a deterministic order: proposals by name,
// then specific groups (title, similar) largest first, then tag groups
// largest first; ties by key. Overlaps are settled so that one kind of
// repeated work gives one candidate:
//   - a title or similar group sharing a task with a proposal joins the
//     proposal (the agent's name and description win);
//   - a title or similar group at least half of whose tasks are in a
//     larger one joins it (same size: title before similar);
//   - a tag group whose tasks all belong to one kept group is dropped.
//
// Mined groups need at least threshold tasks, one of them done; proposals
// need nothing more than the proposal.
func mine(h *history, o mineOptions) []*group {
	var (
		byTitle   = map[string][]int{}
		byTag     = map[string][]int{}
		byPropose = map[string][]int{}
		proposal  = map[string][2]string{}
		titleRole = map[string]string{}
		tagName   = map[string]string{}
	)
	for i, t := range h.tasks {
		if t.norm != "" {
			key := KindTitle + ":" + t.Role + ":" + t.norm
			byTitle[key] = append(byTitle[key], i)
			titleRole[key] = t.Role
		}
		seen := map[string]bool{}
		for _, tag := range t.Tags {
			tag = strings.ToLower(strings.TrimSpace(tag))
			if tag == "" || seen[tag] {
				continue
			}
			seen[tag] = true
			key := KindTag + ":" + tag
			byTag[key] = append(byTag[key], i)
			tagName[key] = tag
		}
		if name := strings.TrimSpace(t.SkillName); name != "" {
			slug := Slug(name)
			if slug == "" {
				slug = "skill-" + shortHash(name)
			}
			key := KindProposed + ":" + slug
			byPropose[key] = append(byPropose[key], i)
			proposal[key] = [2]string{name, t.SkillDescription}
		}
	}

	anyDone := func(members []int) bool {
		for _, i := range members {
			if h.tasks[i].Status == store.StatusDone {
				return true
			}
		}
		return false
	}
	big := func(members []int) bool { return len(members) >= o.threshold && anyDone(members) }

	var proposals, specific, tags []*group
	for key, m := range byPropose {
		p := proposal[key]
		proposals = append(proposals, &group{kind: KindProposed, key: key, members: m, proposed: p[0], proposedDoc: p[1]})
	}
	for key, m := range byTitle {
		if big(m) {
			specific = append(specific, &group{kind: KindTitle, key: key, members: m, role: titleRole[key]})
		}
	}
	for key, m := range byTag {
		if big(m) {
			tags = append(tags, &group{kind: KindTag, key: key, members: m, tag: tagName[key]})
		}
	}

	h.dropCommonTokens()
	sets := make([][]int32, len(h.tasks))
	for i, t := range h.tasks {
		sets[i] = t.set
	}
	var progress func(done, total int)
	if o.progress != nil {
		progress = func(done, total int) { o.progress("comparing", done, total) }
	}
	uf := clusterSimilar(sets, h.freq, o.similarity, progress)
	clusters := map[int32][]int{}
	for i := range h.tasks {
		r := uf.find(int32(i))
		clusters[r] = append(clusters[r], i) // ascending, as i is
	}
	for _, m := range clusters {
		if len(m) > 1 && big(m) {
			specific = append(specific, &group{kind: KindSimilar, key: KindSimilar + ":" + h.tasks[m[0]].ID, members: m})
		}
	}

	sort.Slice(proposals, func(i, j int) bool { return proposals[i].key < proposals[j].key })
	bySize := func(gs []*group) {
		sort.Slice(gs, func(i, j int) bool {
			a, b := gs[i], gs[j]
			if len(a.members) != len(b.members) {
				return len(a.members) > len(b.members)
			}
			if kindRank(a.kind) != kindRank(b.kind) {
				return kindRank(a.kind) < kindRank(b.kind)
			}
			return a.key < b.key
		})
	}
	bySize(specific)
	bySize(tags)

	// Proposals come first and absorb the mined groups that share a task
	// with them (the smallest key wins when several do).
	kept := &keptIndex{of: map[int][]int{}, dirty: map[int]bool{}}
	proposer := map[int]int{} // task index → its first proposal's number
	for n, p := range proposals {
		kept.add(p)
		for _, i := range p.members {
			if _, ok := proposer[i]; !ok {
				proposer[i] = n
			}
		}
	}
	out := append([]*group(nil), proposals...)
	for _, g := range specific {
		into := -1
		for _, i := range g.members {
			if n, ok := proposer[i]; ok && (into < 0 || n < into) {
				into = n
			}
		}
		if into < 0 {
			if n, c := kept.best(g); c > 0 && 2*c >= len(g.members) {
				into = n
			}
		}
		if into >= 0 {
			kept.absorb(into, g)
			continue
		}
		kept.add(g)
		out = append(out, g)
	}
	for _, g := range tags {
		if _, c := kept.best(g); c == len(g.members) {
			continue
		}
		kept.add(g)
		out = append(out, g)
	}
	kept.finish()
	return out
}

// keptIndex knows which kept groups each task belongs to.
type keptIndex struct {
	groups []*group
	of     map[int][]int // task index → kept group numbers
	dirty  map[int]bool  // groups whose members absorb left unsorted
}

func (k *keptIndex) add(g *group) {
	n := len(k.groups)
	k.groups = append(k.groups, g)
	for _, i := range g.members {
		k.of[i] = append(k.of[i], n)
	}
}

// best returns the kept group holding the most tasks of g, and how many
// (0 if none); the earliest kept on a tie.
func (k *keptIndex) best(g *group) (int, int) {
	count := map[int]int{}
	for _, i := range g.members {
		for _, n := range k.of[i] {
			count[n]++
		}
	}
	best, bestC := -1, 0
	for n, c := range count {
		if c > bestC || (c == bestC && n < best) {
			best, bestC = n, c
		}
	}
	return best, bestC
}

// absorb adds g's tasks to kept group n. The members are sorted again by
// finish, once, however many groups are absorbed.
func (k *keptIndex) absorb(n int, g *group) {
	into := k.groups[n]
	for _, i := range g.members {
		if !slices.Contains(k.of[i], n) {
			k.of[i] = append(k.of[i], n)
			into.members = append(into.members, i)
			k.dirty[n] = true
		}
	}
}

// finish puts absorbing groups' members back in arrival order.
func (k *keptIndex) finish() {
	for n := range k.dirty {
		slices.Sort(k.groups[n].members)
	}
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
