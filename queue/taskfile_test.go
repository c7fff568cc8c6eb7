package queue

import (
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/shogun-dev/shogun/store"
	"gopkg.in/yaml.v3"
)

func exampleTask() Task {
	return Task{
		TaskID:     "t-20261122-0001",
		CommandID:  "cmd-042",
		Role:       "ashigaru1",
		From:       "karo",
		Title:      "Add the login form",
		Body:       "Create src/login.tsx\nwith a form and a test.\n",
		Tags:       []string{"frontend"},
		AssignedAt: time.Date(2026, 11, 22, 10, 15, 0, 0, time.UTC),
		ReportTo:   "runtime/queue/reports/ashigaru1.yaml",
	}
}

func TestMarshalTaskWritesTheDocumentedFile(t *testing.T) {
	b, err := MarshalTask(exampleTask())
	if err != nil {
		t.Fatal(err)
	}
	const want = `task_id: t-20261122-0001
command_id: cmd-042
role: ashigaru1
from: karo
title: Add the login form
body: |
  Create src/login.tsx
  with a form and a test.
tags: [frontend]
assigned_at: 2026-11-22T10:15:00Z
report_to: runtime/queue/reports/ashigaru1.yaml
`
	if string(b) != want {
		t.Errorf("got:\n%s\nwant:\n%s", b, want)
	}
}

func TestMarshalTaskRoundTrips(t *testing.T) {
	tricky := exampleTask()
	tricky.Title = "123"                                   // would read back as a number unquoted
	tricky.Body = "no trailing newline\n  indented\n\nend" // literal block with "|-" and a leading-space line
	tricky.Tags = []string{"a:b", "true", "x:y", "#c"}
	tricky.Priority = store.PriorityHigh
	tricky.Attempt = 2
	tricky.From = ""
	tricky.AssignedAt = time.Date(2026, 11, 22, 19, 15, 0, 123456789, time.FixedZone("JST", 9*3600))

	trailing := exampleTask()
	trailing.Body = "a line with trailing spaces   \nnext\n" // kept in the block, as written

	single := exampleTask()
	single.Body = "one line"

	for name, task := range map[string]Task{"example": exampleTask(), "tricky": tricky, "trailing spaces": trailing, "one line": single} {
		t.Run(name, func(t *testing.T) {
			b, err := MarshalTask(task)
			if err != nil {
				t.Fatal(err)
			}
			var got Task
			dec := yaml.NewDecoder(strings.NewReader(string(b)))
			dec.KnownFields(true)
			if err := dec.Decode(&got); err != nil {
				t.Fatalf("%v\n%s", err, b)
			}
			if !got.AssignedAt.Equal(task.AssignedAt) {
				t.Errorf("assigned_at = %v, want %v", got.AssignedAt, task.AssignedAt)
			}
			got.AssignedAt = task.AssignedAt
			if !reflect.DeepEqual(got, task) {
				t.Errorf("got  %+v\nwant %+v\nfile:\n%s", got, task, b)
			}
			multiLine := strings.Contains(task.Body, "\n")
			block := strings.Contains(string(b), "body: |")
			if multiLine && !block {
				t.Errorf("multi-line body not written as a block scalar:\n%s", b)
			}
			if !multiLine && block {
				t.Errorf("one-line body written as a block scalar:\n%s", b)
			}
		})
	}
}

func TestMarshalTaskRefusesAnInvalidTask(t *testing.T) {
	task := exampleTask()
	task.ReportTo = ""
	if _, err := MarshalTask(task); err == nil || err.Error() != `queue: invalid task "t-20261122-0001": missing "report_to"` {
		t.Errorf("err = %v", err)
	}
	task = exampleTask()
	task.AssignedAt = time.Time{}
	if _, err := MarshalTask(task); err == nil || !strings.Contains(err.Error(), `missing "assigned_at"`) {
		t.Errorf("err = %v", err)
	}
	task = exampleTask()
	task.Role = "Ashigaru 1"
	if _, err := MarshalTask(task); err == nil || !strings.Contains(err.Error(), `"role" must be a role id`) {
		t.Errorf("err = %v", err)
	}
}

