package skills

import (
	"database/sql"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shogun-dev/shogun/store"
)

// Bodies on unrelated subjects, so that tasks carrying them are never
// near-duplicates of each other.
var unrelated = []string{
	"The checkout suite times out on CI runners under load.",
	"Payment webhook retries race with the ledger writer.",
	"Inventory sync fixture leaks goroutines between cases.",
	"Summarise merged pull requests since the last tag.",
	"Explain eviction and expiry in the cache chapter.",
	"Cover the breaking configuration keys of release two.",
	"Retake the dashboard images at their new size.",
	"Raise the toolchain line and rebuild the container image.",
}

// reactForm is a request that recurs, worded a little differently each
// time: the near-duplicates the similarity grouping must find.
func reactForm(role, title, component, fields string) spec {
	return spec{
		role: role, title: title,
		body: fmt.Sprintf("Create the %s component in web/src/forms with %s fields.\n"+
			"- Validate every field on submit and show errors inline.\n"+
			"- Add a test with React Testing Library.", component, fields),
		files: []string{"web/src/forms/" + component + ".tsx"},
	}
}

// want is an expected candidate: its kind and the indexes (into the case's
// specs) of its source tasks.
type want struct {
	kind    string
	members []int
}

func TestScanFindsGroups(t *testing.T) {
	cases := []struct {
		name  string
		specs []spec
		opts  ScanOptions
		want  map[string]want
	}{
		{
			name: "same role and title, with case, punctuation, numbers and stop words folded",
			specs: []spec{
				{role: "ashigaru1", title: "Fix flaky test 1234", body: unrelated[0]},
				{role: "ashigaru1", title: "fix the flaky tests #88.", body: unrelated[1]},
				{role: "ashigaru1", title: "Fix flaky test", body: unrelated[2]},
				{role: "ashigaru2", title: "Write release notes", body: unrelated[3]},
			},
			want: map[string]want{"fix-flaky-test": {KindTitle, []int{0, 1, 2}}},
		},
		{
			name: "same title by different roles is no title group",
			specs: []spec{
				{role: "ashigaru1", title: "Update dependencies", body: unrelated[0]},
				{role: "ashigaru2", title: "Update dependencies", body: unrelated[1]},
			},
			want: map[string]want{},
		},
		{
			name: "one name per group: a second role's title group gets the role in its name",
			specs: []spec{
				{role: "ashigaru1", title: "Fix flaky test", body: unrelated[0]},
				{role: "ashigaru1", title: "Fix flaky test", body: unrelated[1]},
				{role: "ashigaru2", title: "Fix flaky test", body: unrelated[2]},
				{role: "ashigaru2", title: "Fix flaky test", body: unrelated[3]},
			},
			want: map[string]want{
				"fix-flaky-test":           {KindTitle, []int{0, 1}},
				"fix-flaky-test-ashigaru2": {KindTitle, []int{2, 3}},
			},
		},
		{
			name: "near-duplicate titles and bodies across roles",
			specs: []spec{
				reactForm("ashigaru1", "Add a React form for signup", "SignupForm", "email and password"),
				{role: "ashigaru1", title: "Rotate the API keys", body: unrelated[4]},
				reactForm("ashigaru2", "Add React form to the contact page", "ContactForm", "name and message"),
				reactForm("ashigaru3", "Add a React form for the billing page", "BillingForm", "card and address"),
			},
			want: map[string]want{"add-react-form": {KindSimilar, []int{0, 2, 3}}},
		},
		{
			name: "near-duplicates need the configured similarity",
			specs: []spec{
				reactForm("ashigaru1", "Add a React form for signup", "SignupForm", "email and password"),
				reactForm("ashigaru2", "Add React form to the contact page", "ContactForm", "name and message"),
			},
			opts: ScanOptions{Similarity: 0.95},
			want: map[string]want{},
		},
		{
			name: "shared tag, tags case-folded",
			specs: []spec{
				{role: "ashigaru1", title: "Document the cache layer", body: unrelated[4], tags: []string{"docs"}},
				{role: "ashigaru2", title: "Write the upgrade guide", body: unrelated[5], tags: []string{"docs", "release"}},
				{role: "karo", title: "Refresh README screenshots", body: unrelated[6], tags: []string{"Docs"}},
				{role: "karo", title: "Plan the sprint", body: unrelated[7], tags: []string{"planning"}},
			},
			want: map[string]want{"docs": {KindTag, []int{0, 1, 2}}},
		},
		{
			name: "a tag group holding nothing but a title group is left out",
			specs: []spec{
				{role: "ashigaru1", title: "Fix flaky test", body: unrelated[0], tags: []string{"tests"}},
				{role: "ashigaru1", title: "Fix flaky test", body: unrelated[1], tags: []string{"tests"}},
			},
			want: map[string]want{"fix-flaky-test": {KindTitle, []int{0, 1}}},
		},
		{
			name: "a skill an agent proposed needs no threshold",
			specs: []spec{
				{role: "ashigaru1", title: "Deploy the preview environment", body: unrelated[0],
					skill: "Deploy Preview", skillDoc: "Deploys a preview environment for a branch. Use when a reviewer asks for a live preview."},
				{role: "ashigaru2", title: "Rotate the API keys", body: unrelated[1]},
			},
			want: map[string]want{"deploy-preview": {KindProposed, []int{0}}},
		},
		{
			name: "a proposal takes in the mined group that shares its task",
			specs: []spec{
				{role: "ashigaru1", title: "Bump the Go version", body: unrelated[7],
					skill: "go-version-bump", skillDoc: "Bumps the Go toolchain everywhere it is pinned."},
				{role: "ashigaru1", title: "Bump the Go version", body: unrelated[2]},
			},
			want: map[string]want{"go-version-bump": {KindProposed, []int{0, 1}}},
		},
		{
			name: "below the threshold",
			specs: []spec{
				{role: "ashigaru1", title: "Fix flaky test", body: unrelated[0]},
				{role: "ashigaru1", title: "Fix flaky test", body: unrelated[1]},
			},
			opts: ScanOptions{Threshold: 3},
			want: map[string]want{},
		},
		{
			name: "a group that never succeeded teaches nothing",
			specs: []spec{
				{role: "ashigaru1", title: "Fix flaky test", body: unrelated[0], status: store.StatusFailed, summary: "Could not reproduce"},
				{role: "ashigaru1", title: "Fix flaky test", body: unrelated[1], status: store.StatusBlocked, summary: "No CI access"},
			},
			want: map[string]want{},
		},
		{
			name: "failed and blocked tasks count in a group with a success",
			specs: []spec{
				{role: "ashigaru1", title: "Fix flaky test", body: unrelated[0], status: store.StatusFailed, summary: "Could not reproduce"},
				{role: "ashigaru1", title: "Fix flaky test", body: unrelated[1]},
			},
			want: map[string]want{"fix-flaky-test": {KindTitle, []int{0, 1}}},
		},
		{
			name: "cancelled tasks were never worked on",
			specs: []spec{
				{role: "ashigaru1", title: "Fix flaky test", body: unrelated[0]},
				{role: "ashigaru1", title: "Fix flaky test", body: unrelated[1], status: store.StatusCancelled},
			},
			want: map[string]want{},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHistoryDB(t)
			ids := h.add(tc.specs...)
			res := h.scan(tc.opts)
			got := h.candidates()
			if !reflect.DeepEqual(sortedKeys(got), sortedKeys(tc.want)) {
				t.Fatalf("candidates %v, want %v", sortedKeys(got), sortedKeys(tc.want))
			}
			for name, w := range tc.want {
				c := got[name]
				var members []string
				for _, i := range w.members {
					members = append(members, ids[i])
				}
				if c.Kind != w.kind || !reflect.DeepEqual(c.SourceTaskIDs, members) || c.Status != store.SkillPending {
					t.Errorf("%s: kind %s, sources %v, status %s; want kind %s, sources %v, pending",
						name, c.Kind, c.SourceTaskIDs, c.Status, w.kind, members)
				}
				checkContent(t, c)
			}
			if len(res.Candidates) != len(tc.want) || res.New != len(tc.want) {
				t.Errorf("result lists %d candidates (%d new), want %d", len(res.Candidates), res.New, len(tc.want))
			}
		})
	}
}

