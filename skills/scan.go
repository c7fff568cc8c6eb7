package skills

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/shogun-dev/shogun/config"
	"github.com/shogun-dev/shogun/store"
)

// Defaults of ScanOptions, used for its zero fields.
const (
	DefaultThreshold    = 2
	DefaultSimilarity   = 0.6
	DefaultReopenGrowth = 2.0
)

// ScanOptions tune a scan. The zero value uses the defaults.
type ScanOptions struct {
	// Threshold is the fewest finished tasks that make a mined group
	// (skills.auto_candidate_threshold; default 2). Proposals by agents
	// need no threshold.
	Threshold int
	// Similarity is the token-set (Jaccard) similarity of two tasks' titles
	// and bodies from which they are near-duplicates (skills.similarity;
	// default 0.6).
	Similarity float64
	// ReopenGrowth: a rejected candidate comes back for review once its
	// group has this many times the tasks it had when rejected (default
	// 2); below that it stays rejected, whatever the scan finds.
	ReopenGrowth float64
	// Progress, if set, is called from the scanning goroutine as the work
	// goes: stage is "reading", "comparing" or "writing", done counts up
	// to total. It is called about every thousand tasks, so it may draw.
	Progress func(stage string, done, total int)
	// Now dates the changes; nil means time.Now.
	Now func() time.Time
}

// OptionsFrom returns the scan options the workspace's settings ask for.
func OptionsFrom(s config.SkillsSettings) ScanOptions {
	return ScanOptions{Threshold: s.AutoCandidateThreshold, Similarity: s.Similarity}
}

