package queue

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestDecodeReport(t *testing.T) {
	const full = `task_id: t-20261122-0001     # required
status: done                 # required: done | failed | blocked
summary: Login form added     # required
details: |                   # optional
  Added the form and a test.
files: [src/login.tsx]       # optional
skill_candidate:             # optional
  name: add-react-form
  description: When asked to add a form to the React app
`
	r, err := DecodeReport("ashigaru1.yaml", []byte(full), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	want := Report{TaskID: "t-20261122-0001", Status: ReportDone, Summary: "Login form added",
		Details: "Added the form and a test.\n", Files: []string{"src/login.tsx"},
		SkillCandidate: &SkillCandidate{Name: "add-react-form", Description: "When asked to add a form to the React app"}}
	if !reflect.DeepEqual(r, want) {
		t.Errorf("got  %+v\nwant %+v", r, want)
	}

	r, err = DecodeReport("r.yaml", []byte("task_id: t1\nstatus: blocked\nsummary: Need a decision\nskill_candidate:\n"), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != ReportBlocked || r.SkillCandidate != nil {
		t.Errorf("minimal report = %+v", r)
	}

	bad := []struct{ name, in, want string }{
		{"missing task_id", "status: done\nsummary: s\n", `r.yaml:1:1: missing "task_id"`},
		{"missing status", "task_id: t1\nsummary: s\n", `r.yaml:1:1: missing "status"`},
		{"missing summary", "task_id: t1\nstatus: done\n", `r.yaml:1:1: missing "summary"`},
		{"bad status", "task_id: t1\nstatus: finished\nsummary: s\n", `r.yaml:2:9: "status" must be one of done, failed, blocked; got string "finished"`},
		{"status a boolean", "task_id: t1\nstatus: true\nsummary: s\n", `r.yaml:2:9: "status" must be one of done, failed, blocked; got boolean true`},
		{"task_id with a slash", "task_id: ../t1\nstatus: done\nsummary: s\n", `r.yaml:1:10: "task_id" must not contain a path separator (/ or \), got "../t1"`},
		{"task_id with dots", "task_id: t..1\nstatus: done\nsummary: s\n", `r.yaml:1:10: "task_id" must not contain "..", got "t..1"`},
		{"unknown key", "task_id: t1\nstatus: done\nsummary: s\nsumary: x\n", `r.yaml:4:1: unknown key "sumary" (did you mean "summary"?)`},
		{"files a string", "task_id: t1\nstatus: done\nsummary: s\nfiles: a.go\n", `r.yaml:4:8: "files" must be a list of strings, got string "a.go"`},
		{"empty file name", "task_id: t1\nstatus: done\nsummary: s\nfiles: [a.go, '']\n", `r.yaml:4:15: "files[1]" must not be empty`},
		{"skill_candidate a string", "task_id: t1\nstatus: done\nsummary: s\nskill_candidate: forms\n", `r.yaml:4:18: "skill_candidate" must be a mapping with "name" and "description", got string "forms"`},
		{"skill_candidate unknown key", "task_id: t1\nstatus: done\nsummary: s\nskill_candidate:\n  nme: x\n", `r.yaml:5:3: unknown key "nme" in "skill_candidate" (did you mean "name"?)`},
		{"skill_candidate without description", "task_id: t1\nstatus: done\nsummary: s\nskill_candidate:\n  name: x\n", `r.yaml:5:3: missing "skill_candidate.description"`},
		{"skill_candidate empty name", "task_id: t1\nstatus: done\nsummary: s\nskill_candidate:\n  name: ''\n  description: d\n", `r.yaml:5:3: "skill_candidate.name" must not be empty`},
		{"skill name on two lines", "task_id: t1\nstatus: done\nsummary: s\nskill_candidate:\n  name: \"a\\nb\"\n  description: d\n", `r.yaml:5:9: "skill_candidate.name" must be one line without control characters, found a line break (U+000A) at character 2`},
		{"terminal escapes in summary", "task_id: t1\nstatus: done\nsummary: \"\\e]0;pwned\\a\\e[2J\"\n", `r.yaml:3:10: "summary" must be one line without control characters, found the escape character (U+001B) at character 1`},
		{"summary on two lines", "task_id: t1\nstatus: done\nsummary: |\n  one\n  two\n", `r.yaml:3:10: "summary" must be one line without control characters, found a line break (U+000A) at character 4`},
		{"C1 control in summary", "task_id: t1\nstatus: done\nsummary: \"ok \\u009b2J\"\n", `r.yaml:3:10: "summary" must be one line without control characters, found control character U+009B at character 4`},
		{"escape in details", "task_id: t1\nstatus: done\nsummary: s\ndetails: \"line one\\nline two \\e[2J\"\n", `r.yaml:4:10: "details" must be text without control characters other than line breaks and tabs, found the escape character (U+001B) at character 19`},
		{"escape in a file name", "task_id: t1\nstatus: done\nsummary: s\nfiles: [\"a\\e[2J.go\"]\n", `r.yaml:4:9: "files[0]" must be one line without control characters, found the escape character (U+001B) at character 2`},
		{"escape in a skill description", "task_id: t1\nstatus: done\nsummary: s\nskill_candidate:\n  name: x\n  description: \"\\e[2J\"\n", `r.yaml:6:16: "skill_candidate.description" must be text without control characters other than line breaks and tabs, found the escape character (U+001B) at character 1`},
		{"a list", "- task_id: t1\n", `r.yaml:1:1: a report must be a mapping, got a list`},
		{"empty", "\n", `r.yaml: file is empty`},
		{"two documents", "task_id: t1\nstatus: done\nsummary: s\n---\ntask_id: t2\n", `r.yaml:4:1: only one YAML document is allowed, found a second one`},
		{"alias bomb", billionLaughs("task_id: t1\n"), `r.yaml: document has more than 10000 YAML nodes once aliases are expanded (an alias bomb?)`},
		{"over the limit", strings.Repeat("#", 1<<20+1), `r.yaml: file is 1048577 bytes, over the 1048576-byte limit`},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			r, err := DecodeReport("r.yaml", []byte(tt.in), Limits{})
			if err == nil {
				t.Fatalf("accepted %+v, want %s", r, tt.want)
			}
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("error %T %v is not a *FormatError", err, err)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("error\n got: %s\nwant: %s", got, tt.want)
			}
		})
	}
}
