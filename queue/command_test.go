package queue

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/shogun-dev/shogun/store"
)

const goodCommand = "to: ashigaru1\ntitle: Add the login form\nbody: |\n  Create src/login.tsx\n"

func TestDecodeCommandsRejectsBadFiles(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"invalid YAML", "to: ashigaru1\ntitle: [\n", `cmd.yaml:2: invalid YAML: did not find expected node content`},
		{"bad indentation", "to: ashigaru1\n  title: x\n", `cmd.yaml:2: invalid YAML: mapping values are not allowed in this context`},
		{"tab indentation", "to: ashigaru1\n\ttitle: x\n", `cmd.yaml:2: invalid YAML: found a tab character that violates indentation`},
		{"raw control byte", "to: ashigaru1\ntitle: a\x07b\nbody: x\n", `cmd.yaml:2:9: invalid YAML: control characters are not allowed`},
		{"invalid UTF-8", "to: ashigaru1\ntitle: caf\xe9\nbody: x\n", `cmd.yaml:2:11: invalid YAML: invalid trailing UTF-8 octet`},
		{"title a list", "to: ashigaru1\ntitle: [a, b]\nbody: x\n", `cmd.yaml:2:8: "title" must be a string, got a list`},
		{"body a mapping", "to: ashigaru1\ntitle: t\nbody: {a: 1}\n", `cmd.yaml:3:7: "body" must be a string, got a mapping`},
		{"priority a number", "to: ashigaru1\ntitle: t\nbody: x\npriority: 3\n", `cmd.yaml:4:11: "priority" must be one of high, normal, low; got number 3`},
		{"priority unknown", "to: ashigaru1\ntitle: t\nbody: x\npriority: urgent\n", `cmd.yaml:4:11: "priority" must be one of high, normal, low; got string "urgent"`},
		{"priority capitalised", "to: ashigaru1\ntitle: t\nbody: x\npriority: High\n", `cmd.yaml:4:11: "priority" must be one of high, normal, low; got string "High"`},
		{"tags a string", "to: ashigaru1\ntitle: t\nbody: x\ntags: frontend\n", `cmd.yaml:4:7: "tags" must be a list of strings, got string "frontend"`},
		{"tag null", "to: ashigaru1\ntitle: t\nbody: x\ntags: [a, ~]\n", `cmd.yaml:4:11: "tags[1]" must be a string, got null`},
		{"tag empty", "to: ashigaru1\ntitle: t\nbody: x\ntags: [a, \"\"]\n", `cmd.yaml:4:11: "tags[1]" must not be empty`},
		{"tag with a space", "to: ashigaru1\ntitle: t\nbody: x\ntags: [ui, front end]\n", `cmd.yaml:4:12: "tags[1]" must not contain spaces (a tag is one word, such as frontend), got "front end"`},
		{"unknown key", "to: ashigaru1\ntitle: t\nbody: x\npriorty: high\n", `cmd.yaml:4:1: unknown key "priorty" (did you mean "priority"?)`},
		{"unknown key far from any", "to: ashigaru1\ntitle: t\nbody: x\nowner: me\n", `cmd.yaml:4:1: unknown key "owner"`},
		{"duplicate key", "to: ashigaru1\ntitle: t\nbody: x\ntitle: u\n", `cmd.yaml:4:1: duplicate key "title" (first at line 2)`},
		{"non-string key", "to: ashigaru1\n[a]: x\n", `cmd.yaml:2:1: keys must be strings, got a list`},
		{"missing title", "to: ashigaru1\nbody: x\n", `cmd.yaml:1:1: missing "title"`},
		{"missing body", "to: ashigaru1\ntitle: t\n", `cmd.yaml:1:1: missing "body"`},
		{"missing to", "title: t\nbody: x\n", `cmd.yaml:1:1: missing "to"`},
		{"empty title", "to: ashigaru1\ntitle: \"\"\nbody: x\n", `cmd.yaml:2:1: "title" must not be empty`},
		{"null title", "to: ashigaru1\ntitle:\nbody: x\n", `cmd.yaml:2:1: "title" must not be empty`},
		{"blank body", "to: ashigaru1\ntitle: t\nbody: \"  \"\n", `cmd.yaml:3:1: "body" must not be empty`},
		{"tab in title", "to: ashigaru1\ntitle: \"Add\tform\"\nbody: x\n", `cmd.yaml:2:8: "title" must be one line without control characters, found a tab (U+0009) at character 4`},
		{"bell in title", "to: ashigaru1\ntitle: \"Add\\x07form\"\nbody: x\n", `cmd.yaml:2:8: "title" must be one line without control characters, found control character U+0007 at character 4`},
		{"escape in title", "to: ashigaru1\ntitle: \"\\e[2J\"\nbody: x\n", `cmd.yaml:2:8: "title" must be one line without control characters, found the escape character (U+001B) at character 1`},
		{"CSI (C1) in title", "to: ashigaru1\ntitle: \"x\\u009b31mY\"\nbody: x\n", `cmd.yaml:2:8: "title" must be one line without control characters, found control character U+009B at character 2`},
		{"NEL in title", "to: ashigaru1\ntitle: \"one\\Ntwo\"\nbody: x\n", `cmd.yaml:2:8: "title" must be one line without control characters, found control character U+0085 at character 4`},
		{"line separator in title", "to: ashigaru1\ntitle: \"one\u2028two\"\nbody: x\n", `cmd.yaml:2:8: "title" must be one line without control characters, found a line separator (U+2028) at character 4`},
		{"paragraph separator in title", "to: ashigaru1\ntitle: \"one\\Ptwo\"\nbody: x\n", `cmd.yaml:2:8: "title" must be one line without control characters, found a paragraph separator (U+2029) at character 4`},
		{"right-to-left override in title", "to: ashigaru1\ntitle: \"abc\u202edcb\"\nbody: x\n", `cmd.yaml:2:8: "title" must be one line without control characters, found bidirectional formatting character U+202E at character 4`},
		{"escape in a tag", "to: ashigaru1\ntitle: t\nbody: x\ntags: [\"a\\e[2J\"]\n", `cmd.yaml:4:8: "tags[0]" must be one line without control characters, found the escape character (U+001B) at character 2`},
		{"DEL in title", "to: ashigaru1\ntitle: \"a\\x7f\"\nbody: x\n", `cmd.yaml:2:8: "title" must be one line without control characters, found control character U+007F at character 2`},
		{"multi-line title", "to: ashigaru1\ntitle: |\n  one\n  two\nbody: x\n", `cmd.yaml:2:8: "title" must be one line without control characters, found a line break (U+000A) at character 4`},
		{"control character in id", "id: \"a\\rb\"\nto: ashigaru1\ntitle: t\nbody: x\n", `cmd.yaml:1:5: "id" must be one line without control characters, found a carriage return (U+000D) at character 2`},
		{"slash in id", "id: cmd/42\nto: ashigaru1\ntitle: t\nbody: x\n", `cmd.yaml:1:5: "id" must not contain a path separator (/ or \), got "cmd/42"`},
		{"backslash in id", "id: 'cmd\\42'\nto: ashigaru1\ntitle: t\nbody: x\n", `cmd.yaml:1:5: "id" must not contain a path separator (/ or \), got "cmd\\42"`},
		{"dot-dot id", "id: ..\nto: ashigaru1\ntitle: t\nbody: x\n", `cmd.yaml:1:5: "id" must not contain "..", got ".."`},
		{"dot-dot inside id", "id: cmd..42\nto: ashigaru1\ntitle: t\nbody: x\n", `cmd.yaml:1:5: "id" must not contain "..", got "cmd..42"`},
		{"blank id", "id: \" \"\nto: ashigaru1\ntitle: t\nbody: x\n", `cmd.yaml:1:5: "id" must not be blank`},
		{"long id", "id: " + strings.Repeat("x", 129) + "\nto: ashigaru1\ntitle: t\nbody: x\n", `cmd.yaml:1:5: "id" is 129 bytes long, over the 128-byte limit`},
		{"role id with capitals", "to: Ashigaru1\ntitle: t\nbody: x\n", `cmd.yaml:1:5: "to" must be a role id (a-z or 0-9, then up to 31 of a-z, 0-9, "_", "-"), got "Ashigaru1"`},
		{"role id too long", "to: " + strings.Repeat("a", 33) + "\ntitle: t\nbody: x\n", `cmd.yaml:1:5: "to" must be a role id (a-z or 0-9, then up to 31 of a-z, 0-9, "_", "-"), got "` + strings.Repeat("a", 33) + `"`},
		{"bad from", "to: ashigaru1\nfrom: -karo\ntitle: t\nbody: x\n", `cmd.yaml:2:7: "from" must be a role id (a-z or 0-9, then up to 31 of a-z, 0-9, "_", "-"), got "-karo"`},
		{"over 1 MiB", goodCommand + "#" + strings.Repeat("x", 2<<20-len(goodCommand)-1), `cmd.yaml: file is 2097152 bytes, over the 1048576-byte limit`},
		{"two documents", goodCommand + "---\n" + goodCommand, `cmd.yaml:5:1: only one YAML document is allowed, found a second one`},
		{"empty file", "", `cmd.yaml: file is empty`},
		{"only comments", "# nothing to do\n\n", `cmd.yaml: file is empty`},
		{"only a separator", "---\n", `cmd.yaml: file is empty`},
		{"a list at the top", "- to: ashigaru1\n", `cmd.yaml:1:1: a command file must be a mapping (one command, or a list under "commands:"), got a list`},
		{"a string at the top", "hello\n", `cmd.yaml:1:1: a command file must be a mapping (one command, or a list under "commands:"), got string "hello"`},
		{"list with a bad second item", "commands:\n  - to: ashigaru1\n    title: One\n    body: x\n  - to: ashigaru2\n    body: y\n", `cmd.yaml:5:5: commands[1]: missing "title"`},
		{"list item with a type error", "commands:\n  - to: a\n    title: t\n    body: x\n  - to: b\n    title: t\n    body: [x]\n", `cmd.yaml:7:11: commands[1]: "body" must be a string, got a list`},
		{"list item not a mapping", "commands:\n  - just a title\n", `cmd.yaml:2:5: commands[0]: a command must be a mapping, got string "just a title"`},
		{"list beside a command", "commands:\n  - to: a\n    title: t\n    body: x\nto: b\n", `cmd.yaml:5:1: "commands" must be the only top-level key of a file of several commands, found "to" as well`},
		{"commands not a list", "commands: {to: a}\n", `cmd.yaml:1:11: "commands" must be a list of commands, got a mapping`},
		{"commands empty", "commands: []\n", `cmd.yaml:1:11: "commands" is an empty list`},
		{"duplicate ids in a list", "commands:\n  - {id: c1, to: a, title: t, body: x}\n  - {id: c1, to: b, title: u, body: y}\n", `cmd.yaml:3:5: commands[1]: duplicate id "c1", already used by commands[0]`},
		{"merge of a scalar", "<<: x\nto: a\n", `cmd.yaml:1:5: "<<" must merge a mapping, got string "x"`},
		{"alias bomb", billionLaughs("to: *i\n"), `cmd.yaml: document has more than 10000 YAML nodes once aliases are expanded (an alias bomb?)`},
		{"alias cycle", "&a [*a]\n", `cmd.yaml: document has more than 10000 YAML nodes once aliases are expanded (an alias bomb?)`},
		{"unknown anchor", "to: *nope\n", `cmd.yaml: invalid YAML: unknown anchor 'nope' referenced`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmds, err := DecodeCommands("cmd.yaml", []byte(tt.in), Limits{})
			if err == nil {
				t.Fatalf("accepted %+v, want error %s", cmds, tt.want)
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

func TestDecodeCommandsAcceptsGoodFiles(t *testing.T) {
	const file = "login.yaml"
	tests := []struct {
		name, in string
		want     []Command
	}{
		{
			name: "the documented example",
			in: `id: cmd-042            # optional, unique
to: ashigaru1
from: karo
title: Add the login form
body: |
  Create src/login.tsx ...
tags: [frontend]
priority: high
`,
			want: []Command{{ID: "cmd-042", To: "ashigaru1", From: "karo", Title: "Add the login form",
				Body: "Create src/login.tsx ...\n", Tags: []string{"frontend"}, Priority: store.PriorityHigh}},
		},
		{
			name: "defaults: derived id, normal priority",
			in:   goodCommand,
			want: []Command{{ID: DeriveCommandID(file, []byte(goodCommand), -1), To: "ashigaru1",
				Title: "Add the login form", Body: "Create src/login.tsx\n", Priority: store.PriorityNormal}},
		},
		{
			name: "a list of commands",
			in: `commands:
  - {id: c1, to: ashigaru1, title: One, body: first, priority: low}
  - to: ashigaru2
    title: Two
    body: second
`,
			want: []Command{
				{ID: "c1", To: "ashigaru1", Title: "One", Body: "first", Priority: store.PriorityLow},
				{ID: DeriveCommandID(file, []byte(`commands:
  - {id: c1, to: ashigaru1, title: One, body: first, priority: low}
  - to: ashigaru2
    title: Two
    body: second
`), 1), To: "ashigaru2", Title: "Two", Body: "second", Priority: store.PriorityNormal},
			},
		},
		{
			name: "anchors and merge keys share fields between items",
			in: `commands:
  - &common {id: c1, to: ashigaru1, from: karo, title: One, body: first, tags: [ui]}
  - <<: *common
    id: c2
    title: Two
`,
			want: []Command{
				{ID: "c1", To: "ashigaru1", From: "karo", Title: "One", Body: "first", Tags: []string{"ui"}, Priority: store.PriorityNormal},
				{ID: "c2", To: "ashigaru1", From: "karo", Title: "Two", Body: "first", Tags: []string{"ui"}, Priority: store.PriorityNormal},
			},
		},
		{
			name: "scalars read as the text written",
			in:   "id: 0042\nto: ashigaru1\ntitle: 2026\nbody: true\n",
			want: []Command{{ID: "0042", To: "ashigaru1", Title: "2026", Body: "true", Priority: store.PriorityNormal}},
		},
		{
			name: "a trailing document separator and a byte order mark",
			in:   "\ufeff---\n" + goodCommand + "---\n",
			want: []Command{{ID: DeriveCommandID(file, []byte("\ufeff---\n"+goodCommand+"---\n"), -1), To: "ashigaru1",
				Title: "Add the login form", Body: "Create src/login.tsx\n", Priority: store.PriorityNormal}},
		},
		{
			name: "CRLF line ends and a unicode title",
			in:   "to: ashigaru1\r\ntitle: ログインフォームを追加\r\nbody: |\r\n  line one\r\n  line two\r\n",
			want: []Command{{ID: DeriveCommandID(file, []byte("to: ashigaru1\r\ntitle: ログインフォームを追加\r\nbody: |\r\n  line one\r\n  line two\r\n"), -1),
				To: "ashigaru1", Title: "ログインフォームを追加", Body: "line one\nline two\n", Priority: store.PriorityNormal}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeCommands(file, []byte(tt.in), Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
			for _, c := range got {
				if err := c.Validate(); err != nil {
					t.Errorf("decoded command %q does not validate: %v", c.ID, err)
				}
			}
		})
	}
}

func TestValidateCommandBuiltInCode(t *testing.T) {
	ok := Command{To: "ashigaru1", Title: "T", Body: "B"}
	if err := ok.Validate(); err != nil {
		t.Errorf("a command without id and priority: %v", err)
	}
	for _, tt := range []struct {
		c    Command
		want string
	}{
		{Command{To: "ashigaru1", Body: "B"}, `missing "title"`},
		{Command{To: "ashigaru1", Title: "T", Body: "B", Priority: "urgent"}, `"priority" must be one of high, normal, low; got "urgent"`},
		{Command{ID: "a/b", To: "ashigaru1", Title: "T", Body: "B"}, `"id" must not contain a path separator (/ or \), got "a/b"`},
		{Command{To: "ashigaru1", Title: "T\r", Body: "B"}, `"title" must be one line without control characters, found a carriage return (U+000D) at character 2`},
	} {
		if err := tt.c.Validate(); err == nil || err.Error() != tt.want {
			t.Errorf("Validate(%+v) = %v, want %s", tt.c, err, tt.want)
		}
	}
}

func TestDeriveCommandID(t *testing.T) {
	data := []byte(goodCommand)
	id := DeriveCommandID("login.yaml", data, -1)
	if id != DeriveCommandID("login.yaml", data, -1) {
		t.Error("not stable")
	}
	if id != DeriveCommandID("runtime/queue/commands/login.yaml", data, -1) || id != DeriveCommandID(`C:\ws\login.yml`, data, -1) {
		t.Error("depends on the folder or extension, not only the base name")
	}
	if other := DeriveCommandID("login.yaml", append(data, '\n'), -1); other == id {
		t.Error("same id for different content")
	}
	if other := DeriveCommandID("signup.yaml", data, -1); other == id {
		t.Error("same id for a different file name")
	}
	if !strings.HasPrefix(id, "login-") || len(id) != len("login-")+10 {
		t.Errorf("id = %q, want login-<10 hex digits>", id)
	}
	if a, b := DeriveCommandID("l.yaml", data, 0), DeriveCommandID("l.yaml", data, 1); a == b || !strings.HasSuffix(b, "-1") {
		t.Errorf("list items: %q, %q", a, b)
	}
	for _, name := range []string{
		"Fix Login (urgent)!.yaml", "..hidden..yaml", "a/../../b.yaml", "\x00\t.yaml", ".yaml", "ログイン.yaml",
		strings.Repeat("long-name-", 20) + ".yaml", "a..b", "__x__.yaml",
	} {
		id := DeriveCommandID(name, data, 3)
		if p := checkID("id", id); p != nil {
			t.Errorf("DeriveCommandID(%q) = %q: %v", name, id, p)
		}
		stem := id[:len(id)-len("-0123456789-3")]
		if len(stem) > 40 || strings.Trim(stem, "abcdefghijklmnopqrstuvwxyz0123456789._-") != "" {
			t.Errorf("DeriveCommandID(%q) = %q: stem %q not sanitized", name, id, stem)
		}
	}
	if got := DeriveCommandID("Fix Login (urgent)!.yaml", data, -1); !strings.HasPrefix(got, "fix-login-urgent-") {
		t.Errorf("sanitized = %q", got)
	}
}
