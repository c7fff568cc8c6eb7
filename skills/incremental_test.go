package skills

import (
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/store"
)

// story is one generated task and what happens to it: created, then
// finished (maybe failed first and retried), or cancelled.
type story struct {
	rec       store.FinishedTaskRecord
	retry     bool // reported failed first, retried, then reported as rec says
	cancelled bool
	// parent is the story whose task sent this one's command (a part of
	// an order a karo split, much like it), -1 for none.
	parent int
}

func stories(n int, seed uint64) []story {
	g := newSynth(seed)
	r := rand.New(rand.NewPCG(seed, 99))
	out := make([]story, n)
	for i := range out {
		rec := g.task(day.Add(time.Duration(i) * time.Minute))
		if rec.Status == store.StatusDone && r.IntN(20) == 0 {
			// More proposals than a real history has, a few names shared.
			rec.SkillName = []string{"Release Checklist", "release-checklist", "Cache Warmup"}[r.IntN(3)]
			rec.SkillDescription = fmt.Sprintf("Proposed by task %d. Use when it comes up.", i)
		}
		parent := -1
		if i > 0 && r.IntN(5) == 0 {
			// A part of a recent order: its words, its chain.
			parent = max(0, i-1-r.IntN(8))
			p := out[parent].rec
			rec.Role, rec.Title, rec.Body, rec.Tags = p.Role, p.Title, p.Body, p.Tags
		}
		out[i] = story{rec: rec, retry: r.IntN(12) == 0, cancelled: r.IntN(30) == 0, parent: parent}
	}
	return out
}

// liveHistory is a workspace's history fed task by task through the
// store, the way the queue feeds it.
type liveHistory struct {
	t    *testing.T
	path string
	st   *store.Store
	run  store.Run
	ids  []string
	// roots are the first tasks of the stories' chains of commands.
	roots []string
	// state of each story: 0 created, 1 failed awaiting retry, 2 queued
	// again after a retry, 3 final.
	state []int
	n     int
}

func newLiveHistory(t *testing.T, dir string) *liveHistory {
	t.Helper()
	path := filepath.Join(dir, "shogun.db")
	st, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	var roles []store.RoleInfo
	for _, r := range SyntheticRoles {
		roles = append(roles, store.RoleInfo{ID: r, Name: r, PromptPath: "roles/" + r + ".md", Enabled: true})
	}
	if err := st.SyncRoles(roles, day); err != nil {
		t.Fatal(err)
	}
	run, err := st.StartRun(1, dir, day)
	if err != nil {
		t.Fatal(err)
	}
	h := &liveHistory{t: t, path: path, st: st, run: run}
	t.Cleanup(func() { h.st.Close() })
	return h
}

// create accepts the commands of stories [from, to), one by one: a part
// names the task of its order, which must be there first.
func (h *liveHistory) create(ss []story, from, to int) {
	h.t.Helper()
	for i := from; i < to; i++ {
		s := ss[i]
		rec := store.CommandRecord{ID: fmt.Sprintf("c-%d", i), ClaimName: fmt.Sprintf("c-%d.yaml", i),
			File: "c.yaml", To: s.rec.Role, From: s.rec.From, Title: s.rec.Title, Body: s.rec.Body, Tags: s.rec.Tags,
			RunID: h.run.ID, ReceivedAt: s.rec.CreatedAt}
		if s.parent >= 0 {
			rec.Parent, rec.Root, rec.Depth = h.ids[s.parent], h.roots[s.parent], 1
		}
		acc, err := h.st.AcceptCommands([]store.CommandRecord{rec})
		if err != nil {
			h.t.Fatal(err)
		}
		h.ids = append(h.ids, acc[0].Task.ID)
		h.roots = append(h.roots, acc[0].Task.Root)
		h.state = append(h.state, 0)
	}
}

