package skills

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/shogun-dev/shogun/store"
)

// approvedHistory is a history with two approved candidates and one
// pending.
func approvedHistory(t *testing.T) *historyDB {
	t.Helper()
	h := newHistoryDB(t)
	h.add(
		spec{role: "ashigaru1", title: "Fix flaky test", body: unrelated[0]},
		spec{role: "ashigaru1", title: "Fix flaky test", body: unrelated[1]},
		spec{role: "ashigaru2", title: "Write release notes", body: unrelated[3]},
		spec{role: "ashigaru2", title: "Write release notes", body: unrelated[5]},
		spec{role: "karo", title: "Plan the sprint", body: unrelated[6]},
		spec{role: "karo", title: "Plan the sprint", body: unrelated[7]},
	)
	h.scan(ScanOptions{})
	if _, err := Decide(h.st, []string{"fix-flaky-test", "write-release-notes"}, nil, day); err != nil {
		t.Fatal(err)
	}
	return h
}

// frontMatter reads a skill file back the way another tool would: YAML
// between the first two "---" lines.
func frontMatter(t *testing.T, path string) (map[string]string, string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.SplitN(string(b), "---\n", 3)
	if len(parts) != 3 || parts[0] != "" {
		t.Fatalf("%s: no front matter:\n%s", path, b)
	}
	m := map[string]string{}
	if err := yaml.Unmarshal([]byte(parts[1]), &m); err != nil {
		t.Fatalf("%s: front matter: %v", path, err)
	}
	return m, parts[2]
}

func TestExportLayoutsAndTargets(t *testing.T) {
	cases := []struct {
		targets []string
		layout  string
		out     bool
		want    []string // files relative to the workspace, for each approved skill NAME
	}{
		{nil, LayoutFlat, false, []string{"skills/codex/NAME.md", "skills/copilot/NAME.md"}},
		{[]string{TargetCodex}, LayoutFlat, false, []string{"skills/codex/NAME.md"}},
		{[]string{TargetCopilot}, LayoutFlat, false, []string{"skills/copilot/NAME.md"}},
		{[]string{TargetClaude}, LayoutFlat, true, []string{"out/NAME.md"}},
		{[]string{TargetAll}, LayoutDir, false, []string{".claude/skills/NAME/SKILL.md", ".github/skills/NAME/SKILL.md", ".codex/skills/NAME/SKILL.md"}},
		{[]string{TargetClaude}, LayoutDir, false, []string{".claude/skills/NAME/SKILL.md"}},
		{[]string{TargetCopilot}, LayoutDir, false, []string{".github/skills/NAME/SKILL.md"}},
		{[]string{TargetCodex}, LayoutDir, false, []string{".codex/skills/NAME/SKILL.md"}},
		{[]string{TargetCodex, TargetClaude}, LayoutDir, true, []string{"out/NAME/SKILL.md"}},
	}
	for _, tc := range cases {
		name := strings.Join(tc.targets, "+") + "/" + tc.layout
		if tc.out {
			name += "/out"
		}
		t.Run(name, func(t *testing.T) {
			h := approvedHistory(t)
			ws := t.TempDir()
			opts := ExportOptions{Targets: tc.targets, Layout: tc.layout, Workspace: ws,
				CodexPath: filepath.Join(ws, "skills", "codex"), CopilotPath: filepath.Join(ws, "skills", "copilot")}
			if tc.out {
				opts.Out = filepath.Join(ws, "out")
			}
			res, err := Export(h.st, opts)
			if err != nil {
				t.Fatal(err)
			}
			var want, got []string
			for _, n := range []string{"fix-flaky-test", "write-release-notes"} {
				for _, w := range tc.want {
					want = append(want, strings.ReplaceAll(w, "NAME", n))
				}
			}
			for _, f := range res.Files {
				rel, _ := filepath.Rel(ws, f.Path)
				got = append(got, filepath.ToSlash(rel))
				if !f.Written {
					t.Errorf("%s: not written on the first export", rel)
				}
				fm, body := frontMatter(t, f.Path)
				if len(fm) != 2 || fm["name"] != f.Name {
					t.Errorf("%s: front matter %v", rel, fm)
				}
				if err := ValidName(fm["name"]); err != nil {
					t.Errorf("%s: %v", rel, err)
				}
				if err := ValidDescription(fm["description"]); err != nil || !strings.Contains(fm["description"], "Use when") {
					t.Errorf("%s: description %q (%v)", rel, fm["description"], err)
				}
				if tc.layout == LayoutDir && filepath.Base(filepath.Dir(f.Path)) != fm["name"] {
					t.Errorf("%s: folder and name differ", rel)
				}
				if !strings.HasPrefix(body, "\n# ") {
					t.Errorf("%s: body does not start with a heading:\n%s", rel, body)
				}
			}
			sort.Strings(want)
			sort.Strings(got)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("files\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if _, err := os.Stat(filepath.Join(ws, "skills", "codex", "plan-sprint.md")); err == nil {
				t.Error("a pending candidate was exported")
			}
			for _, n := range []string{"fix-flaky-test", "write-release-notes"} {
				if c := h.candidate(n); c.Status != store.SkillExported {
					t.Errorf("%s is %s after export", n, c.Status)
				}
			}
			rows, err := h.st.Skills()
			if err != nil {
				t.Fatal(err)
			}
			targets := max(1, len(tc.targets))
			if len(tc.targets) == 0 || tc.targets[0] == TargetAll {
				targets = len(tc.want)
			}
			if len(rows) != 2*targets {
				t.Errorf("%d skills rows, want %d: %+v", len(rows), 2*targets, rows)
			}
		})
	}
}

