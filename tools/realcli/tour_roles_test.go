package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// The tour writes its team into -dir's config/roles.yaml. A workspace of a
// person's own keeps its roles.yaml (the tour refuses, and says how to go
// on); a file the tour wrote before, or none, is replaced; -force replaces
// any.
func TestTourKeepsARolesFileItDidNotWrite(t *testing.T) {
	write := func(t *testing.T, text string) string {
		dir := t.TempDir()
		if err := os.MkdirAll(filepath.Join(dir, "config"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "config", "roles.yaml"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	own := write(t, "roles:\n  - {id: dev, prompt_path: roles/dev.md}\n")
	err := checkTourRoles(own, false)
	if err == nil || !strings.Contains(err.Error(), "is not one the tour wrote") || !strings.Contains(err.Error(), "-force") {
		t.Errorf("a person's roles.yaml: %v; want a refusal that names -force", err)
	}
	if err := checkTourRoles(own, true); err != nil {
		t.Errorf("-force: %v", err)
	}
	if err := checkTourRoles(write(t, tourHeader+": each role runs a real CLI\nroles:\n"), false); err != nil {
		t.Errorf("the tour's own roles.yaml: %v", err)
	}
	if err := checkTourRoles(t.TempDir(), false); err != nil {
		t.Errorf("no roles.yaml: %v", err)
	}
}

// A Codex role of the tour runs with --no-daemon, as every Codex role must
// for shogun's MCP tools to know which role calls them; the others do not.
func TestTourCodexRoleRunsWithoutTheDaemon(t *testing.T) {
	s := Ready
	s.Model = "http://127.0.0.1:8787"
	for _, name := range []string{"codex", "claude"} {
		c, ok := lookupCLI(name)
		if !ok {
			t.Fatalf("no CLI %s", name)
		}
		var file struct {
			Roles []struct {
				Command struct{ Args []string }
			}
		}
		entry := roleEntry(name, c, "/cache", tourArgs(c, s), []string{"HOME=/h"})
		if err := yaml.Unmarshal([]byte("roles:\n"+entry), &file); err != nil || len(file.Roles) != 1 {
			t.Fatalf("%s's entry does not read: %v\n%s", name, err, entry)
		}
		has := false
		for _, a := range file.Roles[0].Command.Args {
			has = has || a == "--no-daemon"
		}
		if has != (name == "codex") {
			t.Errorf("%s's args %q: --no-daemon %v, want %v", name, file.Roles[0].Command.Args, has, name == "codex")
		}
	}
}