// step moves story i on: to its end, or to its failure before a retry, or
// back to the queue.
func (h *liveHistory) step(ss []story, i int) {
	h.t.Helper()
	s, id := ss[i], h.ids[i]
	at := s.rec.FinishedAt
	report := func(status, summary, details string, files []string, skill, doc string, n int) {
		h.n++
		if _, err := h.st.Assign(id, at); err != nil {
			h.t.Fatal(err)
		}
		if _, err := h.st.MarkDelivery(id, true, 1, at); err != nil {
			h.t.Fatal(err)
		}
		if _, _, err := h.st.AcceptReport(store.ReportRecord{ClaimName: fmt.Sprintf("r-%d-%d.yaml", i, n), File: "r.yaml",
			TaskID: id, Status: status, Summary: summary, Details: details, Files: files, SkillName: skill,
			SkillDescription: doc, ReceivedAt: at}); err != nil {
			h.t.Fatal(err)
		}
	}
	switch {
	case h.state[i] == 0 && s.cancelled:
		if _, err := h.st.Cancel(id, "not needed", at); err != nil {
			h.t.Fatal(err)
		}
		h.state[i] = 3
	case h.state[i] == 0 && s.retry:
		report(store.StatusFailed, "Failed: "+s.rec.Title, "Do not trust the first run.", nil, "retry-first", "Retry tasks. Use when a task fails once.", 0)
		h.state[i] = 1
	case h.state[i] == 1:
		if _, err := h.st.Retry(id, at); err != nil {
			h.t.Fatal(err)
		}
		h.state[i] = 2
	default:
		report(s.rec.Status, s.rec.Summary, s.rec.Details, s.rec.Files, s.rec.SkillName, s.rec.SkillDescription, 1)
		h.state[i] = 3
	}
}

// copyTo closes the history, copies its database to dir, and opens both.
func (h *liveHistory) copyTo(dir string) *store.Store {
	h.t.Helper()
	if err := h.st.Close(); err != nil {
		h.t.Fatal(err)
	}
	to := filepath.Join(dir, "shogun.db")
	in, err := os.Open(h.path)
	if err != nil {
		h.t.Fatal(err)
	}
	out, err := os.Create(to)
	if err != nil {
		h.t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		h.t.Fatal(err)
	}
	in.Close()
	if err := out.Close(); err != nil {
		h.t.Fatal(err)
	}
	if h.st, err = store.Open(h.path); err != nil {
		h.t.Fatal(err)
	}
	cp, err := store.Open(to)
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { cp.Close() })
	return cp
}

func scanAt(t *testing.T, st *store.Store, full bool) ScanResult {
	t.Helper()
	return scanWith(t, st, full, 0)
}

func scanWith(t *testing.T, st *store.Store, full bool, growth float64) ScanResult {
	t.Helper()
	res, err := Scan(st, ScanOptions{Full: full, ReopenGrowth: growth, Now: func() time.Time { return day.Add(48 * time.Hour) }})
	if err != nil {
		t.Fatal(err)
	}
	res.Duration = 0
	return res
}

func allCandidates(t *testing.T, st *store.Store) []store.SkillCandidate {
	t.Helper()
	cs, err := st.SkillCandidates("")
	if err != nil {
		t.Fatal(err)
	}
	for i := range cs {
		cs[i].CreatedAt, cs[i].UpdatedAt = cs[i].CreatedAt.UTC(), cs[i].UpdatedAt.UTC()
	}
	return cs
}

// TestIncrementalScanEqualsFullScan feeds generated histories to the
// store in random orders and batches (tasks finishing out of arrival
// order, some failing and retried, some cancelled) and checks after every
// batch that an incremental scan leaves exactly the candidates a full
// scan of the same database does; and at the end, that the groups and
// texts equal those of a history that took another path to the same
// tasks.
func TestIncrementalScanEqualsFullScan(t *testing.T) {
	n, seeds := 260, []uint64{1, 2, 3}
	if testing.Short() || raceEnabled {
		n, seeds = 120, []uint64{2}
	}
	if extra, _ := strconv.Atoi(os.Getenv("SKILLS_MORE_SEEDS")); extra > 0 {
		// A longer search for a history where the scans disagree.
		for s := uint64(100); s < uint64(100+extra); s++ {
			seeds = append(seeds, s)
		}
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			ss := stories(n, seed)
			a := newLiveHistory(t, t.TempDir())
			r := rand.New(rand.NewPCG(seed, 7))
			growth := DefaultReopenGrowth
			feed(t, a, ss, r, func() {
				randomReview(t, a.st, r)
				if r.IntN(4) == 0 {
					growth = []float64{1.5, 2, 3}[r.IntN(3)]
				}
				b := a.copyTo(t.TempDir())
				inc, full := scanWith(t, a.st, false, growth), scanWith(t, b, true, growth)
				if !reflect.DeepEqual(inc, full) {
					t.Logf("candidates differ:\n%s", diffCandidates(allCandidates(t, a.st), allCandidates(t, b)))
					t.Fatalf("after %d reports: incremental scan found\n%+v\nfull scan\n%+v", a.n, inc, full)
				}
				if ci, cf := allCandidates(t, a.st), allCandidates(t, b); !reflect.DeepEqual(ci, cf) {
					t.Fatalf("after %d reports: candidates differ:\n%s", a.n, diffCandidates(ci, cf))
				}
			})
			// Another path to the same history: other batches, another order.
			c := newLiveHistory(t, t.TempDir())
			feed(t, c, ss, rand.New(rand.NewPCG(seed, 8)), nil)
			scanAt(t, c.st, false)
			ga, gc := minedGroups(t, a.st), minedGroups(t, c.st)
			kinds := map[string]int{}
			for _, g := range ga {
				kinds[g.Kind]++
			}
			t.Logf("groups by kind: %v", kinds)
			if len(ga) < 5 {
				t.Fatalf("only %d groups: the history is too small to tell", len(ga))
			}
			if !reflect.DeepEqual(ga, gc) {
				t.Fatalf("the same tasks by two paths give different groups:\n%v\n%v", ga, gc)
			}
		})
	}
}