func (o ScanOptions) withDefaults() ScanOptions {
	if o.Threshold <= 0 {
		o.Threshold = DefaultThreshold
	}
	if o.Similarity <= 0 || o.Similarity > 1 {
		o.Similarity = DefaultSimilarity
	}
	if o.ReopenGrowth <= 1 {
		o.ReopenGrowth = DefaultReopenGrowth
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// What a scan did to a candidate.
const (
	ChangeNew       = "new"       // a group no candidate stood for yet
	ChangeUpdated   = "updated"   // new source tasks or refreshed text
	ChangeUnchanged = "unchanged" // nothing new since the last scan
	ChangeReopened  = "reopened"  // rejected, but its group has grown enough to ask again
)

// ScanResult is what a scan found.
type ScanResult struct {
	// Tasks is the number of finished tasks read.
	Tasks int `json:"tasks"`
	// Candidates has one entry per group found, in the order groups are
	// settled: agents' proposals, then specific groups largest first,
	// then tag groups.
	Candidates []ScanCandidate `json:"candidates"`
	// Counts of Candidates by Change.
	New       int `json:"new"`
	Updated   int `json:"updated"`
	Unchanged int `json:"unchanged"`
	Reopened  int `json:"reopened"`
	// Duration is how long the scan took.
	Duration time.Duration `json:"duration_ns"`
}

// ScanCandidate is one group found by a scan and the candidate standing
// for it.
type ScanCandidate struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Kind        string `json:"kind"`   // KindProposed, KindTitle, KindSimilar or KindTag
	Status      string `json:"status"` // the candidate's status after the scan
	Tasks       int    `json:"tasks"`  // finished tasks in the group
	Change      string `json:"change"` // ChangeNew, ChangeUpdated, ChangeUnchanged or ChangeReopened
}

// Scan mines the history in st for repeated work and stores what it finds
// as skill candidates (DESIGN.md section 8). The groups are: one role's
// tasks with the same normalised title; tasks sharing a tag; tasks whose
// title and body are near-duplicates; each with at least Threshold tasks;
// plus every skill an agent proposed in a report. See mine for how
// overlapping groups are settled.
//
// The same history always gives the same candidates. A group already
// stored is updated, never duplicated: a pending candidate gets the new
// source tasks and a fresh text (unless a person edited it); approved and
// exported ones keep their reviewed text; a rejected one stays rejected
// unless its group has grown ReopenGrowth times since. Candidates whose
// group is gone are left as they are.
//
// Scan is safe to run while the supervisor records reports: it reads one
// snapshot and reconciles in one write transaction.
func Scan(st *store.Store, opts ScanOptions) (ScanResult, error) {
	return scan(st, opts, 0)
}

// scan is Scan with the number of goroutines forced (tests), or 0 to let
// the history's size and the CPUs decide.
func scan(st *store.Store, opts ScanOptions, workers int) (ScanResult, error) {
	o := opts.withDefaults()
	began := time.Now()
	tasks, err := st.FinishedTasks()
	if err != nil {
		return ScanResult{}, fmt.Errorf("skills scan: %w", err)
	}
	if o.Progress != nil {
		o.Progress("reading", len(tasks), len(tasks))
	}
	h := buildHistory(tasks, workers)
	res, err := mineAndStore(st, h, o)
	if err != nil {
		return ScanResult{}, fmt.Errorf("skills scan: %w", err)
	}
	res.Tasks, res.Duration = len(h.tasks), time.Since(began)
	return res, nil
}

// mineAndStore finds the groups of h, writes a candidate's text for each,
// and reconciles them with the stored candidates.
func mineAndStore(st *store.Store, h *history, o ScanOptions) (ScanResult, error) {
	groups := mine(h, mineOptions{threshold: o.Threshold, similarity: o.Similarity, progress: o.Progress})
	contents := make([]content, len(groups))
	h.countSamples(groups)
	const batch = 256
	for start := 0; start < len(groups); start += batch {
		if o.Progress != nil {
			o.Progress("writing", start, len(groups))
		}
		end := min(len(groups), start+batch)
		h.cutAhead(groups[start:end])
		for i := start; i < end; i++ {
			contents[i] = distill(h, groups[i])
		}
	}
	var res ScanResult
	at := o.Now()
	err := st.UpdateSkillCandidates(func(existing []store.SkillCandidate) ([]store.SkillCandidate, error) {
		var changes []store.SkillCandidate
		changes, res.Candidates = reconcile(existing, h, groups, contents, o)
		return changes, nil
	}, "scan", at)
	if o.Progress != nil {
		o.Progress("writing", len(groups), len(groups))
	}
	if err != nil {
		return ScanResult{}, err
	}
	for _, c := range res.Candidates {
		switch c.Change {
		case ChangeNew:
			res.New++
		case ChangeUpdated:
			res.Updated++
		case ChangeUnchanged:
			res.Unchanged++
		case ChangeReopened:
			res.Reopened++
		}
	}
	return res, nil
}

// reconcile matches the groups found with the stored candidates and
// returns the candidates to write and what happened to each group. A group
// finds its candidate by key; a title or similar group that has none (a
// cluster that merged with another, a title group now inside a cluster)
// takes over the unmatched title or similar candidate it shares the most
// tasks with, if it holds at least half of that candidate's tasks. Names,
// once given, stay: people review and export by name.
func reconcile(existing []store.SkillCandidate, h *history, groups []*group, contents []content, o ScanOptions) ([]store.SkillCandidate, []ScanCandidate) {
	byKey := map[string]int{}
	names := map[string]bool{}
	ids := map[string]bool{}
	byTask := map[string][]int{}
	for i, c := range existing {
		if c.GroupKey != "" {
			if _, dup := byKey[c.GroupKey]; !dup {
				byKey[c.GroupKey] = i
			}
		}
		names[c.Name] = true
		ids[c.ID] = true
		if c.Kind == KindTitle || c.Kind == KindSimilar {
			for _, id := range c.SourceTaskIDs {
				byTask[id] = append(byTask[id], i)
			}
		}
	}
	matched := map[int]bool{}
	var changes []store.SkillCandidate
	results := make([]ScanCandidate, 0, len(groups))
	for gi, g := range groups {
		src := make([]string, len(g.members))
		for i, m := range g.members {
			src[i] = h.tasks[m].ID
		}
		ct := contents[gi]
		ci, ok := byKey[g.key]
		if ok && matched[ci] {
			ok = false
		}
		if !ok && (g.kind == KindTitle || g.kind == KindSimilar) {
			ci, ok = bestOverlap(existing, byTask, matched, src)
		}
		if !ok {
			c := store.SkillCandidate{
				ID: uniqueID("sc-"+shortHash(g.key), ids), Name: uniqueName(ct.name, g.role, names),
				Description: ct.description, Body: ct.body, SourceTaskIDs: src,
				Status: store.SkillPending, Kind: g.kind, GroupKey: g.key,
			}
			ids[c.ID], names[c.Name] = true, true
			changes = append(changes, c)
			results = append(results, ScanCandidate{Name: c.Name, Description: c.Description, Kind: g.kind,
				Status: c.Status, Tasks: len(src), Change: ChangeNew})
			continue
		}
		matched[ci] = true
		old := existing[ci]
		c := old
		c.SourceTaskIDs, c.Kind, c.GroupKey = src, g.kind, g.key
		change := ChangeUpdated
		refresh := false
		switch old.Status {
		case store.SkillPending:
			refresh = true
		case store.SkillRejected:
			if float64(len(src)) >= math.Ceil(float64(max(old.RejectedSize, 1))*o.ReopenGrowth) {
				c.Status = store.SkillPending
				refresh, change = true, ChangeReopened
			}
		}
		if refresh && old.EditedAt.IsZero() {
			c.Description, c.Body = ct.description, ct.body
		}
		if sameCandidate(old, c) {
			change = ChangeUnchanged
		} else {
			changes = append(changes, c)
		}
		results = append(results, ScanCandidate{Name: c.Name, Description: c.Description, Kind: g.kind,
			Status: c.Status, Tasks: len(src), Change: change})
	}
	return changes, results
}

// bestOverlap finds the unmatched title or similar candidate sharing the
// most tasks with src, if src holds at least half of its tasks.
func bestOverlap(existing []store.SkillCandidate, byTask map[string][]int, matched map[int]bool, src []string) (int, bool) {
	count := map[int]int{}
	for _, id := range src {
		for _, ci := range byTask[id] {
			if !matched[ci] {
				count[ci]++
			}
		}
	}
	best, bestN := -1, 0
	for ci, n := range count {
		if 2*n < len(existing[ci].SourceTaskIDs) {
			continue
		}
		if n > bestN || (n == bestN && ci < best) {
			best, bestN = ci, n
		}
	}
	return best, best >= 0
}

func sameCandidate(a, b store.SkillCandidate) bool {
	return a.Name == b.Name && a.Description == b.Description && a.Body == b.Body && a.Status == b.Status &&
		a.Kind == b.Kind && a.GroupKey == b.GroupKey && slices.Equal(a.SourceTaskIDs, b.SourceTaskIDs)
}

// uniqueName returns name, or when taken name-ROLE (for a role's title
// group), then name-2, name-3..., each cut to the length limit.
func uniqueName(name, role string, taken map[string]bool) string {
	if !taken[name] {
		return name
	}
	if s := Slug(role); s != "" {
		alt := cutName(name, MaxNameLength-len(s)-1) + "-" + s
		if !taken[alt] && ValidName(alt) == nil {
			return alt
		}
	}
	for n := 2; ; n++ {
		suffix := fmt.Sprintf("-%d", n)
		alt := cutName(name, MaxNameLength-len(suffix)) + suffix
		if !taken[alt] {
			return alt
		}
	}
}

func uniqueID(id string, taken map[string]bool) string {
	if !taken[id] {
		return id
	}
	for n := 2; ; n++ {
		if alt := fmt.Sprintf("%s-%d", id, n); !taken[alt] {
			return alt
		}
	}
}