// Issue 30 item 6. A task file is plain UTF-8 that reads as written:
// emoji and Japanese as themselves, a multi-line body as a block, line for
// line, with its tabs, leading and trailing spaces; only a character that
// cannot stand for itself is escaped.
func TestMarshalTaskWritesReadableText(t *testing.T) {
	task := exampleTask()
	task.Title = "寿司 🍣 を注文する"
	task.Body = "Order 🍣 for the team:\n\tsalmon  \n  tuna\n\n「急いで」\n"
	task.Tags = []string{"食事", "🍣"}
	b, err := MarshalTask(task)
	if err != nil {
		t.Fatal(err)
	}
	const want = `task_id: t-20261122-0001
command_id: cmd-042
role: ashigaru1
from: karo
title: 寿司 🍣 を注文する
body: |
  Order 🍣 for the team:
  	salmon  
    tuna

  「急いで」
tags: [食事, 🍣]
assigned_at: 2026-11-22T10:15:00Z
report_to: runtime/queue/reports/ashigaru1.yaml
`
	if string(b) != want {
		t.Errorf("got:\n%s\nwant:\n%s", b, want)
	}

	// A byte-order mark cannot stand for itself: that one character is
	// escaped, the rest of the text stays as it is.
	task.Body = "keep 🍣\ufeff here\nnext\n"
	if b, err = MarshalTask(task); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `body: "keep 🍣\uFEFF here\nnext\n"`) {
		t.Errorf("body with a BOM:\n%s", b)
	}
}

// Whatever text a task holds, the task file MarshalTask writes reads back
// as exactly that task, without the fallback encoder, and holds every
// character that can stand for itself as itself.
func FuzzMarshalTaskReadsBack(f *testing.F) {
	f.Add("寿司 🍣", "line 🍣\n\tx  \n  y\n\n", "tag")
	f.Add("123", "  leading\nspaces", "true")
	f.Add("a: b #c", "\n\nstarts with empty lines\n\n\n", "#x")
	f.Add("'quoted' \"too\"", "ends with spaces   ", "a,b")
	f.Add("- dash", "   \n  only spaces above\n", "[x]")
	f.Add("x", "bom\ufeff and del\x7f and nel\u0085\n", "y")
	f.Add("title", "\n", "z")
	f.Add("title", "\t\n\t", "z")
	f.Fuzz(func(t *testing.T, title, body, tag string) {
		task := exampleTask()
		task.Title, task.Body, task.Tags = title, body, []string{tag}
		if task.Validate() != nil || !utf8.ValidString(body) {
			return // a body comes from a command, which is UTF-8 (checkText)
		}
		b := taskText(task)
		if !readsBackAs(b, task) {
			t.Fatalf("task file does not read back as the task:\n%s\ntitle %q body %q tag %q", b, title, body, tag)
		}
		if !utf8.Valid(b) {
			t.Fatalf("task file is not UTF-8:\n%q", b)
		}
		for _, s := range []string{title, body, tag} {
			for _, r := range s {
				if r > 0x7f && yamlPrintable(r) && !strings.ContainsRune(string(b), r) {
					t.Fatalf("%q written escaped:\n%s", r, b)
				}
			}
		}
		blankTab := false // a line of only blanks, a tab among them, reads back empty in a block
		for _, l := range strings.Split(body, "\n") {
			blankTab = blankTab || strings.Trim(l, " \t") == "" && strings.Contains(l, "\t")
		}
		if strings.Contains(body, "\n") && strings.Trim(body, "\n") != "" && printableText(body, true) && !blankTab &&
			!strings.Contains(string(b), "\nbody: |") {
			t.Fatalf("multi-line body not written as a block:\n%s", b)
		}
	})
}
