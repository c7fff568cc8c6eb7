package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"
)

// searchCorpus is a small history with what makes search hard: words
// inside other words, punctuation, operators as text, Japanese without
// spaces, accents, and words only in a report's details or a cancel reason.
var searchCorpus = []struct {
	title, body string
	report      string // "": no report; else "status|summary|details"
	cancel      string // a cancel reason
}{
	{"Add the login page", "Create web/src/login.tsx with a form.", "done|Login page added|Tested in Chrome and Firefox.", ""},
	{"Fix the flaky test", "The test TestLogin fails one run in ten.", "failed|Could not reproduce|Ran it 500 times; the flakiness is in CI only.", ""},
	{"Refactor the logger", "Split logging into its own package.", "done|Logger split|New package internal/logging.", ""},
	{"ログイン画面を修正", "ログインボタンの色を変更する。", "done|修正しました|画面のテストも追加済み。", ""},
	{"データベースの移行", "移行スクリプトを書く", "", "不要になった"},
	{"Update the README", "Mention the search flag: `shogun tasks --search`.", "done|README updated|Added a section on search AND filters.", ""},
	{"Document NEAR and NOT", "Explain title:login, (a OR b), ^start, -minus and \"quotes\".", "", ""},
	{"Café menu", "Naïve über résumé.", "done|Menu done|", ""},
	{"Release 3.2", "Tag v3.2.0 and write the changelog for 3版.", "blocked|Waiting for sign-off|The karo must approve 3.2 first.", ""},
	{"Speed up search", "Index the history; p50 under 50 ms over 1,000,000 tasks.", "", "Superseded by t-20261122-0002"},
	{"login-page follow-up", "Ask the karo about the login page's wording.", "", ""},
}

// searchHistory records searchCorpus: each task sent, assigned, reported
// on or cancelled as its entry says.
func searchHistory(t *testing.T) *Store {
	t.Helper()
	s, run := workspace(t)
	for i, c := range searchCorpus {
		rec := command(run, fmt.Sprintf("%d.yaml", i), fmt.Sprintf("cmd-%d", i), "ashigaru1")
		rec.Title, rec.Body = c.title, c.body
		rec.ReceivedAt = day.Add(time.Duration(i) * time.Minute)
		task := accept(t, s, rec)[0].Task
		switch {
		case c.report != "":
			if _, err := s.Assign(task.ID, rec.ReceivedAt); err != nil {
				t.Fatal(err)
			}
			parts := strings.SplitN(c.report, "|", 3)
			r := report(task.ID, task.ID+".yaml", parts[0], rec.ReceivedAt.Add(time.Second))
			r.Summary, r.Details = parts[1], parts[2]
			if _, _, err := s.AcceptReport(r); err != nil {
				t.Fatal(err)
			}
		case c.cancel != "":
			if _, err := s.Cancel(task.ID, c.cancel, rec.ReceivedAt.Add(time.Second)); err != nil {
				t.Fatal(err)
			}
		}
	}
	return s
}

// likeWords is the test's own idea of words, written apart from the
// store's: lower case, letters and digits kept, each Han, kana or
// prolonged-sound character a word of its own, everything else a space;
// the result starts and ends with a space, so ' word ' finds a word.
func likeWords(s string) string {
	var b strings.Builder
	b.WriteByte(' ')
	for _, r := range strings.ToLower(s) {
		switch {
		case unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Katakana, r) || r == 'ー':
			b.WriteString(" " + string(r) + " ")
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		default:
			b.WriteByte(' ')
		}
	}
	b.WriteByte(' ')
	return " " + strings.Join(strings.Fields(b.String()), " ") + " "
}

// likeTerm is one thing a search must find: words next to each other, the
// last one perhaps only a prefix.
type likeTerm struct {
	words  string
	prefix bool
}