// randomReview decides on a few candidates at random, as a person would:
// approve, reject, set back to pending, edit.
func randomReview(t *testing.T, st *store.Store, r *rand.Rand) {
	t.Helper()
	cs, err := st.SkillCandidates("")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		if c.Status == store.SkillExported || r.IntN(6) != 0 {
			continue
		}
		switch r.IntN(4) {
		case 3:
			if _, err := st.EditSkillCandidate(c.ID, c.Name, "Edited. Use when asked.", "# Edited\n", "test", day); err != nil {
				t.Fatal(err)
			}
		default:
			status := []string{store.SkillApproved, store.SkillRejected, store.SkillPending}[r.IntN(3)]
			if _, err := st.DecideSkillCandidates([]store.SkillVerdict{{Name: c.Name, Status: status}}, "test", day); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// feed creates the stories' tasks in arrival order, in random batches,
// and moves random ones on, calling check after each batch.
func feed(t *testing.T, h *liveHistory, ss []story, r *rand.Rand, check func()) {
	t.Helper()
	created := 0
	for {
		if created < len(ss) {
			k := min(len(ss), created+1+r.IntN(60))
			h.create(ss, created, k)
			created = k
		}
		var open []int
		for i := 0; i < created; i++ {
			if h.state[i] != 3 {
				open = append(open, i)
			}
		}
		if len(open) == 0 && created == len(ss) {
			return
		}
		r.Shuffle(len(open), func(i, j int) { open[i], open[j] = open[j], open[i] })
		open = open[:min(len(open), 1+r.IntN(50))]
		for _, i := range open {
			h.step(ss, i)
		}
		if check != nil {
			check()
		}
	}
}

// minedGroup is a settled group and its text, as a scan left them.
type minedGroup struct {
	Kind, Key   string
	Members     []string
	Description string
	Body        string
}

func minedGroups(t *testing.T, st *store.Store) []minedGroup {
	t.Helper()
	var out []minedGroup
	err := st.ViewMine(func(v *store.MineView) error {
		var outs []*output
		err := v.Range([]byte{keyOutput}, []byte{keyOutput + 1}, false, func(k, val []byte) bool {
			o, err := decodeOutput(beUint64(k[1:]), val)
			if err != nil {
				t.Fatal(err)
			}
			outs = append(outs, o)
			return true
		})
		if err != nil {
			return err
		}
		for _, o := range outs {
			refs, err := v.CandidateSources(o.cand)
			if err != nil {
				return err
			}
			val, _, err := v.Get(key1(keyContent, o.hash))
			if err != nil {
				return err
			}
			_, ct, err := decodeContent(val)
			if err != nil {
				return err
			}
			g := minedGroup{Kind: o.kind, Key: o.key, Description: ct.description, Body: ct.body}
			for _, r := range refs {
				g.Members = append(g.Members, r.ID)
			}
			out = append(out, g)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

func diffCandidates(a, b []store.SkillCandidate) string {
	byName := map[string]store.SkillCandidate{}
	for _, c := range b {
		byName[c.Name] = c
	}
	s := ""
	for _, c := range a {
		d, ok := byName[c.Name]
		switch {
		case !ok:
			s += fmt.Sprintf("only incremental: %s %s %v\n", c.Name, c.GroupKey, c.SourceTaskIDs)
		case !reflect.DeepEqual(c, d):
			s += fmt.Sprintf("%s differs:\n  inc  %+v\n  full %+v\n", c.Name, c, d)
		}
		delete(byName, c.Name)
	}
	for _, d := range byName {
		s += fmt.Sprintf("only full: %s %s %v\n", d.Name, d.GroupKey, d.SourceTaskIDs)
	}
	return s
}

// TestScanWaitsForAFullScan: while a full scan runs (its mark set), an
// incremental scan leaves the state alone and says so; a mark left by a
// full scan that died makes the next scan a full one.
func TestScanWaitsForAFullScan(t *testing.T) {
	h := newHistoryDB(t)
	h.add(spec{role: "ashigaru1", title: "Fix flaky test", body: unrelated[0]},
		spec{role: "ashigaru1", title: "Fix flaky test", body: unrelated[1]})
	h.scan(ScanOptions{})
	mark := func(until time.Time) {
		t.Helper()
		err := h.st.UpdateMine(func(tx *store.MineTx) error {
			return tx.Put(metaKey(metaRebuild), binary.AppendVarint(nil, until.Unix()))
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	now := day.Add(24 * time.Hour)
	mark(now.Add(time.Minute))
	h.add(spec{role: "ashigaru1", title: "Fix flaky test", body: unrelated[2]})
	if _, err := Scan(h.st, ScanOptions{Now: func() time.Time { return now }}); !errors.Is(err, ErrRebuilding) {
		t.Fatalf("scan during a full scan: %v, want ErrRebuilding", err)
	}
	if c := h.candidate("fix-flaky-test"); len(c.SourceTaskIDs) != 2 {
		t.Fatalf("the waiting scan changed the candidate: %v", c.SourceTaskIDs)
	}
	mark(now.Add(-time.Minute))
	res := h.scan(ScanOptions{})
	if c := h.candidate("fix-flaky-test"); len(c.SourceTaskIDs) != 3 || res.Updated != 1 {
		t.Fatalf("after a full scan died: %+v, sources %v", res, c.SourceTaskIDs)
	}
	// The state is whole again: the next scan is incremental and finds
	// nothing new.
	if res := h.scan(ScanOptions{}); res.Unchanged != 1 {
		t.Fatalf("scan after: %+v", res)
	}
}

// TestFullScanThatFailsAfterItsStateIsRedone: a full scan writes the new
// mining state, then its candidates; one that fails between the two (here
// the candidates table refuses the write) leaves the next scan a full one,
// which gives the candidates a scan that never failed gives, without
// waiting for the mark of a full scan to run out.
func TestFullScanThatFailsAfterItsStateIsRedone(t *testing.T) {
	h := newHistoryDB(t)
	h.add(spec{role: "ashigaru1", title: "Fix flaky test", body: unrelated[0]},
		spec{role: "ashigaru1", title: "Fix flaky test", body: unrelated[1]},
		spec{role: "ashigaru2", title: "Update the changelog", body: unrelated[2]},
		spec{role: "ashigaru2", title: "Update the changelog", body: unrelated[3]})
	db, err := sql.Open("sqlite", h.path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TRIGGER refuse BEFORE INSERT ON skill_candidates BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`); err != nil {
		t.Fatal(err)
	}
	now := func() time.Time { return day.Add(24 * time.Hour) }
	if _, err := Scan(h.st, ScanOptions{Full: true, Now: now}); err == nil || !strings.Contains(err.Error(), "refused by the test") {
		t.Fatalf("full scan with the candidates refused: %v", err)
	}
	var state int
	if err := db.QueryRow(`SELECT COUNT(*) FROM skill_state WHERE k >= x'72' AND k < x'73'`).Scan(&state); err != nil || state == 0 {
		t.Fatalf("the failed scan wrote no task records (%d, %v): the test does not reach the second step", state, err)
	}
	if _, err := db.Exec(`DROP TRIGGER refuse`); err != nil {
		t.Fatal(err)
	}
	// At once, not after the mark of a running full scan (30 minutes).
	res, err := Scan(h.st, ScanOptions{Now: now})
	if err != nil {
		t.Fatalf("scan after the failed one: %v", err)
	}
	if res.New != 2 {
		t.Fatalf("scan after the failed one: %+v, want the 2 candidates new", res)
	}
	cs := h.candidates()
	if len(cs) != 2 {
		t.Fatalf("candidates after the failed scan: %v, want 2", cs)
	}
	for name, c := range cs {
		if len(c.SourceTaskIDs) != 2 {
			t.Fatalf("%s: sources %v, want 2", name, c.SourceTaskIDs)
		}
	}
	// Whole again: the next scan is incremental and finds nothing new.
	if res := h.scan(ScanOptions{}); res.Unchanged != 2 || res.New != 0 {
		t.Fatalf("scan after: %+v", res)
	}
}