// checkContent checks what every candidate must have: a valid name, a
// description saying when to use it, and a body with its sections and
// links to its source tasks.
func checkContent(t *testing.T, c store.SkillCandidate) {
	t.Helper()
	doc := Document{Name: c.Name, Description: c.Description, Body: c.Body}
	if err := doc.Validate(); err != nil {
		t.Errorf("%s: %v", c.Name, err)
	}
	if !strings.Contains(c.Description, "Use when") && !strings.Contains(c.Description, "when") {
		t.Errorf("%s: description does not say when to use it: %q", c.Name, c.Description)
	}
	if strings.Contains(c.Description, "\n") {
		t.Errorf("%s: description spans lines: %q", c.Name, c.Description)
	}
	for _, section := range []string{"# ", "## Goal", "## Steps that recurred", "## Source tasks"} {
		if !strings.Contains(c.Body, section) {
			t.Errorf("%s: body lacks %q:\n%s", c.Name, section, c.Body)
		}
	}
	for _, id := range c.SourceTaskIDs {
		if !strings.Contains(c.Body, "`"+id+"`") {
			t.Errorf("%s: body does not link source task %s:\n%s", c.Name, id, c.Body)
		}
	}
}

func TestScanIsDeterministic(t *testing.T) {
	specs := []spec{
		reactForm("ashigaru1", "Add a React form for signup", "SignupForm", "email and password"),
		{role: "ashigaru1", title: "Fix flaky test 12", body: unrelated[0], tags: []string{"tests"}},
		reactForm("ashigaru2", "Add React form to the contact page", "ContactForm", "name and message"),
		{role: "ashigaru1", title: "Fix flaky test 13", body: unrelated[1], tags: []string{"tests"}},
		{role: "karo", title: "Document the cache", body: unrelated[4], tags: []string{"docs", "tests"},
			skill: "cache-docs", skillDoc: "Documents a cache. Use when a cache changes."},
	}
	snapshot := func(h *historyDB) []store.SkillCandidate {
		cs, err := h.st.SkillCandidates("")
		if err != nil {
			t.Fatal(err)
		}
		for i := range cs {
			cs[i].CreatedAt, cs[i].UpdatedAt = cs[i].CreatedAt.UTC(), cs[i].UpdatedAt.UTC()
		}
		return cs
	}
	a, b := newHistoryDB(t), newHistoryDB(t)
	a.add(specs...)
	b.add(specs...)
	a.scan(ScanOptions{})
	b.scan(ScanOptions{})
	first, second := snapshot(a), snapshot(b)
	if len(first) < 3 {
		t.Fatalf("want at least 3 candidates, got %d", len(first))
	}
	if !reflect.DeepEqual(first, second) {
		t.Fatalf("same history, different candidates:\n%+v\n%+v", first, second)
	}
	res := a.scan(ScanOptions{})
	if res.Unchanged != len(first) || res.New+res.Updated+res.Reopened != 0 {
		t.Errorf("scanning again changed something: %+v", res)
	}
	if again := snapshot(a); !reflect.DeepEqual(again, first) {
		t.Errorf("second scan rewrote candidates")
	}
}