// likeScan answers a search the slow way: a LIKE over every task's title,
// body and report text, made of likeWords, in a table of its own. Each term
// must be in one field; the terms may be in different ones.
func likeScan(t *testing.T, s *Store, terms []likeTerm) []string {
	t.Helper()
	if _, err := s.w.Exec(`CREATE TEMP TABLE IF NOT EXISTS like_words (id TEXT, seq INTEGER, title TEXT, body TEXT, report TEXT)`); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := s.w.QueryRow(`SELECT COUNT(*) FROM like_words`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		all, err := s.Tasks(TaskFilter{})
		if err != nil {
			t.Fatal(err)
		}
		for _, task := range all {
			reps, err := s.ReportsForTask(task.ID)
			if err != nil {
				t.Fatal(err)
			}
			report := task.Summary
			for _, r := range reps {
				report += "\n" + r.Summary + "\n" + r.Details
			}
			if _, err := s.w.Exec(`INSERT INTO like_words VALUES (?, ?, ?, ?, ?)`, task.ID, task.Seq,
				likeWords(task.Title), likeWords(task.Body), likeWords(report)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(terms) == 0 {
		return nil
	}
	var where []string
	var args []any
	for _, term := range terms {
		pattern := "% " + strings.TrimSpace(likeWords(term.words)) + " %"
		if term.prefix {
			pattern = strings.TrimSuffix(pattern, " %") + "%"
		}
		where = append(where, "(title LIKE ? OR body LIKE ? OR report LIKE ?)")
		args = append(args, pattern, pattern, pattern)
	}
	rows, err := s.w.Query(`SELECT id FROM like_words WHERE `+strings.Join(where, " AND ")+` ORDER BY seq DESC`, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

func searchIDs(t *testing.T, s *Store, f TaskFilter) []string {
	t.Helper()
	ts, err := s.Tasks(f)
	if err != nil {
		t.Fatalf("Tasks(%+v): %v", f, err)
	}
	var ids []string
	for _, task := range ts {
		ids = append(ids, task.ID)
	}
	return ids
}

// Search finds exactly what a LIKE scan over the same words finds, for
// words, phrases, prefixes, Japanese, and text full of FTS5's own syntax,
// which must never be a syntax error.
func TestSearchMatchesALikeScan(t *testing.T) {
	s := searchHistory(t)
	w := func(words ...string) []likeTerm {
		var ts []likeTerm
		for _, x := range words {
			ts = append(ts, likeTerm{words: x})
		}
		return ts
	}
	for _, tc := range []struct {
		search string
		terms  []likeTerm
		some   bool // the corpus holds a match (so the case tests something)
	}{
		{"login", w("login"), true},
		{"LOGIN", w("login"), true},
		{"login page", w("login", "page"), true},
		{`"login page"`, w("login page"), true},
		{`"page login"`, w("page login"), false},
		{"log*", []likeTerm{{words: "log", prefix: true}}, true},
		{"flak*", []likeTerm{{words: "flak", prefix: true}}, true},
		{`"the login"*`, []likeTerm{{words: "the login", prefix: true}}, true},
		{"test", w("test"), true},                        // not "tested", not "TestLogin"
		{"chrome firefox", w("chrome", "firefox"), true}, // in the details only
		{"superseded", w("superseded"), true},            // in a cancel reason
		{"login-page", w("login page"), true},
		{"web/src/login.tsx", w("web src login tsx"), true},
		{"1,000,000", w("1 000 000"), true},
		{"ログイン", w("ログイン"), true},
		{"修正", w("修正"), true},
		{"画面 テスト", w("画面", "テスト"), true},
		{"ログ*", []likeTerm{{words: "ログ", prefix: true}}, true},
		{"不要", w("不要"), true},
		{"3版", w("3版"), true},
		{"ンロ", w("ンロ"), false},
		{"café", w("café"), true},
		{"über", w("über"), true},
		// FTS5's syntax is only text.
		{"AND", w("and"), true},
		{"OR NOT", w("or", "not"), true},
		{"NEAR(login page)", w("near login", "page"), false},
		{"title:login", w("title login"), true},
		{"(a OR b)", w("a", "or", "b"), true},
		{"^start", w("start"), true},
		{"-minus", w("minus"), true},
		{"+login", w("login"), true},
		{`"quotes"`, w("quotes"), true},
		{`"unterminated phrase`, w("unterminated phrase"), false},
		{`login"page`, w("login", "page"), true},
		{`'; DROP TABLE tasks; --`, w("drop", "table", "tasks"), false},
		{`a""b`, w("a", "b"), true},
		{`\`, nil, false},
		{`%`, nil, false},
		{`_`, nil, false},
		{`*`, nil, false},
		{`""`, nil, false},
		{`"" login`, w("login"), true},
		{`** login *`, w("login"), true},
		{"v3.2.0", w("v3 2 0"), true},
	} {
		t.Run(tc.search, func(t *testing.T) {
			got := searchIDs(t, s, TaskFilter{Search: tc.search})
			want := likeScan(t, s, tc.terms)
			if !slices.Equal(got, want) {
				t.Errorf("search %q = %v, a LIKE scan finds %v (FTS query %s)", tc.search, got, want, searchQuery(tc.search))
			}
			if tc.some != (len(want) > 0) {
				t.Errorf("search %q: the corpus should have %s match", tc.search, map[bool]string{true: "a", false: "no"}[tc.some])
			}
		})
	}
}

// Accents and letter case do not matter; a blank search is no search.
func TestSearchFolding(t *testing.T) {
	s := searchHistory(t)
	for search, want := range map[string]int{"cafe": 1, "CAFÉ": 1, "naive uber resume": 1, "": len(searchCorpus), "  ": len(searchCorpus)} {
		if got := searchIDs(t, s, TaskFilter{Search: search}); len(got) != want {
			t.Errorf("search %q found %d tasks, want %d", search, len(got), want)
		}
	}
}

// The filters combine with the search and with each other.
func TestSearchCombinesWithFilters(t *testing.T) {
	s := searchHistory(t)
	at := func(i int) time.Time { return day.Add(time.Duration(i) * time.Minute) }
	all := searchIDs(t, s, TaskFilter{})
	id := func(i int) string { return all[len(all)-1-i] } // all is newest first
	for _, tc := range []struct {
		f    TaskFilter
		want []string
	}{
		{TaskFilter{Search: "login"}, []string{id(10), id(6), id(0)}},
		{TaskFilter{Search: "login", Status: StatusDone}, []string{id(0)}},
		{TaskFilter{Search: "login", Since: at(1)}, []string{id(10), id(6)}},
		{TaskFilter{Search: "login", Until: at(1)}, []string{id(0)}},
		{TaskFilter{Search: "login", Since: at(1), Until: at(10)}, []string{id(6)}},
		{TaskFilter{Search: "login", Limit: 2}, []string{id(10), id(6)}},
		{TaskFilter{Search: "login", Role: "ashigaru2"}, nil},
		{TaskFilter{Since: at(8), Status: StatusCancelled}, []string{id(9)}},
		// Times within a second: a task at 10:15:00Z is after 10:14:59.5Z
		// and before 10:15:00.5Z, though text order says otherwise.
		{TaskFilter{Since: day.Add(-500 * time.Millisecond), Until: day.Add(500 * time.Millisecond)}, []string{id(0)}},
		{TaskFilter{Since: day.Add(time.Millisecond), Until: at(1)}, nil},
	} {
		if got := searchIDs(t, s, tc.f); !slices.Equal(got, tc.want) {
			t.Errorf("Tasks(%+v) = %v, want %v", tc.f, got, tc.want)
		}
	}
}

// The index follows every write: new tasks, reports, cancels, retries, and
// changes made by hand; a changed text is no longer found by its old words.
func TestSearchFollowsWrites(t *testing.T) {
	s, run := workspace(t)
	found := func(search string) []string { return searchIDs(t, s, TaskFilter{Search: search}) }
	rec := command(run, "a.yaml", "cmd-a", "ashigaru1")
	rec.Title, rec.Body = "Wire the pager", "Connect alerts to the pager."
	task := accept(t, s, rec)[0].Task
	if got := found("pager"); !slices.Equal(got, []string{task.ID}) {
		t.Fatalf("a new task: %v", got)
	}
	if _, err := s.Assign(task.ID, day); err != nil {
		t.Fatal(err)
	}
	r := report(task.ID, "r1.yaml", StatusFailed, day.Add(time.Minute))
	r.Summary, r.Details = "Quota exceeded", "The vendor's sandbox refused: zebra-42."
	if _, _, err := s.AcceptReport(r); err != nil {
		t.Fatal(err)
	}
	if got := found("zebra 42"); !slices.Equal(got, []string{task.ID}) {
		t.Fatalf("a report's details: %v", got)
	}
	if _, err := s.Retry(task.ID, day.Add(2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	// The summary is cleared, but the report stays in the history.
	if got := found("quota"); !slices.Equal(got, []string{task.ID}) {
		t.Fatalf("after a retry: %v", got)
	}
	if _, err := s.Cancel(task.ID, "Walrus instead", day.Add(3*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if got := found("walrus"); !slices.Equal(got, []string{task.ID}) {
		t.Fatalf("a cancel reason: %v", got)
	}
	if _, err := s.w.Exec(`UPDATE tasks SET title = 'Wire the siren', body = 'Siren.' WHERE id = ?`, task.ID); err != nil {
		t.Fatal(err)
	}
	if got := found("pager"); got != nil {
		t.Errorf("the old words are still found: %v", got)
	}
	if got := found("siren walrus zebra"); !slices.Equal(got, []string{task.ID}) {
		t.Errorf("after an edit: %v", got)
	}
	checkSearchIntegrity(t, s.w)
}

// checkSearchIntegrity runs FTS5's own check of the index.
func checkSearchIntegrity(t *testing.T, db *sql.DB) {
	t.Helper()
	if _, err := db.Exec(`INSERT INTO task_search (task_search, rank) VALUES ('integrity-check', 0)`); err != nil {
		t.Errorf("search index integrity: %v", err)
	}
}

// searchMigration is the index of the migration that adds the search index.
func searchMigration(t *testing.T) int {
	t.Helper()
	for i, m := range migrations {
		if strings.Contains(m, "CREATE VIRTUAL TABLE task_search") {
			return i
		}
	}
	t.Fatal("no migration creates task_search")
	return 0
}

// oldHistory makes a database as the shogun before the search index left
// it, with n finished tasks (every third one with "needle" in its report's
// details), and returns its path.
func oldHistory(t *testing.T, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "shogun.db")
	db, err := sql.Open("sqlite", dsn(path, false))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	v := searchMigration(t)
	for i, m := range migrations[:v] {
		if _, err := db.Exec(m); err != nil {
			t.Fatalf("migration %d: %v", i+1, err)
		}
	}
	at := formatTime(day)
	for _, q := range []string{
		fmt.Sprintf(`PRAGMA user_version = %d`, v),
		fmt.Sprintf(`INSERT INTO roles VALUES ('ashigaru1', 'A', 'roles/a.md', 1, '%s', '%s')`, at, at),
		fmt.Sprintf(`INSERT INTO runs (id, started_at, status) VALUES ('run-1', '%s', 'stopped')`, at),
		fmt.Sprintf(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < %d)
INSERT INTO commands (id, claim_name, file, to_role, title, body, run_id, received_at)
SELECT 'cmd-' || i, 'c', 'c.yaml', 'ashigaru1', 'Task number ' || i, 'Body ' || i, 'run-1', '%s' FROM n`, n, at),
		fmt.Sprintf(`INSERT INTO tasks (id, run_id, role_id, title, body, status, created_at, updated_at, command_id, seq, summary)
SELECT 't-' || substr(id, 5), run_id, to_role, title, body, 'done', received_at, received_at, id, CAST(substr(id, 5) AS INTEGER), 'ok'
FROM commands`),
		`INSERT INTO reports (claim_name, file, task_id, status, summary, details, received_at)
SELECT 'r', 'r.yaml', id, 'done', 'ok', CASE WHEN seq % 3 = 0 THEN 'found the needle' ELSE 'hay' END, created_at FROM tasks`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return path
}

// Opening a history from before the search index builds it, in batches,
// with progress; an interrupted build keeps its work and the next Open
// finishes it, and what changed meanwhile is indexed as it is then.
func TestOpenBuildsTheSearchIndexOfAnOldHistory(t *testing.T) {
	const n = 900
	path := oldHistory(t, n)
	small := func(o *openOptions) { o.batch = 100 }

	// The first Open is interrupted after its first batch.
	ctx, cancel := context.WithCancel(context.Background())
	var first []Progress
	_, err := Open(path, small, WithContext(ctx), WithProgress(func(p Progress) {
		first = append(first, p)
		cancel()
	}))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted Open: %v, want context.Canceled", err)
	}
	if len(first) != 1 || first[0].Done <= 0 || first[0].Done >= n || first[0].Total != n {
		t.Fatalf("progress before the interruption: %+v", first)
	}
	t.Log(err)

	// Meanwhile, with the index half built, a task not yet indexed and one
	// already indexed change, and a new task arrives.
	db, err := sql.Open("sqlite", dsn(path, false))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		fmt.Sprintf(`UPDATE tasks SET title = 'Renamed late' WHERE seq = %d`, n),
		`UPDATE tasks SET title = 'Renamed early' WHERE seq = 1`,
		`INSERT INTO commands (id, claim_name, file, to_role, title, body, run_id, received_at)
VALUES ('cmd-new', 'c', 'c.yaml', 'ashigaru1', 'Newcomer', 'b', 'run-1', '2026-11-23T00:00:00Z')`,
		fmt.Sprintf(`INSERT INTO tasks (id, run_id, role_id, title, body, status, created_at, updated_at, command_id, seq)
VALUES ('t-new', 'run-1', 'ashigaru1', 'Newcomer', 'b', 'queued', '2026-11-23T00:00:00Z', '2026-11-23T00:00:00Z', 'cmd-new', %d)`, n+1),
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()

	var rest []Progress
	s, err := Open(path, small, WithProgress(func(p Progress) { rest = append(rest, p) }))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if len(rest) == 0 || rest[len(rest)-1].Done != rest[len(rest)-1].Total || rest[0].Total != n-first[0].Done {
		t.Errorf("progress of the second Open: %+v", rest)
	}
	for i := 1; i < len(rest); i++ {
		if rest[i].Done <= rest[i-1].Done {
			t.Errorf("progress went back: %+v", rest)
		}
	}
	for search, want := range map[string]int{"needle": n / 3, "number": n - 2, "renamed": 2, "renamed late": 1,
		"renamed early": 1, "newcomer": 1, "hay": n - n/3} {
		if got := searchIDs(t, s, TaskFilter{Search: search}); len(got) != want {
			t.Errorf("search %q found %d tasks, want %d", search, len(got), want)
		}
	}
	checkSearchIntegrity(t, s.w)

	// Built once: a third Open has nothing to do.
	s.Close()
	var third []Progress
	s, err = Open(path, WithProgress(func(p Progress) { third = append(third, p) }))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if len(third) != 0 {
		t.Errorf("a third Open built the index again: %+v", third)
	}
}

// A new history needs no build.
func TestNewHistoryNeedsNoSearchBuild(t *testing.T) {
	called := false
	s, err := Open(filepath.Join(t.TempDir(), "shogun.db"), WithProgress(func(Progress) { called = true }))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if called {
		t.Error("Open of a new history reported progress")
	}
}

// Tasks inserted in bulk are indexed with their reports, once each.
func TestSearchFindsBulkInsertedTasks(t *testing.T) {
	s, run := workspace(t)
	var recs []FinishedTaskRecord
	for i := range 50 {
		recs = append(recs, FinishedTaskRecord{Role: "ashigaru1", Title: fmt.Sprintf("Bulk task %d", i), Body: "Body",
			Status: StatusDone, Summary: "Done", Details: map[bool]string{true: "with a comet", false: "plain"}[i%5 == 0],
			CreatedAt: day.Add(time.Duration(i) * time.Second), FinishedAt: day.Add(time.Duration(i) * time.Second)})
	}
	if _, err := s.InsertFinishedTasks(run.ID, recs); err != nil {
		t.Fatal(err)
	}
	accept(t, s, command(run, "live.yaml", "live", "ashigaru1")) // through the triggers again
	for search, want := range map[string]int{"bulk": 50, "comet": 10, "bulk task 7": 1, "title of live": 1, "body": 51} {
		if got := searchIDs(t, s, TaskFilter{Search: search}); len(got) != want {
			t.Errorf("search %q found %d tasks, want %d", search, len(got), want)
		}
	}
	var left int
	if err := s.r.QueryRow(`SELECT COUNT(*) FROM search_backfill`).Scan(&left); err != nil || left != 0 {
		t.Errorf("search_backfill rows left: %d, %v", left, err)
	}
	checkSearchIntegrity(t, s.w)
}
