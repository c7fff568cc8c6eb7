package skills

import (
	"fmt"
	"hash/fnv"
	"math"
	"strings"
	"time"

	"github.com/shogun-dev/shogun/store"
)

// rgroup is a settled group as reconcile sees it.
type rgroup struct {
	out *output
	// ct is its distilled text, without the body (bodyHash stands for
	// it), read when needed.
	ct func() (content, error)
	// members are its tasks (seqs, ascending); only needed (and read) when
	// it may take over an orphan or get a new candidate.
	members func() ([]int64, error)
	// same says whether the members equal the sources of candidate id.
	same func(id string) (bool, error)
}

// candidates is what reconcile needs of the stored candidates.
type candidates interface {
	// byKey is the first candidate created for a group key.
	byKey(key string) (*store.CandidateLite, error)
	// load reads a candidate in full, but for its sources.
	load(id string) (store.SkillCandidate, error)
	taken(column, value string) (bool, error)
	// orphansOf counts, for the given tasks, the title and similar
	// candidates whose group is gone that hold them.
	orphansOf(seqs []int64) (map[string]int, error)
	lite(id string) (*store.CandidateLite, error)
	created(id string) (time.Time, error)
}

// candidateChange is a candidate to write: a new one (prev nil) or a
// changed one, with what happened to its sources and text.
type candidateChange struct {
	c       store.SkillCandidate
	prev    *store.SkillCandidate
	g       *rgroup
	sources bool // its sources become the group's members
	body    bool // its body becomes the group's distilled body
	orphan  bool // it was an orphan, whose index entries go
}

// reconcile matches settled groups with stored candidates and says what
// to write. A group finds its candidate by key; a title or similar group
// that has none (a cluster whose first task changed, a title group that
// was inside a cluster) takes over the orphan, a title or similar
// candidate whose group is gone, it shares the most tasks with, if it
// holds at least half of that candidate's tasks (the earliest created on a
// tie). Names, once given, stay: people review and export by name.
func reconcile(groups []*rgroup, cs candidates, o ScanOptions, names map[string]bool) ([]candidateChange, []ScanCandidate, error) {
	var changes []candidateChange
	results := make([]ScanCandidate, 0, len(groups))
	taken := func(column, v string) (bool, error) {
		if names[column+"\x00"+v] {
			return true, nil
		}
		return cs.taken(column, v)
	}
	matched := map[string]bool{}
	for _, g := range groups {
		ct, err := g.ct()
		if err != nil {
			return nil, nil, err
		}
		lite, err := cs.byKey(g.out.key)
		if err != nil {
			return nil, nil, err
		}
		orphan := false
		if lite == nil && (g.out.kind == KindTitle || g.out.kind == KindSimilar) {
			if lite, err = bestOrphan(g, cs, matched); err != nil {
				return nil, nil, err
			}
			orphan = lite != nil
		}
		if lite == nil {
			members, err := g.members()
			if err != nil {
				return nil, nil, err
			}
			id, err := uniqueOf("id", "sc-"+shortHash(g.out.key), "", taken)
			if err != nil {
				return nil, nil, err
			}
			name, err := uniqueOf("name", ct.name, g.out.role, taken)
			if err != nil {
				return nil, nil, err
			}
			names["id\x00"+id], names["name\x00"+name] = true, true
			c := store.SkillCandidate{ID: id, Name: name, Description: ct.description,
				Status: store.SkillPending, Kind: g.out.kind, GroupKey: g.out.key}
			g.out.cand = id
			changes = append(changes, candidateChange{c: c, g: g, sources: true, body: true})
			results = append(results, ScanCandidate{Name: c.Name, Description: c.Description, Kind: c.Kind,
				Status: c.Status, Tasks: len(members), Change: ChangeNew})
			continue
		}
		matched[lite.ID] = true
		g.out.cand = lite.ID
		old, err := cs.load(lite.ID)
		if err != nil {
			return nil, nil, err
		}
		c := old
		c.Kind, c.GroupKey = g.out.kind, g.out.key
		n := g.out.stats.n
		change := ChangeUpdated
		refresh := false
		switch old.Status {
		case store.SkillPending:
			refresh = true
		case store.SkillRejected:
			if float64(n) >= math.Ceil(float64(max(old.RejectedSize, 1))*o.ReopenGrowth) {
				c.Status = store.SkillPending
				refresh, change = true, ChangeReopened
			}
		}
		body := false
		if refresh && old.EditedAt.IsZero() {
			c.Description = ct.description
			body = textHash(old.Body) != ct.bodyHash
		}
		same, err := g.same(old.ID)
		if err != nil {
			return nil, nil, err
		}
		if same && !body && !orphan && sameText(old, c) {
			change = ChangeUnchanged
		} else {
			// The bodies are not kept: a large history changes many.
			prev := old
			prev.Body, c.Body = "", ""
			changes = append(changes, candidateChange{c: c, prev: &prev, g: g, sources: !same, body: body, orphan: orphan})
		}
		results = append(results, ScanCandidate{Name: c.Name, Description: c.Description, Kind: g.out.kind,
			Status: c.Status, Tasks: n, Change: change})
	}
	return changes, results, nil
}

// bestOrphan finds the orphan sharing the most tasks with g, if g holds
// at least half of its tasks.
func bestOrphan(g *rgroup, cs candidates, matched map[string]bool) (*store.CandidateLite, error) {
	members, err := g.members()
	if err != nil {
		return nil, err
	}
	count, err := cs.orphansOf(members)
	if err != nil {
		return nil, err
	}
	var (
		best      *store.CandidateLite
		bestN     int
		bestAt    time.Time
		bestFound bool
	)
	for id, n := range count {
		if matched[id] {
			continue
		}
		c, err := cs.lite(id)
		if err != nil {
			return nil, err
		}
		if 2*n < c.Sources {
			continue
		}
		at, err := cs.created(id)
		if err != nil {
			return nil, err
		}
		if !bestFound || n > bestN || (n == bestN && (at.Before(bestAt) || (at.Equal(bestAt) && id < best.ID))) {
			best, bestN, bestAt, bestFound = c, n, at, true
		}
	}
	return best, nil
}

// textHash stands for a text in comparisons.
func textHash(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

func sameText(a, b store.SkillCandidate) bool {
	return a.Name == b.Name && a.Description == b.Description && a.Body == b.Body && a.Status == b.Status &&
		a.Kind == b.Kind && a.GroupKey == b.GroupKey
}

// uniqueOf returns want, or when taken want-ROLE (for a name, when a role
// is given), then want-2, want-3..., each cut to the length limit for
// names.
func uniqueOf(column, want, role string, taken func(column, v string) (bool, error)) (string, error) {
	if ok, err := taken(column, want); err != nil || !ok {
		return want, err
	}
	if column == "name" {
		if s := Slug(role); s != "" && !strings.Contains(want, s) {
			alt := cutName(want, MaxNameLength-len(s)-1) + "-" + s
			if ok, err := taken(column, alt); err != nil {
				return "", err
			} else if !ok && ValidName(alt) == nil {
				return alt, nil
			}
		}
	}
	for n := 2; ; n++ {
		suffix := fmt.Sprintf("-%d", n)
		alt := want + suffix
		if column == "name" {
			alt = cutName(want, MaxNameLength-len(suffix)) + suffix
		}
		if ok, err := taken(column, alt); err != nil || !ok {
			return alt, err
		}
	}
}
