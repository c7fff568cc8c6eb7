package usage

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// claudeUsageLine is a Claude Code assistant line with the given output count.
func claudeUsageLine(id string, output int64) string {
	return `{"type":"assistant","timestamp":"2026-11-28T11:33:00Z","requestId":"req` + id +
		`","message":{"id":"msg` + id + `","model":"claude-opus-4-5","usage":{"input_tokens":10,` +
		`"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":` +
		strconv.FormatInt(output, 10) + `}}}` + "\n"
}

// A line an agent forged with a negative (or absurd) count would take
// spending away from the role's budget: it is refused and reported, and
// the honest records around it still count.
func TestReadRefusesNegativeAndAbsurdCounts(t *testing.T) {
	for _, tc := range []struct {
		cli, line string
	}{
		{CLIClaude, claudeUsageLine("bad", -1999000)},
		{CLIClaude, claudeUsageLine("huge", 5_000_000_000)},
		{CLIGemini, `{"id":"g1","timestamp":"2026-11-28T11:33:00Z","type":"gemini","model":"gemini-2.5-pro","tokens":{"input":10,"output":-1999000,"cached":0,"thoughts":0,"tool":0}}` + "\n"},
		{CLIGemini, `{"id":"g2","timestamp":"2026-11-28T11:33:00Z","type":"gemini","model":"gemini-2.5-pro","tokens":{"input":10,"output":5,"cached":-70000,"thoughts":0,"tool":0}}` + "\n"},
		{CLICodex, `{"timestamp":"2026-11-28T11:33:00Z","type":"token_usage_record","payload":{"response_id":"resp_bad","usage":{"input_tokens":10,"cached_input_tokens":0,"output_tokens":-1999000}}}` + "\n"},
		// input below 0 would be clamped to 0 after taking out the cache.
		{CLIGemini, `{"id":"g3","timestamp":"2026-11-28T11:33:00Z","type":"gemini","model":"gemini-2.5-pro","tokens":{"input":-1000000,"output":5,"cached":0,"thoughts":0,"tool":9}}` + "\n"},
		{CLICopilot, `{"type":"span","spanId":"bad1","endTime":[1795875010,0],"attributes":{"gen_ai.operation.name":"chat","gen_ai.request.model":"gpt-4o","gen_ai.response.id":"bad","gen_ai.usage.input_tokens":10,"gen_ai.usage.output_tokens":-1999000}}` + "\n"},
		{CLICopilot, `{"type":"span","spanId":"bad2","endTime":[1795875010,0],"attributes":{"gen_ai.operation.name":"chat","gen_ai.request.model":"gpt-4o","gen_ai.response.id":"bad2","gen_ai.usage.input_tokens":-50,"gen_ai.usage.output_tokens":1}}` + "\n"},
		// A running total below 0: the next honest total would count
		// what was never spent.
		{CLICodex + "-totals", `{"timestamp":"2026-11-28T11:33:00Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":-900000000,"cached_input_tokens":0,"output_tokens":0},"last_token_usage":{"input_tokens":1,"output_tokens":1}}}}` + "\n"},
	} {
		t.Run(tc.cli, func(t *testing.T) {
			cli, fixture := tc.cli, map[string]string{CLIClaude: "claude-session.jsonl", CLIGemini: "gemini-session.jsonl",
				CLICodex: "codex-rollout.jsonl", CLICopilot: "copilot-otel.jsonl", CLICodex + "-totals": "codex-rollout-totals.jsonl"}[tc.cli]
			cli, _, _ = strings.Cut(cli, "-")
			skipGeminiOnWindows(t, cli)
			s, path := install(t, cli, fixture)
			honest := collect(t, s, map[string]Cursor{}, map[string]Record{})
			appendFile(t, path, tc.line)
			recs, c, err := s.Read(path, Cursor{}, time.Time{})
			var skipped *SkippedError
			if !errors.As(err, &skipped) || skipped.Bad != 1 {
				t.Fatalf("forged line: error %v, want one record skipped", err)
			}
			if c.Offset != fileSize(t, path) {
				t.Errorf("cursor at %d, want past the forged line at %d", c.Offset, fileSize(t, path))
			}
			byKey := map[string]Record{}
			for _, r := range recs {
				byKey[r.Key] = r
			}
			var sum Tokens
			for _, r := range byKey {
				if !r.Tokens.sane() {
					t.Errorf("record %s kept: %+v", r.Key, r.Tokens)
				}
				sum = sum.Add(r.Tokens)
			}
			if sum != honest {
				t.Errorf("tokens with the forged line %+v, want the honest %+v", sum, honest)
			}
			// Reported once: read on from the cursor, the line is behind.
			if _, _, err := s.Read(path, c, time.Time{}); err != nil {
				t.Errorf("read again: %v", err)
			}
		})
	}
}

