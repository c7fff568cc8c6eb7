package skills

import (
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
	// Full mines the whole history again instead of what changed since
	// the last scan (`shogun skills scan --full`): a rebuild.
	Full bool
	// OnlyChanges leaves the candidates nothing changed out of the
	// result's list (the supervisor's scans, which only count them).
	OnlyChanges bool

	workers int // goroutines of a full scan; 0: one per CPU
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
// plus every skill an agent proposed in a report. See settle for how
// overlapping groups are settled.
//
// A scan is incremental: it reads the tasks that arrived or changed since
// the last scan and updates the groups they touch, the settling of those
// groups, and the texts of the candidates whose sources changed, from the
// mining state kept in the store. The first scan, a scan with other
// options, and Full read the whole history instead; both give the same
// candidates.
//
// The same history always gives the same candidates. A group already
// stored is updated, never duplicated: a pending candidate gets the new
// source tasks and a fresh text (unless a person edited it); approved and
// exported ones keep their reviewed text; a rejected one stays rejected
// unless its group has grown ReopenGrowth times since. Candidates whose
// group is gone are left as they are.
//
// Scan is safe to run while the supervisor records reports, and beside
// another scan: an incremental scan runs in one write transaction; a full
// one mines one snapshot, writes the new state in one transaction and the
// candidates in a second, reading again if another scan wrote meanwhile.
// Incremental scans wait while a full one runs, and one that dies between
// its two transactions leaves the next scan a full one.
func Scan(st *store.Store, opts ScanOptions) (ScanResult, error) {
	return scan(st, opts, 0)
}

// scan is Scan with the number of goroutines of a full scan forced
// (tests), or 0 to let the CPUs decide.
func scan(st *store.Store, opts ScanOptions, workers int) (ScanResult, error) {
	o := opts.withDefaults()
	o.workers = workers
	began := time.Now()
	var (
		res ScanResult
		err error
	)
	if o.Full {
		res, err = runFull(st, o)
	} else {
		res, err = runIncremental(st, o)
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
	res.Duration = time.Since(began)
	return res, nil
}
