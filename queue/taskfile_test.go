package queue

import (
	"reflect"
	"strings"
	"testing"
	"time"

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
	trailing.Body = "a line with trailing spaces   \nnext\n" // literal style cannot keep these

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
			if multiLine && !block && name != "trailing spaces" {
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