func TestRescanUpdatesInsteadOfDuplicating(t *testing.T) {
	h := newHistoryDB(t)
	first := h.add(
		spec{role: "ashigaru1", title: "Fix flaky test", body: unrelated[0]},
		spec{role: "ashigaru1", title: "Fix flaky test", body: unrelated[1]},
	)
	h.scan(ScanOptions{})
	before := h.candidate("fix-flaky-test")

	third := h.add(spec{role: "ashigaru1", title: "Fix flaky test 7", body: unrelated[2],
		status: store.StatusFailed, summary: "Failed: the race only shows on ARM", details: "Do not trust a green local run; the race needs -race on ARM."})
	res := h.scan(ScanOptions{})
	if len(h.candidates()) != 1 {
		t.Fatalf("re-scan made %d candidates, want the one updated", len(h.candidates()))
	}
	after := h.candidate("fix-flaky-test")
	if after.ID != before.ID || !reflect.DeepEqual(after.SourceTaskIDs, append(first, third...)) {
		t.Fatalf("after re-scan: id %s (was %s), sources %v", after.ID, before.ID, after.SourceTaskIDs)
	}
	if res.Updated != 1 || res.Candidates[0].Change != ChangeUpdated {
		t.Errorf("result %+v, want one updated", res)
	}
	for _, want := range []string{third[0], "## Pitfalls", "Do not trust a green local run"} {
		if !strings.Contains(after.Body, want) {
			t.Errorf("refreshed body lacks %q:\n%s", want, after.Body)
		}
	}
}