// A line with no end (a file of one huge line) is passed over once, not
// held whole nor read again each cycle; the records after it count.
func TestReadPassesOverALineLongerThanMaxLine(t *testing.T) {
	s, path := install(t, CLIClaude, "claude-session.jsonl")
	if err := os.WriteFile(path, bytes.Repeat([]byte("x"), 3*MaxLine), 0o644); err != nil {
		t.Fatal(err)
	}
	recs, c, err := s.Read(path, Cursor{}, time.Time{})
	if len(recs) != 0 || c.Offset != 3*MaxLine {
		t.Fatalf("a long line with no end: %d records, cursor %d, want passed over to %d", len(recs), c.Offset, 3*MaxLine)
	}
	var skipped *SkippedError
	if !errors.As(err, &skipped) || skipped.Long != 1 {
		t.Errorf("error %v, want one long line reported", err)
	}
	appendFile(t, path, strings.Repeat("y", 1000)+"\n"+claudeUsageLine("after", 42))
	recs, c, err = s.Read(path, c, time.Time{})
	if err != nil || len(recs) != 1 || recs[0].Output != 42 {
		t.Fatalf("after the long line: %+v, %v; want the one record after it", recs, err)
	}
	if c.Offset != fileSize(t, path) {
		t.Errorf("cursor %d, want the end %d", c.Offset, fileSize(t, path))
	}
}

// One Read goes through a bounded part of a file; the next ones go on
// from its cursor and nothing is lost or counted twice.
func TestReadIsBoundedPerCall(t *testing.T) {
	s, path := install(t, CLIClaude, "claude-session.jsonl")
	var b strings.Builder
	b.WriteString(strings.Repeat("z", 5000) + "\n") // a long line, passed over
	for i := range 50 {
		b.WriteString(claudeUsageLine(strconv.Itoa(i), 1))
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var c Cursor
	total, calls := 0, 0
	for c.Offset < int64(b.Len()) {
		if calls++; calls > 1000 {
			t.Fatalf("no progress: cursor %+v", c)
		}
		recs, next, _ := s.read(path, c, time.Time{}, 1000, 2000)
		if next.Offset-c.Offset > 2000+1000+64<<10 {
			t.Fatalf("one call read %d bytes", next.Offset-c.Offset)
		}
		total += len(recs)
		c = next
	}
	if total != 50 || calls < 5 {
		t.Errorf("%d records in %d calls, want 50 in several", total, calls)
	}
}

func appendFile(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// A FIFO in a CLI's folder, or a link to one put where a record file was
// listed, is not read: opening it would block the supervisor's reader
// (and so the budgets and `shogun stop`) until something writes to it.
func TestReadDoesNotBlockOnAFIFO(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no FIFOs in a folder on Windows")
	}
	s, path := install(t, CLIClaude, "claude-session.jsonl")
	dir := filepath.Dir(path)
	fifo := filepath.Join(dir, "fifo.jsonl")
	if err := mkfifo(fifo); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	link := filepath.Join(dir, "link.jsonl")
	if err := os.Symlink(fifo, link); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		files, err := s.Files(time.Time{})
		if err != nil || len(files) != 1 || files[0] != path {
			t.Errorf("files %v, %v; want only the regular %s", files, err, path)
		}
		// As if the file was switched for these after Files listed it.
		for _, p := range []string{fifo, link} {
			if recs, _, err := s.Read(p, Cursor{}, time.Time{}); err == nil || len(recs) != 0 {
				t.Errorf("read %s: %d records, %v; want an error", p, len(recs), err)
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second): // a safety net, not a timing: it blocks forever
		t.Fatal("reading a FIFO blocked")
	}
}
