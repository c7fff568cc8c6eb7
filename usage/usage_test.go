package usage

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// The fixtures are lines the pinned CLIs wrote (Claude Code 2.1.197, Codex
// 0.169.0, Gemini CLI 0.61.0) against tools/fakemodel, shortened, with the
// folder set to /work/proj and the token numbers made distinct.
const fixtureDir = "/work/proj"

// install copies a fixture to where the CLI keeps it under home, and
// returns the Source and the file's path.
func install(t *testing.T, cli, fixture string) (Source, string) {
	t.Helper()
	home := t.TempDir()
	var rel string
	switch cli {
	case CLIClaude:
		rel = filepath.Join("projects", claudeProject(fixtureDir), "0a1b.jsonl")
	case CLICodex:
		rel = filepath.Join("sessions", "2026", "11", "28", "rollout-2026-11-28T11-32-50-01a2.jsonl")
	case CLIGemini:
		rel = filepath.Join("tmp", "proj", "chats", "session-2026-11-28T11-32-ef34d7c7.jsonl")
	case CLICopilot:
		rel = "r.copilot-otel.jsonl"
	}
	b, err := os.ReadFile(filepath.Join("testdata", fixture))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(home, rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if cli == CLICopilot {
		home = path // the export file itself
	}
	return Source{Role: "r", CLI: cli, Home: home, Workdir: fixtureDir}, path
}

// collect reads every file of s as the team does, twice, and sums the
// records the way the history keeps them: one per key, the last line wins.
func collect(t *testing.T, s Source, cursors map[string]Cursor, byKey map[string]Record) Tokens {
	t.Helper()
	files, err := s.Files(time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no %s files found under %s", s.CLI, s.Home)
	}
	for _, f := range files {
		recs, c, err := s.Read(f, cursors[f], time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		cursors[f] = c
		for _, r := range recs {
			byKey[f+"\x00"+r.Key] = r
		}
	}
	var sum Tokens
	for _, r := range byKey {
		sum = sum.Add(r.Tokens)
	}
	return sum
}

func TestReadEachCLIsRecords(t *testing.T) {
	for _, tc := range []struct {
		cli, fixture string
		want         Tokens
		model        string
		records      int
	}{
		// Three replies; the second streamed on two lines with the same
		// message and request id, the later line with the final count.
		{CLIClaude, "claude-session.jsonl", Tokens{Input: 42, Output: 1850, CacheRead: 60000, CacheWrite: 9000}, "claude-opus-4-5-20251101", 3},
		// Three responses (token_usage_record); the token_count events
		// repeat their totals and must not count again.
		{CLICodex, "codex-rollout.jsonl", Tokens{Input: 5400, Output: 300, CacheRead: 600, Reasoning: 30}, "gpt-5.1-codex", 3},
		// Older rollouts: only token_count totals, one event repeated.
		{CLICodex, "codex-rollout-totals.jsonl", Tokens{Input: 5400, Output: 300, CacheRead: 600, Reasoning: 30}, "gpt-5.1-codex", 3},
		// Three replies, two written twice under the same id; thoughts
		// are output the API counts apart.
		{CLIGemini, "gemini-session.jsonl", Tokens{Input: 18000, Output: 294, CacheRead: 6000, Reasoning: 54}, "gemini-3-pro-preview", 3},
	} {
		t.Run(tc.fixture, func(t *testing.T) {
			skipGeminiOnWindows(t, tc.cli)
			s, _ := install(t, tc.cli, tc.fixture)
			byKey := map[string]Record{}
			got := collect(t, s, map[string]Cursor{}, byKey)
			if got != tc.want {
				t.Errorf("tokens = %+v, want %+v", got, tc.want)
			}
			if len(byKey) != tc.records {
				t.Errorf("%d records, want %d", len(byKey), tc.records)
			}
			for _, r := range byKey {
				if r.Model != tc.model || r.At.IsZero() {
					t.Errorf("record %s: model %q at %v, want model %q and a time", r.Key, r.Model, r.At, tc.model)
				}
			}
		})
	}
}

// A file read while the CLI writes it: the part after the cursor is read
// next time, a half-written last line only once it is whole, and nothing
// counts twice.
func TestReadGoesOnFromTheCursor(t *testing.T) {
	for _, tc := range []struct{ cli, fixture string }{
		{CLIClaude, "claude-session.jsonl"}, {CLICodex, "codex-rollout.jsonl"}, {CLIGemini, "gemini-session.jsonl"},
	} {
		t.Run(tc.fixture, func(t *testing.T) {
			skipGeminiOnWindows(t, tc.cli)
			s, path := install(t, tc.cli, tc.fixture)
			whole, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			want := collect(t, s, map[string]Cursor{}, map[string]Record{})
			cursors, byKey := map[string]Cursor{}, map[string]Record{}
			// Grow the file a few hundred bytes at a time, cutting lines.
			for n := 0; n < len(whole); n += 333 {
				if err := os.WriteFile(path, whole[:n], 0o644); err != nil {
					t.Fatal(err)
				}
				collect(t, s, cursors, byKey)
			}
			if err := os.WriteFile(path, whole, 0o644); err != nil {
				t.Fatal(err)
			}
			if got := collect(t, s, cursors, byKey); got != want {
				t.Errorf("read in pieces: %+v, read at once: %+v", got, want)
			}
			if c := cursors[path]; c.Offset != int64(len(whole)) {
				t.Errorf("cursor at %d, want the end %d", c.Offset, len(whole))
			}
		})
	}
}

// Conversations held in another folder are another role's (or the user's
// own): none of their tokens count.
func TestReadSkipsAnotherFoldersConversation(t *testing.T) {
	for _, tc := range []struct{ cli, fixture string }{
		{CLICodex, "codex-rollout.jsonl"}, {CLIGemini, "gemini-session.jsonl"},
	} {
		t.Run(tc.fixture, func(t *testing.T) {
			s, path := install(t, tc.cli, tc.fixture)
			s.Workdir = "/work/other"
			recs, c, err := s.Read(path, Cursor{}, time.Time{})
			if err != nil || len(recs) != 0 {
				t.Fatalf("read another folder's file: %d records, %v", len(recs), err)
			}
			if again, _, _ := s.Read(path, c, time.Time{}); len(again) != 0 {
				t.Errorf("read again: %d records", len(again))
			}
		})
	}
	s, _ := install(t, CLIClaude, "claude-session.jsonl")
	s.Workdir = "/work/other"
	if files, err := s.Files(time.Time{}); err != nil || len(files) != 0 {
		t.Errorf("Claude Code files of another folder: %v, %v", files, err)
	}
}

// Records from before the team started are the user's own work.
func TestReadLeavesOutRecordsBeforeSince(t *testing.T) {
	s, path := install(t, CLIClaude, "claude-session.jsonl")
	since := time.Date(2026, 11, 28, 11, 33, 0, 0, time.UTC)
	if files, _ := s.Files(time.Now().Add(time.Hour)); len(files) != 0 {
		t.Errorf("a file not changed since: listed %v", files)
	}
	recs, _, err := s.Read(path, Cursor{}, since)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if r.At.Before(since) {
			t.Errorf("record at %v before %v", r.At, since)
		}
	}
	if len(recs) == 0 {
		t.Error("no records after since")
	}
}

func TestCostByLongestPrefix(t *testing.T) {
	p := DefaultPrices()
	if p.AsOf == "" {
		t.Error("prices.yaml has no as_of date")
	}
	tok := Tokens{Input: 1_000_000, Output: 1_000_000, CacheRead: 1_000_000, CacheWrite: 1_000_000}
	got, ok := p.Cost("claude-opus-4-5-20251101", tok)
	if want := 5.00 + 25.00 + 0.50 + 6.25; !ok || got != want {
		t.Errorf("opus cost = %v (%v), want %v", got, ok, want)
	}
	got, _ = p.Cost("gpt-5-mini-2025", Tokens{Output: 1_000_000})
	if got != 2.00 {
		t.Errorf("gpt-5-mini output = %v, want 2 (the longer entry, not gpt-5)", got)
	}
	if _, ok := p.Cost("fake-model", tok); ok {
		t.Error("an unknown model was priced")
	}
	over := p.With(map[string]Price{"fake-model": {Input: 1}})
	if got, ok := over.Cost("fake-model", Tokens{Input: 2_000_000}); !ok || got != 2 {
		t.Errorf("overridden price: %v %v", got, ok)
	}
}

// skipGeminiOnWindows skips the Gemini CLI fixture on Windows: its
// projectHash is the SHA-256 of a Unix folder (fixtureDir), which Windows
// spells with backslashes (Gemini CLI there hashes its own Windows path).
func skipGeminiOnWindows(t *testing.T, cli string) {
	t.Helper()
	if cli == CLIGemini && runtime.GOOS == "windows" {
		t.Skip("the Gemini fixture's projectHash is of a Unix path")
	}
}

// Copilot CLI 1.0.102's OpenTelemetry file (COPILOT_OTEL_FILE_EXPORTER_PATH,
// lines it wrote against tools/fakemodel, a second call added with cache
// and reasoning): each chat span is one call, the invoke_agent span that
// repeats their sums and the metrics count nothing, and the prompt's
// cached part is kept apart from input.
func TestCopilotOpenTelemetryFile(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "copilot-otel.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "r.copilot-otel.jsonl")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	s, ok := SourceFor("r", CLICopilot, fixtureDir, func(k string) (string, bool) {
		return map[string]string{CopilotOTelFileVar: path}[k], k == CopilotOTelFileVar
	})
	if !ok || s.Home != path {
		t.Fatalf("SourceFor = %+v, %v; want the export file", s, ok)
	}
	byKey := map[string]Record{}
	got := collect(t, s, map[string]Cursor{}, byKey)
	if want := (Tokens{Input: 13183 + 400, Output: 1 + 250, CacheRead: 13000, Reasoning: 40}); got != want || len(byKey) != 2 {
		t.Errorf("tokens = %+v in %d calls, want %+v in 2", got, len(byKey), want)
	}
	r := byKey[path+"\x00chatcmpl-fake166389000001"]
	if r.Model != "gpt-4o" || r.At.Unix() != 1795875007 {
		t.Errorf("first call = %+v, want gpt-4o at 1795875007", r)
	}
}