func TestReviewedCandidatesKeepTheirText(t *testing.T) {
	h := newHistoryDB(t)
	h.add(
		spec{role: "ashigaru1", title: "Fix flaky test", body: unrelated[0]},
		spec{role: "ashigaru1", title: "Fix flaky test", body: unrelated[1]},
		spec{role: "ashigaru2", title: "Write release notes", body: unrelated[3]},
		spec{role: "ashigaru2", title: "Write release notes", body: unrelated[5]},
	)
	h.scan(ScanOptions{})
	if _, err := h.st.DecideSkillCandidates([]store.SkillVerdict{{Name: "fix-flaky-test", Status: store.SkillApproved}}, "test", day); err != nil {
		t.Fatal(err)
	}
	notes := h.candidate("write-release-notes")
	edited, err := h.st.EditSkillCandidate(notes.ID, "release-notes", "Writes release notes. Use when a release is tagged.", "# Release notes\n\nMy own steps.\n", "test", day)
	if err != nil {
		t.Fatal(err)
	}
	approved := h.candidate("fix-flaky-test")

	h.add(
		spec{role: "ashigaru1", title: "Fix flaky test", body: unrelated[2]},
		spec{role: "ashigaru2", title: "Write release notes", body: unrelated[6]},
	)
	h.scan(ScanOptions{})
	for _, c := range []store.SkillCandidate{approved, edited} {
		now := h.candidate(c.Name)
		if now.Body != c.Body || now.Description != c.Description || now.Status != c.Status {
			t.Errorf("%s: re-scan changed reviewed text or status:\n%+v\nwas\n%+v", c.Name, now, c)
		}
		if len(now.SourceTaskIDs) != 3 {
			t.Errorf("%s: sources %v, want the new task added", c.Name, now.SourceTaskIDs)
		}
	}
}

func TestRejectedStaysRejectedUntilItsGroupGrows(t *testing.T) {
	h := newHistoryDB(t)
	task := func(i int) spec { return spec{role: "ashigaru1", title: "Fix flaky test", body: unrelated[i]} }
	h.add(task(0), task(1))
	h.scan(ScanOptions{})
	if _, err := h.st.DecideSkillCandidates([]store.SkillVerdict{{Name: "fix-flaky-test", Status: store.SkillRejected}}, "test", day); err != nil {
		t.Fatal(err)
	}
	rejected := h.candidate("fix-flaky-test")
	if rejected.RejectedSize != 2 {
		t.Fatalf("rejected size %d, want 2", rejected.RejectedSize)
	}

	steps := []struct {
		add        int
		growth     float64
		wantStatus string
		wantChange string
	}{
		{add: 1, wantStatus: store.SkillRejected, wantChange: ChangeUpdated},            // 3 tasks < 2 × 2
		{add: 0, wantStatus: store.SkillRejected, wantChange: ChangeUnchanged},          // nothing new
		{add: 1, growth: 3, wantStatus: store.SkillRejected, wantChange: ChangeUpdated}, // 4 < 3 × 2
		{add: 0, wantStatus: store.SkillPending, wantChange: ChangeReopened},            // 4 >= 2 × 2
	}
	next := 2
	for i, s := range steps {
		for j := 0; j < s.add; j++ {
			h.add(task(next))
			next++
		}
		res := h.scan(ScanOptions{ReopenGrowth: s.growth})
		c := h.candidate("fix-flaky-test")
		if c.Status != s.wantStatus || res.Candidates[0].Change != s.wantChange {
			t.Fatalf("step %d: status %s change %s, want %s %s", i, c.Status, res.Candidates[0].Change, s.wantStatus, s.wantChange)
		}
		if c.Status == store.SkillRejected && c.Body != rejected.Body {
			t.Errorf("step %d: a rejected candidate's text changed", i)
		}
	}
	ds, err := h.st.SkillDecisions(rejected.ID)
	if err != nil {
		t.Fatal(err)
	}
	var log []string
	for _, d := range ds {
		log = append(log, d.Decision+" by "+d.By)
	}
	if want := []string{"rejected by test", "reopened by scan"}; !reflect.DeepEqual(log, want) {
		t.Errorf("decisions %v, want %v", log, want)
	}
}