func TestExportIsIdempotentAndNeverOverwrites(t *testing.T) {
	h := approvedHistory(t)
	ws := t.TempDir()
	opts := ExportOptions{Workspace: ws, CodexPath: filepath.Join(ws, "skills", "codex"), CopilotPath: filepath.Join(ws, "skills", "copilot")}
	first, err := Export(h.st, opts)
	if err != nil {
		t.Fatal(err)
	}
	contents := map[string]string{}
	for _, f := range first.Files {
		b, _ := os.ReadFile(f.Path)
		contents[f.Path] = string(b)
	}
	rows, _ := h.st.Skills()

	second, err := Export(h.st, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(second.Files) != len(first.Files) {
		t.Fatalf("second export: %d files, first %d", len(second.Files), len(first.Files))
	}
	for _, f := range second.Files {
		if f.Written {
			t.Errorf("%s written again", f.Path)
		}
		if b, _ := os.ReadFile(f.Path); string(b) != contents[f.Path] {
			t.Errorf("%s changed", f.Path)
		}
	}
	if again, _ := h.st.Skills(); len(again) != len(rows) {
		t.Errorf("skills rows %d after a second export, %d before", len(again), len(rows))
	}

	// A different file where a skill goes: an error naming it, nothing
	// written anywhere, the file untouched.
	clash := filepath.Join(ws, "skills", "copilot", "fix-flaky-test.md")
	mine := "---\nname: fix-flaky-test\ndescription: my own\n---\n\nMine.\n"
	if err := os.WriteFile(clash, []byte(mine), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(ws, "skills", "codex", "write-release-notes.md"))
	_, err = Export(h.st, opts)
	var ce *ClashError
	if !errors.As(err, &ce) || len(ce.Clashes) != 1 || ce.Clashes[0].Path != clash || ce.Clashes[0].Name != "fix-flaky-test" {
		t.Fatalf("export over a different file: %v", err)
	}
	t.Log(err)
	if b, _ := os.ReadFile(clash); string(b) != mine {
		t.Error("the clashing file was overwritten")
	}
	if _, err := os.Stat(filepath.Join(ws, "skills", "codex", "write-release-notes.md")); err == nil {
		t.Error("export wrote files despite a clash")
	}

	// Leaving the clashing skill out works.
	opts.Names = []string{"write-release-notes"}
	res, err := Export(h.st, opts)
	if err != nil || len(res.Files) != 2 || !res.Files[0].Written && !res.Files[1].Written {
		t.Fatalf("export --name: %+v, %v", res, err)
	}
}

func TestExportRefusals(t *testing.T) {
	h := newHistoryDB(t)
	h.add(spec{role: "ashigaru1", title: "Fix flaky test", body: unrelated[0]}, spec{role: "ashigaru1", title: "Fix flaky test", body: unrelated[1]})
	h.scan(ScanOptions{})
	ws := t.TempDir()
	base := ExportOptions{Workspace: ws, CodexPath: filepath.Join(ws, "c"), CopilotPath: filepath.Join(ws, "p")}
	if _, err := Export(h.st, base); !errors.Is(err, ErrNothingToExport) {
		t.Errorf("nothing approved: %v", err)
	}
	named := base
	named.Names = []string{"fix-flaky-test"}
	if _, err := Export(h.st, named); err == nil || !strings.Contains(err.Error(), "pending") {
		t.Errorf("exporting a pending skill by name: %v", err)
	}
	named.Names = []string{"nope"}
	if _, err := Export(h.st, named); !errors.Is(err, store.ErrUnknownSkill) {
		t.Errorf("exporting an unknown skill: %v", err)
	}
	Decide(h.st, []string{"fix-flaky-test"}, nil, day)
	for _, o := range []ExportOptions{
		{Targets: []string{TargetClaude}, Workspace: ws},
		{Targets: []string{"vim"}, Workspace: ws},
		{Layout: "tree", Workspace: ws},
	} {
		if _, err := Export(h.st, o); err == nil {
			t.Errorf("%+v: no error", o)
		} else {
			t.Log(err)
		}
	}
}
