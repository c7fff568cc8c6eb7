package skills

import (
	"bytes"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/shogun-dev/shogun/store"
)

// pendingHistory has three pending candidates; review shows the one with
// most tasks first, then by name: fix-flaky-test, plan-sprint,
// write-release-notes.
func pendingHistory(t *testing.T) *historyDB {
	t.Helper()
	h := newHistoryDB(t)
	h.add(
		spec{role: "ashigaru1", title: "Fix flaky test", body: unrelated[0]},
		spec{role: "ashigaru1", title: "Fix flaky test", body: unrelated[1]},
		spec{role: "ashigaru1", title: "Fix flaky test", body: unrelated[2], status: store.StatusFailed, summary: "Failed: cannot reproduce"},
		spec{role: "ashigaru2", title: "Write release notes", body: unrelated[3]},
		spec{role: "ashigaru2", title: "Write release notes", body: unrelated[5]},
		spec{role: "karo", title: "Plan the sprint", body: unrelated[6]},
		spec{role: "karo", title: "Plan the sprint", body: unrelated[7]},
	)
	h.scan(ScanOptions{})
	return h
}

// review runs a review with the given keys and editor, at width columns.
func review(t *testing.T, h *historyDB, keys string, width int, edit func(string) error) (ReviewSummary, string) {
	t.Helper()
	var out bytes.Buffer
	r := &Review{Store: h.st, In: strings.NewReader(keys), Out: &out, Width: width, Edit: edit}
	sum, err := r.Run()
	if err != nil {
		t.Fatal(err)
	}
	return sum, out.String()
}

func statuses(h *historyDB) map[string]string {
	m := map[string]string{}
	for n, c := range h.candidates() {
		m[n] = c.Status
	}
	return m
}