func TestDistilledBodyReadsWell(t *testing.T) {
	h := newHistoryDB(t)
	h.add(
		spec{role: "ashigaru1", title: "Add a React form for signup",
			body: "Create the SignupForm component in web/src/forms with email and password fields.\n" +
				"- Validate every field on submit and show errors inline.\n" +
				"- Add a test with React Testing Library.",
			details: "Added SignupForm and its test.\nAll tests pass; lint is clean.\nNote that the API client in web/src/api/client.ts must be mocked.",
			files:   []string{"web/src/forms/SignupForm.tsx", "web/src/forms/SignupForm.test.tsx"}},
		spec{role: "ashigaru2", title: "Add React form to the contact page",
			body: "Create the ContactForm component in web/src/forms with name and message fields.\n" +
				"- Validate every field on submit and show errors inline.\n" +
				"- Add a test with React Testing Library.",
			status: store.StatusFailed, summary: "Failed: the form submitted twice",
			details: "Do not leave the submit button enabled while the request runs.\n",
			files:   []string{"web/src/forms/ContactForm.tsx"}},
		spec{role: "ashigaru3", title: "Add a React form for the billing page",
			body: "Create the BillingForm component in web/src/forms with card and address fields.\n" +
				"- Validate every field on submit and show errors inline.\n" +
				"- Add a test with React Testing Library.",
			details: "Added BillingForm.\nAll tests pass; lint is clean.\n",
			files:   []string{"web/src/forms/BillingForm.tsx", "web/src/api/client.ts"}},
	)
	h.scan(ScanOptions{})
	c := h.candidate("add-react-form")
	t.Logf("description: %s\n%s", c.Description, c.Body)
	for _, want := range []string{
		"# Add a React form\n",
		"from 3 finished tasks (2 done, 1 failed) by ashigaru1, ashigaru2 and ashigaru3",
		"Validate every field on submit and show errors inline. (3 of 3 tasks)",
		"Add a test with React Testing Library. (3 of 3 tasks)",
		"## What the reports recorded\n\n- All tests pass; lint is clean. (2 of 3 tasks)",
		"`web/src/forms` (3 of 3 tasks)",
		"`web/src/api/client.ts` (2 of 3 tasks)",
		"## Pitfalls",
		"Do not leave the submit button enabled while the request runs. (1 of 3 tasks, 1 failed or blocked)",
		"Note that the API client in web/src/api/client.ts must be mocked.",
		"(ashigaru2, 2026-11-22, failed) Add React form to the contact page — report: the form submitted twice",
	} {
		if !strings.Contains(c.Body, want) {
			t.Errorf("body lacks %q", want)
		}
	}
	if !strings.HasPrefix(c.Description, "Add a React form: steps, files and pitfalls distilled from 3 past tasks by ashigaru1, ashigaru2 and ashigaru3. Use when a task is like ") {
		t.Errorf("description %q", c.Description)
	}
}

// generatedCandidates scans a generated history of 1500 tasks on workers
// goroutines (0: one per CPU), after prepare (if any) had the history,
// and returns the candidates; a history that gave fewer than ten fails
// the test, since comparing such results would prove little.
func generatedCandidates(t *testing.T, workers int, prepare func(*historyDB)) []store.SkillCandidate {
	t.Helper()
	h := copyOfGeneratedHistory(t)
	if prepare != nil {
		prepare(h)
	}
	if _, err := scan(h.st, ScanOptions{Now: func() time.Time { return day }}, workers); err != nil {
		t.Fatal(err)
	}
	cs, err := h.st.SkillCandidates("")
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) < 10 {
		t.Fatalf("only %d candidates from a generated history", len(cs))
	}
	return cs
}

func TestScanSameOnAnyNumberOfGoroutines(t *testing.T) {
	if !reflect.DeepEqual(generatedCandidates(t, 1, nil), generatedCandidates(t, 3, nil)) {
		t.Fatal("1 goroutine and 3 gave different candidates")
	}
}

func TestScanSameWhenTasksAreNotStoredInSeqOrder(t *testing.T) {
	inOrder := generatedCandidates(t, 0, nil)
	reversed := generatedCandidates(t, 0, func(h *historyDB) {
		// The table's stored order backwards, each task keeping its seq:
		// a full scan's read in stored order must give up and read by seq.
		db, err := sql.Open("sqlite", "file:"+h.path+"?_pragma=busy_timeout(5000)")
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := db.Exec(`UPDATE tasks SET rowid = -rowid`); err != nil {
			t.Fatal(err)
		}
		err = h.st.ViewMine(func(v *store.MineView) error {
			return v.EachStoredTask(0, math.MaxInt64, func(*store.MineTask) error { return nil })
		})
		if !errors.Is(err, store.ErrNotInSeqOrder) {
			t.Fatalf("reading the reversed table in stored order: %v, want ErrNotInSeqOrder", err)
		}
	})
	if !reflect.DeepEqual(inOrder, reversed) {
		t.Fatal("the same history stored in another order gave other candidates")
	}
}