// The supervisor gives a copilot role the workspace's export file unless
// its environment names one, or exports to a collector of its own.
func TestCopilotOTelFileLeavesAPersonsExportAlone(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		path string
		set  bool
	}{
		{nil, "/ws/f", true},
		{map[string]string{CopilotOTelFileVar: "/mine.jsonl"}, "/mine.jsonl", false},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://collector:4318"}, "", false},
		{map[string]string{"COPILOT_OTEL_EXPORTER_TYPE": "otlp-http"}, "", false},
	} {
		path, set := CopilotOTelFile(func(k string) (string, bool) { v, ok := c.env[k]; return v, ok }, "/ws/f")
		if path != c.path || set != c.set {
			t.Errorf("%v: %q, %v; want %q, %v", c.env, path, set, c.path, c.set)
		}
	}
}

// A role whose CLI writes no records the usage package reads (a generic
// program, agent-sim) has no source; one of a CLI that does is read in its
// working folder as the CLI records it, links resolved.
func TestSourceForResolvesOnlyTheCLIsItReads(t *testing.T) {
	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "work")
	if err := os.Symlink(real, link); err != nil {
		t.Skipf("no symlinks here: %v", err)
	}
	home := func(k string) (string, bool) {
		if k == "HOME" {
			return "/home/someone", true
		}
		return "", false
	}
	for _, cli := range []string{"generic", ""} {
		if s, ok := SourceFor("r", cli, link, home); ok {
			t.Errorf("cli %q: source %+v, want none", cli, s)
		}
	}
	want, err := filepath.EvalSymlinks(link)
	if err != nil { // Wine makes links it cannot follow
		t.Skipf("this system cannot follow the link it made: %v", err)
	}
	s, ok := SourceFor("r", CLIClaude, link, home)
	if !ok || s.Workdir != want || s.Home != filepath.Join("/home/someone", ".claude") {
		t.Errorf("claude: source %+v (ok %v), want workdir %s and home /home/someone/.claude", s, ok, want)
	}
}