func TestReviewKeys(t *testing.T) {
	cases := []struct {
		name   string
		keys   string
		want   map[string]string
		sum    ReviewSummary
		output []string
	}{
		{
			name: "approve, reject, skip",
			keys: "ars",
			want: map[string]string{"fix-flaky-test": store.SkillApproved, "plan-sprint": store.SkillRejected, "write-release-notes": store.SkillPending},
			sum:  ReviewSummary{Approved: []string{"fix-flaky-test"}, Rejected: []string{"plan-sprint"}, Skipped: []string{"write-release-notes"}},
			output: []string{"Skill candidate 1 of 3", "Skill candidate 3 of 3", "approved fix-flaky-test", "rejected plan-sprint",
				"skipped write-release-notes", "Review done: 1 approved, 1 rejected, 1 skipped.", "Next: shogun skills export"},
		},
		{
			name:   "quit at once",
			keys:   "q",
			want:   map[string]string{"fix-flaky-test": store.SkillPending, "plan-sprint": store.SkillPending, "write-release-notes": store.SkillPending},
			sum:    ReviewSummary{Quit: true, Left: 3},
			output: []string{"Skill candidate 1 of 3", "Review done: 0 approved, 0 rejected, 0 skipped, 3 not reviewed (quit)."},
		},
		{
			name:   "unknown keys, Enter and arrow keys do nothing; Ctrl-C quits",
			keys:   "x\r\x1b[A\x1b[Bs\x03",
			want:   map[string]string{"fix-flaky-test": store.SkillPending, "plan-sprint": store.SkillPending, "write-release-notes": store.SkillPending},
			sum:    ReviewSummary{Skipped: []string{"fix-flaky-test"}, Quit: true, Left: 2},
			output: []string{"keys: a approve, r reject, e edit, s skip, q quit", "2 not reviewed (quit)"},
		},
		{
			name: "end of input quits",
			keys: "a",
			want: map[string]string{"fix-flaky-test": store.SkillApproved, "plan-sprint": store.SkillPending, "write-release-notes": store.SkillPending},
			sum:  ReviewSummary{Approved: []string{"fix-flaky-test"}, Quit: true, Left: 2},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := pendingHistory(t)
			sum, out := review(t, h, tc.keys, 80, func(string) error { return nil })
			if got := statuses(h); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("statuses %v, want %v", got, tc.want)
			}
			if !reflect.DeepEqual(sum, tc.sum) {
				t.Errorf("summary %+v, want %+v", sum, tc.sum)
			}
			for _, w := range tc.output {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
}

func TestReviewShowsCandidate(t *testing.T) {
	h := pendingHistory(t)
	_, out := review(t, h, "q", 80, nil)
	c := h.candidate("fix-flaky-test")
	for _, w := range []string{
		"name\n  fix-flaky-test\n", "description\n  " + c.Description[:40], "source tasks\n",
		c.SourceTaskIDs[0] + "  ashigaru1  ", "  failed\n", "    Fix flaky test\n", "report: cannot reproduce",
		"body\n  # Fix flaky test\n", "[a]pprove [r]eject [s]kip [q]uit > ",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
	if strings.Contains(out, "\x1b[") {
		t.Error("colour without Color")
	}
}

func TestReviewEdit(t *testing.T) {
	h := pendingHistory(t)
	edited := "---\nname: flaky-tests\ndescription: Fixes a flaky test. Use when CI fails now and then.\n---\n\n# Flaky tests\n\nRun it 100 times.\n"
	var seen string
	sum, out := review(t, h, "ea", 80, func(path string) error {
		b, err := os.ReadFile(path)
		seen = string(b)
		if err != nil {
			return err
		}
		return os.WriteFile(path, []byte(edited), 0o644)
	})
	if !strings.HasPrefix(seen, "---\nname: fix-flaky-test\ndescription: ") {
		t.Errorf("editor was given:\n%s", seen)
	}
	c := h.candidate("flaky-tests")
	if c.Status != store.SkillApproved || c.Description != "Fixes a flaky test. Use when CI fails now and then." || c.Body != "# Flaky tests\n\nRun it 100 times.\n" || c.EditedAt.IsZero() {
		t.Errorf("after edit and approve: %+v", c)
	}
	if !reflect.DeepEqual(sum.Edited, []string{"flaky-tests"}) || !reflect.DeepEqual(sum.Approved, []string{"flaky-tests"}) {
		t.Errorf("summary %+v", sum)
	}
	if !strings.Contains(out, "edit kept") || !strings.Contains(out, "  flaky-tests\n") {
		t.Errorf("output:\n%s", out)
	}
	ds, _ := h.st.SkillDecisions(c.ID)
	var log []string
	for _, d := range ds {
		log = append(log, d.Decision+" by "+d.By)
	}
	if !reflect.DeepEqual(log, []string{"edited by review", "approved by review"}) {
		t.Errorf("decisions %v", log)
	}
}

func TestReviewEditNotKept(t *testing.T) {
	cases := map[string]func(string) error{
		"invalid name": func(p string) error {
			return os.WriteFile(p, []byte("---\nname: Not Valid\ndescription: x\n---\n\nbody\n"), 0o644)
		},
		"name of another candidate": func(p string) error {
			return os.WriteFile(p, []byte("---\nname: plan-sprint\ndescription: x\n---\n\nbody\n"), 0o644)
		},
		"editor fails":    func(string) error { return errors.New("exit status 1") },
		"nothing changed": func(string) error { return nil },
	}
	for name, edit := range cases {
		t.Run(name, func(t *testing.T) {
			h := pendingHistory(t)
			before := h.candidate("fix-flaky-test")
			sum, out := review(t, h, "es", 80, edit)
			if after := h.candidate("fix-flaky-test"); !reflect.DeepEqual(after, before) {
				t.Errorf("candidate changed:\n%+v\n%+v", after, before)
			}
			if len(sum.Edited) != 0 || !reflect.DeepEqual(sum.Skipped, []string{"fix-flaky-test"}) {
				t.Errorf("summary %+v", sum)
			}
			if !strings.Contains(out, "not kept") && !strings.Contains(out, "no change") && !strings.Contains(out, "nothing changed") {
				t.Errorf("output does not say the edit was dropped:\n%s", out)
			}
		})
	}
}

func TestReviewNarrowTerminal(t *testing.T) {
	h := pendingHistory(t)
	_, out := review(t, h, "sss", 24, func(string) error { return nil })
	for _, l := range strings.Split(out, "\n") {
		if w := cellWidth(l); w > 24 {
			t.Errorf("line of %d cells at width 24: %q", w, l)
		}
	}
	if !strings.Contains(out, "a/r/e/s/q > ") {
		t.Errorf("narrow prompt missing:\n%s", out)
	}
}

func TestReviewNothingPending(t *testing.T) {
	h := newHistoryDB(t)
	sum, out := review(t, h, "", 80, nil)
	if !reflect.DeepEqual(sum, ReviewSummary{}) || !strings.Contains(out, "No pending skill candidates") {
		t.Errorf("%+v\n%s", sum, out)
	}
}

func TestDecide(t *testing.T) {
	h := pendingHistory(t)
	if _, err := Decide(h.st, []string{"fix-flaky-test", "nope"}, nil, day); !errors.Is(err, store.ErrUnknownSkill) {
		t.Fatalf("unknown name: %v", err)
	}
	if got := statuses(h)["fix-flaky-test"]; got != store.SkillPending {
		t.Fatalf("a failed decision changed fix-flaky-test to %s", got)
	}
	if _, err := Decide(h.st, []string{"plan-sprint"}, []string{"plan-sprint"}, day); err == nil {
		t.Error("approve and reject of one name accepted")
	}
	if _, err := Decide(h.st, []string{"fix-flaky-test", "plan-sprint"}, []string{"write-release-notes"}, day); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"fix-flaky-test": store.SkillApproved, "plan-sprint": store.SkillApproved, "write-release-notes": store.SkillRejected}
	if got := statuses(h); !reflect.DeepEqual(got, want) {
		t.Errorf("statuses %v", got)
	}
}

func TestWrap(t *testing.T) {
	cases := []struct {
		in    string
		width int
		want  []string
	}{
		{"short", 20, []string{"short"}},
		{"one two three four", 10, []string{"one two", "three four"}},
		{"  indented words here", 12, []string{"  indented", "  words here"}},
		{"- a list item that wraps", 12, []string{"- a list", "  item that", "  wraps"}},
		{"12. a numbered item", 12, []string{"12. a", "    numbered", "    item"}},
		{"> a quoted line here", 12, []string{"> a quoted", "> line here"}},
		{"abcdefghijklmnopqrstuvwxyz", 10, []string{"abcdefghij", "klmnopqrst", "uvwxyz"}},
		{"ログイン画面を追加する", 10, []string{"ログイン画", "面を追加す", "る"}},
	}
	for _, c := range cases {
		if got := wrap(c.in, c.width); !reflect.DeepEqual(got, c.want) {
			t.Errorf("wrap(%q, %d) = %q, want %q", c.in, c.width, got, c.want)
		}
	}
}