// An order a karo splits into parts is one piece of work, however alike
// the order and its parts are: they make no candidate together. The same
// work asked for again, in another order, is repeated work, and makes one
// of the tasks of both; an incremental scan and a full one agree.
func TestDelegationChainIsOnePieceOfWork(t *testing.T) {
	h := newHistoryDB(t)
	order := func(page string) []string {
		body := "Build the " + page + " page of the web app: its form, its validation and its tests."
		o := h.add(spec{role: "karo", title: "Build the " + page + " page", body: body, tags: []string{"frontend"}})
		for i, part := range []string{"form", "validation", "tests"} {
			h.add(spec{role: fmt.Sprintf("ashigaru%d", i+1), title: "Build the " + page + " page: " + part,
				body: body + " This part: the " + part + ".", tags: []string{"frontend"}, parent: o[0]})
		}
		return h.ids[len(h.ids)-4:]
	}
	first := order("signup")
	if res := h.scan(ScanOptions{}); len(res.Candidates) != 0 {
		t.Fatalf("one order and its parts made candidates: %+v", res.Candidates)
	}
	second := order("signup")
	res := h.scan(ScanOptions{})
	if len(res.Candidates) == 0 {
		t.Fatal("the same order twice made no candidate")
	}
	for _, c := range res.Candidates {
		cand := h.candidate(c.Name)
		fromFirst, fromSecond := 0, 0
		for _, id := range cand.SourceTaskIDs {
			if slices.Contains(first, id) {
				fromFirst++
			}
			if slices.Contains(second, id) {
				fromSecond++
			}
		}
		if fromFirst == 0 || fromSecond == 0 {
			t.Errorf("candidate %s (%s) holds tasks of one order only: %v", c.Name, c.Kind, cand.SourceTaskIDs)
		}
	}
	full := h.scan(ScanOptions{Full: true})
	if len(full.Candidates) != len(res.Candidates) {
		t.Errorf("a full scan finds %d candidates, the incremental one %d", len(full.Candidates), len(res.Candidates))
	}
}

// A candidate's name, heading, description and typical request come from
// one title: the most common one, even when another task arrived first or
// shares more words with the rest.
func TestNameAndTypicalRequestShareTheMostCommonTitle(t *testing.T) {
	h := newHistoryDB(t)
	// The first task's words are the ones all share: the most typical by
	// words alone, but its title is not the common one.
	h.add(reactForm("ashigaru1", "Create a form", "SignupForm", "name, email and password"),
		reactForm("ashigaru1", "Add the React signup form", "SignupForm", "name, email, password and avatar upload"),
		reactForm("ashigaru1", "Add the React signup form", "SignupForm", "name, email, password and captcha check"))
	res := h.scan(ScanOptions{})
	if len(res.Candidates) != 1 {
		t.Fatalf("candidates: %+v", res.Candidates)
	}
	c := h.candidate(res.Candidates[0].Name)
	if c.Name != "add-react-signup-form" {
		t.Errorf("name %q, want it from the most common title", c.Name)
	}
	if !strings.Contains(c.Body, "):\n\n> Add the React signup form\n") || !strings.HasPrefix(c.Body, "# Add the React signup form\n") {
		t.Errorf("heading or typical request not from the most common title:\n%s", c.Body)
	}
	if !strings.Contains(c.Description, `like "Add the React signup form"`) {
		t.Errorf("description quotes another title first: %s", c.Description)
	}
}

// Titles a name cannot spell (Japanese) give a readable name all the same:
// the words of the title it can spell, else the tag, else the role.
func TestNamesOfTitlesInOtherScripts(t *testing.T) {
	for _, tc := range []struct {
		title string
		tags  []string
		want  string
	}{
		{"READMEの誤字を直す", nil, "readme"},
		{"ドキュメントの誤字を直す", []string{"docs"}, "docs-tasks"},
		{"ドキュメントの誤字を直す", nil, "ashigaru1-tasks"},
	} {
		h := newHistoryDB(t)
		h.add(spec{role: "ashigaru1", title: tc.title, body: unrelated[0], tags: tc.tags},
			spec{role: "ashigaru1", title: tc.title, body: unrelated[1], tags: tc.tags})
		res := h.scan(ScanOptions{})
		var names []string
		for _, c := range res.Candidates {
			if c.Kind == KindTitle {
				names = append(names, c.Name)
			}
			if err := ValidName(c.Name); err != nil || strings.HasPrefix(c.Name, "skill-") {
				t.Errorf("%s: name %q is not a readable skill name (%v)", tc.title, c.Name, err)
			}
		}
		if len(names) != 1 || names[0] != tc.want {
			t.Errorf("%s %v: title candidate named %v, want %s", tc.title, tc.tags, names, tc.want)
		}
	}
}
