package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// Every command that takes --json is in the table at the top of
// docs/json.md, and every command there takes --json: a new --json output
// cannot ship undocumented (each documented shape is then held to its
// type and to the command's real output by the tests in json_test.go and
// json_unix_test.go).
func TestEveryJSONOutputIsDocumented(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "json.md"))
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		if cmd, ok := strings.CutPrefix(line, "| `shogun "); ok {
			cmd, _, _ = strings.Cut(cmd, "`")
			documented[strings.Join(strings.Fields(strings.ReplaceAll(cmd, " ROLE", "")), " ")] = true
		}
	}
	have := map[string]bool{}
	var walk func(prefix string, cmds []*cli.Command)
	walk = func(prefix string, cmds []*cli.Command) {
		for _, c := range cmds {
			name := strings.TrimSpace(prefix + " " + c.Name)
			for _, f := range c.Flags {
				if f.Names()[0] == "json" {
					have[name+" --json"] = true
				}
			}
			walk(name, c.Subcommands)
		}
	}
	walk("", newApp(nil, nil).Commands)
	for cmd := range have {
		if !documented[cmd] {
			t.Errorf("shogun %s is not in the table of docs/json.md", cmd)
		}
	}
	for cmd := range documented {
		if !have[cmd] {
			t.Errorf("docs/json.md lists shogun %s, which has no --json flag", cmd)
		}
	}
	if len(have) < 6 {
		t.Errorf("found only %d commands with --json: %v", len(have), have)
	}
}
